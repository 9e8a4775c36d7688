"""A real Celery worker (prefork, as deployed) gives back the memory of a big import.

The pool replaces a child whose resident size is over
CELERY_WORKER_MAX_MEMORY_PER_CHILD once its task is done. Set to 1 KiB here, every
child is over it, so the test sees the wiring work: the child that imported is
gone, the import is stored, and the new child is ready for the next upload.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from accounts.permissions import UPLOADER, create_token
from runs.models import Bundle
from tests import live

pytestmark = [pytest.mark.worker, pytest.mark.services, pytest.mark.django_db(transaction=True)]

ROOT = Path(__file__).resolve().parents[2]


def _wait(predicate: Callable[[], Any], seconds: float, what: str) -> Any:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if found := predicate():
            return found
        time.sleep(0.2)
    pytest.fail(f"timed out after {seconds:.0f} s waiting for {what}")


@pytest.fixture
def prefork_worker() -> Iterator[subprocess.Popen[bytes]]:
    """A prefork worker with one child on a queue of its own; stopped by its process id."""
    live.require_postgresql(redis=True)
    from benchdash.celery import app

    queue = f"test-memory-{uuid.uuid4().hex[:8]}"
    saved = app.conf.task_default_queue
    app.conf.task_default_queue = queue
    env = {
        **os.environ,
        "DATABASE_URL": live.database_url(),
        "REDIS_URL": settings.REDIS_URL,
        "CELERY_QUEUE": queue,
        "CELERY_WORKER_MAX_MEMORY_PER_CHILD": "1",
    }
    worker = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "benchdash",
            "worker",
            "--pool=prefork",
            "--concurrency=1",
            "-Q",
            queue,
            "-l",
            "WARNING",
            "-n",
            f"{queue}@%h",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        yield worker
    finally:
        app.conf.task_default_queue = saved
        live.stop(worker)
        live.forget_queue(queue)
        live.release_test_database()


def test_the_worker_child_that_ran_an_import_is_replaced_so_its_memory_returns(
    prefork_worker: subprocess.Popen[bytes], corpus: Path, user_with_role: Callable[..., Any]
) -> None:
    first = _wait(lambda: live.children(prefork_worker.pid), 60, "the worker's pool child")
    token = create_token(user_with_role(UPLOADER), "worker memory")[1]
    data = (corpus / "sysbench-pg-tarballs" / "x.pg1023_o2nofp.x10a_wm1_c32r128.pk1.tar.gz").read_bytes()
    response = Client(headers={"Authorization": f"Bearer {token}"}).post(
        "/api/bundles/", {"file": SimpleUploadedFile("pg1023.tar.gz", data)}
    )
    assert response.status_code == 202, response.content
    bundle = Bundle.objects.get()
    _wait(lambda: Bundle.objects.get(pk=bundle.pk).status == Bundle.Status.IMPORTED, 120, "the import")
    replaced = _wait(
        lambda: [pid for pid in live.children(prefork_worker.pid) if pid not in first], 60, "a new pool child"
    )
    assert not set(first) & set(live.children(prefork_worker.pid)), "the child that imported is still there"
    assert len(replaced) == 1
    assert prefork_worker.poll() is None, "the worker itself keeps running"
