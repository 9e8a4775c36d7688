"""Confirmation runs against the real MariaDB: a story a benchmark host's run opened is measured again there three
times before anyone is told. An injected noisy result is dismissed as noise (the repeats kept as runs); a real
step (the new version's server reached over a link that delays every answer) is confirmed, and only then told."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from django.db.models import F

from regressions.models import Delivery, Regression, Subscription
from reports.signals import refresh_imported_series
from reports.tasks import refresh_series_task
from runner import benchmark
from runner.models import BenchmarkHost, BenchmarkRun, Confirmation, Target
from runner.tasks import enqueue
from runner.tests.conftest import MARIADB_PORT
from runner.tests.services import TINY as SHORTEST
from runner.tests.services import Server, slow_link
from runs.models import Result, Run
from runs.signals import bundle_imported

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

TINY = {**SHORTEST, "seconds": 3}
State = BenchmarkRun.State


@pytest.fixture
def lab(mariadb: Server, settings: Any) -> tuple[Target, Target]:
    """Two versions' targets (the same MariaDB under two build names) on one benchmark host, and a subscriber."""
    settings.BENCHDASH_CONFIRMATION_REPEATS = 3
    old = mariadb.target(name="old", build_label="ma101119_rel")
    new = mariadb.target(name="new", build_label="ma110402_rel")
    host = BenchmarkHost.objects.create(name="lab-1", cpus=2)
    host.targets.add(old, new)
    Subscription.objects.create(name="perf", emails="perf@example.com")
    return old, new


def start(target: Target, **parameters: Any) -> BenchmarkRun:
    run = benchmark.create_run(target, **{**TINY, **parameters})
    enqueue(run)  # eager: it runs, is imported and its series refreshed now (autocommit here)
    run.refresh_from_db()
    assert run.state == State.IMPORTED, run.error
    return run


def reach_through(target: Target, port: int, mariadb: Server) -> None:
    """The target reaches MariaDB at ``port`` from now on (its password entered again for it)."""
    target.port = port
    target.set_password(mariadb.password)
    target.save()


@contextmanager
def detection_paused() -> Iterator[None]:
    """Imports do not refresh their series meanwhile (the test refreshes it itself)."""
    bundle_imported.disconnect(refresh_imported_series)
    try:
        yield
    finally:
        bundle_imported.connect(refresh_imported_series)


@pytest.mark.slow(40)
def test_an_injected_noisy_result_is_dismissed_as_noise_and_its_repeats_are_kept(
    lab: tuple[Target, Target], mariadb: Server
) -> None:
    old, new = lab
    start(old, seconds=1, table_size=1000)
    with detection_paused():
        suspect = start(new, seconds=1, table_size=1000)
    run = Run.objects.get(bundle_id=suspect.bundle_id)
    # One bad measurement: the new version's point-query result as if the machine had stalled. A tenth, not a half:
    # the two real runs last a second each, and on a busy test machine one can measure twice the other's QPS, which
    # a halved result no longer falls below (no story, nothing to confirm).
    Result.objects.filter(run=run, microbenchmark__test="point-query").update(qps=F("qps") * 0.1)
    # Two equal versions' repeats would fall below the gate by chance now and then on a loaded machine (all three,
    # rarely, but then the story is rightly confirmed): the old version's repeats go through the slow link, so
    # every repeat of the new version is far above the old one's just before it, and the suspect result is alone.
    with slow_link(MARIADB_PORT, delay=0.02) as link:
        reach_through(old, link.port, mariadb)
        refresh_series_task(run.server_id, run.workload_id)

    # The story of point-query (its group's, when the group stepped with it), opened by the host's run.
    confirmation = Confirmation.objects.get()
    story = Regression.objects.get(pk=confirmation.story_id)
    assert (story.metric, story.kind, story.arrived_in_build) == ("qps", "regression", run.build)
    repeats = list(BenchmarkRun.objects.filter(confirmation=confirmation).order_by("pk"))
    # Three of each version, alternating, on the host that ran the suspect result.
    assert [r.target for r in repeats] == [old, new] * 3
    assert all(r.state == State.IMPORTED and r.host == suspect.host for r in repeats)
    assert confirmation.state == Confirmation.State.DISMISSED
    assert confirmation.text.startswith("dismissed as noise: 0 of 3 repeats below the gate (σ "), confirmation.text
    story.refresh_from_db()
    assert story.state == Regression.State.NOISE
    assert story.events.last().note == confirmation.text
    # Nobody was told, and the repeats are runs of the series: three more measurements of each build.
    assert not Delivery.objects.filter(story=story).exists()
    assert Run.objects.filter(build=run.build, server=run.server, workload=run.workload).count() == 4
    assert Run.objects.filter(server=run.server, workload=run.workload).count() == 8


@pytest.mark.slow(40)
def test_a_real_step_is_confirmed_by_three_repeats_before_it_is_told(
    lab: tuple[Target, Target], mariadb: Server
) -> None:
    old, new = lab
    with slow_link(MARIADB_PORT, delay=0.02) as link:
        # The new version's server answers each query 20 ms later: at most 50 point queries a second, however idle
        # the machine, where the old version, reached directly, does thousands (measured at load 17 on 2 cores:
        # 280 to 3,500 direct, 29 to 47 through the link, at least 8 times fewer). Its run, then its three repeats
        # (run as the story opens), each after a repeat of the old version.
        reach_through(new, link.port, mariadb)
        # The step is far beyond any noise: one second per test (a thousand rows) measures it.
        start(old, seconds=1, table_size=1000)
        slow = start(new, seconds=1, table_size=1000)
    run = Run.objects.get(bundle_id=slow.bundle_id)
    confirmation = Confirmation.objects.get()
    story = Regression.objects.get(pk=confirmation.story_id)
    assert (story.metric, story.kind, story.arrived_in_build) == ("qps", "regression", run.build)
    assert confirmation.state == Confirmation.State.CONFIRMED, confirmation.text
    assert confirmation.text.startswith("confirmed: 3 of 3 repeats below the gate (σ ")
    story.refresh_from_db()
    assert story.state == Regression.State.NEW
    # Told once confirmed.
    assert Delivery.objects.filter(story=story).count() == 1
