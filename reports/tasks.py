"""Celery tasks for reports: thin, take ids, idempotent (the work is in reports.series)."""

from __future__ import annotations

import functools
import logging
from datetime import timedelta

from celery import shared_task
from django.db import transaction
from django.db.models import Max, Min
from django.utils import timezone
from kombu.exceptions import OperationalError as KombuOperationalError

import benchdash.celery  # noqa: F401  (the app first: a task here is never sent through Celery's default app)
from reports.compare import ComparisonError
from reports.models import SeriesSummary
from reports.series import refresh_series
from runs.derived import mark_derived
from runs.models import Bundle, Run

log = logging.getLogger(__name__)


def _refresh_series(server_id: int, workload_id: int, bundle_id: int | None = None) -> None:
    """New runs arrived (from ``bundle_id`` when an import sent it): recompute the series' comparisons (so pages
    hit the cache), its home-page summary, and its regressions."""
    started_at = timezone.now()
    try:
        refresh_series(server_id, workload_id, bundle_id=bundle_id)
    except ComparisonError as exc:
        log.info("series %s/%s not refreshed: %s", server_id, workload_id, exc)
        # Nothing to compare is the refresh's answer: whoever waits for the series' stories need wait no more.
        mark_derived(server_id, workload_id, started_at)


refresh_series_task = shared_task(_refresh_series, name="reports.tasks.refresh_series_task")


def refresh_after_import(bundle_id: int) -> None:
    """Queue the refresh of every series a bundle touched (after the import's commit)."""
    series = set(Run.objects.filter(bundle_id=bundle_id).values_list("server_id", "workload_id").distinct())
    for server_id, workload_id in series:
        transaction.on_commit(functools.partial(_send_refresh, server_id, workload_id, bundle_id))


def _send_refresh(server_id: int, workload_id: int, bundle_id: int | None = None) -> None:
    try:
        refresh_series_task.delay(server_id, workload_id, bundle_id)
    except KombuOperationalError as exc:
        # The broker is away: the import itself is committed and must not be reported as failed.
        # refresh_lost_series finds this series once the broker is back.
        log.warning("refresh of series %s/%s not queued (%s); refresh_lost_series will", server_id, workload_id, exc)


# Imports older than this whose series summary is older than the import lost their refresh; newer ones may
# still have it queued or running.
REFRESH_GRACE = timedelta(minutes=2)
# How far back lost refreshes are looked for: bounded, so the check reads a day's bundles, not the archive.
REFRESH_LOOKBACK = timedelta(days=1)


def _refresh_lost_series() -> int:
    """Queue the refresh of series whose newest import is newer than their home-page summary.

    The refresh is sent after an import commits; if the broker is down at that moment the message is lost
    and the redelivered import finds nothing new to do, so nothing would ever recompute the series. Run
    by beat every minute and by each worker when it (re)connects to the broker; a refresh is idempotent,
    so one sent twice costs only time.
    """
    now = timezone.now()
    recent = Bundle.objects.filter(
        status=Bundle.Status.IMPORTED,
        imported_at__gte=now - REFRESH_LOOKBACK,
        imported_at__lt=now - REFRESH_GRACE,
    )
    imported = {
        (row["server_id"], row["workload_id"]): row["newest"]
        for row in Run.objects.filter(bundle__in=recent)
        .values("server_id", "workload_id")
        .annotate(newest=Max("bundle__imported_at"))
    }
    if not imported:
        return 0
    computed = {
        (row["server_id"], row["workload_id"]): row["oldest"]
        for row in SeriesSummary.objects.filter(server_id__in={server for server, _ in imported})
        .values("server_id", "workload_id")
        .annotate(oldest=Min("computed_at"))
    }
    lost = [key for key, newest in imported.items() if key not in computed or computed[key] < newest]
    for server_id, workload_id in lost:
        refresh_series_task.delay(server_id, workload_id)
    return len(lost)


refresh_lost_series = shared_task(_refresh_lost_series, name="reports.tasks.refresh_lost_series")

# The names these tasks were registered under before they were named after their app: a message queued under one
# (by a web process or beat of the previous release) still finds its task. The same functions, only two more
# names; they can go once no queue or beat entry of a deployment holds the old names.
LEGACY_NAMES = {
    "runs.tasks.refresh_series_task": shared_task(_refresh_series, name="runs.tasks.refresh_series_task"),
    "runs.tasks.refresh_lost_series": shared_task(_refresh_lost_series, name="runs.tasks.refresh_lost_series"),
}
