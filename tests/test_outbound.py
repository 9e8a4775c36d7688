"""Outbound requests (alert webhooks) go only where an administrator allowed, to the address checked, and say
only a status and a classified reason: the red-team pass's internal-service and port-scan checks, on loopback."""

from __future__ import annotations

import ipaddress
import re
import socket
import struct
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from benchdash import outbound
from tests.live import closed_port

SECRET = b"INTERNAL-ONLY-SECRET admin token 0123"
LOOPBACK = outbound.parse_networks(["127.0.0.1/32"])


@contextmanager
def internal_service(status: int = 500, location: str = "") -> Iterator[tuple[int, list[dict[str, str]]]]:
    """An 'internal admin' HTTP server on loopback that answers ``status`` with a secret body."""
    seen: list[dict[str, str]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            seen.append(dict(self.headers))
            self.send_response(status)
            if location:
                self.send_header("Location", location)
            self.send_header("Content-Length", str(len(SECRET)))
            self.end_headers()
            self.wfile.write(SECRET)

        do_GET = do_POST

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1], seen
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def resetting_port() -> Iterator[int]:
    """A loopback port that accepts a connection and resets it at once (RST, not FIN)."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(5)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1]
    finally:
        stop.set()
        listener.close()


def _post(url: str, networks: Any = ()) -> str:
    try:
        outbound.post_json(url, {"text": "hi"}, networks=networks, timeout=2, user_agent="test")
    except outbound.OutboundRefused as exc:
        return exc.reason
    return "sent"


@pytest.mark.parametrize(
    ("address", "networks", "expected"),
    [
        ("8.8.8.8", (), True),
        ("127.0.0.1", (), False),
        ("10.1.2.3", (), False),
        ("192.168.1.1", (), False),
        ("172.16.0.1", (), False),
        ("100.64.0.1", (), False),  # carrier-grade NAT: not public
        ("::1", (), False),
        ("fc00::1", (), False),
        ("::ffff:127.0.0.1", (), False),
        ("224.0.0.1", (), False),
        ("10.1.2.3", ("10.0.0.0/8",), True),
        ("8.8.8.8", ("10.0.0.0/8",), False),  # a list replaces "public only"
        ("169.254.169.254", ("0.0.0.0/0",), False),  # metadata: never, whatever the list
        ("fd00:ec2::254", ("::/0",), False),
        ("::ffff:169.254.169.254", ("::/0", "0.0.0.0/0"), False),
    ],
)
def test_an_address_is_allowed_only_when_public_or_listed_and_never_link_local(
    address: str, networks: tuple[str, ...], expected: bool
) -> None:
    assert outbound.allowed(ipaddress.ip_address(address), outbound.parse_networks(networks)) is expected


def test_a_bad_network_in_the_setting_is_an_error_naming_it() -> None:
    with pytest.raises(ValueError, match=re.escape("'10.0.0.0/33'")):
        outbound.parse_networks(["10.0.0.0/8", "10.0.0.0/33"])


@pytest.mark.parametrize(
    "spelling",
    [
        "127.0.0.1",
        "localhost",
        "127.1",
        "2130706433",
        "0x7f000001",
        "0177.0.0.1",
        "[::ffff:127.0.0.1]",
        "[::1]",
        "127.0.0.1.nip.invalid",
    ],
)
def test_by_default_no_spelling_of_loopback_reaches_an_internal_service(spelling: str) -> None:
    with internal_service() as (port, seen):
        reason = _post(f"http://{spelling}:{port}/internal-admin/reset")
    assert seen == []
    assert reason.startswith("refused") or reason == "the host name does not resolve"


def test_an_allowed_internal_service_shows_its_status_never_its_body() -> None:
    with internal_service(500) as (port, seen):
        reason = _post(f"http://127.0.0.1:{port}/internal-admin/reset", LOOPBACK)
    assert len(seen) == 1 and reason == "HTTP 500"
    assert "SECRET" not in reason


def test_a_redirect_is_not_followed() -> None:
    with (
        internal_service(200) as (target, reached),
        internal_service(302, f"http://127.0.0.1:{target}/") as (
            port,
            seen,
        ),
    ):
        reason = _post(f"http://127.0.0.1:{port}/hook", LOOPBACK)
    assert reason == "HTTP 302: redirects are not followed"
    assert len(seen) == 1 and reached == []


def test_a_closed_port_and_a_resetting_one_read_the_same() -> None:
    closed = _post(f"http://127.0.0.1:{closed_port()}/x", LOOPBACK)
    with resetting_port() as port:
        reset = _post(f"http://127.0.0.1:{port}/x", LOOPBACK)
    assert closed == reset == "no answer: the connection failed or timed out"


def test_the_connection_goes_to_the_address_checked_with_the_name_in_the_host_header(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A resolver whose answer changes after the first question (DNS rebinding): 127.0.0.1, then 127.0.0.2.
    answers: list[str] = []
    real = socket.getaddrinfo

    def rebinding(host: str, *args: Any, **kwargs: Any) -> Any:
        if host != "hook.rebind.test":
            return real(host, *args, **kwargs)
        answers.append("127.0.0.1" if not answers else "127.0.0.2")
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (answers[-1], args[0] if args else 0))]

    monkeypatch.setattr(socket, "getaddrinfo", rebinding)
    with internal_service(204) as (port, seen):
        reason = _post(f"http://hook.rebind.test:{port}/x", LOOPBACK)
    assert reason == "sent" and answers == ["127.0.0.1"]  # asked once; connected to what was checked
    assert seen[0]["Host"] == f"hook.rebind.test:{port}"


def test_a_name_with_one_internal_address_among_public_ones_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    def mixed(host: str, *args: Any, **kwargs: Any) -> Any:
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (a, 80)) for a in ("93.184.215.14", "127.0.0.1")]

    monkeypatch.setattr(socket, "getaddrinfo", mixed)
    assert _post("http://mixed.test/x").startswith("refused")


@pytest.mark.django_db
def test_a_destination_that_keeps_failing_is_held_back_with_growing_waits(
    settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.BENCHDASH_ALERT_NETWORKS = ["127.0.0.1/32"]
    settings.BENCHDASH_ALERT_RETRY_DELAY, settings.BENCHDASH_ALERT_RETRY_MAX_DELAY = 30, 3600
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    tries: list[int] = []
    send: Callable[..., int] = outbound.post_json

    def counting(*args: Any, **kwargs: Any) -> int:
        tries.append(1)
        return send(*args, **kwargs)

    monkeypatch.setattr(outbound, "post_json", counting)
    url = f"http://127.0.0.1:{closed_port()}/hook"
    reasons = []
    for _ in range(50):
        try:
            outbound.send_json(url, {})
        except outbound.OutboundRefused as exc:
            reasons.append(exc.reason)
    assert len(tries) == 1  # one connection attempt; the 49 others wait for the back-off
    assert reasons[0].startswith("no answer") and reasons[-1].startswith("held back after 1 failures")
