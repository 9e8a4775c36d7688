"""Celery tasks for runs: thin, take ids, idempotent (the work is in runs.importer)."""

from __future__ import annotations

import logging
from datetime import timedelta

from celery import shared_task
from django.core.cache import cache
from django.db import OperationalError, transaction
from django.utils import timezone

from runs.importer import ImportFailed, import_bundle
from runs.models import Bundle, Run

log = logging.getLogger(__name__)

# A queued bundle older than this is sent again: its first message was lost (broker down at upload).
REQUEUE_AFTER = timedelta(minutes=2)


def progress_key(bundle_id: int) -> str:
    return f"bundle-progress:{bundle_id}"


@shared_task(
    autoretry_for=(OperationalError,),  # the database restarting is transient: back off and retry
    retry_backoff=True,
    retry_backoff_max=300,
    max_retries=8,
)
def import_bundle_task(bundle_id: int) -> None:
    key = progress_key(bundle_id)
    try:
        report = import_bundle(bundle_id, progress=lambda text: cache.set(key, text, 3600))
    except ImportFailed as exc:
        # Bad input is not retried: the error is recorded on the bundle for the user to read.
        log.info("bundle %s failed: %s", bundle_id, exc)
        return
    finally:
        cache.delete(key)
    if not report.already_imported:
        series = set(Run.objects.filter(bundle_id=bundle_id).values_list("server_id", "workload_id").distinct())
        for server_id, workload_id in series:
            transaction.on_commit(lambda s=server_id, w=workload_id: refresh_series_task.delay(s, w))


@shared_task
def refresh_series_task(server_id: int, workload_id: int) -> None:
    """New runs arrived: compute the series' default comparison and its saved reports, so pages hit the cache."""
    from reports.compare import ComparisonError, ComparisonSpec, get_comparison
    from reports.models import Report

    oldest = (
        Run.objects.filter(server_id=server_id, workload_id=workload_id)
        .order_by("build__version__sort_key", "name", "pk")
        .values_list("pk", flat=True)
        .first()
    )
    specs = [ComparisonSpec(base_run_id=oldest)] if oldest else []
    for report in Report.objects.filter(base_run__server_id=server_id, base_run__workload_id=workload_id):
        specs.append(
            ComparisonSpec(
                base_run_id=report.base_run_id,
                run_ids=tuple(report.runs.values_list("pk", flat=True)),
                group_set=report.group_set,
                dop=report.dop,
                red=report.red,
                green=report.green,
                include_warmups=report.include_warmups,
            )
        )
    for spec in specs:
        try:
            get_comparison(spec)
        except ComparisonError as exc:
            log.info("comparison %s not computed: %s", spec, exc)
    # New versions can start or end regressions: detect again (idempotent, never duplicates).
    from reports.regressions import detect_regressions

    if oldest:
        detect_regressions(server_id, workload_id)


@shared_task
def requeue_bundles() -> int:
    """Send again the imports of bundles still queued after REQUEUE_AFTER (run by beat every minute)."""
    stale = Bundle.objects.filter(status=Bundle.Status.QUEUED, uploaded_at__lt=timezone.now() - REQUEUE_AFTER)
    ids = list(stale.values_list("pk", flat=True)[:100])
    for bundle_id in ids:
        import_bundle_task.delay(bundle_id)
    return len(ids)
