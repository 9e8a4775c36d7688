"""The upload doors refuse an over-limit body while reading it: 413, a clear error, nothing stored.

A declared Content-Length over the limit is refused before the body is read; a
file part over the limit (inside the room left for the form fields) is stopped
by the counting upload handler as it streams in. The gunicorn tests send the
headers and only the start of a huge body, then wait for the answer: a server
that read the body first would wait for bytes that never come.
"""

from __future__ import annotations

import json
import socket
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from accounts.permissions import UPLOADER, create_token
from runs.models import Bundle
from runs.tests import hostile
from runs.uploadlimit import FORM_MARGIN_BYTES
from tests import live

LIMIT = 256 * 1024
TOO_BIG = rf"over the {LIMIT:,}-byte bundle limit; nothing was stored"


@pytest.fixture
def small_limit(settings: Any) -> int:
    settings.BUNDLE_MAX_BYTES = LIMIT
    return LIMIT


@pytest.fixture
def api_client(user_with_role: Callable[..., Any]) -> Client:
    token = create_token(user_with_role(UPLOADER), "upload limit")[1]
    return Client(headers={"Authorization": f"Bearer {token}"})


@pytest.mark.django_db
def test_the_api_answers_413_in_json_to_a_body_declared_over_the_limit(small_limit: int, api_client: Client) -> None:
    upload = SimpleUploadedFile("big.tar.gz", b"\x1f\x8b" + bytes(3 * small_limit))
    response = api_client.post("/api/bundles/", {"file": upload})
    assert response.status_code == 413
    assert response["Content-Type"] == "application/json"
    assert response.json()["detail"].endswith(f"over the {small_limit:,}-byte bundle limit; nothing was stored")
    assert Bundle.objects.count() == 0


@pytest.mark.django_db
def test_a_file_over_the_limit_within_the_room_for_form_fields_is_stopped_while_it_streams_in(
    small_limit: int, api_client: Client
) -> None:
    size = small_limit + FORM_MARGIN_BYTES // 2
    upload = SimpleUploadedFile("big.tar.gz", b"\x1f\x8b" + bytes(size))
    response = api_client.post("/api/bundles/", {"file": upload, "server": "pn53"})
    assert response.status_code == 413
    assert response.json() == {
        "detail": f"the upload is over the {small_limit:,}-byte bundle limit; nothing was stored"
    }
    assert Bundle.objects.count() == 0


@pytest.mark.django_db
def test_the_upload_page_answers_413_with_a_page_that_says_the_limit(
    small_limit: int, user_with_role: Callable[..., Any]
) -> None:
    client = Client()
    client.force_login(user_with_role(UPLOADER))
    upload = SimpleUploadedFile("big.tar.gz", bytes(small_limit + 1))
    response = client.post("/upload/", {"bundle": upload})
    assert response.status_code == 413
    assert f"over the {small_limit:,}-byte bundle limit" in response.content.decode()
    assert Bundle.objects.count() == 0


@pytest.mark.django_db(transaction=True)
def test_a_bundle_under_the_limit_is_still_imported(small_limit: int, api_client: Client) -> None:
    data = hostile.tgz(hostile.good_run())
    assert len(data) < small_limit
    response = api_client.post("/api/bundles/", {"file": SimpleUploadedFile("ok.tar.gz", data)})
    assert response.status_code == 201, response.content
    assert Bundle.objects.get().status == Bundle.Status.IMPORTED


# --------------------------------------------------------------------------- a real gunicorn


def _multipart_head(boundary: str, filename: str) -> bytes:
    return (
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{filename}"\r\n'
        "Content-Type: application/octet-stream\r\n\r\n"
    ).encode()


def _send_partly(port: int, path: str, headers: dict[str, str], body_start: bytes) -> tuple[int, bytes]:
    """Send the headers and only ``body_start``, then read the answer; a server that waits for more times out."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        head = f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n" + "".join(
            f"{k}: {v}\r\n" for k, v in headers.items()
        )
        sock.sendall(head.encode() + b"\r\n" + body_start)
        answer = b""
        try:
            while chunk := sock.recv(65536):
                answer += chunk
        except TimeoutError:
            pytest.fail(f"no answer within 30 s after {len(body_start):,} bytes of the body: {answer[:200]!r}")
    status_line, _, rest = answer.partition(b"\r\n")
    return int(status_line.split()[1]), rest.partition(b"\r\n\r\n")[2]


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_gunicorn_refuses_a_600_mb_upload_after_reading_only_its_headers(
    tmp_path: Path, user_with_role: Callable[..., Any]
) -> None:
    live.require_postgresql()
    token = create_token(user_with_role(UPLOADER), "gunicorn")[1]
    boundary = uuid.uuid4().hex
    with live.gunicorn(tmp_path, workers=1, threads=1, env={"BUNDLE_MAX_BYTES": str(LIMIT)}) as server:
        status, body = _send_partly(
            server.port,
            "/api/bundles/",
            {
                "Authorization": f"Bearer {token}",
                "Content-Type": f"multipart/form-data; boundary={boundary}",
                "Content-Length": str(600 * 1024 * 1024),
            },
            _multipart_head(boundary, "huge.tar.gz") + bytes(64 * 1024),
        )
        assert status == 413
        assert json.loads(body)["detail"].endswith(f"over the {LIMIT:,}-byte bundle limit; nothing was stored")
        # The page door, logged out: sent to log in, still after the headers only (its 413 page for an uploader:
        # test_the_upload_page_answers_413_with_a_page_that_says_the_limit).
        status, body = _send_partly(
            server.port,
            "/upload/",
            {"Content-Type": f"multipart/form-data; boundary={boundary}", "Content-Length": str(600 * 1024 * 1024)},
            _multipart_head(boundary, "huge.tar.gz"),
        )
        assert status == 302
    assert Bundle.objects.count() == 0


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_gunicorn_stops_a_file_part_over_the_limit_as_it_streams_and_still_imports_one_under_it(
    tmp_path: Path, user_with_role: Callable[..., Any]
) -> None:
    live.require_postgresql()
    token = create_token(user_with_role(UPLOADER), "gunicorn")[1]
    boundary = uuid.uuid4().hex
    tail = f"\r\n--{boundary}--\r\n".encode()
    with live.gunicorn(tmp_path, workers=1, threads=1, env={"BUNDLE_MAX_BYTES": str(LIMIT)}) as server:
        head = _multipart_head(boundary, "big.tar.gz")
        over = head + b"\x1f\x8b" + bytes(LIMIT + 1024) + tail
        assert len(over) < LIMIT + FORM_MARGIN_BYTES  # the declared length passes: the handler must count
        headers = {
            "Authorization": f"Bearer {token}",
            "Content-Type": f"multipart/form-data; boundary={boundary}",
        }
        status, body = _send_partly(server.port, "/api/bundles/", {**headers, "Content-Length": str(len(over))}, over)
        assert status == 413
        assert json.loads(body) == {"detail": f"the upload is over the {LIMIT:,}-byte bundle limit; nothing was stored"}
        good = head + hostile.tgz(hostile.good_run()) + tail
        status, body = _send_partly(server.port, "/api/bundles/", {**headers, "Content-Length": str(len(good))}, good)
        assert status == 201, body
    assert Bundle.objects.get().status == Bundle.Status.IMPORTED
