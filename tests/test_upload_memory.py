"""A big upload is never held whole by the web process that receives it (a real gunicorn, production mode).

The upload streams to a temporary file, is hashed and stored from there a
chunk at a time; the gunicorn worker's peak resident size (the kernel's
high-water mark, reset just before the upload) grows by a few chunks, not by
the upload. Before chunked storage a 300 MB upload took the worker to 4 GB.
"""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings

from accounts.permissions import UPLOADER, create_token
from runs.models import Bundle, BundleChunk, Result
from runs.tests import big_upload
from tests import live

pytestmark = [pytest.mark.slow(20), pytest.mark.services, pytest.mark.django_db(transaction=True)]

MiB = 1024 * 1024
UPLOAD = 160 * MiB
# Room for a few 8 MiB chunks in flight (the chunk, its SQL parameter, the driver's buffer) and allocator slack.
GROWTH_BOUND = 96 * MiB


def _status(pid: int) -> dict[str, int]:
    found = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            found[key] = int(value.split()[0]) * 1024
    return found


class _Streamed:
    """A request body read from disk in pieces, so the test itself does not hold the upload either."""

    def __init__(self, head: bytes, path: Path, tail: bytes) -> None:
        self.parts = [head, path, tail]

    def __iter__(self) -> Any:
        for part in self.parts:
            if isinstance(part, Path):
                with part.open("rb") as data:
                    while block := data.read(MiB):
                        yield block
            else:
                yield part


def test_a_160_mb_upload_grows_the_web_worker_by_a_few_chunks_not_by_the_upload(
    tmp_path: Path, user_with_role: Callable[..., Any]
) -> None:
    live.require_postgresql()
    path = big_upload.write(tmp_path / "big.tar", UPLOAD, seed="web memory")
    token = create_token(user_with_role(UPLOADER), "upload memory")[1]
    boundary = uuid.uuid4().hex
    file_head = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="server"\r\n\r\npn53\r\n'
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.tar"\r\n'
        "Content-Type: application/octet-stream\r\n\r\n"
    ).encode()
    tail = f"\r\n--{boundary}--\r\n".encode()
    length = len(file_head) + path.stat().st_size + len(tail)
    small = big_upload.write(tmp_path / "small.tar", MiB, seed="warm-up")
    with live.gunicorn(tmp_path, workers=1, threads=1) as server:
        (worker,) = server.started
        # A small upload first: the modules and caches of the upload path are loaded by then, and not counted.
        warm, content_type = live.multipart({"server": "pn53"}, {"file": ("small.tar", small.read_bytes())})
        headers = {"Authorization": f"Bearer {token}", "Content-Type": content_type}
        assert server.request("POST", "/api/bundles/", warm, headers, timeout=120)[0] in (200, 201, 202)
        Path(f"/proc/{worker}/clear_refs").write_text("5")  # the high-water mark starts again from now
        before = _status(worker)["VmRSS"]
        status, body = server.request(
            "POST",
            "/api/bundles/",
            _Streamed(file_head, path, tail),  # type: ignore[arg-type]
            {
                "Authorization": f"Bearer {token}",
                "Content-Type": f"multipart/form-data; boundary={boundary}",
                "Content-Length": str(length),
            },
            timeout=300,
        )
        peak = _status(worker)["VmHWM"]
    assert status in (200, 201, 202), body[:500]  # 200: its one run came with the warm-up upload
    bundle = Bundle.objects.get(pk=json.loads(body)["bundle_id"])
    assert bundle.size == path.stat().st_size
    assert BundleChunk.objects.filter(bundle=bundle).count() == -(-bundle.size // (8 * MiB))
    # Without a broker the web process imports it too (eager): that is bounded as well.
    assert bundle.status == Bundle.Status.IMPORTED, bundle.error
    assert Result.objects.count() == 1
    growth = peak - before
    assert growth < GROWTH_BOUND, f"the web worker grew by {growth / MiB:.0f} MiB for a {UPLOAD / MiB:.0f} MiB upload"


CONCURRENT = 4
CONCURRENT_UPLOAD = 96 * MiB
# Four uploads in flight at once in one worker's four threads: each holds a few chunks at most.
CONCURRENT_GROWTH_BOUND = 160 * MiB


def test_four_uploads_at_once_in_one_threaded_worker_grow_it_by_a_few_chunks_each(
    tmp_path: Path, user_with_role: Callable[..., Any]
) -> None:
    """Production's web worker has four threads (gthread): four big uploads at once, each stored and queued for
    the Celery worker (a queue of this test's own, emptied at the end), grow the worker by a few chunks each,
    never by the 384 MB they carry."""
    live.require_postgresql(redis=True)

    paths = [big_upload.write(tmp_path / f"big-{n}.tar", CONCURRENT_UPLOAD, seed=f"threads {n}") for n in range(4)]
    token = create_token(user_with_role(UPLOADER), "upload memory, threads")[1]
    small = big_upload.write(tmp_path / "small.tar", MiB, seed="warm-up threads")
    queue = f"upload-memory-{uuid.uuid4().hex[:8]}"
    env = {"REDIS_URL": settings.REDIS_URL, "CELERY_QUEUE": queue}
    answers: list[tuple[int, bytes]] = []
    try:
        with live.gunicorn(tmp_path, workers=1, threads=CONCURRENT, env=env) as server:
            (worker,) = server.started
            warm, content_type = live.multipart({"server": "pn53"}, {"file": ("small.tar", small.read_bytes())})
            headers = {"Authorization": f"Bearer {token}", "Content-Type": content_type}
            assert server.request("POST", "/api/bundles/", warm, headers, timeout=120)[0] == 202
            Path(f"/proc/{worker}/clear_refs").write_text("5")
            before = _status(worker)["VmRSS"]

            def upload(path: Path) -> None:
                boundary = uuid.uuid4().hex
                head = (
                    f'--{boundary}\r\nContent-Disposition: form-data; name="server"\r\n\r\npn53\r\n'
                    f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{path.name}"\r\n'
                    "Content-Type: application/octet-stream\r\n\r\n"
                ).encode()
                tail = f"\r\n--{boundary}--\r\n".encode()
                answers.append(
                    server.request(
                        "POST",
                        "/api/bundles/",
                        _Streamed(head, path, tail),  # type: ignore[arg-type]
                        {
                            "Authorization": f"Bearer {token}",
                            "Content-Type": f"multipart/form-data; boundary={boundary}",
                            "Content-Length": str(len(head) + path.stat().st_size + len(tail)),
                        },
                        timeout=300,
                    )
                )

            threads = [threading.Thread(target=upload, args=(path,)) for path in paths]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(timeout=600)
            peak = _status(worker)["VmHWM"]
    finally:
        live.forget_queue(queue)
    assert sorted(status for status, _ in answers) == [202] * CONCURRENT, [body[:300] for _, body in answers]
    bundles = Bundle.objects.filter(pk__in=[json.loads(body)["bundle_id"] for _, body in answers])
    assert sorted(b.size for b in bundles) == sorted(path.stat().st_size for path in paths)
    for bundle in bundles:
        assert bundle.status == Bundle.Status.QUEUED  # the Celery worker imports it, as in production
        assert BundleChunk.objects.filter(bundle=bundle).count() == -(-bundle.size // (8 * MiB))
    growth = peak - before
    assert growth < CONCURRENT_GROWTH_BOUND, (
        f"the web worker grew by {growth / MiB:.0f} MiB for {CONCURRENT} uploads of {CONCURRENT_UPLOAD / MiB:.0f} MiB"
    )
