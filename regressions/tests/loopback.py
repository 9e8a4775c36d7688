"""Real receivers on 127.0.0.1 for the alert tests: an HTTP server that records what it is sent (and can
refuse the first requests), and an SMTP server (aiosmtpd) that records the mail Django's SMTP backend sends
(and can refuse the first messages).

Both run in a thread of the test's process on a port of their own and are shut down when the test ends.
"""

from __future__ import annotations

import email
import email.message
import email.policy
import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP, Envelope, Session


@dataclass
class Request:
    path: str
    headers: dict[str, str]
    body: bytes
    at: float
    answered: int

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class HttpReceiver:
    port: int
    fail_first: int = 0  # answer this many requests with ``fail_status`` before accepting
    fail_status: int = 503
    per_story: bool = False  # count ``fail_first`` per story of the JSON body, not over all requests
    requests: list[Request] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def url(self, path: str = "/hook") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def accepted(self) -> list[Request]:
        with self.lock:
            return [r for r in self.requests if 200 <= r.answered < 300]


@contextmanager
def http_receiver(fail_first: int = 0, fail_status: int = 503, per_story: bool = False) -> Iterator[HttpReceiver]:
    receiver = HttpReceiver(port=0, fail_first=fail_first, fail_status=fail_status, per_story=per_story)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            with receiver.lock:
                earlier = receiver.requests
                if receiver.per_story:
                    earlier = [r for r in earlier if _story_id(r.body) == _story_id(body)]
                failing = len(earlier) < receiver.fail_first
                status = receiver.fail_status if failing else 200
                receiver.requests.append(Request(self.path, dict(self.headers), body, time.monotonic(), status))
            answer = b"try again later" if failing else b"ok"
            self.send_response(status)
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, *args: Any) -> None:
            pass  # the test reads ``requests``; nothing on stderr

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    receiver.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield receiver
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def _story_id(body: bytes) -> Any:
    try:
        return json.loads(body)["story"]["id"]
    except (ValueError, KeyError, TypeError):
        return None


@dataclass
class Mail:
    sender: str
    recipients: list[str]
    message: email.message.EmailMessage

    @property
    def subject(self) -> str:
        return str(self.message["Subject"]).strip()  # a folded encoded header starts with its fold

    @property
    def body(self) -> str:
        part = self.message.get_body(("plain",))
        assert part is not None
        return str(part.get_content())  # type: ignore[attr-defined]


@dataclass
class SmtpServer:
    port: int
    refuse_first: int = 0  # answer this many messages with a temporary failure (451)
    mails: list[Mail] = field(default_factory=list)
    refused: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        """aiosmtpd's hook for a message the client has sent in full: record it, or refuse it for now."""
        with self.lock:
            if self.refused < self.refuse_first:
                self.refused += 1
                return "451 4.3.0 try again later"
            message = email.message_from_bytes(envelope.original_content or b"", policy=email.policy.default)
            self.mails.append(Mail(envelope.mail_from or "", list(envelope.rcpt_tos), message))  # type: ignore[arg-type]
        return "250 OK queued"


class _Controller(Controller):
    """aiosmtpd's threaded controller on a port the system picks (port=0).

    Controller 1.4.6 connects once to ``self.port`` after it starts listening, to build its SMTP object; with
    port 0 that connection would fail, so the port actually bound is read from the listening socket first.
    """

    def _trigger_server(self) -> None:
        assert self.server is not None
        self.port = self.server.sockets[0].getsockname()[1]
        super()._trigger_server()


@contextmanager
def smtp_server(refuse_first: int = 0) -> Iterator[SmtpServer]:
    state = SmtpServer(port=0, refuse_first=refuse_first)
    controller = _Controller(state, hostname="127.0.0.1", port=0)
    controller.start()
    state.port = controller.port
    try:
        yield state
    finally:
        controller.stop()


def wait_for(condition: Callable[[], bool], seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.1)
    raise AssertionError(f"waited {seconds} s for {what}")
