"""Celery tasks for runs: thin, take ids, idempotent (the work is in runs.importer)."""

from __future__ import annotations

import logging
from datetime import timedelta

from celery import Task, shared_task
from celery.exceptions import MaxRetriesExceededError
from django.db import InterfaceError, OperationalError, transaction
from django.db.models import Max, Min, Q
from django.utils import timezone

from runs.importer import BundleBusy, ClaimLost, ImportFailed, claim_stale_after, import_bundle
from runs.models import Bundle, Run

log = logging.getLogger(__name__)

# A queued bundle older than this is sent again: its first message was lost (broker down at upload).
REQUEUE_AFTER = timedelta(minutes=2)


@shared_task(
    bind=True,
    autoretry_for=(OperationalError,),  # the database restarting is transient: back off and retry
    retry_backoff=True,
    retry_backoff_max=300,
    max_retries=8,
)
def import_bundle_task(self: Task, bundle_id: int) -> None:
    try:
        report = import_bundle(bundle_id)
    except ImportFailed as exc:
        # Bad input is not retried: the error is recorded on the bundle for the user to read.
        log.info("bundle %s failed: %s", bundle_id, exc)
        return
    except BundleBusy as busy:
        # Another worker imports it. Look again once its claim would be stale: if that worker died (killed
        # mid-import), this redelivered message is what imports the bundle; if it finished, this ends here.
        if self.request.is_eager:
            return
        try:
            raise self.retry(countdown=busy.retry_in)
        except MaxRetriesExceededError:
            log.info("bundle %s is still being imported by another worker; requeue_bundles watches it", bundle_id)
            return
    except ClaimLost as exc:
        log.warning("%s", exc)  # the worker that took over finishes the import; this one rolled back
        return
    except (OperationalError, InterfaceError):
        raise  # the database went away: transient, retried (autoretry_for)
    except Exception as exc:
        # Anything else (a value the database refuses, a bug) would leave the bundle queued, and
        # requeue_bundles would send it again every few minutes forever. The import rolled back;
        # say so on the bundle, and re-raise so the worker's log has the traceback.
        mark_crashed(bundle_id, exc)
        raise
    if not report.already_imported:
        refresh_after_import(bundle_id)


def mark_crashed(bundle_id: int, exc: BaseException) -> None:
    detail = (str(exc).strip().splitlines() or [""])[0][:300]
    Bundle.objects.filter(pk=bundle_id).exclude(status=Bundle.Status.IMPORTED).update(
        status=Bundle.Status.FAILED,
        claim="",
        heartbeat_at=None,
        error=f"the import stopped on an unexpected error and stored nothing ({type(exc).__name__}: {detail}); "
        "the details are in the server's log",
    )


@shared_task
def refresh_series_task(server_id: int, workload_id: int) -> None:
    """New runs arrived: recompute the series' comparisons (so pages hit the cache), its home-page summary,
    and its regressions."""
    from reports.compare import ComparisonError
    from reports.series import refresh_series

    try:
        refresh_series(server_id, workload_id)
    except ComparisonError as exc:
        log.info("series %s/%s not refreshed: %s", server_id, workload_id, exc)


def refresh_after_import(bundle_id: int) -> None:
    """Queue the refresh of every series a bundle touched (after the import's commit)."""
    series = set(Run.objects.filter(bundle_id=bundle_id).values_list("server_id", "workload_id").distinct())
    for server_id, workload_id in series:
        transaction.on_commit(lambda s=server_id, w=workload_id: refresh_series_task.delay(s, w))


@shared_task
def requeue_bundles() -> int:
    """Send again the imports no worker holds: bundles still queued after REQUEUE_AFTER (their message was
    lost), and bundles whose importer's heartbeat went stale (it died). Run by beat every minute."""
    now = timezone.now()
    stale = Bundle.objects.filter(
        Q(status=Bundle.Status.QUEUED, uploaded_at__lt=now - REQUEUE_AFTER)
        | Q(status=Bundle.Status.IMPORTING, heartbeat_at__lt=now - claim_stale_after())
    )
    ids = list(stale.values_list("pk", flat=True)[:100])
    for bundle_id in ids:
        import_bundle_task.delay(bundle_id)
    return len(ids)


# Imports older than this whose series summary is older than the import lost their refresh; newer ones may
# still have it queued or running.
REFRESH_GRACE = timedelta(minutes=2)
# How far back lost refreshes are looked for: bounded, so the check reads a day's bundles, not the archive.
REFRESH_LOOKBACK = timedelta(days=1)


@shared_task
def refresh_lost_series() -> int:
    """Queue the refresh of series whose newest import is newer than their home-page summary.

    The refresh is sent after an import commits; if the broker is down at that moment the message is lost
    and the redelivered import finds nothing new to do, so nothing would ever recompute the series. Run
    by beat every minute and by each worker when it (re)connects to the broker; a refresh is idempotent,
    so one sent twice costs only time.
    """
    from reports.models import SeriesSummary

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
