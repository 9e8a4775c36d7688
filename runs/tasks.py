"""Celery tasks for runs: thin, take ids, idempotent (the work is in runs.importer)."""

from __future__ import annotations

import logging
from datetime import timedelta

from celery import Task, shared_task
from celery.exceptions import MaxRetriesExceededError
from django.db import InterfaceError, OperationalError
from django.db.models import Q
from django.utils import timezone

import benchdash.celery  # noqa: F401  (the app first: a task here is never sent through Celery's default app)
from runs.importer import BundleBusy, ClaimLost, ImportFailed, claim_stale_after, import_bundle
from runs.models import Bundle
from runs.signals import announce_import

log = logging.getLogger(__name__)

# A queued bundle older than this is sent again: its first message was lost (broker down at upload).
REQUEUE_AFTER = timedelta(minutes=2)


@shared_task(
    bind=True,
    # The database restarting or a connection cut is transient: back off and retry. InterfaceError is a
    # connection found already closed by an earlier cut.
    autoretry_for=(OperationalError, InterfaceError),
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
        announce_import(bundle_id)


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
