"""Benchmark hosts: which host runs a target's benchmarks, one run at a time per host, the worker's heartbeat,
and what happens to the run of a host that went silent.

A host's worker consumes only ``bench-host-<name>``; every other task (imports, refreshes, detection) goes to
the general workers' queue, including the import of the host's own results (``runner.benchmark``).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from datetime import datetime, timedelta

from django.conf import settings
from django.db import DatabaseError, connection, transaction
from django.utils import timezone

from runner import sysbench_runner
from runner.models import HOST_QUEUE_PREFIX, PARAMETER_FIELDS, BenchmarkHost, BenchmarkRun, Target

log = logging.getLogger(__name__)
State = BenchmarkRun.State


class HostChoiceError(ValueError):
    """A target several hosts reach, and no host named: the candidates are in the message."""


class HostBusy(Exception):
    """The host is running another benchmark; the task waits its turn."""


def silent_after() -> timedelta:
    return timedelta(seconds=getattr(settings, "BENCHDASH_HOST_SILENT_SECONDS", 120))


def heartbeat_seconds() -> float:
    return float(getattr(settings, "BENCHDASH_HOST_HEARTBEAT_SECONDS", 15))


def choose_host(target: Target, host: BenchmarkHost | None = None) -> BenchmarkHost | None:
    """The host a run of ``target`` goes to: the one asked for (it must reach the target), else the only host
    that reaches it, else none (a general worker runs it). Several and none asked for is refused."""
    reach = list(target.hosts.order_by("name"))
    if host is not None:
        if host not in reach:
            raise HostChoiceError(f"host {host.name} cannot reach target {target.name}")
        return host
    if len(reach) > 1:
        names = ", ".join(h.name for h in reach)
        raise HostChoiceError(f"target {target.name} is reached by several hosts ({names}): choose one")
    return reach[0] if reach else None


def host_of_queues(queues: Iterable[str]) -> list[str]:
    """The host names whose queues a worker consumes."""
    return [q[len(HOST_QUEUE_PREFIX) :] for q in queues if q.startswith(HOST_QUEUE_PREFIX)]


def beat(host_name: str, worker: str) -> bool:
    """The host's worker is alive; False when no host has that name (the worker's queue names none)."""
    return bool(
        BenchmarkHost.objects.filter(name=host_name).update(last_heartbeat_at=timezone.now(), worker=worker[:255])
    )


class Heartbeat(threading.Thread):
    """Beats for a host every ``heartbeat_seconds`` while its worker lives, benchmark running or not."""

    def __init__(self, host_name: str, worker: str) -> None:
        super().__init__(name=f"host-heartbeat-{host_name}", daemon=True)
        self.host_name, self.worker = host_name, worker
        self.done = threading.Event()

    def run(self) -> None:
        try:
            while True:
                try:
                    if not beat(self.host_name, self.worker):
                        log.warning(
                            "no benchmark host named %r: register it before starting its worker", self.host_name
                        )
                except DatabaseError:
                    log.warning("heartbeat of host %s not recorded", self.host_name, exc_info=True)
                if self.done.wait(heartbeat_seconds()):
                    return
        finally:
            connection.close()

    def stop(self) -> None:
        self.done.set()
        self.join(timeout=10)


_heartbeats: list[Heartbeat] = []


def start_heartbeats(queues: Iterable[str], worker: str) -> list[Heartbeat]:
    """Called once the worker is ready: a heartbeat for each host queue it consumes."""
    for name in host_of_queues(queues):
        heartbeat = Heartbeat(name, worker)
        heartbeat.start()
        _heartbeats.append(heartbeat)
    return list(_heartbeats)


def stop_heartbeats() -> None:
    while _heartbeats:
        _heartbeats.pop().stop()


def claim(run_id: int, *, task_id: str, worker: str) -> bool:
    """Take a queued run (False: it is not queued, another delivery has it). A host runs one benchmark at a time:
    with another run of the same host running, HostBusy, and the run stays queued."""
    with transaction.atomic():
        host_id = BenchmarkRun.objects.filter(pk=run_id).values_list("host_id", flat=True).first()
        if host_id is not None:
            BenchmarkHost.objects.select_for_update().filter(pk=host_id).first()  # one claim per host at a time
            others = BenchmarkRun.objects.filter(host_id=host_id, state__in=[State.RUNNING, State.CANCELLING])
            queued = BenchmarkRun.objects.filter(pk=run_id, state=State.QUEUED).exists()
            if queued and others.exclude(pk=run_id).exists():
                raise HostBusy(f"host {host_id} is running another benchmark")
        return bool(
            BenchmarkRun.objects.filter(pk=run_id, state=State.QUEUED).update(
                state=State.RUNNING, started_at=timezone.now(), celery_task_id=task_id[:255], worker=worker[:255]
            )
        )


def requeue_silent_hosts(enqueue: Callable[[BenchmarkRun], None]) -> list[int]:
    """Fail the running run of each host silent for longer than ``silent_after`` and queue it again as a new
    run, once: a run that was itself queued again is failed and left so. Returns the new runs' ids."""
    cutoff = timezone.now() - silent_after()
    silent = BenchmarkRun.objects.filter(
        host__isnull=False, state__in=[State.RUNNING, State.CANCELLING], host__last_heartbeat_at__lt=cutoff
    ) | BenchmarkRun.objects.filter(
        host__isnull=False,
        state__in=[State.RUNNING, State.CANCELLING],
        host__last_heartbeat_at__isnull=True,
        started_at__lt=cutoff,
    )
    requeued = []
    for run_id in silent.values_list("pk", flat=True):
        new_id = _fail_and_requeue(run_id, enqueue)
        if new_id is not None:
            requeued.append(new_id)
    return requeued


def _fail_and_requeue(run_id: int, enqueue: Callable[[BenchmarkRun], None]) -> int | None:
    with transaction.atomic():
        run = (
            BenchmarkRun.objects.select_for_update(of=("self",))
            .select_related("host")
            .filter(pk=run_id, state__in=[State.RUNNING, State.CANCELLING])
            .first()
        )
        if run is None or run.host is None:
            return None
        heard = run.host.last_heartbeat_at
        when = f"{heard:%Y-%m-%d %H:%M:%S} UTC" if heard else "never"
        silent = f"host {run.host.name} went silent (last heartbeat {when})"
        again: BenchmarkRun | None = None
        if run.state == State.RUNNING and not BenchmarkRun.objects.filter(requeued_as=run).exists():
            again = BenchmarkRun.objects.create(
                target_id=run.target_id,
                host_id=run.host_id,
                schedule_id=run.schedule_id,
                base_run_id=run.base_run_id,
                # A confirmation's repeat or a settings experiment's run stays one.
                confirmation_id=run.confirmation_id,
                settings_experiment_id=run.settings_experiment_id,
                requested_by_id=run.requested_by_id,
                progress=sysbench_runner.plan(run.parameters()).as_dict(),
                **{name: getattr(run, name) for name in PARAMETER_FIELDS},
            )
        error = f"{silent}: failed and queued again as run #{again.pk}" if again else f"{silent}: failed"
        BenchmarkRun.objects.filter(pk=run.pk).update(
            state=State.FAILED, error=error, finished_at=timezone.now(), requeued_as=again
        )
        if again is not None:
            enqueue(again)
    log.warning("benchmark run %s: %s", run_id, error)
    return again.pk if again else None


def status(host: BenchmarkHost, current: BenchmarkRun | None, now: datetime | None = None) -> str:
    """What the host's page says of it: never seen, silent, running, or idle."""
    now = now or timezone.now()
    if host.last_heartbeat_at is None:
        return "never seen: start its worker"
    if now - host.last_heartbeat_at > silent_after():
        return "silent"
    return "running" if current is not None else "idle"


def current_runs(host_ids: Iterable[int]) -> dict[int, BenchmarkRun]:
    """Each host's running run (one query for any number of hosts)."""
    running = BenchmarkRun.objects.filter(host_id__in=list(host_ids), state__in=[State.RUNNING, State.CANCELLING])
    return {run.host_id: run for run in running.select_related("target").order_by("started_at") if run.host_id}
