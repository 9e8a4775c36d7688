"""Celery tasks for runs: thin, take ids, idempotent (the work is in runs.importer)."""

from __future__ import annotations

import logging

from celery import shared_task
from django.db import OperationalError

from runs.importer import ImportFailed, import_bundle

log = logging.getLogger(__name__)


@shared_task(
    autoretry_for=(OperationalError,),  # the database restarting is transient: back off and retry
    retry_backoff=True,
    retry_backoff_max=300,
    max_retries=8,
)
def import_bundle_task(bundle_id: int) -> None:
    try:
        import_bundle(bundle_id)
    except ImportFailed as exc:
        # Bad input is not retried: the error is recorded on the bundle for the user to read.
        log.info("bundle %s failed: %s", bundle_id, exc)
