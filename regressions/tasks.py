"""Celery tasks for regressions: thin, take ids, idempotent (the work is in regressions.detection)."""

from __future__ import annotations

import logging
from typing import Any

from celery import shared_task
from django.db import OperationalError

from regressions.detection import detect_regressions
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
