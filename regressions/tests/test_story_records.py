"""Detection stores stories: new open stories are announced once, records no longer found go unless triaged."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import User

from regressions.detection import detect_regressions
from regressions.models import Regression
from regressions.signals import story_opened
from regressions.triage import triage
from runs.models import Run, Version

pytestmark = pytest.mark.django_db


@pytest.fixture
def announced() -> Any:
    calls: list[dict[str, Any]] = []

    def receive(sender: Any, **kwargs: Any) -> None:
        calls.append(kwargs)

    story_opened.connect(receive, dispatch_uid="test-story-opened")
    yield calls
    story_opened.disconnect(dispatch_uid="test-story-opened")


def test_story_opened_fires_once_with_the_new_open_stories_and_not_on_redetection(
    small_base: Run, announced: list[dict[str, Any]]
) -> None:
    summary = detect_regressions(small_base.server_id, small_base.workload_id)
    (call,) = announced
    assert (call["server_id"], call["workload_id"]) == (small_base.server_id, small_base.workload_id)
    opened = set(Regression.objects.filter(pk__in=call["regression_ids"]).values_list("pk", flat=True))
    assert opened == set(call["regression_ids"]) == set(summary.opened)
    # A metric's own story is listed on its tab but announced to nobody: alerts tell QPS stories.
    expected = {r.pk for r in Regression.objects.all() if r.is_open_story}
    assert Regression.objects.exclude(metric="qps").exists()
    # The four groups and scan.warm (a measured scan, ungrouped); the 2025 tables' .pre tests tell none.
    assert opened == expected and len(opened) == 5
    # The same data again: the same stories, nothing new to tell.
    detect_regressions(small_base.server_id, small_base.workload_id)
    assert len(announced) == 1


def test_a_story_no_longer_found_is_removed_unless_someone_triaged_it(
    small_base: Run, user_with_role: Callable[..., User]
) -> None:
    detect_regressions(small_base.server_id, small_base.workload_id)
    version = Version.objects.get(dbms__name="MySQL", text="8.0.44")
    ghosts = [
        Regression.objects.create(
            server=small_base.server, workload=small_base.workload, group=name, kind="regression", arrived_in=version
        )
        for name in ("ghost", "triaged ghost")
    ]
    triage([ghosts[1].pk], Regression.State.ACKNOWLEDGED, user_with_role("triager", username="t"), "real")
    summary = detect_regressions(small_base.server_id, small_base.workload_id)
    assert (summary.removed, summary.stale) == (1, 1)
    assert not Regression.objects.filter(pk=ghosts[0].pk).exists()
    kept = Regression.objects.get(pk=ghosts[1].pk)
    assert kept.no_longer_detected and not kept.is_open_story


def test_stories_over_every_release_are_stored_beside_the_long_term_ones(small_base: Run) -> None:
    detect_regressions(small_base.server_id, small_base.workload_id)
    long_term = set(Regression.objects.values_list("pk", flat=True))
    detect_regressions(small_base.server_id, small_base.workload_id, view="all")
    assert set(Regression.objects.filter(releases="long-term").values_list("pk", flat=True)) == long_term
    every = Regression.objects.filter(releases="all")
    assert every.exists() and not every.filter(pk__in=long_term).exists()
    # The 9.x innovation releases are points only in the every-release view.
    assert {p["version"] for p in every.first().evidence["points"] if p["used"]} >= {"9.4.0", "9.5.0"}  # type: ignore[union-attr]
