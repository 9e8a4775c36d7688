"""Real receivers on 127.0.0.1 for the alert tests: an HTTP server that records what it is sent (and can
refuse the first requests), and a small SMTP server speaking the protocol Django's SMTP backend uses.

Both run in a thread of the test's process on a port of their own and are shut down when the test ends.
The SMTP server is written here on the standard library's socketserver: the old ``smtpd`` module is gone
from newer Pythons and warns on this one.
"""

from __future__ import annotations

import email
import email.message
import email.policy
import json
import socketserver
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


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
    refuse_first: int = 0  # answer this many DATA commands with a temporary failure (451)
    mails: list[Mail] = field(default_factory=list)
    refused: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


@contextmanager
def smtp_server(refuse_first: int = 0) -> Iterator[SmtpServer]:
    state = SmtpServer(port=0, refuse_first=refuse_first)

    class Handler(socketserver.StreamRequestHandler):
        def reply(self, line: str) -> None:
            self.wfile.write(line.encode() + b"\r\n")

        def handle(self) -> None:
            self.reply("220 loopback ESMTP")
            sender, recipients = "", []
            while line := self.rfile.readline(65536):
                command = line.decode("utf-8", "replace").rstrip("\r\n")
                verb = command[:4].upper()
                if verb == "EHLO":
                    self.wfile.write(b"250-loopback\r\n250-8BITMIME\r\n250 SMTPUTF8\r\n")
                elif verb == "HELO":
                    self.reply("250 loopback")
                elif verb == "MAIL":
                    sender, recipients = _address(command), []
                    self.reply("250 OK")
                elif verb == "RCPT":
                    recipients.append(_address(command))
                    self.reply("250 OK")
                elif verb == "DATA":
                    self.reply("354 end with <CRLF>.<CRLF>")
                    data = self._read_data()
                    with state.lock:
                        refuse = state.refused < state.refuse_first
                        if refuse:
                            state.refused += 1
                        else:
                            message = email.message_from_bytes(data, policy=email.policy.default)
                            state.mails.append(Mail(sender, recipients, message))  # type: ignore[arg-type]
                    self.reply("451 4.3.0 try again later" if refuse else "250 OK queued")
                elif verb in ("RSET", "NOOP"):
                    if verb == "RSET":
                        sender, recipients = "", []
                    self.reply("250 OK")
                elif verb == "QUIT":
                    self.reply("221 bye")
                    return
                else:
                    self.reply("502 5.5.2 not implemented")

        def _read_data(self) -> bytes:
            lines = []
            while (line := self.rfile.readline(65536)) not in (b".\r\n", b""):
                lines.append(line[1:] if line.startswith(b"..") else line)  # undo dot-stuffing
            return b"".join(lines)

    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    state.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def _address(command: str) -> str:
    return command.partition(":")[2].split()[0].strip("<>") if ":" in command else ""


def wait_for(condition: Callable[[], bool], seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.1)
    raise AssertionError(f"waited {seconds} s for {what}")
