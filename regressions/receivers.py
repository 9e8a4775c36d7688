"""Detection follows the series (when reports has refreshed a series, its regression stories are told
again), and new open stories are told to their subscribers."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

from django.db import transaction
from django.dispatch import receiver
from django.utils import timezone

from regressions.models import Regression, Subscription
from regressions.signals import story_opened
from reports.events import series_refreshed
from runs import confirmations
from runs.models import Run

# Detection, triage, the comparisons and the tasks (with Celery) are imported by the receivers that use them: the
# receivers connect when Django starts, which every process does (a command's --help too).
if TYPE_CHECKING:
    from reports.compare import Comparison, ComparisonSpec


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
    from benchdash import metrics
    from regressions.detection import detect_regressions
    from reports.compare import ComparisonError
    from runs.derived import mark_derived

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
    """Each new open story is told to its subscribers by a task, once detection's records are committed; a
    story a benchmark host will measure again first (runs.confirmations) waits for that."""
    from regressions.triage import triage

    # One transaction: the repeats are queued at its commit, once the story's log says it waits for them.
    with transaction.atomic():
        held = confirmations.hold(story_facts(regression_ids))
        for story_id, reason in held.items():
            # In the story's log, which also keeps it should the repeats' own import make detection lose it.
            triage([story_id], Regression.State.NEW, None, note=reason)
    _announce([story_id for story_id in regression_ids if story_id not in held])


@receiver(confirmations.confirmation_done, dispatch_uid="regressions.confirmation_done")
def story_confirmed_or_not(sender: Any, story_id: int, confirmed: bool, text: str, **kwargs: Any) -> None:
    """A confirmed story is told now; one the repeats did not bear out is dismissed as noise, saying why."""
    from regressions.triage import triage

    if confirmed:
        _announce([story_id])
    else:
        triage([story_id], Regression.State.NOISE, None, note=text)


def story_facts(regression_ids: list[int]) -> list[confirmations.StoryFacts]:
    """What a confirmation needs of each story: its microbenchmarks (a group's members), versions and gate."""
    # Without the stories' text and evidence, which none of these facts reads (decoding them was most of this).
    heavy = ("stored_evidence", "story_events", "outliers", "noise_rule", "builds", "metric_steps", "summary")
    stories = list(Regression.objects.filter(pk__in=regression_ids).select_related("microbenchmark").defer(*heavy))
    members: dict[int, list[str]] = {}
    for member in (
        Regression.objects.filter(folded_into_id__in=regression_ids).select_related("microbenchmark").defer(*heavy)
    ):
        if member.folded_into_id is not None and member.microbenchmark is not None:
            members.setdefault(member.folded_into_id, []).append(member.microbenchmark.label)
    return [
        confirmations.StoryFacts(
            story_id=story.pk,
            server_id=story.server_id,
            workload_id=story.workload_id,
            kind=story.kind,
            labels=(story.microbenchmark.label,) if story.microbenchmark else tuple(members.get(story.pk, ())),
            arrived_in_build_id=story.arrived_in_build_id,
            previous_version_id=story.previous_version_id,
            threshold=story.threshold or 0.05,
            noise=story.noise,
        )
        for story in stories
    ]


def _announce(story_ids: list[int]) -> None:
    from regressions.tasks import announce_story_task

    if not story_ids or not Subscription.objects.filter(active=True).exists():
        return  # nobody to tell: no task per story
    for story_id in story_ids:
        # Robust: a broker down at this moment must not fail the detection that committed; the story is
        # announced by ``resend_lost_alerts`` once the broker is back.
        transaction.on_commit(functools.partial(announce_story_task.delay, story_id), robust=True)
