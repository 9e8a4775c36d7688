"""One triggered run through a real Celery worker process and a real Redis broker.

The worker is a separate process, so it must reach the test database: that
works with PostgreSQL (the worker connects to the test database by URL), not
with SQLite's in-memory test database.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

import pytest
from celery import Celery
from celery.signals import before_task_publish
from django.conf import settings
from django.db import connection

from reports.models import SeriesSummary
from runner import benchmark
from runner.models import BenchmarkRun
from runner.tests.services import Server, missing
from runs.models import Bundle, Run
from tests import live

pytestmark = [pytest.mark.slow(25), pytest.mark.services, pytest.mark.worker, pytest.mark.django_db(transaction=True)]

PROJECT = Path(__file__).resolve().parents[2]
WAIT_SECONDS = 90
WORKER = [sys.executable, "-m", "celery", "-A", "benchdash", "worker", "--pool=solo", "--concurrency=1"]
WORKER += ["--without-gossip", "--without-mingle", "--loglevel=INFO"]


def database_url() -> str:
    db = settings.DATABASES["default"]
    user = quote(db.get("USER") or "", safe="")
    password = quote(db.get("PASSWORD") or "", safe="")
    auth = f"{user}:{password}@" if password else (f"{user}@" if user else "")
    return f"postgres://{auth}{db.get('HOST') or '127.0.0.1'}:{db.get('PORT') or 5432}/{quote(db['NAME'], safe='')}"


def redis_reachable(url: str) -> bool:
    parts = urlsplit(url)
    try:
        with socket.create_connection((parts.hostname or "127.0.0.1", parts.port or 6379), timeout=2):
            return True
    except OSError:
        return False


def test_a_real_worker_runs_a_triggered_benchmark_from_a_redis_queue(postgres: Server, tmp_path: Path) -> None:
    if connection.vendor != "postgresql":
        missing("a worker process cannot see SQLite's in-memory test database; run with DATABASE_URL=postgres://…")
    # The broker the suite was given (its database only; the queue is this test's own).
    redis_url = settings.REDIS_URL
    if not redis_url:
        missing("REDIS_URL is not set: the worker needs a real Redis broker")
    if not redis_reachable(redis_url):
        missing("Redis is not reachable at REDIS_URL")

    queue = f"benchdash-test-{uuid.uuid4().hex[:12]}"
    target = postgres.target()
    run = benchmark.create_run(
        target,
        microbenchmarks=["point-query_range=100", "scan_range=100", "update-index_range=100"],
        tables=1,
        table_size=10_000,
        threads=[1],
        seconds=2,
    )

    log_path = tmp_path / "worker.log"
    env = {
        **os.environ,
        "DATABASE_URL": database_url(),
        "REDIS_URL": redis_url,
        "CELERY_TASK_ALWAYS_EAGER": "false",
        "CELERY_QUEUE": queue,  # the refresh the import queues comes back to this worker
    }
    with log_path.open("wb") as log:
        worker = subprocess.Popen(
            [*WORKER, "-Q", queue, "-n", f"{queue}@%h"],
            cwd=PROJECT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    published: list[str] = []

    def record(body: Any = None, headers: Any = None, **_: Any) -> None:
        published.append(f"{body!r} {headers!r}")

    before_task_publish.connect(record, weak=False)
    # set_as_current=False: a new app would otherwise become Celery's current app for the rest of the session,
    # and every later .delay() in other tests would go to this broker instead of running eagerly.
    sender = Celery("benchdash-test-sender", broker=redis_url, set_as_current=False)
    sender.conf.broker_transport_options = settings.CELERY_BROKER_TRANSPORT_OPTIONS  # the worker's key prefix
    try:
        started = time.monotonic()
        sender.send_task("runner.tasks.run_benchmark", args=[run.pk], queue=queue)
        state = run.state
        while time.monotonic() - started < WAIT_SECONDS and worker.poll() is None:
            state = BenchmarkRun.objects.values_list("state", flat=True).get(pk=run.pk)
            if state not in BenchmarkRun.ACTIVE:
                break
            time.sleep(0.5)
        elapsed = time.monotonic() - started
        # After the import, as after an upload, the worker refreshes the series: home summary, comparisons,
        # regression detection.
        bundle_id = BenchmarkRun.objects.values_list("bundle_id", flat=True).get(pk=run.pk)
        imported_run = Run.objects.filter(bundle_id=bundle_id).first() if bundle_id else None
        while imported_run is not None and time.monotonic() - started < WAIT_SECONDS and worker.poll() is None:
            if SeriesSummary.objects.filter(latest_run=imported_run).exists():
                break
            time.sleep(0.5)
    finally:
        before_task_publish.disconnect(record)
        sender.close()
        live.stop(worker, timeout=30)  # a warm shutdown lets a running benchmark end
        live.forget_queue(queue)

    log_text = log_path.read_text(errors="replace")
    assert state == BenchmarkRun.State.IMPORTED, (
        f"run ended {state!r} after {elapsed:.0f} s; worker log:\n{log_text[-4000:]}"
    )
    run.refresh_from_db()
    assert run.celery_task_id, "the worker records which task ran it"
    (imported,) = Run.objects.filter(bundle=run.bundle)
    assert Bundle.objects.get().source == Bundle.Source.TRIGGERED
    # Its three microbenchmarks and the load step (sysbench prepare).
    assert imported.results.filter(qps__gt=0).count() == 4
    summary = SeriesSummary.objects.get(server=imported.server, workload=imported.workload)
    assert summary.latest_run == imported and summary.base_run == imported and summary.runs == 1
    # Only the id travelled: no password in the message, and none in what the worker logged.
    assert published and all(postgres.password not in p for p in published)
    assert postgres.password not in log_text
    print(f"\nworker: tiny triggered run imported {elapsed:.1f} s after the task was sent")
