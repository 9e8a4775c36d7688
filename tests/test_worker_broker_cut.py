"""A prefork Celery worker started as compose starts it loses its broker, or its cache, mid-import.

The worker runs ``celery -A benchdash worker --loglevel=INFO --concurrency=2``
(compose's command, plus a queue and a node name of this test's own) with
Redis reached through loopback proxies the test can cut: the broker on one,
the cache on another. The import is held inside its transaction by a table
lock from the test's connection, so the cut always lands mid-import. Every
process started here is stopped by its id.
"""

from __future__ import annotations

import os
import re
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
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from accounts.permissions import UPLOADER, create_token
from runs import synthetic
from runs.models import Bundle, Result, Run
from runs.tasks import REQUEUE_AFTER
from tests import live

pytestmark = [pytest.mark.worker, pytest.mark.services, pytest.mark.django_db(transaction=True)]

ROOT = Path(__file__).resolve().parent.parent
SPEC = synthetic.SeriesSpec(versions=tuple(f"8.0.{n}" for n in range(10, 22)), dops=(1, 8), seed=29)
RESULTS = len(SPEC.versions) * len(SPEC.tests) * len(SPEC.dops)
OUTAGE_SECONDS = 6
TASK = re.compile(r"(runs\.tasks\.import_bundle_task\[[0-9a-f-]+\]) received")


def _wait(predicate: Callable[[], Any], seconds: float, what: str, log: Path | None = None) -> Any:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if found := predicate():
            return found
        time.sleep(0.2)
    tail = log.read_text()[-3000:] if log is not None and log.exists() else ""
    pytest.fail(f"timed out after {seconds:.0f} s waiting for {what}\n{tail}")


class ComposeWorker:
    """One worker process as compose runs it, its broker and cache each behind a proxy of their own."""

    def __init__(self, tmp_path: Path) -> None:
        self.log = tmp_path / "worker.log"
        self.queue = f"test-brokercut-{uuid.uuid4().hex[:8]}"
        self.broker = live.TcpProxy(live.redis_port(settings.REDIS_URL))
        self.cache = live.TcpProxy(live.redis_port(settings.REDIS_CACHE_URL))
        self.env = {
            "REDIS_URL": self.broker.redis_url(settings.REDIS_URL),
            "REDIS_CACHE_URL": self.cache.redis_url(settings.REDIS_CACHE_URL),
            "CELERY_QUEUE": self.queue,
            # A dead importer's claim is stale 3 s after its last heartbeat, not a minute.
            "BUNDLE_CLAIM_STALE_SECONDS": "3",
            # An acknowledgement lost with the connection is delivered again in seconds, not in 25 minutes.
            "CELERY_VISIBILITY_TIMEOUT": "10",
        }
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> subprocess.Popen[bytes]:
        env = {**os.environ, "DATABASE_URL": live.database_url(), **self.env}
        command = [sys.executable, "-m", "celery", "-A", "benchdash", "worker", "--loglevel=INFO", "--concurrency=2"]
        command += ["-Q", self.queue, "-n", f"{self.queue}@%h"]
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
        _wait(lambda: "ready." in self.text(), 60, "the worker to be ready", self.log)
        return self.process

    def text(self) -> str:
        return self.log.read_text() if self.log.exists() else ""

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def close(self) -> None:
        if self.process is not None:
            live.stop(self.process)
        live.forget_queue(self.queue)
        self.broker.close()
        self.cache.close()


@pytest.fixture
def worker(tmp_path: Path) -> Iterator[ComposeWorker]:
    live.require_postgresql(redis=True)
    from benchdash.celery import app

    found = ComposeWorker(tmp_path)
    saved = app.conf.task_default_queue
    app.conf.task_default_queue = found.queue
    try:
        yield found
    finally:
        app.conf.task_default_queue = saved
        found.close()
        live.release_test_database()


@pytest.fixture
def uploader(user_with_role: Callable[..., Any]) -> Client:
    token = create_token(user_with_role(UPLOADER), "broker cut tests")[1]
    return Client(headers={"Authorization": f"Bearer {token}"})


def _upload(uploader: Client, data: bytes, name: str) -> int:
    response = uploader.post("/api/bundles/", {"file": SimpleUploadedFile(name, data)})
    assert response.status_code == 202, response.content
    return int(response.json()["bundle_id"])


def _imported_once(bundle_id: int, runs: int, results: int) -> None:
    assert Bundle.objects.get(pk=bundle_id).status == Bundle.Status.IMPORTED
    assert Run.objects.filter(bundle_id=bundle_id).count() == runs
    assert Result.objects.filter(run__bundle_id=bundle_id).count() == results


def _cut(proxy: live.TcpProxy, how: str) -> None:
    if how == "reset":
        proxy.cut()
        assert proxy.connections() == 0
    else:
        proxy.hang()


@pytest.mark.parametrize("how", ["reset", "hang"])
def test_a_prefork_worker_cut_from_its_broker_mid_import_lives_on_imports_once_and_resumes_an_outage_upload(
    worker: ComposeWorker, uploader: Client, tmp_path: Path, corpus: Path, how: str
) -> None:
    worker.start()
    # Uploads during the outage come through a web server whose broker is the same cut proxy: its task is lost.
    with live.gunicorn(tmp_path, workers=1, threads=2, env={"REDIS_URL": worker.env["REDIS_URL"]}) as web:
        with live.table_locked("runs_runfile"):
            first = _upload(uploader, synthetic.bundle_bytes(SPEC), "series.tar.gz")
            _wait(lambda: live.waiting_for_lock("runs_runfile"), 60, "the import to reach the run files", worker.log)
            assert Bundle.objects.get(pk=first).status == Bundle.Status.IMPORTING
            first_task = _wait(lambda: TASK.search(worker.text()), 10, "the import's task", worker.log).group(1)
            _cut(worker.broker, how)
            time.sleep(1)
        # The import goes on without its broker: it commits while the broker is still away.
        _wait(
            lambda: Bundle.objects.get(pk=first).status == Bundle.Status.IMPORTED, 30, "the cut-off import", worker.log
        )
        if how == "reset":
            data = (corpus / "sysbench-pg-tarballs" / "x.pg174_o2nofp.x10a_wm1_c32r128.pk1.tar.gz").read_bytes()
            body, content_type = live.multipart({}, {"file": ("pg174.tar.gz", data)})
            token = create_token(get_user_model().objects.get(username=UPLOADER), "outage")[1]
            headers = {"Authorization": f"Bearer {token}", "Content-Type": content_type}
            status, answer = web.request("POST", "/api/bundles/", body, headers, timeout=30)
            assert status == 202, answer[:500]
        time.sleep(OUTAGE_SECONDS)
        assert worker.alive(), worker.text()[-3000:]
    outage_upload = Bundle.objects.exclude(pk=first).first()
    if outage_upload is not None:
        assert outage_upload.status == Bundle.Status.QUEUED
        # Old enough for the requeue the worker asks for on reconnecting (it leaves fresh uploads to their task).
        Bundle.objects.filter(pk=outage_upload.pk).update(uploaded_at=outage_upload.uploaded_at - 2 * REQUEUE_AFTER)

    worker.broker.restore()
    if outage_upload is not None:
        _wait(
            lambda: Bundle.objects.get(pk=outage_upload.pk).status == Bundle.Status.IMPORTED,
            60,
            "the bundle uploaded during the outage",
            worker.log,
        )
        _imported_once(outage_upload.pk, 1, 40)  # 39 tests and the load step
    if how == "reset":
        # The acknowledgement lost with the connection brings the message back: it must find its work done.
        _wait(lambda: worker.text().count(f"{first_task} received") >= 2, 40, "the redelivered message", worker.log)
    # A held connection is not a lost one: once the broker answers, the task ends and is acknowledged.
    _wait(
        lambda: f"{first_task} succeeded" in worker.text().rsplit(f"{first_task} received", 1)[1],
        20,
        "the task to end",
        worker.log,
    )
    time.sleep(1)
    _imported_once(first, len(SPEC.versions), RESULTS)
    assert Bundle.objects.count() == (2 if outage_upload is not None else 1)
    assert worker.alive(), worker.text()[-3000:]
    assert worker.process is not None
    worker.process.send_signal(signal.SIGTERM)
    assert worker.process.wait(timeout=30) == 0
    text = worker.text()
    assert "Unrecoverable error" not in text, text[-4000:]
    # The import committed while the broker was away: its task is not reported as failed for it.
    assert f"{first_task} raised" not in text, text[-4000:]


def test_a_prefork_worker_cut_from_its_cache_mid_import_still_imports(worker: ComposeWorker, uploader: Client) -> None:
    worker.start()
    with live.table_locked("runs_runfile"):
        first = _upload(uploader, synthetic.bundle_bytes(SPEC), "series.tar.gz")
        _wait(lambda: live.waiting_for_lock("runs_runfile"), 60, "the import to reach the run files", worker.log)
        worker.cache.cut()
    _wait(lambda: Bundle.objects.get(pk=first).status == Bundle.Status.IMPORTED, 30, "the import", worker.log)
    _imported_once(first, len(SPEC.versions), RESULTS)
    assert worker.alive(), worker.text()[-3000:]
    text = worker.text()
    assert "Unrecoverable error" not in text and "raised unexpected" not in text, text[-4000:]
