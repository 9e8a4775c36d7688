"""docs/deployment.md's by-hand deployment, run as written: its settings, its one-shot commands, then gunicorn,
a Celery worker and beat, against PostgreSQL and Redis.

The commands are read from the guide itself (the fenced block after the comment that names this file), so the
guide and the test cannot drift apart. The only changes made to them: the settings' values are this test's
(its database, its Redis, a free loopback port for gunicorn's bind address, a queue and key prefixes of its
own), and ``python``/``gunicorn``/``celery`` are this virtualenv's.
"""

from __future__ import annotations

import contextlib
import http.client
import http.cookies
import json
import os
import re
import shlex
import subprocess
import sys
import time
import urllib.parse
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from django.conf import settings

from tests import live

ROOT = Path(__file__).resolve().parent.parent
GUIDE = ROOT / "docs" / "deployment.md"
HOST = "bench.example.com"
ADMIN_PASSWORD = "a-long-by-hand-admin-password-77"
BIN = Path(sys.executable).parent


def _blocks_after_marker() -> list[list[str]]:
    """The fenced blocks that follow a comment naming this test, as their non-empty lines."""
    text = GUIDE.read_text()
    found = re.findall(r"<!-- tests/test_deployment_by_hand\.py[^>]*-->\n```sh\n(.*?)```", text, re.S)
    return [[line for line in block.splitlines() if line.strip()] for block in found]


def guide_settings() -> dict[str, str]:
    settings_block, _commands = _blocks_after_marker()
    pairs = [line.removeprefix("export ").split("=", 1) for line in settings_block]
    return {name: value for name, value in pairs}


def guide_commands() -> list[str]:
    _settings, commands = _blocks_after_marker()
    return commands


def test_the_guide_names_every_production_setting_with_the_mode_first() -> None:
    names = list(guide_settings())
    assert names[0] == "BENCHDASH_MODE" and guide_settings()["BENCHDASH_MODE"] == "production"
    assert {"SECRET_KEY", "ALLOWED_HOSTS", "CSRF_TRUSTED_ORIGINS", "SECURE_COOKIES", "DATABASE_URL"} <= set(names)
    assert {"DATABASE_PASSWORD", "REDIS_URL"} <= set(names)


def test_the_guide_starts_gunicorn_worker_and_beat_as_compose_does() -> None:
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]
    commands = guide_commands()
    assert compose["web"]["command"] in commands
    assert compose["worker"]["command"] in commands
    assert compose["beat"]["command"] in commands


def _environment(port: int, static_root: Path, var_dir: Path) -> dict[str, str]:
    values = {
        **guide_settings(),
        "SECRET_KEY": "by-hand-test-key-0123456789-abcdefghijklmnopqrstuvwxyz",
        "ALLOWED_HOSTS": HOST,
        "CSRF_TRUSTED_ORIGINS": f"https://{HOST}",
        "DATABASE_URL": live.database_url(),
        "DATABASE_PASSWORD": settings.DATABASES["default"].get("PASSWORD") or "",
        "REDIS_URL": settings.REDIS_URL,
    }
    if not values["DATABASE_PASSWORD"]:
        del values["DATABASE_PASSWORD"]  # the test database trusts loopback: no password to pass
    clean = {key: os.environ[key] for key in ("HOME", "LANG") if key in os.environ}
    return {
        **clean,
        **values,
        "PATH": f"{BIN}:/usr/bin:/bin",
        "BENCHDASH_STATIC_ROOT": str(static_root),
        "BENCHDASH_VAR_DIR": str(var_dir),
        # This test's own queue and key prefixes in the shared Redis database (conftest gives each process one).
        "CELERY_QUEUE": f"by-hand-{uuid.uuid4().hex[:8]}",
        "BENCHDASH_BROKER_PREFIX": settings.BROKER_KEY_PREFIX,
        "BENCHDASH_CACHE_PREFIX": settings.CACHE_KEY_PREFIX,
        "GUNICORN_PORT": str(port),
    }


def _as_run_here(command: str, port: int) -> tuple[list[str], dict[str, str]]:
    """The guide's command line as argv and leading VAR=value assignments; gunicorn bound to loopback."""
    words = shlex.split(command.replace("0.0.0.0:8000", f"127.0.0.1:{port}"))
    assignments = {}
    while "=" in words[0] and not words[0].startswith("-"):
        name, value = words.pop(0).split("=", 1)
        assignments[name] = value
    if words[0] == "python":
        words[0] = sys.executable
    elif (BIN / words[0]).exists():
        words[0] = str(BIN / words[0])
    return words, assignments


@contextlib.contextmanager
def _running(argv: list[str], env: dict[str, str], log: Path) -> Iterator[subprocess.Popen[bytes]]:
    with log.open("wb") as out:
        process = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        yield process
    finally:
        live.stop(process)


def _wait_for(condition: object, what: str, seconds: float, logs: list[Path]) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError, ValueError, KeyError):
            if condition():  # type: ignore[operator]
                return
        time.sleep(0.3)
    tails = "\n".join(f"--- {log.name}\n{log.read_text(errors='replace')[-2500:]}" for log in logs if log.exists())
    pytest.fail(f"{what} within {seconds:.0f} s\n{tails}")


@pytest.mark.slow(60)
@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_the_by_hand_deployment_runs_as_documented(tmp_path: Path, corpus: Path) -> None:
    live.require_postgresql(redis=True)
    port = live.free_port()
    env = _environment(port, tmp_path / "static", tmp_path / "var")
    (tmp_path / "var").mkdir()
    # The role groups come from a data migration, which a transactional test's flush empties: put them back.
    from django.contrib.auth.models import Group

    from conftest import _role_group_from_migration

    if not Group.objects.filter(name="admin").exists():
        _role_group_from_migration("admin")
    one_shot = [c for c in guide_commands() if not c.startswith(("gunicorn", "celery"))]
    services = [c for c in guide_commands() if c.startswith(("gunicorn", "celery"))]
    assert [c.split()[2] for c in one_shot if c.startswith("python")][:2] == ["migrate", "collectstatic"]

    for command in one_shot:
        argv, assignments = _as_run_here(command, port)
        if "DJANGO_SUPERUSER_PASSWORD" in assignments:
            assignments["DJANGO_SUPERUSER_PASSWORD"] = ADMIN_PASSWORD
        done = subprocess.run(
            argv, cwd=ROOT, env={**env, **assignments}, capture_output=True, text=True, timeout=300, check=False
        )
        assert done.returncode == 0, f"{command}\n{done.stdout}\n{done.stderr}"
    assert (tmp_path / "static" / "staticfiles.json").is_file()

    logs = [tmp_path / f"{name}.log" for name in ("web", "worker", "beat")]
    argvs = [_as_run_here(command, port)[0] for command in services]
    try:
        with contextlib.ExitStack() as stack:
            processes = [stack.enter_context(_running(a, env, log)) for a, log in zip(argvs, logs, strict=True)]
            server = live.Gunicorn(process=processes[0], port=port, log=logs[0], workers=4, host=HOST)
            _check_the_running_site(server, corpus, logs)
    finally:
        live.forget_queue(env["CELERY_QUEUE"])
        live.release_test_database()
    # gunicorn's access log: one line per request, the upload among them.
    web_log = logs[0].read_text()
    assert re.search(r'"POST /api/bundles/ HTTP/1\.1" 202', web_log), web_log[-2000:]
    # The worker logs in the site's format: time, level, logger, then the task's id as the request id.
    worker_log = logs[1].read_text()
    task_line = r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} INFO \S+ \[[0-9a-f-]{36}\] Task runs\.tasks\.import_bundle_task"
    assert re.search(task_line, worker_log, re.M), worker_log[-2000:]


def _check_the_running_site(server: live.Gunicorn, corpus: Path, logs: list[Path]) -> None:
    """Log in as the admin, upload a real bundle through the API, see the worker import it and beat
    write its schedule."""
    _wait_for(
        lambda: json.loads(server.request("GET", "/healthz", timeout=5)[1])["database"] == "ok",
        "gunicorn answered no /healthz",
        180,  # four workers loading the site on a busy machine
        logs,
    )

    cookie = _log_in(server)
    status, page = server.request("GET", "/account/tokens/", headers={"Cookie": cookie})
    assert status == 200 and b"superuser: every role, admin" in page

    from django.contrib.auth import get_user_model

    from accounts.permissions import create_token

    admin = get_user_model().objects.get(username="admin")
    assert admin.is_superuser and admin.is_staff and list(admin.groups.values_list("name", flat=True)) == ["admin"]
    token = create_token(admin, "by hand")[1]
    tarball = corpus / "sysbench-pg-tarballs" / "x.pg174_o2nofp.x10a_wm1_c32r128.pk1.tar.gz"
    body, content_type = live.multipart({"server": "by-hand"}, {"file": (tarball.name, tarball.read_bytes())})
    status, answer = server.request(
        "POST", "/api/bundles/", body, {"Authorization": f"Bearer {token}", "Content-Type": content_type}
    )
    assert status == 202, answer
    bundle = json.loads(answer)["bundle_id"]

    def imported() -> bool:
        state = json.loads(
            server.request("GET", f"/api/bundles/{bundle}", headers={"Authorization": f"Bearer {token}"})[1]
        )
        assert state["status"] != "failed", state
        return bool(state["status"] == "imported")

    _wait_for(imported, "the worker did not import the upload", 120, logs)
    # Beat read the site's schedule and wrote it to the database it shares with the web (it first sends the
    # every-minute tasks a minute after it starts: longer than this test should wait).
    from django_celery_beat.models import PeriodicTask

    _wait_for(
        lambda: PeriodicTask.objects.filter(name="requeue-queued-bundles").exists(), "beat wrote no schedule", 60, logs
    )

    web_log = logs[0].read_text()
    # gunicorn's access log: one line per request, the upload among them.
    assert re.search(r'"POST /api/bundles/ HTTP/1\.1" 202', web_log), web_log[-2000:]
    live.release_test_database()


def _log_in(server: live.Gunicorn) -> str:
    """The login form, as a browser posts it; the Cookie header of the session."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    conn.request("GET", "/account/login/", headers={"Host": HOST})
    response = conn.getresponse()
    page = response.read()
    jar: http.cookies.SimpleCookie = http.cookies.SimpleCookie()
    for header in response.headers.get_all("Set-Cookie") or []:
        jar.load(header)
    csrf = re.search(rb'name="csrfmiddlewaretoken" value="([^"]+)"', page)
    assert csrf is not None
    form = urllib.parse.urlencode(
        {"username": "admin", "password": ADMIN_PASSWORD, "csrfmiddlewaretoken": csrf[1].decode()}
    ).encode()
    conn.request(
        "POST",
        "/account/login/",
        body=form,
        headers={
            "Host": HOST,
            "Cookie": f"csrftoken={jar['csrftoken'].value}",
            "Content-Type": "application/x-www-form-urlencoded",
            # Production's CSRF check of an https origin: as the TLS proxy forwards a browser's request.
            "X-Forwarded-Proto": "https",
            "Referer": f"https://{HOST}/account/login/",
            "Origin": f"https://{HOST}",
        },
    )
    response = conn.getresponse()
    response.read()
    for header in response.headers.get_all("Set-Cookie") or []:
        jar.load(header)
    conn.close()
    assert response.status == 302 and "sessionid" in jar, response.status
    return f"sessionid={jar['sessionid'].value}"
