"""Which host's run opened each new story (the run a confirmation repeats), without a database server to run
sysbench against: the newest host run whose bundle carries the story's build in the story's series, for every
story of a detection in one query."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from runner import benchmark
from runner.confirm import _opened_by
from runner.models import BenchmarkHost, BenchmarkRun, Target
from runner.tests.services import TINY
from runs.confirmations import StoryFacts
from runs.models import Build, Run
from tests.factories import BuildFactory, BundleFactory, RunFactory, TargetFactory

pytestmark = pytest.mark.django_db

State = BenchmarkRun.State


def host_run(target: Target, host: BenchmarkHost | None, builds: list[Build], minutes_ago: int, series: Run) -> int:
    """An imported run of ``target`` whose bundle holds a run of each of ``builds`` in ``series``' series."""
    bundle = BundleFactory()
    for build in builds:
        RunFactory(bundle=bundle, build=build, server=series.server, workload=series.workload, config=series.config)
    run = benchmark.create_run(target, host=host, **TINY)
    BenchmarkRun.objects.filter(pk=run.pk).update(
        host=host, state=State.IMPORTED, bundle=bundle, finished_at=timezone.now() - timedelta(minutes=minutes_ago)
    )
    return run.pk


def story(story_id: int, series: Run, build: Build | None) -> StoryFacts:
    return StoryFacts(
        story_id=story_id,
        server_id=series.server_id,
        workload_id=series.workload_id,
        kind="regression",
        labels=("point-query_range=100",),
        arrived_in_build_id=build.pk if build is not None else None,
        previous_version_id=None,
        threshold=0.05,
        noise=None,
    )


def test_each_story_is_opened_by_the_newest_host_run_of_its_build_in_one_query() -> None:
    target = TargetFactory()
    host = BenchmarkHost.objects.create(name="lab-1", cpus=2)
    host.targets.add(target)
    old, new, unmeasured = BuildFactory(name="my8043_rel"), BuildFactory(name="my8044_rel"), BuildFactory()
    series = RunFactory(build=BuildFactory(name="my8042_rel"))
    elsewhere = RunFactory(build=BuildFactory(name="my8041_rel"), server=RunFactory().server)
    older_of_old = host_run(target, host, [old], 30, series)
    # The newest run of the old build holds it twice (two configurations): still one source.
    newest_of_old = host_run(target, host, [old, old], 10, series)
    of_new = host_run(target, host, [new], 20, series)
    # Newer, but no source: a run without a host, and a host's run of the new build in another series.
    host_run(target, None, [new], 1, series)
    host_run(target, host, [new], 1, elsewhere)

    stories = [
        story(1, series, old),
        story(2, series, new),
        story(3, series, old),
        story(4, series, unmeasured),
        story(5, series, None),
    ]
    with CaptureQueriesContext(connection) as captured:
        found = _opened_by(stories)
    assert {story_id: run.pk for story_id, run in found.items()} == {1: newest_of_old, 2: of_new, 3: newest_of_old}
    assert older_of_old not in {run.pk for run in found.values()}
    assert found[1].host == host and found[2].target == target  # selected with the run
    assert len(captured) == 1
