"""Cache invalidation: deleted runs (their bundle deleted, or in the admin) change the pages listing runs."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.db.models.signals import post_delete
from django.dispatch import receiver

from benchdash import pagecache
from runs.models import RUNS_DELETED, Run


@receiver(post_delete, sender=Run)
def run_deleted(**kwargs: Any) -> None:
    # After the commit: bumped earlier, a request in between would cache the old list under the new key.
    transaction.on_commit(lambda: pagecache.bump(RUNS_DELETED))
