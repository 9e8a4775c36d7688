"""Celery tasks for regressions: thin, take ids, idempotent (the work is in regressions.detection)."""

from __future__ import annotations

import logging
from typing import Any

from celery import shared_task
from django.db import IntegrityError, OperationalError, transaction

import benchdash.celery  # noqa: F401  (the app first: a task here is never sent through Celery's default app)
from regressions import alerts
from regressions.detection import detect_regressions
from regressions.models import SharedPoints
from reports.compare import ComparisonError

log = logging.getLogger(__name__)


@shared_task(
    autoretry_for=(OperationalError,),  # the database restarting is transient: back off and retry
    retry_backoff=True,
    retry_backoff_max=300,
    max_retries=8,
)
def detect_regressions_task(server_id: int, workload_id: int) -> dict[str, Any]:
    """Detect regressions of one server + workload; safe to run twice (records are upserted on their natural key)."""
    try:
        return detect_regressions(server_id, workload_id).as_dict()
    except ComparisonError as exc:
        # Nothing to compare (no runs, no results) is an answer, not a failure to retry.
        log.info("no regressions detected for server %s workload %s: %s", server_id, workload_id, exc)
        return {"error": str(exc)}


@shared_task(acks_late=True, autoretry_for=(OperationalError,), retry_backoff=True, max_retries=8)
def announce_story_task(story_id: int) -> list[int]:
    """Make a new story's deliveries (once, however often this runs) and send each as its own task."""
    delivery_ids = alerts.announce(story_id)
    for delivery_id in delivery_ids:
        deliver_alert_task.delay(delivery_id)
    return delivery_ids


@shared_task(
    acks_late=True,
    # A hung receiver or mail server must not hold a worker; a claim older than this is taken over.
    soft_time_limit=alerts.SEND_TIME_LIMIT - 30,
    time_limit=alerts.SEND_TIME_LIMIT,
    autoretry_for=(OperationalError,),
    retry_backoff=True,
    max_retries=8,
)
def deliver_alert_task(delivery_id: int) -> str:
    """Send one delivery; a failure is retried after the wait ``alerts.deliver`` chose, up to its bound."""
    outcome = alerts.deliver(delivery_id)
    if outcome.retry_in is not None:
        deliver_alert_task.apply_async((delivery_id,), countdown=outcome.retry_in)
    return outcome.state


@shared_task
def resend_lost_alerts() -> int:
    """Beat (every minute) and each worker's (re)connection: send what a lost message left unsent."""
    delivery_ids = alerts.lost()
    for delivery_id in delivery_ids:
        deliver_alert_task.delay(delivery_id)
    return len(delivery_ids)


@shared_task
def sweep_unused_points() -> int:
    """Beat (hourly): delete the series' points rows no story names any more; how many went.

    Detection deletes those its own series stopped naming; rows whose stories went another way (the admin, a
    script's delete) are left to this. A detection naming a row again meanwhile wins: it locks the row, and
    when this sweep would delete a row a story now names, the deferred key check fails the sweep, which
    deletes nothing and runs again in an hour.
    """
    try:
        with transaction.atomic():
            deleted, _ = SharedPoints.objects.filter(regressions__isnull=True).delete()
    except IntegrityError:
        log.info("unused points not swept: a detection named one meanwhile")
        return 0
    return deleted
