"""What the runner tests need of the real services: where they are, and how a missing one is reported.

A missing server or a missing sysbench is a skip, unless CI sets
BENCHDASH_REQUIRE_SERVICES=1, which makes it a failure.
"""

from __future__ import annotations

import contextlib
import os
import socket
import struct
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, NoReturn

import pytest

from runner.models import Target

MARIADB_HOST, MARIADB_PORT, MARIADB_ADMIN = "127.0.0.1", 3306, "root"
POSTGRES_HOST, POSTGRES_PORT, POSTGRES_ADMIN = "127.0.0.1", 5432, "postgres"
# One user per test process too: each (re)creates it with a password of its own.
RUNNER_USER = f"benchdash_runner_{os.getpid()}"


# The smallest sysbench run the runner tests start: one table of 10,000 rows, one client, two seconds.
TINY: dict[str, Any] = {
    "microbenchmarks": ["point-query_range=100"],
    "tables": 1,
    "table_size": 10_000,
    "threads": [1],
    "seconds": 2,
    "warmup_seconds": 0,
}


def services_required() -> bool:
    return os.environ.get("BENCHDASH_REQUIRE_SERVICES") == "1"


def missing(reason: str) -> NoReturn:
    if services_required():
        pytest.fail(f"BENCHDASH_REQUIRE_SERVICES=1 but {reason}")
    pytest.skip(reason)


def scratch_database() -> str:
    # One per test process (and xdist worker): two test runs on one machine never drop each other's tables.
    return f"benchdash_runner_test_{os.getpid()}"


@dataclass(frozen=True)
class Server:
    """A reachable database server with a scratch database: what a Target needs."""

    kind: str
    host: str
    port: int
    user: str
    password: str
    database: str

    def target(self, **overrides: object) -> Target:
        values: dict[str, object] = {
            "name": f"{self.kind} under test",
            "kind": self.kind,
            "host": self.host,
            "port": self.port,
            "user": self.user,
            "password": self.password,
            "database": self.database,
            "build_label": "ma101119_rel" if self.kind == "mariadb" else "pg1520_rel",
            "config_label": "tiny",
            "server_name": "runner-test-host",
        }
        values.update(overrides)
        return Target.objects.create(**values)


class SlowLink:
    """A loopback TCP link to a real server that holds every reply ``delay`` seconds before passing it on: a
    server reached over a slower network. Each query waits at least that long for its answer, however idle or busy
    the machine, so a target behind it is slower for real by an amount that does not depend on CPU contention."""

    def __init__(self, target_port: int, delay: float, target_host: str = "127.0.0.1") -> None:
        self.target = (target_host, target_port)
        self.delay = delay
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.settimeout(0.2)
        self.port = int(self.listener.getsockname()[1])
        self.lock = threading.Lock()
        self.open: set[socket.socket] = set()
        self.closed = threading.Event()
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self) -> None:
        while not self.closed.is_set():
            try:
                client, _ = self.listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            client.settimeout(None)
            try:
                upstream = socket.create_connection(self.target, timeout=5)
            except OSError:
                client.close()  # the client sees the refusal as the server's
                continue
            upstream.settimeout(None)
            for sock in (client, upstream):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self.lock:
                self.open.update((client, upstream))
            threading.Thread(target=self._pipe, args=(client, upstream, 0.0), daemon=True).start()
            threading.Thread(target=self._pipe, args=(upstream, client, self.delay), daemon=True).start()

    def _pipe(self, src: socket.socket, dst: socket.socket, delay: float) -> None:
        try:
            while chunk := src.recv(65536):
                if delay:
                    time.sleep(delay)
                dst.sendall(chunk)
        except OSError:
            pass
        finally:
            for sock in (src, dst):
                with self.lock:
                    self.open.discard(sock)
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
                with contextlib.suppress(OSError):
                    sock.close()

    def close(self) -> None:
        self.closed.set()
        self.thread.join(timeout=5)
        self.listener.close()
        with self.lock:
            socks = list(self.open)
        for sock in socks:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)


@contextlib.contextmanager
def slow_link(target_port: int, delay: float, target_host: str = "127.0.0.1") -> Iterator[SlowLink]:
    link = SlowLink(target_port, delay, target_host)
    try:
        yield link
    finally:
        link.close()


SSL_REQUEST, GSS_REQUEST = 80877103, 80877104


class FakePostgres:
    """Accepts connections on a free loopback port, asks each client for a cleartext password and keeps every
    byte it receives."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.settimeout(0.1)
        self.port: int = self.sock.getsockname()[1]
        self.connections = 0
        self.received = bytearray()
        self.closed = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self.closed.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.connections += 1
            with conn, contextlib.suppress(OSError, struct.error):
                self._talk(conn)

    def _read(self, conn: socket.socket, n: int) -> bytes:
        data = b""
        while len(data) < n:
            chunk = conn.recv(n - len(data))
            if not chunk:
                raise OSError("client went away")
            data += chunk
        self.received += data
        return data

    def _talk(self, conn: socket.socket) -> None:
        conn.settimeout(5)
        while True:
            (length,) = struct.unpack("!i", self._read(conn, 4))
            body = self._read(conn, length - 4)
            if struct.unpack("!i", body[:4])[0] in (SSL_REQUEST, GSS_REQUEST):
                conn.sendall(b"N")  # no encryption: the password would come in clear
                continue
            break
        conn.sendall(b"R" + struct.pack("!ii", 8, 3))  # AuthenticationCleartextPassword
        kind = self._read(conn, 1)
        (length,) = struct.unpack("!i", self._read(conn, 4))
        self._read(conn, length - 4)
        assert kind == b"p"

    def saw(self, text: str) -> bool:
        return text.encode() in self.received

    def close(self) -> None:
        self.closed.set()
        self.thread.join(timeout=5)
        self.sock.close()
