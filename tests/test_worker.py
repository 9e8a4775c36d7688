"""A real Celery worker over the real Redis imports uploads in the background (CI runs these).

Each test starts its own worker process on a queue of its own, against the
test database, and stops it by its process id.
"""

from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from runs import synthetic
from runs.models import Bundle, Result, Run
from tests import live

pytestmark = [pytest.mark.worker, pytest.mark.services, pytest.mark.django_db(transaction=True)]

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def worker_queue() -> Iterator[Callable[..., subprocess.Popen[bytes]]]:
    """Start workers on a private queue (``start(visibility_timeout=…)``); all stopped by pid at the end."""
    with live.celery_workers("test") as start:
        # A claim goes stale 3 s after its worker's last heartbeat, so a redelivered import need not wait a minute.
        yield lambda visibility_timeout=600: start(
            {"CELERY_VISIBILITY_TIMEOUT": str(visibility_timeout), "BUNDLE_CLAIM_STALE_SECONDS": "3"}
        )


@pytest.fixture
def uploader(user_with_role: Callable[..., Any]) -> Client:
    """Uploads need the uploader role: a client sending such a user's API token."""
    from accounts.permissions import create_token

    token = create_token(user_with_role("uploader"), "worker tests")[1]
    return Client(headers={"Authorization": f"Bearer {token}"})


def _wait(predicate: Callable[[], bool], seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.2)
    pytest.fail(f"timed out after {seconds:.0f} s waiting for {what}")


def test_an_upload_returns_at_once_and_a_worker_imports_it(
    worker_queue: Callable[..., subprocess.Popen[bytes]], corpus: Path, uploader: Client
) -> None:
    worker_queue()
    data = (corpus / "sysbench-pg-tarballs" / "x.pg1122_o2nofp.x10a_wm1_c32r128.pk1.tar.gz").read_bytes()
    response = uploader.post("/api/bundles/", {"file": _upload(data, "pg1122.tar.gz")})
    assert response.status_code == 202, response.content
    bundle_id = response.json()["bundle_id"]
    _wait(lambda: Bundle.objects.get(pk=bundle_id).status == Bundle.Status.IMPORTED, 90, "the worker's import")
    assert Run.objects.filter(bundle_id=bundle_id).count() == 1
    assert Result.objects.filter(run__bundle_id=bundle_id).count() == 40  # 39 tests and the load step


def test_a_worker_killed_mid_import_is_redelivered_and_nothing_is_duplicated(
    worker_queue: Callable[..., subprocess.Popen[bytes]], uploader: Client
) -> None:
    spec = synthetic.SeriesSpec(versions=tuple(f"8.0.{n}" for n in range(10, 40)), dops=(1, 8, 16), seed=11)
    data = synthetic.bundle_bytes(spec)
    first = worker_queue(visibility_timeout=3)
    response = uploader.post("/api/bundles/", {"file": _upload(data, "big.tar.gz")})
    assert response.status_code == 202
    bundle_id = response.json()["bundle_id"]
    # The import stores its runs and results, then waits for the run files table held locked here: the
    # worker is killed inside the import's transaction, however fast the import is.
    with live.table_locked("runs_runfile"):
        _wait(lambda: live.waiting_for_lock("runs_runfile"), 90, "the import to reach the run files")
        # Its progress is visible while its transaction is open (the heartbeat has its own connection).
        _wait(lambda: Bundle.objects.get(pk=bundle_id).progress["runs_stored"] == 30, 10, "the progress")
        bundle = Bundle.objects.get(pk=bundle_id)
        assert bundle.status == Bundle.Status.IMPORTING and bundle.progress["phase"] == "storing"
        assert bundle.progress["runs_new"] == 30 and bundle.progress["files_read"] >= 30 * len(spec.tests)
        first.send_signal(signal.SIGKILL)
        first.wait()
    # The killed transaction rolled back: nothing of the bundle is stored; its claim is left, and goes stale.
    assert Bundle.objects.get(pk=bundle_id).status == Bundle.Status.IMPORTING
    assert Run.objects.filter(bundle_id=bundle_id).count() == 0
    # A new worker restores the unacknowledged task and runs it: it looks for overdue tasks every 1 s at this
    # timeout (kombu's default, every 100 s whatever the timeout, took 90 s here).
    worker_queue(visibility_timeout=3)
    _wait(lambda: Bundle.objects.get(pk=bundle_id).status == Bundle.Status.IMPORTED, 60, "the redelivered import")
    assert Run.objects.filter(bundle_id=bundle_id).count() == len(spec.versions)
    assert Result.objects.filter(run__bundle_id=bundle_id).count() == len(spec.versions) * len(spec.tests) * 3
    assert Bundle.objects.filter(sha256=Bundle.objects.get(pk=bundle_id).sha256).count() == 1


def test_a_duplicate_message_does_not_park_a_worker_while_a_long_import_holds_its_bundle(
    worker_queue: Callable[..., subprocess.Popen[bytes]], uploader: Client, corpus: Path
) -> None:
    from runs.tasks import import_bundle_task
    from runs.tests.hostile import tgz_of_files

    worker_queue()
    worker_queue()  # two worker slots, as in the report of one bundle occupying both
    run = "x.my5651_rel_o2nofp.z12a_c8r32.pk1"
    files = {f"{run}/{p.name}": p.read_bytes() for p in (corpus / "sysbench-mysql-small" / run).iterdir()}
    earlier = uploader.post("/api/bundles/", {"file": _upload(tgz_of_files(files), "earlier.tgz")}).json()
    _wait(lambda: Bundle.objects.get(pk=earlier["bundle_id"]).status == "imported", 90, "the earlier import")

    spec = synthetic.SeriesSpec(versions=tuple(f"8.0.{n}" for n in range(10, 30)), dops=(1, 8), seed=12)
    with live.table_locked("runs_runfile"):
        long = uploader.post("/api/bundles/", {"file": _upload(synthetic.bundle_bytes(spec), "long.tar.gz")}).json()
        _wait(lambda: live.waiting_for_lock("runs_runfile"), 90, "the long import to reach the run files")
        for _ in range(3):
            import_bundle_task.delay(long["bundle_id"])  # what requeue_bundles used to send every minute
        # An unrelated upload (the same run packed again: it writes no run files) is imported meanwhile.
        files["NOTES.txt"] = b"packed again\n"
        other = uploader.post("/api/bundles/", {"file": _upload(tgz_of_files(files), "other.tgz")}).json()
        _wait(lambda: Bundle.objects.get(pk=other["bundle_id"]).status == "imported", 30, "the unrelated upload")
        held = Bundle.objects.get(pk=long["bundle_id"])
        assert held.status == Bundle.Status.IMPORTING and live.waiting_for_lock("runs_runfile")
    _wait(lambda: Bundle.objects.get(pk=long["bundle_id"]).status == "imported", 90, "the long import")
    assert Run.objects.filter(bundle_id=long["bundle_id"]).count() == len(spec.versions)
    assert Run.objects.filter(bundle_id=other["bundle_id"]).count() == 0  # its run was imported before


def test_a_bad_upload_is_answered_422_at_once_in_worker_mode(
    worker_queue: Callable[..., subprocess.Popen[bytes]], uploader: Client
) -> None:
    worker_queue()
    response = uploader.post("/api/bundles/", {"file": _upload(b"not an archive at all\n" * 50, "notes.tar.gz")})
    assert response.status_code == 422, response.content
    body = response.json()
    assert body["status"] == "failed" and "not a tar" in body["error"]
    assert Bundle.objects.get().status == Bundle.Status.FAILED and Run.objects.count() == 0


def _upload(data: bytes, name: str) -> object:
    from django.core.files.uploadedfile import SimpleUploadedFile

    return SimpleUploadedFile(name, data, content_type="application/gzip")


# --------------------------------------------------------------------------- the broker going away and coming back


def test_the_worker_waits_out_broker_outages_finishes_its_import_and_resumes_bundles_queued_meanwhile(
    tmp_path: Path, corpus: Path, uploader: Client
) -> None:
    """A worker whose Redis (broker and cache) sits behind a proxy: started while Redis is unreachable, cut
    mid-import, an upload made during the outage; it never exits, and leaves on SIGTERM alone."""
    from django.conf import settings
    from django.contrib.auth import get_user_model

    from accounts.permissions import create_token
    from runs.tasks import REQUEUE_AFTER

    spec = synthetic.SeriesSpec(versions=tuple(f"8.0.{n}" for n in range(10, 25)), dops=(1, 8), seed=17)
    with (
        live.tcp_proxy(live.redis_port(settings.REDIS_URL)) as proxy,
        live.celery_workers("test-outage", log_dir=tmp_path) as start,
    ):
        env = {
            "REDIS_URL": proxy.redis_url(settings.REDIS_URL),
            "REDIS_CACHE_URL": proxy.redis_url(settings.REDIS_CACHE_URL),
        }
        log = tmp_path / "worker-0.log"

        # Start-up with the broker unreachable: the worker keeps trying instead of exiting.
        proxy.cut()
        worker = start(env)
        _wait(lambda: proxy.refused >= 2, 60, "the worker's attempts to reach the broker")
        assert worker.poll() is None, log.read_text()[-3000:]
        proxy.restore()

        # An import in progress when the broker and cache go away: it finishes (its progress lives in the database).
        response = uploader.post("/api/bundles/", {"file": _upload(synthetic.bundle_bytes(spec), "mid.tar.gz")})
        assert response.status_code == 202, response.content
        first = response.json()["bundle_id"]
        with live.table_locked("runs_runfile"):
            _wait(lambda: live.waiting_for_lock("runs_runfile"), 120, "the import to reach the run files")
            proxy.cut()
            assert proxy.connections() == 0
        _wait(lambda: Bundle.objects.get(pk=first).status == Bundle.Status.IMPORTED, 120, "the cut-off import")
        assert Run.objects.filter(bundle_id=first).count() == len(spec.versions)

        # An upload while the broker is down: stored as queued, its task never sent (the web process's broker
        # is the same cut proxy).
        data = (corpus / "sysbench-pg-tarballs" / "x.pg174_o2nofp.x10a_wm1_c32r128.pk1.tar.gz").read_bytes()
        with live.gunicorn(tmp_path, workers=1, threads=2, env=env) as server:
            body, content_type = live.multipart({}, {"file": ("pg174.tar.gz", data)})
            token = create_token(get_user_model().objects.get(username="uploader"), "outage")[1]
            headers = {"Authorization": f"Bearer {token}", "Content-Type": content_type}
            status, answer = server.request("POST", "/api/bundles/", body, headers, timeout=60)
        assert status == 202, answer[:500]
        second = Bundle.objects.exclude(pk=first).get()
        assert second.status == Bundle.Status.QUEUED
        # Old enough for requeue_bundles to pick it up (it leaves fresh uploads to their own task).
        Bundle.objects.filter(pk=second.pk).update(uploaded_at=second.uploaded_at - REQUEUE_AFTER - REQUEUE_AFTER)
        assert worker.poll() is None, log.read_text()[-3000:]

        # The broker is back: the same worker reconnects and imports the queued bundle by itself.
        proxy.restore()
        _wait(
            lambda: Bundle.objects.get(pk=second.pk).status == Bundle.Status.IMPORTED,
            180,
            "the worker to resume the bundle queued during the outage",
        )
        assert Result.objects.filter(run__bundle=second).count() == 40  # 39 tests and the load step
        assert worker.poll() is None

        # It leaves when told to, and only then.
        worker.send_signal(signal.SIGTERM)
        assert worker.wait(timeout=60) == 0
    text = log.read_text()
    # The lost acknowledgement is logged (the message is delivered again and finds its work done); nothing
    # took the worker down.
    assert "Unrecoverable error" not in text, text[-3000:]
