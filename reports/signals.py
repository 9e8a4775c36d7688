"""Cache invalidation for data that pages depend on without a new run arriving, and refreshes when runs arrive."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from benchdash import pagecache
from reports.models import GroupSetDefinition
from runs.signals import bundle_imported


@receiver(post_save, sender=GroupSetDefinition)
@receiver(post_delete, sender=GroupSetDefinition)
def group_sets_changed(**kwargs: Any) -> None:
    """A group set was defined, edited or removed: every shared page (their selectors, their groups) is stale."""
    # After the commit: bumped earlier, a request in between would cache the old page under the new key.
    transaction.on_commit(pagecache.bump_generation)


@receiver(bundle_imported)
def refresh_imported_series(bundle_id: int, **kwargs: Any) -> None:
    """New runs arrived: their series' comparisons, home-page summaries and regressions are refreshed."""
    # Imported here: the tasks module brings Celery and the comparisons, which a process that imports nothing
    # (a command's --help, a migration) has no use for.
    from reports.tasks import refresh_after_import

    refresh_after_import(bundle_id)
