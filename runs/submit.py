"""The upload page's and the API's door: check an upload, keep it, and queue its import for a worker.

Above both ``runs.importer`` (what the worker runs) and ``runs.tasks`` (the task
that runs it), so neither has to import the other's caller.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import IO, Any

from django.db import transaction
from django.utils import timezone

from runs import archive_store
from runs.importer import ImportFailed, StorageFull, claim_stale_after, mark_failed, store_bundle
from runs.models import Bundle
from runs.parse import bad_input, check_bundle
from runs.tasks import import_bundle_task

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Submission:
    bundle: Bundle
    # These bytes were imported before this upload: nothing was queued, the bundle is the earlier one.
    already_imported: bool


def submit_bundle(
    data: bytes | IO[bytes],
    *,
    name: str,
    source: str,
    user: Any = None,
    overrides: Mapping[str, Any] | None = None,
) -> Submission:
    """Check and store the bundle and queue its import (the upload page's and the API's path).

    A bundle that fails ``check_bundle`` is kept as failed with the reason, as
    a failed import would be, and is not queued. The task is sent after the
    commit, so a worker never looks for a bundle row that is not there yet. If
    the broker is down the bundle stays queued; the periodic
    ``requeue_bundles`` task sends it again once the broker is back. A disk that fills up while the archive
    is stored raises StorageFull: nothing was stored, and the space it took is handed back.
    """
    try:
        return _submit(data, name=name, source=source, user=user, overrides=overrides)
    except StorageFull:
        archive_store.give_back_space()  # here no transaction is open any more (within one, VACUUM cannot run)
        raise


def _submit(
    data: bytes | IO[bytes], *, name: str, source: str, user: Any, overrides: Mapping[str, Any] | None
) -> Submission:
    earlier = Bundle.objects.filter(sha256=archive_store.sha256_of(data)[0]).only("status").first()
    if earlier is None or earlier.status == Bundle.Status.FAILED:
        try:
            check_bundle(data, name=name)
        except bad_input() as exc:
            with transaction.atomic():
                bundle, _created = store_bundle(data, name=name, source=source, user=user, overrides=overrides)
                mark_failed(bundle.pk, str(exc))
            bundle.refresh_from_db()
            return Submission(bundle, already_imported=False)
    bundle, created = store_bundle(data, name=name, source=source, user=user, overrides=overrides)
    already_imported = not created and bundle.status == Bundle.Status.IMPORTED
    abandoned = (
        bundle.status == Bundle.Status.IMPORTING
        and bundle.heartbeat_at is not None
        and bundle.heartbeat_at < timezone.now() - claim_stale_after()
    )
    if bundle.status == Bundle.Status.QUEUED or abandoned:
        bundle_id = bundle.pk

        def enqueue() -> None:
            try:
                import_bundle_task.delay(bundle_id)
            except ImportFailed:
                pass  # eager mode: the failure is already recorded on the bundle
            except Exception:  # the broker is unreachable: the bundle is kept and requeued later
                log.exception("could not queue the import of bundle %s; it stays queued", bundle_id)

        transaction.on_commit(enqueue)
    bundle.refresh_from_db()
    return Submission(bundle, already_imported=already_imported)
