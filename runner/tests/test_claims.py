"""The run's state machine without a database server: claims, cancels before start, lost workers."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from runner import benchmark
from runner.models import BenchmarkRun, Target
from runner.tasks import run_benchmark
from runner.tests.services import TINY
from tests.factories import TargetFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def target() -> Target:
    """A target no test connects to: for the state machine alone."""
    return TargetFactory(
        name="unreachable",
        host="192.0.2.1",  # TEST-NET-1: never routed
        user="nobody",
        password="never-used",
        database="nothing",
        config_label="tiny",
        server_name="nowhere",
    )


def test_a_queued_run_is_cancelled_at_once_and_never_starts(target: Target) -> None:
    run = benchmark.create_run(target, **TINY)
    assert benchmark.cancel(run.pk) == BenchmarkRun.State.CANCELLED
    assert run_benchmark.delay(run.pk).get() is None
    run.refresh_from_db()
    assert run.state == BenchmarkRun.State.CANCELLED and run.started_at is None
    assert {s["state"] for s in run.progress["steps"]} == {"skipped"}


def test_a_run_claimed_by_another_worker_is_left_alone(target: Target) -> None:
    run = benchmark.create_run(target, **TINY)
    BenchmarkRun.objects.filter(pk=run.pk).update(state=BenchmarkRun.State.RUNNING, started_at=timezone.now())
    assert run_benchmark.delay(run.pk).get() is None
    run.refresh_from_db()
    assert run.state == BenchmarkRun.State.RUNNING


def test_a_run_left_running_past_its_time_limits_is_marked_lost(target: Target) -> None:
    run = benchmark.create_run(target, **TINY)
    long_ago = timezone.now() - run.lost_after() - timedelta(minutes=1)
    BenchmarkRun.objects.filter(pk=run.pk).update(state=BenchmarkRun.State.RUNNING, started_at=long_ago)
    run_benchmark.delay(run.pk)
    run.refresh_from_db()
    assert run.state == BenchmarkRun.State.FAILED and "lost" in run.error
