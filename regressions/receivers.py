"""Detection follows the series (when reports has refreshed a series, its regression stories are told
again), and new open stories are told to their subscribers."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from django.db import transaction
from django.dispatch import receiver
from django.utils import timezone

from benchdash import metrics
from regressions.detection import detect_regressions
from regressions.models import Subscription
from regressions.signals import story_opened
from regressions.tasks import announce_story_task
from reports.compare import Comparison, ComparisonError, ComparisonSpec
from reports.series import series_refreshed
from runs.derived import mark_derived
from runs.models import Run


@receiver(series_refreshed, dispatch_uid="regressions.detect_after_refresh")
def detect_after_refresh(
    sender: Any,
    server_id: int,
    workload_id: int,
    comparisons: Mapping[ComparisonSpec, Comparison] | None = None,
    started_at: datetime | None = None,
    bundle_id: int | None = None,
    **kwargs: Any,
) -> None:
    # The every-release view's records follow too, so the list's "every release" view is current without anyone
    # running the command; only series that mix release kinds cost a second reading. The refresh's own
    # comparisons are those detection reads: each is computed once per refresh. After an import only the new
    # stories that involve the import's versions are news.
    versions = None
    if bundle_id is not None:
        versions = set(
            Run.objects.filter(bundle_id=bundle_id, server_id=server_id, workload_id=workload_id).values_list(
                "build__version__text", flat=True
            )
        )
    data_as_of = started_at or timezone.now()
    try:
        with metrics.timed("detection"):
            detect_regressions(
                server_id, workload_id, every_release=True, comparisons=comparisons, announce_versions=versions
            )
    except ComparisonError:
        mark_derived(server_id, workload_id, data_as_of)  # nothing to compare is an answer too
        raise
    # Whoever waits for this series' stories (the CI verdict) may read them now.
    mark_derived(server_id, workload_id, data_as_of)


@receiver(story_opened, dispatch_uid="regressions.announce_new_stories")
def announce_new_stories(sender: Any, regression_ids: list[int], **kwargs: Any) -> None:
    """Each new open story is told to its subscribers by a task, once detection's records are committed."""
    if not Subscription.objects.filter(active=True).exists():
        return  # nobody to tell: no task per story
    for story_id in regression_ids:
        # Robust: a broker down at this moment must not fail the detection that committed; the story is
        # announced by ``resend_lost_alerts`` once the broker is back.
        transaction.on_commit(functools.partial(announce_story_task.delay, story_id), robust=True)
