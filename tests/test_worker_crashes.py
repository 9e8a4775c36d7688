"""A real prefork Celery worker (as deployed) loses its pool child or its database mid-import.

Each test starts ``celery worker --pool=prefork --concurrency=1`` on a queue of
its own over the test's Redis database, against the test database, and stops it
by its process id. The import is stopped inside its transaction by a table lock
held from the test's connection, so the fault always lands mid-import.
"""

from __future__ import annotations

import os
import signal
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
from runs import synthetic
from runs.models import Bundle, Result, Run
from tests import live

pytestmark = [pytest.mark.worker, pytest.mark.services, pytest.mark.django_db(transaction=True)]

ROOT = Path(__file__).resolve().parent.parent
SPEC = synthetic.SeriesSpec(versions=tuple(f"8.0.{n}" for n in range(10, 30)), dops=(1, 8), seed=23)
RESULTS = len(SPEC.versions) * len(SPEC.tests) * len(SPEC.dops)


def _wait(predicate: Callable[[], Any], seconds: float, what: str, log: Path | None = None) -> Any:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if found := predicate():
            return found
        time.sleep(0.2)
    tail = log.read_text()[-3000:] if log is not None and log.exists() else ""
    pytest.fail(f"timed out after {seconds:.0f} s waiting for {what}\n{tail}")


@pytest.fixture
def prefork(tmp_path: Path) -> Iterator[Callable[..., subprocess.Popen[bytes]]]:
    """``start(database_url=None)``: a prefork worker with one child, logging to ``tmp_path/worker.log``."""
    live.require_postgresql(redis=True)
    from benchdash.celery import app

    queue = f"test-prefork-{uuid.uuid4().hex[:8]}"
    saved = app.conf.task_default_queue
    app.conf.task_default_queue = queue
    started: list[subprocess.Popen[bytes]] = []

    def start(database_url: str | None = None) -> subprocess.Popen[bytes]:
        env = {
            **os.environ,
            "DATABASE_URL": database_url or live.database_url(),
            "REDIS_URL": settings.REDIS_URL,
            "CELERY_QUEUE": queue,
            # A dead importer's claim is stale 3 s after its last heartbeat, not a minute.
            "BUNDLE_CLAIM_STALE_SECONDS": "3",
        }
        command = [sys.executable, "-m", "celery", "-A", "benchdash", "worker", "--pool=prefork", "--concurrency=1"]
        command += ["-Q", queue, "-n", f"{queue}-{len(started)}@%h", "-l", "INFO"]
        with (tmp_path / "worker.log").open("ab") as out:
            proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
        started.append(proc)
        return proc

    try:
        yield start
    finally:
        app.conf.task_default_queue = saved
        for proc in started:
            live.stop(proc)
        live.forget_queue(queue)
        live.release_test_database()


@pytest.fixture
def uploader(user_with_role: Callable[..., Any]) -> Client:
    token = create_token(user_with_role(UPLOADER), "crash tests")[1]
    return Client(headers={"Authorization": f"Bearer {token}"})


def _upload(uploader: Client, name: str) -> int:
    response = uploader.post("/api/bundles/", {"file": SimpleUploadedFile(name, synthetic.bundle_bytes(SPEC))})
    assert response.status_code == 202, response.content
    return int(response.json()["bundle_id"])


def _imported_once(bundle_id: int) -> None:
    assert Bundle.objects.count() == 1
    assert Run.objects.count() == Run.objects.filter(bundle_id=bundle_id).count() == len(SPEC.versions)
    assert Result.objects.count() == RESULTS
    assert sorted(Run.objects.values_list("build__version__text", flat=True)) == sorted(SPEC.versions)


def test_a_pool_child_killed_mid_import_is_replaced_and_the_redelivered_task_imports_the_bundle_once(
    prefork: Callable[..., subprocess.Popen[bytes]], uploader: Client, tmp_path: Path
) -> None:
    log = tmp_path / "worker.log"
    worker = prefork()
    (child,) = _wait(lambda: live.children(worker.pid), 60, "the pool child", log)
    with live.table_locked("runs_runfile"):
        bundle_id = _upload(uploader, "series.tar.gz")
        _wait(lambda: live.waiting_for_lock("runs_runfile"), 120, "the import to reach the run files", log)
        assert Bundle.objects.get(pk=bundle_id).status == Bundle.Status.IMPORTING
        os.kill(child, signal.SIGKILL)  # the child running the import; the worker's main process lives on
    # The server notices the dead connection once its statement gets the lock, and rolls the transaction back.
    _wait(lambda: not live.waiting_for_lock("runs_runfile"), 30, "the killed child's transaction to end", log)
    # Nothing of the killed import is stored: its transaction died with its connection.
    assert Run.objects.count() == 0 and Result.objects.count() == 0
    # The pool starts a new child; the task, acknowledged only late, is given back to the queue when its child
    # dies (reject on worker lost), waits for the dead claim to go stale, and imports the bundle.
    _wait(lambda: [pid for pid in live.children(worker.pid) if pid != child], 60, "a new pool child", log)
    _wait(lambda: Bundle.objects.get(pk=bundle_id).status == Bundle.Status.IMPORTED, 120, "the redelivered import", log)
    _imported_once(bundle_id)
    assert worker.poll() is None, log.read_text()[-3000:]
    text = log.read_text()
    assert "WorkerLostError" in text, text[-3000:]
    time.sleep(3)  # a second copy of the task, if one were left, would run now and must find nothing to do
    _imported_once(bundle_id)


def test_a_worker_whose_database_connection_is_cut_mid_import_stores_nothing_survives_and_imports_once_it_is_back(
    prefork: Callable[..., subprocess.Popen[bytes]], uploader: Client, tmp_path: Path
) -> None:
    log = tmp_path / "worker.log"
    db = settings.DATABASES["default"]
    with live.tcp_proxy(int(db["PORT"] or 5432), db["HOST"] or "127.0.0.1") as proxy:
        worker = prefork(database_url=live.database_url().replace(f":{db['PORT'] or 5432}/", f":{proxy.port}/"))
        _wait(lambda: live.children(worker.pid), 60, "the pool child", log)
        with live.table_locked("runs_runfile"):
            bundle_id = _upload(uploader, "series.tar.gz")
            _wait(lambda: live.waiting_for_lock("runs_runfile"), 120, "the import to reach the run files", log)
            proxy.cut()  # every connection of the worker reset; new ones refused
            assert proxy.connections() == 0
            # The server notices the import's connection is gone once it is let through the lock: it rolls back.
        _wait(lambda: not live.waiting_for_lock("runs_runfile"), 30, "the cut import's transaction to end", log)
        time.sleep(4)  # the database stays away while the worker retries (and its claim goes stale)
        assert Run.objects.count() == 0 and Result.objects.count() == 0
        assert Bundle.objects.get(pk=bundle_id).status in (Bundle.Status.IMPORTING, Bundle.Status.QUEUED)
        assert worker.poll() is None, log.read_text()[-3000:]
        refused = proxy.refused
        proxy.restore()
        _wait(
            lambda: Bundle.objects.get(pk=bundle_id).status == Bundle.Status.IMPORTED,
            180,
            "the import once the database is back",
            log,
        )
        _imported_once(bundle_id)
        assert worker.poll() is None, log.read_text()[-3000:]
        assert refused > 0, "the worker never tried the database during the outage"
        text = log.read_text()
        # The task was retried with back-off on the database error (not failed for good, not left to requeue).
        assert "retry: Retry in" in text and "OperationalError" in text, text[-3000:]
        assert "Unrecoverable error" not in text
