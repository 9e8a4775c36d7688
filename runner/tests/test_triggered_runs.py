"""Triggered runs end to end through the Celery tasks (eager here), against the real MariaDB and PostgreSQL.

These use ``transactional_db``: the task's cancel watcher reads the run's row
from its own thread and connection, so the test's writes must be committed.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from celery.signals import task_prerun
from django.contrib.auth.models import AbstractBaseUser
from django.db import connection
from django.test import Client

from reports.models import SeriesSummary
from runner import benchmark
from runner.models import BenchmarkOutput, BenchmarkRun, Schedule, Target
from runner.tasks import enqueue, run_benchmark, run_schedule
from runner.tests.services import TINY as SHORTEST
from runner.tests.services import Server
from runs.models import Bundle, Result, Run, RunFile
from suites.sysbench import parse as sysbench

pytestmark = pytest.mark.django_db(transaction=True)

TINY = {
    **SHORTEST,
    "microbenchmarks": ["point-query_range=100", "scan_range=100", "update-index_range=100"],
}


@pytest.fixture
def task_messages() -> Iterator[list[str]]:
    """What every task started in this test was given, as text."""
    seen: list[str] = []

    def record(sender: Any = None, args: Any = None, kwargs: Any = None, **_: Any) -> None:
        seen.append(f"{sender.name} {args!r} {kwargs!r}")

    task_prerun.connect(record, weak=False)
    yield seen
    task_prerun.disconnect(record)


@pytest.fixture
def engineer(user_with_role: Callable[..., AbstractBaseUser]) -> AbstractBaseUser:
    return user_with_role("admin", username="engineer")


def logged_in(client: Client, user: Any) -> Client:
    client.force_login(user)
    return client


def start(target: Target, user: AbstractBaseUser | None = None, **overrides: Any) -> BenchmarkRun:
    run = benchmark.create_run(target, requested_by=user, **{**TINY, **overrides})
    enqueue(run)  # eager: runs now, at the commit (autocommit here)
    run.refresh_from_db()
    return run


@pytest.mark.services
def test_a_triggered_run_is_imported_like_an_upload_and_never_shows_the_password(
    server: Server, engineer: AbstractBaseUser, client: Client, task_messages: list[str]
) -> None:
    target = server.target(created_by=engineer)
    started = time.monotonic()
    run = start(target, engineer)
    elapsed = time.monotonic() - started

    assert run.state == BenchmarkRun.State.IMPORTED, run.error
    assert run.bundle is not None and run.bundle.source == Bundle.Source.TRIGGERED
    assert run.bundle.status == Bundle.Status.IMPORTED
    (imported,) = Run.objects.filter(bundle=run.bundle).select_related("build__version__dbms", "server")
    assert imported.name == target.run_dir_name
    assert imported.build.version.dbms.name == ("MariaDB" if server.kind == "mariadb" else "Postgres")
    assert imported.server.name == "runner-test-host"
    assert imported.load_seconds is not None and imported.load_inserts_per_s
    results = {r.microbenchmark.label: r for r in Result.objects.filter(run=imported).select_related("microbenchmark")}
    # The load step (sysbench prepare) is a result of its own beside the microbenchmarks it ran.
    assert set(results) == {*TINY["microbenchmarks"], f"{sysbench.LOAD_TEST}_range=100"}
    assert all(r.qps > 0 and r.dop == 1 for r in results.values())
    # Scan's QPS is rows scanned: it needs --table-size on line 1.
    assert "--table-size=10000" in imported.commands["scan_range=100"]
    assert RunFile.objects.filter(run=imported, kind__in=[RunFile.Kind.VARIABLES, RunFile.Kind.PG_SETTINGS]).exists()
    assert [s["state"] for s in run.progress["steps"]] == ["done", "done", "done"]
    print(f"\n{server.kind}: tiny triggered run (3 tests × 2 s) took {elapsed:.1f} s")

    # The password: stars in every stored command line, absent from the task message and from the pages.
    driver = "mysql" if server.kind == "mariadb" else "pgsql"
    for command in imported.commands.values():
        assert f"--{driver}-password=***" in command
        assert server.password not in command
    assert task_messages and not any(server.password in m for m in task_messages)
    assert server.password not in str(run.progress)
    client = logged_in(client, engineer)
    for url in ("/targets/", f"/targets/{target.pk}/edit/", run.get_absolute_url(), imported.get_absolute_url()):
        response = client.get(url)
        assert response.status_code == 200, url
        assert server.password not in response.content.decode(), url

    # Delivered again (acks_late redelivery, a double click): the claim makes it a no-op.
    assert run_benchmark.delay(run.pk).get() is None
    assert Bundle.objects.count() == 1 and Run.objects.count() == 1


@pytest.mark.services
def test_cancelling_mid_run_stops_sysbench_and_imports_nothing(mariadb: Server, client: Client, engineer: Any) -> None:
    target = mariadb.target()
    run = benchmark.create_run(target, **{**TINY, "seconds": 60})

    def execute_in_thread() -> None:
        try:
            benchmark.execute(run.pk)
        finally:
            connection.close()  # the thread's own connection; left open it would block dropping the test database

    worker = threading.Thread(target=execute_in_thread)
    worker.start()
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            progress = BenchmarkRun.objects.values_list("progress", flat=True).get(pk=run.pk)
            if progress["steps"][0]["state"] == "running":
                break
            time.sleep(0.2)
        else:
            pytest.fail("the first test never started")
        response = logged_in(client, engineer).post(f"/benchmarks/{run.pk}/cancel/")
        assert response.status_code == 302
        cancelled_at = time.monotonic()
    finally:
        worker.join(timeout=60)
    stopped_within = time.monotonic() - cancelled_at

    run.refresh_from_db()
    assert run.state == BenchmarkRun.State.CANCELLED
    assert "cancelled during point-query_range=100" in run.error
    assert [s["state"] for s in run.progress["steps"]] == ["cancelled", "skipped", "skipped"]
    assert run.bundle is None and not Bundle.objects.exists() and not Run.objects.exists()
    # Far less than the 60 s the test would have run: sysbench was terminated.
    assert stopped_within < 20
    output = BenchmarkOutput.objects.get(pk=run.pk)
    assert output.name.endswith(".partial.tar.gz") and len(output.content) > 0
    page = logged_in(client, engineer).get(run.get_absolute_url()).content.decode()
    assert "cancelled" in page and "Cancel</button>" not in page


@pytest.mark.services
def test_a_scheduled_run_records_the_red_flags_against_its_base(mariadb: Server, engineer: Any, client: Client) -> None:
    base_run = start(mariadb.target(name="base"), seconds=1)
    assert base_run.state == BenchmarkRun.State.IMPORTED, base_run.error
    base = Run.objects.get(bundle=base_run.bundle)
    # A base a hundred times faster: every microbenchmark of the new run is a regression against it.
    Result.objects.filter(run=base).update(qps=100_000_000)
    nightly = mariadb.target(name="nightly", build_label="ma101119_nightly")
    schedule = Schedule.objects.create(name="nightly", target=nightly, base_run=base, hour=3, minute=30, **TINY)
    schedule.sync_periodic_task()

    assert schedule.periodic_task is not None
    assert schedule.periodic_task.task == "runner.tasks.run_schedule"
    assert schedule.periodic_task.args == f"[{schedule.pk}]"
    assert (schedule.periodic_task.crontab.hour, schedule.periodic_task.crontab.minute) == ("3", "30")

    run_id = run_schedule.delay(schedule.pk).get()
    run = BenchmarkRun.objects.get(pk=run_id)
    assert run.state == BenchmarkRun.State.IMPORTED, run.error
    assert run.schedule == schedule and run.base_run == base
    assert sorted(f["label"] for f in run.red_flags) == sorted(TINY["microbenchmarks"])
    assert all(f["relative"] < 0.01 for f in run.red_flags)
    # The series was refreshed after the import, as after an upload: the home page's summary counts the
    # nightly run (without the refresh it would still be the base's summary of one run).
    nightly_run = Run.objects.get(bundle=run.bundle)
    summary = SeriesSummary.objects.get(server=nightly_run.server, workload=nightly_run.workload)
    assert summary.runs == 2 and nightly_run.pk in (summary.base_run_id, summary.latest_run_id)
    # Beat delivering tonight's message again finds tonight's run, and starts nothing new.
    assert run_schedule.delay(schedule.pk).get() == run_id
    assert BenchmarkRun.objects.filter(schedule=schedule).count() == 1

    page = logged_in(client, engineer).get(run.get_absolute_url()).content.decode()
    assert "Red flags against the base" in page and "scan_range=100" in page
    assert f"/compare/?base={base.pk}" in page
