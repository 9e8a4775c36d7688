"""Cache invalidation for data that pages depend on without a new run arriving, and refreshes when runs arrive."""

from __future__ import annotations

from typing import Any

import django.dispatch
from django.db import transaction
from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from benchdash import pagecache
from reports.models import GroupSetDefinition
from runs.models import Build, Config, Dbms, Microbenchmark, Result, Run, Server, Version, Workload
from runs.signals import bundle_imported, runs_changed

# Sent after a series' comparisons and summaries are fresh, with server_id and workload_id, when it has
# runs, and ``comparisons``: the comparisons the refresh computed, by spec, so a receiver asking for the same
# one neither computes it again nor reads it back from the cache; and ``started_at``, when the refresh began (every
# bundle imported before then is in it). The regressions app listens and detects again, in the same task.
# (Defined here, not in reports.series, so that the receivers connect without importing the comparisons.)
series_refreshed = django.dispatch.Signal()


@receiver(post_save, sender=GroupSetDefinition)
@receiver(post_delete, sender=GroupSetDefinition)
def group_sets_changed(**kwargs: Any) -> None:
    """A group set was defined, edited or removed: every shared page (their selectors, their groups) is stale."""
    # After the commit: bumped earlier, a request in between would cache the old page under the new key.
    transaction.on_commit(pagecache.bump_generation)
    # The drill-downs computed ahead read the group sets too: none may outlive them.
    _forget_drilldowns()


def _forget_drilldowns() -> None:
    # Imported here: the drill-downs bring the comparisons, which a process that imports nothing (a command's
    # --help, a migration) has no use for.
    from reports import drilldowns

    drilldowns.forget_all()


# What a stored drill-down was computed from besides the runs' number and ids (its stamp): names, versions, builds,
# configs, run fields. Their creation comes with new runs (a new stamp); their deletion takes runs with it.
_SERIES_MODELS = (Dbms, Version, Build, Config, Server, Workload, Run, Microbenchmark, Result)


def _series_edited(created: bool = False, raw: bool = False, **kwargs: Any) -> None:
    """A stored row of the series changed in place (the admin, a correction): no drill-down computed ahead may
    outlive it; the next refresh of each series computes them again."""
    if not created and not raw:
        transaction.on_commit(_forget_drilldowns)


for _model in _SERIES_MODELS:
    post_save.connect(_series_edited, sender=_model, dispatch_uid=f"drilldowns-{_model.__name__}")


@receiver(runs_changed)
def runs_changed_in_place(**kwargs: Any) -> None:
    transaction.on_commit(_forget_drilldowns)


@receiver(bundle_imported)
def refresh_imported_series(bundle_id: int, **kwargs: Any) -> None:
    """New runs arrived: their series' comparisons, home-page summaries and regressions are refreshed."""
    # Imported here: the tasks module brings Celery and the comparisons, which a process that imports nothing
    # (a command's --help, a migration) has no use for.
    from reports.tasks import refresh_after_import

    refresh_after_import(bundle_id)
