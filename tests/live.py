"""A real gunicorn serving the test database on a loopback port, for the fault and load tests.

Everything started here is stopped by its process id when the test ends, and the
test database is left with no connection of its own processes (so pytest-django
can drop it). Requests go through ``http.client``: no client library beyond the
standard one.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import pytest
from django.conf import settings
from django.db import connection

from conftest import services_required

ROOT = Path(__file__).resolve().parent.parent


def require_postgresql(*, redis: bool = False) -> None:
    """Skip (or fail in CI) unless the test database is PostgreSQL, which another process can share."""
    problems = []
    if settings.DATABASES["default"]["ENGINE"] not in ("django.db.backends.postgresql", "benchdash.postgresql"):
        problems.append("DATABASE_URL is not PostgreSQL (a server process cannot share SQLite's test database)")
    if redis and not settings.REDIS_URL:
        problems.append("REDIS_URL is not set")
    if problems:
        if services_required():
            pytest.fail("; ".join(problems))
        pytest.skip("; ".join(problems))


def database_url() -> str:
    db = settings.DATABASES["default"]
    auth = db["USER"] + (f":{db['PASSWORD']}" if db.get("PASSWORD") else "")
    return f"postgres://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def closed_port() -> int:
    """A loopback port nothing listens on (it was free a moment ago): a dead Redis, say."""
    return free_port()


def children(pid: int) -> list[int]:
    """Process ids whose parent is ``pid`` (gunicorn's workers), read from /proc."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # The command name is in parentheses and may hold spaces: the parent id follows the last ')'.
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            found.append(int(entry.name))
    return sorted(found)


@dataclass
class Gunicorn:
    process: subprocess.Popen[bytes]
    port: int
    log: Path
    workers: int
    started: list[int] = field(default_factory=list)
    # The Host every request names, by default: production answers 400 to one not in ALLOWED_HOSTS.
    host: str = ""

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def worker_pids(self) -> list[int]:
        return children(self.process.pid)

    def wait_for_workers(self, count: int, seconds: float = 30) -> list[int]:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            pids = self.worker_pids()
            if len(pids) >= count:
                return pids
            time.sleep(0.1)
        pytest.fail(
            f"gunicorn has {len(self.worker_pids())} workers, not {count}; log:\n{self.log.read_text()[-3000:]}"
        )

    def request(
        self,
        method: str,
        path: str,
        body: bytes | None = None,
        headers: dict[str, str] | None = None,
        timeout: float = 60,
    ) -> tuple[int, bytes]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            conn.request(
                method, path, body=body, headers={"Host": self.host, **(headers or {})} if self.host else headers or {}
            )
            response = conn.getresponse()
            return response.status, response.read()
        finally:
            conn.close()


@contextlib.contextmanager
def gunicorn(
    tmp_path: Path, *, workers: int = 2, threads: int = 4, env: dict[str, str] | None = None, host: str = ""
) -> Iterator[Gunicorn]:
    """gunicorn on a free loopback port against the test database, eager Celery unless ``env`` says otherwise."""
    port = free_port()
    log = tmp_path / f"gunicorn-{port}.log"
    full_env = {
        **{key: os.environ[key] for key in ("PATH", "HOME", "LANG") if key in os.environ},
        "DJANGO_SETTINGS_MODULE": "benchdash.settings",
        "DATABASE_URL": database_url(),
        "BENCHDASH_VAR_DIR": str(tmp_path),
        # The test's own cache and broker keys, should the server be given Redis (conftest: prefixes per xdist
        # worker).
        "BENCHDASH_CACHE_PREFIX": settings.CACHE_KEY_PREFIX,
        "BENCHDASH_BROKER_PREFIX": settings.BROKER_KEY_PREFIX,
        "DEBUG": "0",
        # Reads of the test's pages need no login, as in the demo.
        "BENCHDASH_PUBLIC_BROWSING": "1",
        **(env or {}),
    }
    with log.open("wb") as out:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "gunicorn",
                "benchdash.wsgi:application",
                f"--bind=127.0.0.1:{port}",
                f"--workers={workers}",
                "--worker-class=gthread",
                f"--threads={threads}",
                "--timeout=120",
                "--graceful-timeout=5",
                "--backlog=1024",
            ],
            cwd=ROOT,
            env=full_env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    server = Gunicorn(process=process, port=port, log=log, workers=workers, host=host)
    try:
        _wait_until_serving(server)
        server.started = server.wait_for_workers(workers)
        yield server
    finally:
        stop(process)
        release_test_database()


def _wait_until_serving(server: Gunicorn, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            pytest.fail(f"gunicorn exited with {server.process.returncode}:\n{server.log.read_text()[-3000:]}")
        # Serving means the app answers with its database; a test may have taken the broker away on purpose.
        with contextlib.suppress(OSError, ValueError):
            if json.loads(server.request("GET", "/healthz", timeout=5)[1]).get("database") == "ok":
                return
        time.sleep(0.2)
    pytest.fail(f"gunicorn did not answer /healthz within {seconds:.0f} s:\n{server.log.read_text()[-3000:]}")


@contextlib.contextmanager
def celery_workers(
    queue_prefix: str, env: dict[str, str] | None = None, log_dir: Path | None = None
) -> Iterator[Callable[..., Any]]:
    """``start(extra_env=None)`` starts a real Celery worker over Redis on a queue of this test's own.

    Tasks sent from the test go to that queue too. Every worker started is
    stopped by its process id at the end, and the test database is released.
    With ``log_dir`` each worker logs (INFO) to ``worker-<n>.log`` there.
    """
    require_postgresql(redis=True)
    from benchdash.celery import app

    queue = f"{queue_prefix}-{uuid.uuid4().hex[:8]}"
    saved = app.conf.task_default_queue
    app.conf.task_default_queue = queue
    started: list[subprocess.Popen[bytes]] = []

    def start(extra_env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
        full_env = {
            **os.environ,
            "DATABASE_URL": database_url(),
            "REDIS_URL": settings.REDIS_URL,
            "CELERY_QUEUE": queue,
            **(env or {}),
            **(extra_env or {}),
        }
        command = [sys.executable, "-m", "celery", "-A", "benchdash", "worker", "--pool=solo", "-Q", queue]
        if log_dir is None:
            out: Any = subprocess.DEVNULL
            command += ["-l", "WARNING"]
        else:
            out = (log_dir / f"worker-{len(started)}.log").open("wb")
            command += ["-l", "INFO"]
        try:
            proc = subprocess.Popen(command, cwd=ROOT, env=full_env, stdout=out, stderr=subprocess.STDOUT)
        finally:
            if log_dir is not None:
                out.close()
        started.append(proc)
        return proc

    try:
        yield start
    finally:
        app.conf.task_default_queue = saved
        for proc in started:
            stop(proc)
        forget_queue(queue)
        release_test_database()


# kombu's Redis transport keeps a queue's messages in a list named after it (and one per priority step beyond
# the first), its bindings in two sets, and every message taken but not yet acknowledged in two keys that all
# queues share; each key begins with the broker prefix (settings.BROKER_KEY_PREFIX).
_PRIORITY_LISTS = ("\x06\x163", "\x06\x166", "\x06\x169")


def forget_queue(queue: str) -> None:
    """Take a test's own queue out of the Redis database the suite was given, once its workers are stopped.

    A test's queue outlives it otherwise: its list, its bindings, and a message a killed or cut-off worker
    took and never acknowledged, which sits among every queue's unacknowledged messages and which any
    worker's sweep would put back on a queue nobody reads again. Only this queue's keys and messages go.
    """
    import redis

    prefix = settings.BROKER_KEY_PREFIX
    unacked, unacked_index = f"{prefix}unacked", f"{prefix}unacked_index"
    client = redis.Redis.from_url(settings.REDIS_URL)
    try:
        # The unacknowledged messages first: a sweep between the two steps would put one back on its list.
        for tag, payload in client.hscan_iter(unacked):
            with contextlib.suppress(ValueError, TypeError, IndexError):
                if json.loads(payload)[2] == queue:  # [message, exchange, routing key]
                    client.pipeline().hdel(unacked, tag).zrem(unacked_index, tag).execute()
        client.delete(
            prefix + queue,
            *(prefix + queue + step for step in _PRIORITY_LISTS),
            f"{prefix}_kombu.binding.{queue}",
            f"{prefix}_kombu.binding_permanent.{queue}",
        )
    finally:
        client.close()


def queue_idle(queue: str) -> bool:
    """Nothing waits on ``queue`` and nothing taken from it is unfinished: with late acknowledgement (the site's
    setting) a task a worker is running, or holds for a countdown, stays among the unacknowledged messages."""
    import redis

    prefix = settings.BROKER_KEY_PREFIX
    client = redis.Redis.from_url(settings.REDIS_URL)
    try:
        if any(client.llen(prefix + queue + step) for step in ("", *_PRIORITY_LISTS)):
            return False
        for _tag, payload in client.hscan_iter(f"{prefix}unacked"):
            with contextlib.suppress(ValueError, TypeError, IndexError):
                if json.loads(payload)[2] == queue:
                    return False
        return True
    finally:
        client.close()


def stop(process: subprocess.Popen[bytes], timeout: float = 20) -> None:
    """Stop one process we started, by its id: TERM, then KILL if it lingers ``timeout`` seconds."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@contextlib.contextmanager
def table_locked(table: str) -> Iterator[None]:
    """Hold a SHARE lock on ``table`` from another connection: an import that writes to it waits there.

    Used to stop an import deterministically inside its transaction (however fast it is) before killing
    its process; the lock is released on leaving.
    """
    import psycopg

    with psycopg.connect(database_url()) as blocker:
        blocker.execute(f"LOCK TABLE {table} IN SHARE MODE")
        try:
            yield
        finally:
            blocker.rollback()


def waiting_for_lock(table: str) -> bool:
    """Some other connection of the test database waits for a lock on ``table``."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation "
            "WHERE c.relname = %s AND NOT l.granted AND l.pid <> pg_backend_pid()",
            [table],
        )
        return bool(cursor.fetchone()[0])


def other_backends() -> list[int]:
    """Server process ids of the other connections to the test database (its name is ours alone)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
        return [row[0] for row in cursor.fetchall()]


def terminate_other_backends() -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
        return int(cursor.fetchone()[0])


def release_test_database(seconds: float = 15) -> None:
    """Wait for the stopped servers' connections to go; end stragglers (only of our test database)."""
    deadline = time.monotonic() + seconds
    while other_backends() and time.monotonic() < deadline:
        time.sleep(0.2)
    if other_backends():
        terminate_other_backends()


def multipart(fields: dict[str, str], files: dict[str, tuple[str, bytes]]) -> tuple[bytes, str]:
    """A multipart/form-data body and its content type."""
    boundary = uuid.uuid4().hex
    parts = []
    for name, value in fields.items():
        parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode())
    for name, (filename, data) in files.items():
        head = (
            f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"; filename="{filename}"\r\n'
            "Content-Type: application/octet-stream\r\n\r\n"
        )
        parts.append(head.encode() + data + b"\r\n")
    parts.append(f"--{boundary}--\r\n".encode())
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"


class TcpProxy:
    """A loopback TCP proxy to a real service whose connections a test can cut and let through again.

    ``cut()`` closes every open connection and refuses new ones (the port stays
    bound, so clients see resets, as when a server dies); ``restore()`` lets
    them through again. Only what goes through the proxy is affected: the
    shared service itself is never touched.
    """

    def __init__(self, target_port: int, target_host: str = "127.0.0.1") -> None:
        self.target = (target_host, target_port)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self.listener.getsockname()[1])
        self.up = threading.Event()
        self.up.set()
        self.flowing = threading.Event()  # cleared by hang(): connections stay open, nothing passes
        self.flowing.set()
        self.lock = threading.Lock()
        self.open: set[socket.socket] = set()
        self.closing = False
        self.accepted = 0
        self.refused = 0
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def url(self, scheme: str, tail: str = "") -> str:
        return f"{scheme}://127.0.0.1:{self.port}{tail}"

    def redis_url(self, real: str) -> str:
        """``real`` (a redis:// URL of the proxied server) with the proxy as its host: same database."""
        parts = urlsplit(real)
        auth = parts.netloc.rpartition("@")[0]
        netloc = f"{auth}@127.0.0.1:{self.port}" if auth else f"127.0.0.1:{self.port}"
        return urlunsplit((parts.scheme, netloc, parts.path, parts.query, ""))

    def _accept(self) -> None:
        while not self.closing:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            if not self.up.is_set():
                with self.lock:
                    self.refused += 1
                _reset(client)
                continue
            try:
                upstream = socket.create_connection(self.target, timeout=5)
            except OSError:
                _reset(client)
                continue
            upstream.settimeout(None)
            with self.lock:
                self.open.update((client, upstream))
                self.accepted += 1
            for src, dst in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(src, dst), daemon=True).start()

    def _pipe(self, src: socket.socket, dst: socket.socket) -> None:
        try:
            while chunk := src.recv(65536):
                self.flowing.wait()
                dst.sendall(chunk)
        except OSError:
            pass
        finally:
            for sock in (src, dst):
                self._drop(sock)

    def _drop(self, sock: socket.socket) -> None:
        with self.lock:
            self.open.discard(sock)
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)
        with contextlib.suppress(OSError):
            sock.close()

    def connections(self) -> int:
        with self.lock:
            return len(self.open) // 2

    def cut(self) -> None:
        self.up.clear()
        with self.lock:
            socks = list(self.open)
        for sock in socks:
            self._drop(sock)

    def hang(self) -> None:
        """A server that accepts and never answers: connections open, every byte held back."""
        self.flowing.clear()

    def restore(self) -> None:
        self.up.set()
        self.flowing.set()

    def close(self) -> None:
        self.closing = True
        self.cut()
        self.flowing.set()  # pipes held by hang() see their dropped sockets and end
        with contextlib.suppress(OSError):
            self.listener.close()
        self.thread.join(timeout=5)


def _reset(sock: socket.socket) -> None:
    """Close with a reset (SO_LINGER 0), as a dead server's port answers."""
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    with contextlib.suppress(OSError):
        sock.close()


@contextlib.contextmanager
def tcp_proxy(target_port: int, target_host: str = "127.0.0.1") -> Iterator[TcpProxy]:
    proxy = TcpProxy(target_port, target_host)
    try:
        yield proxy
    finally:
        proxy.close()


def redis_port(url: str) -> int:
    return urlsplit(url).port or 6379


@contextlib.contextmanager
def services_behind_proxies() -> Iterator[tuple[dict[str, TcpProxy], dict[str, str]]]:
    """PostgreSQL, the broker's Redis and the cache's Redis each behind a loopback proxy a test can cut or hang:
    the proxies by the name /healthz gives each service, and the environment that points a server at them."""
    require_postgresql(redis=True)
    from django.conf import settings

    db = settings.DATABASES["default"]
    with (
        tcp_proxy(int(db["PORT"] or 5432), db["HOST"] or "127.0.0.1") as pg,
        tcp_proxy(redis_port(settings.REDIS_URL)) as broker,
        tcp_proxy(redis_port(settings.REDIS_CACHE_URL)) as cache_redis,
    ):
        env = {
            "DATABASE_URL": database_url().replace(f":{db['PORT'] or 5432}/", f":{pg.port}/"),
            "REDIS_URL": broker.redis_url(settings.REDIS_URL),
            "REDIS_CACHE_URL": cache_redis.redis_url(settings.REDIS_CACHE_URL),
        }
        yield {"database": pg, "broker": broker, "cache": cache_redis}, env
