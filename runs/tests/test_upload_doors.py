"""Who may make the server write an upload to disk, checked before the body is read; a full temporary disk; chunked
uploads. Through gunicorn, with the upload spool on a small tmpfs of the test's own (root only: mount/umount)."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from accounts.permissions import UPLOADER, VIEWER, create_token
from runs.models import Bundle
from runs.tests import hostile
from tests import live

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

SPOOL_BYTES = 4 * 1024 * 1024
MB = 1024 * 1024


@pytest.fixture
def spool(tmp_path: Path) -> Iterator[Path]:
    """A 4 MB tmpfs for the upload spool, unmounted at the end."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    where = tmp_path / "spool"
    where.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={SPOOL_BYTES}", "tmpfs", str(where)], capture_output=True, check=False
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False, timeout=30)


def _used(where: Path) -> int:
    stat = os.statvfs(where)
    return (stat.f_blocks - stat.f_bfree) * stat.f_frsize


def _head(boundary: str) -> bytes:
    return (
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="b.tar.gz"\r\n'
        "Content-Type: application/octet-stream\r\n\r\n"
    ).encode()


def _exchange(
    port: int, path: str, headers: dict[str, str], body: Iterator[bytes]
) -> tuple[int, dict[str, str], bytes]:
    """Send headers and the body's pieces (stopping early if the server already answered); the answer."""
    with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
        head = f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n" + "".join(
            f"{k}: {v}\r\n" for k, v in headers.items()
        )
        sock.sendall(head.encode() + b"\r\n")
        with contextlib.suppress(OSError):  # the server may answer and close before the rest is sent
            for piece in body:
                sock.sendall(piece)
        answer = b""
        with contextlib.suppress(OSError):
            while chunk := sock.recv(65536):
                answer += chunk
    head_bytes, _, payload = answer.partition(b"\r\n\r\n")
    status_line, *lines = head_bytes.decode("latin-1").split("\r\n")
    return int(status_line.split()[1]), dict(line.split(": ", 1) for line in lines if ": " in line), payload


def _chunked(data: bytes, size: int = 64 * 1024) -> Iterator[bytes]:
    for start in range(0, len(data), size):
        piece = data[start : start + size]
        yield f"{len(piece):x}\r\n".encode() + piece + b"\r\n"
    yield b"0\r\n\r\n"


@pytest.fixture
def server(tmp_path: Path, spool: Path) -> Iterator[live.Gunicorn]:
    live.require_postgresql()
    with live.gunicorn(tmp_path, workers=1, threads=2, env={"BENCHDASH_UPLOAD_TEMP_DIR": str(spool)}) as running:
        yield running


def test_anonymous_and_role_less_bodies_are_refused_after_their_headers_and_nothing_reaches_the_disk(
    server: live.Gunicorn, spool: Path, user_with_role: Callable[..., Any]
) -> None:
    viewer_token = create_token(user_with_role(VIEWER), "viewer")[1]
    boundary = uuid.uuid4().hex
    multipart = {"Content-Type": f"multipart/form-data; boundary={boundary}", "Content-Length": str(50 * MB)}
    before = _used(spool)
    cases = [
        ("/account/login/", {}, 302),
        ("/upload/", {}, 302),
        ("/api/bundles/", {}, 401),
        ("/api/bundles/", {"Authorization": "Bearer bd_not-a-token"}, 401),
        ("/api/bundles/", {"Authorization": f"Bearer {viewer_token}"}, 403),
    ]
    for path, extra, expected in cases:
        # Only the headers and a first 64 KiB go out: a server reading the body first would wait for the rest.
        status, headers, body = _exchange(server.port, path, {**multipart, **extra}, iter([_head(boundary)]))
        assert status == expected, (path, extra, status, body[:200])
        if expected == 302:
            assert "/account/login/" in headers["Location"]
        else:
            assert "detail" in json.loads(body)
    # A role-less file part small enough to be read: refused at the part's start, stored nowhere.
    small = _head(boundary) + b"\x1f\x8b" + bytes(MB) + f"\r\n--{boundary}--\r\n".encode()
    status, _, body = _exchange(
        server.port,
        "/api/bundles/",
        {**multipart, "Content-Length": str(len(small)), "Authorization": f"Bearer {viewer_token}"},
        iter([small]),
    )
    assert status == 403 and "runs.add_bundle" in json.loads(body)["detail"]
    # Chunked, from nobody: refused before its body is read.
    status, _, _ = _exchange(
        server.port,
        "/api/bundles/",
        {"Content-Type": f"multipart/form-data; boundary={boundary}", "Transfer-Encoding": "chunked"},
        _chunked(small),
    )
    assert status == 401
    assert _used(spool) == before
    assert Bundle.objects.count() == 0


def test_a_full_upload_spool_is_a_clear_507_and_leaves_nothing_behind(
    server: live.Gunicorn, spool: Path, user_with_role: Callable[..., Any]
) -> None:
    token = create_token(user_with_role(UPLOADER), "uploader")[1]
    boundary = uuid.uuid4().hex
    # Past the 10 MB kept in memory, so it spools to the 4 MB tmpfs and fills it.
    body = _head(boundary) + b"\x1f\x8b" + bytes(12 * MB) + f"\r\n--{boundary}--\r\n".encode()
    before = _used(spool)
    headers = {
        "Authorization": f"Bearer {token}",
        "Content-Type": f"multipart/form-data; boundary={boundary}",
        "Content-Length": str(len(body)),
    }
    status, _, answer = _exchange(server.port, "/api/bundles/", headers, iter([body]))
    assert status == 507, answer[:300]
    assert "temporary upload space is full" in json.loads(answer)["detail"]
    assert _used(spool) == before  # the unnamed spool file was closed: its space is back
    assert Bundle.objects.count() == 0
    # The server is fine: a normal upload right after is imported.
    good = _head(boundary) + hostile.tgz(hostile.good_run()) + f"\r\n--{boundary}--\r\n".encode()
    status, _, answer = _exchange(
        server.port, "/api/bundles/", {**headers, "Content-Length": str(len(good))}, iter([good])
    )
    assert status == 201, answer[:300]


def test_a_chunked_upload_without_a_content_length_is_read_through_and_imported(
    server: live.Gunicorn, user_with_role: Callable[..., Any]
) -> None:
    token = create_token(user_with_role(UPLOADER), "uploader")[1]
    boundary = uuid.uuid4().hex
    good = _head(boundary) + hostile.tgz(hostile.good_run()) + f"\r\n--{boundary}--\r\n".encode()
    headers = {
        "Authorization": f"Bearer {token}",
        "Content-Type": f"multipart/form-data; boundary={boundary}",
        "Transfer-Encoding": "chunked",
    }
    status, _, answer = _exchange(server.port, "/api/bundles/", headers, _chunked(good, 4096))
    assert status == 201, answer[:300]
    assert Bundle.objects.get().status == Bundle.Status.IMPORTED
