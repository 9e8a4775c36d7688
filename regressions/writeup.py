"""The open regression stories of a series, as reports' write-ups list them (registered in RegressionsConfig.ready)."""

from __future__ import annotations

from regressions import filters
from regressions.models import Regression
from reports.writeup import OpenStory
from runs import releases


def open_stories(server_id: int, workload_id: int) -> list[OpenStory]:
    """What the regressions list's "open" tab shows for this series, in the default release view: two queries."""
    found = (
        Regression.objects.filter(
            filters.OPEN_STORIES, server_id=server_id, workload_id=workload_id, releases=releases.DEFAULT_VIEW
        )
        .select_related("arrived_in", "previous_version", "microbenchmark")
        .prefetch_related("bugs")
        .order_by("arrived_in__sort_key", "group", "microbenchmark__test", "pk")
    )
    return [
        OpenStory(
            subject=record.microbenchmark.label if record.microbenchmark else record.group,
            is_group=record.microbenchmark is None,
            arrived_in=record.arrived_in.text,
            previous_version=record.previous_version.text if record.previous_version else None,
            change=record.current_change_text if record.current_change is not None else record.change_text,
            state=record.get_state_display(),
            url=record.get_absolute_url(),
            bugs=tuple((bug.label, bug.url) for bug in record.bugs.all()),
        )
        for record in found
    ]
