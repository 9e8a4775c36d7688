"""Signals of the runs app: deleted runs change the pages listing runs, and imported bundles are announced.

Apps built on runs (reports: comparisons, summaries, regressions) receive ``bundle_imported`` to refresh what
they derive from the new runs; runs itself knows nothing of them.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.db.models import Max
from django.db.models.signals import post_delete
from django.dispatch import Signal, receiver

from runs.models import Bundle, Run

# The page cache (with the template and messages machinery) is imported where a stamp is read or bumped: this
# module connects its receivers when Django starts, in every process.

RUNS_DELETED = "runs-deleted"

# Sent with ``bundle_id`` once a bundle's runs are stored (not for a bundle found already imported).
bundle_imported = Signal()
# Sent with ``run_ids`` when results of those runs are deleted while the runs stay (the admin): a run's
# deletion changes its series' stamp, a result's alone does not. (No post_delete receiver on Result: it would
# make every run's cascade delete load its results one by one.)
results_deleted = Signal()


def announce_import(bundle_id: int) -> None:
    """Tell the apps built on runs that a bundle's runs arrived; their receivers act after the commit."""
    bundle_imported.send(sender=Bundle, bundle_id=bundle_id)


def runs_stamp() -> str:
    """Changes whenever a run is added or deleted anywhere: part of the cache key of pages listing runs.

    The newest id (the primary key index's last entry, whatever the archive's size) and a counter of
    deletions (bumped below), rather than a count, which reads the whole table.
    """
    from benchdash import pagecache

    last = Run.objects.aggregate(last=Max("id"))["last"]
    return f"{last}:{pagecache.counter(RUNS_DELETED)}"


@receiver(post_delete, sender=Run)
def run_deleted(**kwargs: Any) -> None:
    from benchdash import pagecache

    # After the commit: bumped earlier, a request in between would cache the old list under the new key.
    transaction.on_commit(lambda: pagecache.bump(RUNS_DELETED))
