"""Celery tasks for triggered runs: thin, take ids, idempotent (the work is in runner.benchmark).

They carry only ids, never connection details, so no password is ever in a
task message, a result, or a worker log line.
"""

from __future__ import annotations

import logging

from celery import Task, shared_task
from celery.signals import worker_ready, worker_shutdown
from django.db import transaction
from django.utils import timezone

import benchdash.celery  # noqa: F401  (the app first: a task here is never sent through Celery's default app)
from runner import benchmark, confirm, hosts, receivers
from runner.models import HOST_QUEUE_PREFIX, BenchmarkHost, BenchmarkRun

log = logging.getLogger(__name__)

# A worker consuming a host's queue beats for that host while it lives. Connected here, not in the app's ready():
# every worker imports the tasks modules (the Celery app's autodiscovery) before it is ready, while a process that
# sends no task need not load Celery's signals. weak=False: the functions live as long as their module.
worker_ready.connect(receivers.worker_ready, weak=False, dispatch_uid="runner.worker_ready")
worker_shutdown.connect(receivers.worker_shutdown, weak=False, dispatch_uid="runner.worker_shutdown")

# Defaults for a run sent without its own limits; ``enqueue`` sends each run with limits sized
# to its parameters (twice the estimate), since a full list at 300 s per test lasts hours, not minutes.
SOFT_TIME_LIMIT = 6 * 3600
TIME_LIMIT = SOFT_TIME_LIMIT + 300


@shared_task(bind=True, acks_late=True, soft_time_limit=SOFT_TIME_LIMIT, time_limit=TIME_LIMIT, max_retries=None)
def run_benchmark(self: Task, benchmark_run_id: int) -> str | None:
    try:
        state = benchmark.execute(benchmark_run_id, task_id=self.request.id or "", worker=self.request.hostname or "")
    except hosts.HostBusy:
        # One benchmark at a time per host: this one waits its turn on the host's queue.
        raise self.retry(countdown=2 * hosts.heartbeat_seconds()) from None
    if state is not None:
        confirm.settle(benchmark_run_id)  # the last repeat of a story's confirmation judges them all
    log.info("benchmark run %s: %s", benchmark_run_id, state or "not queued, nothing done")
    return state


@shared_task(acks_late=True)
def run_schedule(schedule_id: int) -> int | None:
    """Beat fires this nightly: tonight's run is created (once) and sent as its own, suitably limited, task."""
    run = benchmark.run_for_schedule(schedule_id)
    if run is None:
        log.info("schedule %s is disabled or gone; nothing to run", schedule_id)
        return None
    if run.state == run.State.QUEUED:
        enqueue(run)
    return run.pk


@shared_task
def check_hosts() -> list[int]:
    """Beat (every minute): the running run of a host gone silent is failed and queued again, once."""
    return hosts.requeue_silent_hosts(enqueue)


def enqueue(run: BenchmarkRun, *, queue: str | None = None) -> None:
    """Send ``run_benchmark`` after the commit, with time limits sized to this run, to its host's queue when it
    has a host (only that host's worker takes it)."""
    soft, hard = run.time_limits()
    run_id = run.pk
    if queue is None and run.host_id is not None:
        queue = BenchmarkHost.objects.values_list("name", flat=True).get(pk=run.host_id)
        queue = f"{HOST_QUEUE_PREFIX}{queue}"

    def send() -> None:
        try:
            run_benchmark.apply_async(args=[run_id], soft_time_limit=soft, time_limit=hard, queue=queue)
        except Exception as exc:
            if BenchmarkRun.objects.filter(pk=run_id, state=BenchmarkRun.State.QUEUED).exists():
                # The broker is unreachable: say so on the run instead of leaving it queued forever.
                log.exception("could not queue benchmark run %s", run_id)
                BenchmarkRun.objects.filter(pk=run_id, state=BenchmarkRun.State.QUEUED).update(
                    state=BenchmarkRun.State.FAILED, error=f"could not queue the run: {exc}", finished_at=timezone.now()
                )

    transaction.on_commit(send)
