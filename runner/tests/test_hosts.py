"""Benchmark hosts: two worker processes here stand for two hosts, each taking only its own runs, one at a time,
never an import; a host gone silent has its running run failed and queued again, once."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.test import Client
from django.utils import timezone

from runner import benchmark, hosts
from runner.models import BenchmarkHost, BenchmarkRun, Target
from runner.tasks import check_hosts, enqueue
from runner.tests.services import TINY, Server
from runs.models import Bundle
from tests import live

State = BenchmarkRun.State


def _host(name: str, *targets: Target, heard: timedelta | None = None) -> BenchmarkHost:
    host = BenchmarkHost.objects.create(
        name=name,
        cpus=2,
        ram_gb=8,
        storage="NVMe",
        last_heartbeat_at=timezone.now() - heard if heard is not None else None,
    )
    host.targets.add(*targets)
    return host


@pytest.fixture
def host_workers(tmp_path: Path) -> Iterator[Callable[[BenchmarkHost], subprocess.Popen[bytes]]]:
    """``start(host)``: the host's worker as its page documents it (its queue only, concurrency 1), sending
    what it queues (the import of its results) to the general workers' queue of this test."""
    from benchdash.celery import app

    started: list[tuple[subprocess.Popen[bytes], str]] = []

    def start(host: BenchmarkHost) -> subprocess.Popen[bytes]:
        env = {
            **os.environ,
            "DATABASE_URL": live.database_url(),
            "REDIS_URL": settings.REDIS_URL,
            "CELERY_QUEUE": app.conf.task_default_queue,
            "CELERY_TASK_ALWAYS_EAGER": "false",
            "BENCHDASH_HOST_HEARTBEAT_SECONDS": "1",
        }
        # The command the host's page documents, as it stands (celery puts the machine's name for %h).
        command = [sys.executable, "-m", *host.worker_command.split()]
        command += ["-l", "INFO", "--without-gossip", "--without-mingle"]
        again = sum(1 for _, queue in started if queue == host.queue)  # a second worker of the host logs apart
        with (tmp_path / f"{host.name}{f'-{again + 1}' if again else ''}.log").open("wb") as log:
            proc = subprocess.Popen(command, cwd=live.ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
        started.append((proc, host.queue))
        return proc

    try:
        yield start
    finally:
        for proc, queue in started:
            live.stop(proc, timeout=60)
            live.forget_queue(queue)


def _wait(condition: Callable[[], bool], seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.5)
    pytest.fail(f"timed out waiting for {what}")


@pytest.mark.slow(30)
@pytest.mark.services
@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_two_hosts_workers_each_take_only_their_own_runs_one_at_a_time_and_never_an_import(
    mariadb: Server,
    postgres: Server,
    host_workers: Callable[[BenchmarkHost], subprocess.Popen[bytes]],
    tmp_path: Path,
    client: Client,
) -> None:
    suffix = uuid.uuid4().hex[:6]
    maria, pg = mariadb.target(name=f"maria-{suffix}"), postgres.target(name=f"pg-{suffix}")
    host_a, host_b = _host(f"a-{suffix}", maria), _host(f"b-{suffix}", pg)
    with live.celery_workers("general", log_dir=tmp_path) as general:
        general()
        first = benchmark.create_run(maria, **TINY)
        second = benchmark.create_run(maria, **TINY)
        other = benchmark.create_run(pg, **TINY)
        assert (first.host, second.host, other.host) == (host_a, host_a, host_b)
        for run in (first, second, other):
            enqueue(run)  # to its host's queue, at the commit (autocommit here)
        time.sleep(3)
        # No host worker yet: nothing ran, whatever the general worker does.
        assert set(BenchmarkRun.objects.values_list("state", flat=True)) == {State.QUEUED}
        host_workers(host_a)
        host_workers(host_b)

        def done() -> bool:
            return set(BenchmarkRun.objects.values_list("state", flat=True)) == {State.IMPORTED}

        _wait(done, 240, "the three runs to be imported")
    runs = {r.pk: r for r in BenchmarkRun.objects.all()}
    first, second, other = runs[first.pk], runs[second.pk], runs[other.pk]
    assert first.worker.startswith(f"{host_a.name}@") and second.worker == first.worker
    assert other.worker.startswith(f"{host_b.name}@")
    # One run at a time on a host: host a's two runs did not overlap.
    a, b = sorted((first, second), key=lambda r: r.started_at)
    assert a.finished_at is not None and b.started_at is not None and a.finished_at <= b.started_at
    assert all(Bundle.objects.get(pk=r.bundle_id).status == Bundle.Status.IMPORTED for r in runs.values())
    # Imports (and the refreshes after them) ran on the general worker only.
    for host in (host_a, host_b):
        text = (tmp_path / f"{host.name}.log").read_text(errors="replace")
        # The banner lists every registered task; a task that ran is logged with its id in brackets.
        assert "runner.tasks.run_benchmark[" in text
        assert "import_bundle_task[" not in text and "refresh_series_task[" not in text
    general_log = "".join(p.read_text(errors="replace") for p in tmp_path.glob("worker-*.log"))
    assert "import_bundle_task[" in general_log and "run_benchmark[" not in general_log
    host_a.refresh_from_db()
    assert host_a.last_heartbeat_at is not None and host_a.worker == first.worker

    page = client.get(f"/benchmarks/hosts/{host_a.pk}/").content.decode()
    assert f"bench-host-{host_a.name}" in page and "celery -A benchdash worker -Q" in page
    assert 'id="host-current">none' in page


def _kill_machine(proc: subprocess.Popen[bytes]) -> None:
    """The host dies: its worker, the worker's pool process and the sysbench it runs, each SIGKILLed by id."""
    tree, todo = [], [proc.pid]
    while todo:
        pid = todo.pop()
        tree.append(pid)
        todo.extend(live.children(pid))
    for pid in tree:  # the worker first, so it cannot start a new pool process
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    proc.wait(timeout=10)


@pytest.mark.services
@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_killed_hosts_run_is_failed_and_queued_again_once_and_its_next_worker_runs_it(
    mariadb: Server,
    host_workers: Callable[[BenchmarkHost], subprocess.Popen[bytes]],
    tmp_path: Path,
    settings: Any,
) -> None:
    settings.BENCHDASH_HOST_SILENT_SECONDS = 5  # the workers beat every second
    suffix = uuid.uuid4().hex[:6]
    host = _host(f"k-{suffix}", mariadb.target(name=f"maria-{suffix}"))
    first_worker = host_workers(host)
    _wait(lambda: BenchmarkHost.objects.get(pk=host.pk).last_heartbeat_at is not None, 60, "the first heartbeat")
    run = benchmark.create_run(host.targets.get(), **{**TINY, "table_size": 1000})
    enqueue(run)

    def state(pk: int) -> str:
        return BenchmarkRun.objects.values_list("state", flat=True).get(pk=pk)

    deadline = time.monotonic() + 60
    while state(run.pk) == State.QUEUED and time.monotonic() < deadline:
        time.sleep(0.05)
    assert state(run.pk) == State.RUNNING  # taken, and a run lasts seconds: the kill lands in the middle of it
    assert check_hosts() == []  # alive: beat's rule leaves its run alone
    _kill_machine(first_worker)

    # Beat's rule, as beat calls it every minute: once the host has been silent for longer than allowed.
    requeued: list[int] = []
    deadline = time.monotonic() + 30
    while not requeued and time.monotonic() < deadline:
        requeued = check_hosts()
        time.sleep(0.5)
    assert len(requeued) == 1, "the silent host's run was not requeued"
    assert check_hosts() == []  # exactly once
    run.refresh_from_db()
    (again_id,) = requeued
    assert (run.state, run.requeued_as_id) == (State.FAILED, again_id)
    assert run.error.startswith(f"host {host.name} went silent (last heartbeat ")
    assert run.error.endswith(f"failed and queued again as run #{again_id}")
    assert state(again_id) == State.QUEUED
    assert BenchmarkRun.objects.count() == 2

    # The host's next worker (the machine back) takes the queued-again run and measures it to the end.
    host_workers(host)
    _wait(lambda: state(again_id) != State.QUEUED, 60, "the second worker to take the run again")
    _wait(lambda: state(again_id) in (State.IMPORTING, State.IMPORTED), 90, "the run to finish on the second worker")
    again = BenchmarkRun.objects.get(pk=again_id)
    assert again.worker.startswith(f"{host.name}@") and again.error == ""
    second_log = (tmp_path / f"{host.name}-2.log").read_text(errors="replace")
    assert f"runner.tasks.run_benchmark[{again.celery_task_id}]" in second_log
    run.refresh_from_db()
    assert run.state == State.FAILED and BenchmarkRun.objects.count() == 2  # the killed run stays failed, once


@pytest.mark.django_db
def test_a_silent_hosts_running_run_is_failed_and_queued_again_once(mariadb_target: Target) -> None:
    host = _host("silent-one", mariadb_target, heard=timedelta(minutes=10))
    running = benchmark.create_run(mariadb_target, **TINY)
    BenchmarkRun.objects.filter(pk=running.pk).update(state=State.RUNNING, started_at=timezone.now())

    (again_id,) = hosts.requeue_silent_hosts(enqueue)
    running.refresh_from_db()
    assert running.state == State.FAILED and running.requeued_as_id == again_id
    assert f"host {host.name} went silent" in running.error and f"queued again as run #{again_id}" in running.error
    again = BenchmarkRun.objects.get(pk=again_id)
    assert (again.state, again.host_id, again.microbenchmarks) == (State.QUEUED, host.pk, TINY["microbenchmarks"])
    assert hosts.requeue_silent_hosts(enqueue) == []  # once

    # The queued-again run, lost the same way, is failed and left so.
    BenchmarkRun.objects.filter(pk=again_id).update(state=State.RUNNING, started_at=timezone.now())
    assert hosts.requeue_silent_hosts(enqueue) == []
    again.refresh_from_db()
    assert again.state == State.FAILED and again.requeued_as_id is None and "went silent" in again.error

    # A host heard from recently keeps its run.
    BenchmarkHost.objects.filter(pk=host.pk).update(last_heartbeat_at=timezone.now())
    fresh = benchmark.create_run(mariadb_target, **TINY)
    BenchmarkRun.objects.filter(pk=fresh.pk).update(state=State.RUNNING, started_at=timezone.now())
    assert hosts.requeue_silent_hosts(enqueue) == []
    host.refresh_from_db()
    assert hosts.status(host, fresh) == "running"
    assert hosts.status(host, None, now=timezone.now() + timedelta(minutes=5)) == "silent"


@pytest.mark.django_db
def test_a_host_runs_one_benchmark_at_a_time_and_an_ambiguous_target_is_refused(mariadb_target: Target) -> None:
    one, two = _host("one", mariadb_target), _host("two", mariadb_target)
    with pytest.raises(hosts.HostChoiceError, match=r"several hosts \(one, two\): choose one"):
        benchmark.create_run(mariadb_target, **TINY)
    first = benchmark.create_run(mariadb_target, host=one, **TINY)
    second = benchmark.create_run(mariadb_target, host=one, **TINY)
    assert hosts.claim(first.pk, task_id="t1", worker="one@x")
    with pytest.raises(hosts.HostBusy):
        hosts.claim(second.pk, task_id="t2", worker="one@x")
    third = benchmark.create_run(mariadb_target, host=two, **TINY)
    assert hosts.claim(third.pk, task_id="t3", worker="two@x")  # another host is free
    assert not hosts.claim(first.pk, task_id="t1-again", worker="one@x")  # a second delivery does nothing
    assert hosts.host_of_queues(["celery", "bench-host-one"]) == ["one"]


@pytest.fixture
def mariadb_target(db: None) -> Target:
    """A target row (nothing connects to it in these tests)."""
    return Target.objects.create(
        name="maria",
        kind="mariadb",
        host="127.0.0.1",
        port=3306,
        user="bench",
        database="bench",
        build_label="ma101119_rel",
        config_label="tiny",
        server_name="runner-test-host",
    )
