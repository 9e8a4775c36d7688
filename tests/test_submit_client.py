"""benchdash-submit against a live gunicorn, a real Celery worker, PostgreSQL and Redis: a pull request that slows a
microbenchmark exits 1 with a Markdown comment naming it, a clean one exits 0, a bad token exits 2; and the
GitHub Actions action's steps, run as a runner would run them, install the client and fail the job the same way."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.conf import settings

from runs import synthetic
from runs.models import Run
from tests import live

pytestmark = [pytest.mark.slow(30), pytest.mark.worker, pytest.mark.services, pytest.mark.django_db(transaction=True)]

CLIENT = live.ROOT / "runner" / "submit"
TESTS = (*[t for t in synthetic.TESTS if not t[0].endswith(".pre")][:10], ("update-index", 100, 3800))


def bundle(tmp_path: Path, seed: int, *, slower: float = 1.0) -> Path:
    steps = (synthetic.Step(0, "update-index", slower),) if slower != 1.0 else ()
    spec = synthetic.SeriesSpec(versions=("10.11.8",), dbms_code="ma", steps=steps, seed=seed, tests=TESTS, noise=0.01)
    path = tmp_path / f"results-{seed}.tar.gz"
    path.write_bytes(synthetic.bundle_bytes(spec, extra_files={"benchdash.toml": b'server = "ci-box"\n'}))
    return path


@pytest.fixture(scope="module")
def site(
    tmp_path_factory: pytest.TempPathFactory, django_db_setup: None, django_db_blocker: Any
) -> Iterator[live.Gunicorn]:
    """gunicorn sending its tasks to a real worker's queue, and that worker: one pair for the module's tests (each
    test's rows are flushed after it; the processes keep nothing of them but their connections)."""
    from benchdash.celery import app

    with (
        django_db_blocker.unblock(),
        live.celery_workers("submit") as start,
    ):
        start()
        env = {"REDIS_URL": settings.REDIS_URL, "CELERY_QUEUE": app.conf.task_default_queue}
        with live.gunicorn(tmp_path_factory.mktemp("site"), workers=1, threads=4, env=env) as server:
            yield server


@pytest.fixture
def token(user_with_role: Callable[..., Any]) -> str:
    from accounts.permissions import create_token

    return create_token(user_with_role("uploader"), "CI")[1]


def submit(site: live.Gunicorn, token: str, path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The client as CI runs it (``python -m benchdash_submit``), from its own folder, not the project's (the
    action's test installs it)."""
    env = {"PATH": os.environ["PATH"], "BENCHDASH_TOKEN": token}
    command = [sys.executable, "-s", "-m", "benchdash_submit", "--url", site.url, str(path), "--wait", "240", *args]
    return subprocess.run(command, cwd=CLIENT, env=env, capture_output=True, text=True, timeout=300, check=False)


def test_the_client_exits_1_on_a_regression_0_when_clean_and_2_on_a_bad_token(
    site: live.Gunicorn, token: str, tmp_path: Path
) -> None:
    main = submit(site, token, bundle(tmp_path, 1), "--branch", "main", "--commit", "a" * 40)
    assert main.returncode == 0, main.stderr
    assert "nothing to compare" in main.stdout  # the first run of the series has no baseline

    clean = submit(site, token, bundle(tmp_path, 2), "--branch", "tidy", "--pull-request", "7", "--format", "markdown")
    assert clean.returncode == 0, clean.stderr + clean.stdout
    assert "No microbenchmark moved beyond its noise gate" in clean.stdout

    slow = submit(
        site,
        token,
        bundle(tmp_path, 3, slower=0.7),
        "--branch",
        "faster-locks",
        "--pull-request",
        "8",
        "--repository",
        "acme/server",
        "--commit",
        "c" * 40,
        "--format",
        "markdown",
    )
    assert slow.returncode == 1, slow.stderr + slow.stdout
    comment = slow.stdout
    assert re.search(r"\| \[`update-index_range=100`\].* \| \*\*−(2|3)\d\.\d%\*\* \|", comment), comment
    assert "regression" in comment and "the newest run of main" in comment
    assert "https://github.com/acme/server/pull/8" in comment
    main_run = Run.objects.get(commit="a" * 40)
    assert f"{site.url}/runs/{main_run.pk}/" in comment

    refused = submit(site, "bd_not-a-token", bundle(tmp_path, 4))
    assert refused.returncode == 2
    assert "401" in refused.stderr and refused.stdout == ""
    missing = submit(site, token, tmp_path / "nothing.tar.gz")
    assert missing.returncode == 2 and "no such file" in missing.stderr


# --------------------------------------------------------------------------- the action's steps

_EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


def _evaluate(expression: str, context: dict[str, Any]) -> str:
    """The few expression forms action.yml uses: ``a.b || c.d`` look-ups, and ``x == 'literal'``."""
    if "==" in expression:
        left, right = (part.strip() for part in expression.split("=="))
        return "true" if _evaluate(left, context) == right.strip("'") else "false"
    for alternative in expression.split("||"):
        value: Any = context
        for key in alternative.strip().split("."):
            value = value.get(key, "") if isinstance(value, dict) else ""
        if value not in ("", None):
            return str(value)
    return ""


def _expand(text: str, context: dict[str, Any]) -> str:
    return _EXPRESSION.sub(lambda m: _evaluate(m.group(1), context), text)


def run_action(inputs: dict[str, str], github: dict[str, Any], workdir: Path, path: str) -> list[int]:
    """Run action.yml's steps in order as a runner would (bash, the step's env, GITHUB_OUTPUT, the summary);
    returns each step's exit status, stopping at the first failure."""
    action = yaml.safe_load((live.ROOT / "action.yml").read_text())
    defaults = {
        name: _expand(str(spec.get("default", "")), {"github": github}) for name, spec in action["inputs"].items()
    }
    context: dict[str, Any] = {"inputs": {**defaults, **inputs}, "github": github, "steps": {}}
    statuses = []
    for n, step in enumerate(action["runs"]["steps"]):
        if "if" in step and _evaluate(_EXPRESSION.sub(r"\1", step["if"]), context) != "true":
            continue
        output = workdir / f"output-{n}"
        output.touch()
        env = {
            "PATH": path,
            "HOME": str(workdir),
            "GITHUB_ACTION_PATH": str(live.ROOT),
            "GITHUB_OUTPUT": str(output),
            "GITHUB_STEP_SUMMARY": str(workdir / "summary.md"),
            "RUNNER_TEMP": str(workdir),
            **{key: _expand(str(value), context) for key, value in step.get("env", {}).items()},
        }
        done = subprocess.run(
            ["bash", "-e", "-c", _expand(step["run"], context)], cwd=workdir, env=env, timeout=600, check=False
        )
        statuses.append(done.returncode)
        if "id" in step:
            lines = output.read_text().splitlines()
            context["steps"][step["id"]] = {"outputs": dict(line.split("=", 1) for line in lines if "=" in line)}
        if done.returncode != 0:
            break
    return statuses


def test_the_actions_steps_install_the_client_upload_and_fail_the_job_on_a_regression(
    site: live.Gunicorn, token: str, tmp_path: Path
) -> None:
    first = submit(site, token, bundle(tmp_path, 1), "--branch", "main")
    assert first.returncode == 0, first.stderr
    # A runner's fresh Python: the action installs the client into it from this repository's folder.
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    path = f"{venv / 'bin'}:{os.environ['PATH']}"
    github = {
        "sha": "f" * 40,
        "ref_name": "slow-path",
        "repository": "acme/server",
        "base_ref": "main",
        "event": {"pull_request": {"number": 9, "head": {"sha": "f" * 40}}},
        "token": "unused",
    }
    inputs = {"url": site.url, "token": token, "bundle": str(bundle(tmp_path, 5, slower=0.7)), "wait": "240"}
    statuses = run_action(inputs, github, tmp_path, path)
    # Installed, submitted (the verdict written, the step itself passing), then the job failed on the verdict.
    assert statuses == [0, 0, 1], statuses
    summary = (tmp_path / "summary.md").read_text()
    assert "`update-index_range=100`" in summary and "regression" in summary
    assert "https://github.com/acme/server/pull/9" in summary
    assert (venv / "bin" / "benchdash-submit").exists()
    assert Run.objects.filter(pull_request=9, branch="slow-path", commit="f" * 40).exists()
