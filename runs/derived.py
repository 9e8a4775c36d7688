"""How far each series' derived data is up to date (``SeriesDerived``): marked by the app that finishes a
refresh (regression detection), read by whoever waits for a bundle's consequences (the CI verdict)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from django.db import transaction
from django.utils import timezone

from runs.models import Bundle, Run, SeriesDerived


def mark_derived(server_id: int, workload_id: int, data_as_of: datetime) -> None:
    """The series' derived data is complete for every bundle imported before ``data_as_of`` (never moves back)."""
    now = timezone.now()
    with transaction.atomic():
        row, created = SeriesDerived.objects.select_for_update().get_or_create(
            server_id=server_id, workload_id=workload_id, defaults={"data_as_of": data_as_of, "finished_at": now}
        )
        if not created and row.data_as_of < data_as_of:
            SeriesDerived.objects.filter(pk=row.pk).update(data_as_of=data_as_of, finished_at=now)


def pending_series(runs: Iterable[Run], bundle: Bundle) -> list[tuple[int, int]]:
    """(server id, workload id) of the runs' series whose derived data does not yet include ``bundle``'s import."""
    series = {(run.server_id, run.workload_id) for run in runs}
    if not series or bundle.imported_at is None:
        return sorted(series)
    done = {
        (row.server_id, row.workload_id)
        for row in SeriesDerived.objects.filter(
            server_id__in={s for s, _ in series},
            workload_id__in={w for _, w in series},
            data_as_of__gte=bundle.imported_at,
        )
    }
    return sorted(series - done)
