"""Peak memory of an import, per bundle and per door: the command, the upload page and the API (gunicorn), and
the Celery worker.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/SCRATCH REDIS_URL=redis://127.0.0.1:6379/N \\
        .venv/bin/python bench/memory_bench.py [--doors command,web,api,worker] [--only ID,ID] [--work DIR] \\
        [--big-mb 300]

The database DATABASE_URL names is migrated and written to (use a scratch one),
and the Redis database of REDIS_URL is the broker of the worker it starts.

Bundles: every case of the hostile corpus (``runs/tests/hostile.py``, its
memory cases included) and a few large legitimate ones: the real Postgres
tarballs of the corpus, the three of them in one tarball of tarballs, and a
synthetic archive of 1,000 runs (``runs/synthetic.py``, one tarball of 20
series), and a valid upload of ``--big-mb`` megabytes (one run and a raw
sample file of random bytes: the size of the upload is all the web process
sees). Each is imported:

- **command**: ``manage.py import_bundle PATH`` in a child process; its peak RSS.
- **web**: the upload page, ``POST /upload/`` with a logged-in session, to
  gunicorn (one sync worker, production mode) on a free loopback port; the
  gunicorn worker's peak RSS while it receives, checks and stores the upload.
- **api**: ``POST /api/bundles/`` with a token to the same gunicorn; its
  worker's peak RSS likewise.
- **worker**: the import the API upload queues, run by a real Celery worker
  (prefork, one child); the peak RSS of its child process, and the child's RSS
  once the import is over (``after``: the memory returned or not).

Peaks are the kernel's high-water mark (``VmHWM``), reset before each bundle
(``/proc/PID/clear_refs``) and sampled every 20 ms. A process past
``--kill-mb`` (5 GB) is killed by its id, so a "before" run of a hostile bundle
cannot take the machine down; it prints as ``killed``. Each figure is marked
``ok`` or ``MISSED`` against ``--target-mb`` (512 MB).
"""

from __future__ import annotations

import argparse
import http.client
import io
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO.parent / "shared" / "corpus"
MB = 1024 * 1024
POLL_S = 0.02
GUNICORN = [sys.executable, "-m", "gunicorn", "benchdash.wsgi:application"]
CELERY = [sys.executable, "-m", "celery", "-A", "benchdash", "worker", "-c", "1", "-P", "prefork", "-l", "WARNING"]


# --------------------------------------------------------------------------- memory of processes


def _status(pid: int) -> dict[str, int]:
    """VmRSS and VmHWM of a process in bytes ({} when it is gone)."""
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return {}
    found = {}
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            found[key] = int(value.split()[0]) * 1024
    return found


def _children(pid: int) -> list[int]:
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    found: list[int] = []
    for task in tasks:
        try:
            found += [int(p) for p in Path(f"/proc/{pid}/task/{task}/children").read_text().split()]
        except OSError:
            continue
    return found


def _tree(pid: int) -> list[int]:
    pids, todo = [], [pid]
    while todo:
        now = todo.pop()
        pids.append(now)
        todo += _children(now)
    return pids


def _reset_peak(pid: int) -> None:
    with suppress(OSError):
        Path(f"/proc/{pid}/clear_refs").write_text("5")


@dataclass
class Watch:
    """Samples the peak RSS of the processes ``pids()`` returns, killing any past ``kill_bytes``."""

    pids: Callable[[], list[int]]
    kill_bytes: int
    peak: int = 0
    killed: bool = False
    _stop: threading.Event = field(default_factory=threading.Event)

    def __enter__(self) -> Watch:
        for pid in self.pids():
            _reset_peak(pid)
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self._sample()

    def _run(self) -> None:
        while not self._stop.wait(POLL_S):
            self._sample()

    def _sample(self) -> None:
        for pid in self.pids():
            status = _status(pid)
            high = max(status.get("VmHWM", 0), status.get("VmRSS", 0))
            self.peak = max(self.peak, high)
            if status.get("VmRSS", 0) > self.kill_bytes:
                self.killed = True
                with suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)


# --------------------------------------------------------------------------- bundles


def bundles(work: Path, only: set[str], big_mb: int = 300) -> Iterator[tuple[str, Path]]:
    """(id, path) of every bundle, written to ``work`` once (the hostile ones are made fresh each run)."""
    sys.path.insert(0, str(REPO))
    from runs.tests import big_upload, hostile

    for case in hostile.every_case() + hostile.memory_cases():
        if only and case.id not in only:
            continue
        path = work / "hostile" / f"{case.id}-{case.filename}"
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists():
            path.write_bytes(case.build())
        yield case.id, path
    tarballs = sorted((CORPUS / "sysbench-pg-tarballs").glob("*.tar.gz"))
    legit: dict[str, Callable[[], bytes]] = {
        "legit-pg-tarball": lambda: tarballs[-1].read_bytes(),
        "legit-pg-tarball-of-tarballs": lambda: _tar_of({p.name: p.read_bytes() for p in tarballs}),
        "legit-synthetic-1000-runs": lambda: _synthetic(1000),  # each series in a folder: its manifest is its own
    }
    for key, build in legit.items():
        if only and key not in only:
            continue
        path = work / "legit" / f"{key}.tar"
        if key == "legit-pg-tarball":
            path = path.with_suffix(".tar.gz")
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists():
            path.write_bytes(build())
        yield key, path
    key = f"legit-upload-{big_mb}mb"
    if big_mb and (not only or key in only):
        path = work / "legit" / f"{key}.tar"
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists() or abs(path.stat().st_size - big_mb * MB) > MB:
            big_upload.write(path, big_mb * MB, seed=key)
        yield key, path


def _tar_of(files: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mtime = 1_700_000_000
            tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


def _synthetic(runs: int) -> bytes:
    with tempfile.TemporaryDirectory() as folder:
        subprocess.run(
            [sys.executable, str(REPO / "bench" / "generate.py"), "--runs", str(runs), "--out", folder],
            check=True,
            capture_output=True,
        )
        series = sorted(Path(folder).glob("*.tar.gz"))
        return _tar_of({f"{p.name.split('.')[0]}/{p.name}": p.read_bytes() for p in series})


# --------------------------------------------------------------------------- doors


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def manage(env: dict[str, str], *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=REPO, env=env, check=check, capture_output=True, text=True
    )


def command_door(path: Path, env: dict[str, str], kill_bytes: int) -> tuple[int, bool, str]:
    proc = subprocess.Popen(
        [sys.executable, "manage.py", "import_bundle", str(path), "--server", "membench"],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    with Watch(lambda: _tree(proc.pid) if proc.poll() is None else [], kill_bytes) as watch:
        while proc.poll() is None:
            time.sleep(POLL_S)
    err = proc.stderr.read() if proc.stderr else ""
    outcome = "killed" if watch.killed else ("imported" if proc.returncode == 0 else "refused")
    return watch.peak, watch.killed, f"{outcome}: {err.strip().splitlines()[-1][:90] if err.strip() else ''}"


@contextmanager
def services(env: dict[str, str]) -> Iterator[tuple[str, subprocess.Popen[bytes], subprocess.Popen[bytes]]]:
    """gunicorn (one sync worker) and a Celery worker (prefork, one child), stopped by their ids."""
    port = free_port()
    log = tempfile.TemporaryFile()  # noqa: SIM115 - the servers' output, kept until they stop
    web = subprocess.Popen(
        [*GUNICORN, "-b", f"127.0.0.1:{port}", "-w", "1", "--timeout", "600"], cwd=REPO, env=env, stdout=log, stderr=log
    )
    name = f"membench-{uuid.uuid4().hex[:6]}@%h"
    worker = subprocess.Popen(
        [*CELERY, "-Q", env["CELERY_QUEUE"], "-n", name], cwd=REPO, env=env, stdout=log, stderr=log
    )
    try:
        base = f"http://127.0.0.1:{port}"
        for _ in range(200):
            try:
                urllib.request.urlopen(f"{base}/healthz", timeout=10)
                break
            except OSError:  # refused, reset or timed out while gunicorn starts
                time.sleep(0.2)
        time.sleep(3)  # the worker connects to the broker
        yield base, web, worker
    finally:
        for proc in (web, worker):
            proc.send_signal(signal.SIGTERM)
        for proc in (web, worker):
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        log.close()


def _send(
    base: str, method: str, url: str, body: object = None, headers: dict[str, str] | None = None
) -> http.client.HTTPResponse:
    conn = http.client.HTTPConnection(urllib.parse.urlsplit(base).netloc, timeout=900)
    conn.request(method, url, body=body, headers=headers or {})  # type: ignore[arg-type]
    return conn.getresponse()


def _multipart(
    base: str, url: str, fields: dict[str, str], file_field: str, path: Path, headers: dict[str, str]
) -> http.client.HTTPResponse:
    """POST a form with one file, streamed from disk (the bench itself never holds a 300 MB upload)."""
    boundary = uuid.uuid4().hex
    head = "".join(
        f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'
        for name, value in fields.items()
    )
    head += (
        f'--{boundary}\r\nContent-Disposition: form-data; name="{file_field}"; filename="{path.name}"\r\n'
        "Content-Type: application/octet-stream\r\n\r\n"
    )
    tail = f"\r\n--{boundary}--\r\n".encode()

    def body() -> Iterator[bytes]:
        yield head.encode()
        with path.open("rb") as data:
            while block := data.read(MB):
                yield block
        yield tail

    length = len(head.encode()) + path.stat().st_size + len(tail)
    all_headers = {
        **headers,
        "Content-Type": f"multipart/form-data; boundary={boundary}",
        "Content-Length": str(length),
    }
    return _send(base, "POST", url, body(), all_headers)


def _post(base: str, token: str, path: Path) -> tuple[int, dict[str, object]]:
    response = _multipart(
        base, "/api/bundles/", {"server": "membench"}, "file", path, {"Authorization": f"Bearer {token}"}
    )
    raw = response.read()
    try:
        return response.status, json.loads(raw or b"{}")
    except ValueError:
        return response.status, {"detail": raw[:200].decode(errors="replace")}


def _cookies(response: http.client.HTTPResponse, jar: dict[str, str]) -> dict[str, str]:
    for header in response.headers.get_all("Set-Cookie") or []:
        name, _, rest = header.partition("=")
        jar[name.strip()] = rest.split(";", 1)[0]
    return jar


def _cookie_header(jar: dict[str, str]) -> dict[str, str]:
    return {"Cookie": "; ".join(f"{k}={v}" for k, v in jar.items())}


def _csrf_of(page: bytes) -> str:
    marker = b'name="csrfmiddlewaretoken" value="'
    start = page.index(marker) + len(marker)
    return page[start : page.index(b'"', start)].decode()


def web_login(base: str, username: str, password: str) -> dict[str, str]:
    """A session of the upload page's user, logged in through the login form."""
    jar: dict[str, str] = {}
    page = _send(base, "GET", "/account/login/")
    _cookies(page, jar)
    text = page.read()
    if page.status != 200:
        raise SystemExit(f"the login page answered {page.status}: {text[:300]!r}")
    form = urllib.parse.urlencode(
        {"csrfmiddlewaretoken": _csrf_of(text), "username": username, "password": password, "next": "/"}
    )
    done = _send(
        base,
        "POST",
        "/account/login/",
        form,
        {**_cookie_header(jar), "Content-Type": "application/x-www-form-urlencoded"},
    )
    done.read()
    _cookies(done, jar)
    if done.status != 302 or "sessionid" not in jar:
        raise SystemExit(f"could not log in to the upload page: {done.status}")
    return jar


def _web_post(base: str, jar: dict[str, str], path: Path) -> tuple[int, dict[str, object]]:
    """The upload form: 302 to the bundle's page (its id is in the address), or 200 with the form's error."""
    page = _send(base, "GET", "/upload/", headers=_cookie_header(jar))
    token = _csrf_of(page.read())
    response = _multipart(
        base, "/upload/", {"csrfmiddlewaretoken": token, "server": "membench"}, "bundle", path, _cookie_header(jar)
    )
    body = response.read()
    location = response.headers.get("Location") or ""
    if response.status == 302 and "/bundles/" in location:
        bundle_id = int(location.rstrip("/").rsplit("/", 1)[1])
        return 302, {"detail": f"stored as bundle {bundle_id}", "bundle_id": bundle_id}
    error = b""
    if b'class="errorlist' in body:
        error = body.split(b'class="errorlist', 1)[1].split(b"<li>", 1)[-1].split(b"</li>", 1)[0]
    return response.status, {"detail": error.decode(errors="replace") or f"HTTP {response.status}"}


def web_door(
    path: Path, base: str, jar: dict[str, str], token: str, web: subprocess.Popen[bytes], kill_bytes: int
) -> tuple[int, bool, str]:
    """The upload page's peak: receiving, checking and storing the upload. Its import is the worker's, waited
    for (not measured) so that it does not overlap the next measurement."""
    with Watch(lambda: _children(web.pid), kill_bytes) as watch:
        status, body = _web_post(base, jar, path)
    if body.get("bundle_id"):
        _wait_imported(base, token, int(str(body["bundle_id"])))
    return watch.peak, watch.killed, f"{status}: {str(body.get('detail') or '')[:90]}"


def _wait_imported(base: str, token: str, bundle_id: int, seconds: float = 900) -> dict[str, object]:
    deadline = time.monotonic() + seconds
    now: dict[str, object] = {}
    while time.monotonic() < deadline:
        poll = urllib.request.Request(f"{base}/api/bundles/{bundle_id}", headers={"Authorization": f"Bearer {token}"})
        with urllib.request.urlopen(poll, timeout=30) as response:
            now = json.loads(response.read())
        if now["status"] not in ("queued", "importing"):
            break
        time.sleep(0.2)
    return now


def api_and_worker_doors(
    path: Path, base: str, token: str, web: subprocess.Popen[bytes], worker: subprocess.Popen[bytes], kill_bytes: int
) -> tuple[tuple[int, bool, str], tuple[int, bool, str, int]]:
    web_watch = Watch(lambda: _children(web.pid), kill_bytes)
    worker_watch = Watch(lambda: _children(worker.pid), kill_bytes)
    with web_watch, worker_watch:
        status, body = _post(base, token, path)
        bundle_id = body.get("bundle_id")
        deadline = time.monotonic() + 900
        while status == 202 and bundle_id and time.monotonic() < deadline:
            time.sleep(0.2)
            auth = {"Authorization": f"Bearer {token}"}
            poll = urllib.request.Request(f"{base}/api/bundles/{bundle_id}", headers=auth)
            with urllib.request.urlopen(poll, timeout=30) as response:
                now = json.loads(response.read())
            if now["status"] not in ("queued", "importing"):
                body = now
                break
            if worker_watch.killed:
                break
        time.sleep(1)  # the child is replaced (or not) once its task is done
    after = sum(_status(pid).get("VmRSS", 0) for pid in _children(worker.pid))
    error = str(body.get("error") or body.get("detail") or "")[:90]
    api = (web_watch.peak, web_watch.killed, f"{status}: {error}")
    work = (worker_watch.peak, worker_watch.killed, f"{body.get('status', '')}: {error}", after)
    return api, work


def forget_bundles(env: dict[str, str]) -> None:
    """Each bundle is imported from scratch: a run already stored would be skipped, not measured."""
    manage(env, "shell", "-c", "from runs.models import Bundle; Bundle.objects.all().delete()")


def make_token(env: dict[str, str], password: str) -> str:
    """The bench's uploader: its API token (printed) and ``password`` for the upload page."""
    script = (
        "from django.contrib.auth.models import Group, User\n"
        "from accounts.permissions import UPLOADER, create_token\n"
        "user, _ = User.objects.get_or_create(username='membench')\n"
        f"user.set_password({password!r}); user.save()\n"
        "user.groups.add(Group.objects.get(name=UPLOADER))\n"
        "print(create_token(user, 'memory bench')[1])\n"
    )
    return manage(env, "shell", "-c", script).stdout.strip().splitlines()[-1]


# --------------------------------------------------------------------------- main


def verdict(peak: int, killed: bool, target: int) -> str:
    if killed:
        return "MISSED (killed)"
    return "ok" if peak < target else "MISSED"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--doors", default="command,web,api,worker")
    parser.add_argument("--big-mb", type=int, default=300, help="size of the big valid upload (0: none)")
    parser.add_argument("--only", default="", help="comma-separated bundle ids (default: all)")
    parser.add_argument("--work", type=Path, default=REPO / "bench" / "out" / "memory")
    parser.add_argument("--target-mb", type=int, default=512)
    parser.add_argument("--kill-mb", type=int, default=5000)
    args = parser.parse_args()
    # A TERM (timeout, kill by pid) unwinds like an error, so the servers started are stopped.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    if not os.environ.get("DATABASE_URL", "").startswith("postgres") or not os.environ.get("REDIS_URL"):
        sys.exit("set DATABASE_URL (a scratch PostgreSQL database) and REDIS_URL (a Redis database for the broker)")
    doors = set(args.doors.split(","))
    only = {x for x in args.only.split(",") if x}
    target, kill = args.target_mb * MB, args.kill_mb * MB
    env = {
        **os.environ,
        "BENCHDASH_MODE": "production",
        "SECRET_KEY": secrets.token_urlsafe(40),
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "SECURE_SSL_REDIRECT": "false",
        "CELERY_QUEUE": f"membench-{uuid.uuid4().hex[:8]}",
        "CELERY_TASK_ALWAYS_EAGER": "false",
        "SECURE_COOKIES": "false",  # plain HTTP on loopback: the session cookie must come back
    }
    work = args.work
    work.mkdir(parents=True, exist_ok=True)
    env["BENCHDASH_STATIC_ROOT"] = str(work / "static")  # production pages need the collected static files
    manage(env, "migrate", "--noinput")
    manage(env, "collectstatic", "--noinput", "--verbosity", "0")
    items = list(bundles(work, only, args.big_mb))
    print(f"{'bundle':40} {'MB':>7}  {'door':8} {'peak MB':>8} {'after MB':>8}  verdict          outcome")

    def line(key: str, size: int, door: str, peak: int, killed: bool, outcome: str, after: int | None = None) -> None:
        shown = f"{after / MB:8.0f}" if after is not None else " " * 8
        print(
            f"{key:40} {size / MB:7.1f}  {door:8} {peak / MB:8.0f} {shown}  {verdict(peak, killed, target):16} "
            f"{outcome}",
            flush=True,
        )

    if "command" in doors:
        for key, path in items:
            forget_bundles(env)
            peak, killed, outcome = command_door(path, env, kill)
            line(key, path.stat().st_size, "command", peak, killed, outcome)
    if doors & {"web", "api", "worker"}:
        password = secrets.token_urlsafe(16)
        token = make_token(env, password)
        with services(env) as (base, web, worker):
            jar = web_login(base, "membench", password) if "web" in doors else {}
            for key, path in items:
                if "web" in doors:
                    forget_bundles(env)
                    line(key, path.stat().st_size, "web", *web_door(path, base, jar, token, web, kill))
                if not doors & {"api", "worker"}:
                    continue
                forget_bundles(env)
                api, work_ = api_and_worker_doors(path, base, token, web, worker, kill)
                if "api" in doors:
                    line(key, path.stat().st_size, "api", *api)
                if "worker" in doors:
                    line(key, path.stat().st_size, "worker", *work_)


if __name__ == "__main__":
    main()
