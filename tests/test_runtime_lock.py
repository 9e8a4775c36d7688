"""The runtime lock (requirements.txt, what the image installs) holds what production runs and no test or
development tool; the development lock adds those on top, at the same pins.

The venv test builds a real virtualenv holding exactly the runtime lock's distributions, linked file by file
from this one's (no network, no download, a few seconds), then asks its interpreter to import each tool and
to start the site in production mode.
"""

from __future__ import annotations

import importlib.metadata
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# Import names of the tools the development lock brings: none may be importable in production.
DEV_TOOLS = (
    "pytest",
    "pytest_django",
    "xdist",
    "playwright",
    "mypy",
    "ruff",
    "faker",
    "factory",
    "hypothesis",
    "schemathesis",
    "importlinter",
    "mypy_django_plugin",
    "aiosmtpd",
    "piptools",
)


def locked(path: Path) -> dict[str, str]:
    """name -> version of every package a lock file pins, names normalised."""
    pins = re.findall(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s\\]+)", path.read_text(), re.M)
    return {re.sub(r"[-_.]+", "-", name).lower(): version for name, version in pins}


def test_every_pin_carries_its_hashes_and_both_locks_agree_where_they_meet() -> None:
    for name in ("requirements.txt", "requirements-dev.txt"):
        text = (ROOT / name).read_text()
        entries = re.split(r"\n(?=[A-Za-z0-9])", text.split("\n", 1)[1])
        assert entries and all("--hash=sha256:" in entry for entry in entries if "==" in entry), name
        assert "--index-url" not in text and "--find-links" not in text, name
    runtime, dev = locked(ROOT / "requirements.txt"), locked(ROOT / "requirements-dev.txt")
    assert {"django", "celery", "gunicorn", "psycopg", "prometheus-client"} <= set(runtime)
    assert {"pytest", "playwright", "mypy", "ruff", "hypothesis", "schemathesis"} <= set(dev)
    assert not {"pytest", "playwright", "mypy", "ruff", "faker", "hypothesis", "schemathesis"} & set(runtime)
    assert {name: dev[name] for name in set(runtime) & set(dev)} == {
        name: runtime[name] for name in set(runtime) & set(dev)
    }


def test_the_image_installs_the_runtime_lock_only_and_make_install_both() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()
    installs = [line for line in dockerfile.splitlines() if "pip install" in line]
    assert installs == ["RUN pip install --no-cache-dir --require-hashes -r requirements.txt"]
    makefile = (ROOT / "Makefile").read_text()
    assert "--require-hashes -r requirements.txt -r requirements-dev.txt" in makefile


def _lean_venv(target: Path) -> Path:
    """A virtualenv with exactly the runtime lock's distributions, linked from this one's installed files."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(target)], check=True, timeout=60)
    python = target / "bin" / "python"
    site = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
            timeout=60,
        ).stdout.strip()
    )
    for name, version in locked(ROOT / "requirements.txt").items():
        dist = importlib.metadata.distribution(name)
        assert dist.version == version, f"{name}: this venv has {dist.version}, the lock {version}"
        base = Path(str(dist.locate_file("")))
        for file in dist.files or []:
            if file.parts[0] == "..":  # console scripts in bin/: not needed to import
                continue
            source, link = base / file, site / file
            if source.is_file() and not link.exists():
                link.parent.mkdir(parents=True, exist_ok=True)
                link.symlink_to(source)
    return python


@pytest.mark.slow(20)
def test_a_venv_made_from_the_runtime_lock_runs_the_site_and_imports_no_dev_tool(tmp_path: Path) -> None:
    python = _lean_venv(tmp_path / "venv")
    probe = (
        "import importlib.util, json; "
        f"print(json.dumps([name for name in {list(DEV_TOOLS)!r} if importlib.util.find_spec(name)]))"
    )
    env = {"PATH": os.environ.get("PATH", ""), "HOME": os.environ.get("HOME", "")}
    found = subprocess.run([str(python), "-c", probe], capture_output=True, text=True, timeout=60, env=env, check=True)
    assert found.stdout.strip() == "[]"
    # The site starts in production mode with nothing but the runtime lock: settings, every app, every URL and
    # view module (the checks load the URL configuration), the Celery app.
    production = {
        **env,
        "BENCHDASH_MODE": "production",
        "SECRET_KEY": "lean-venv-test-key-0123456789-abcdefghijklmnopqrstuvwxyz",
        "ALLOWED_HOSTS": "bench.example.com",
        "BENCHDASH_VAR_DIR": str(tmp_path),
    }
    checked = subprocess.run(
        [str(python), "manage.py", "check"], cwd=ROOT, capture_output=True, text=True, timeout=120, env=production
    )
    # (A warning may say the plotly.js bundle is not beside this venv: npm puts it there, not pip.)
    assert checked.returncode == 0 and "ERRORS:" not in checked.stderr, checked.stderr
    celery = subprocess.run(
        [str(python), "-c", "import django; django.setup(); import benchdash.celery, benchdash.wsgi"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**production, "DJANGO_SETTINGS_MODULE": "benchdash.settings"},
    )
    assert celery.returncode == 0, celery.stderr
