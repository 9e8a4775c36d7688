"""Cache invalidation for data that pages depend on without a new run arriving, and refreshes when runs arrive."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from reports.models import GroupSetDefinition, SeriesMatrix
from runs.models import Microbenchmark, Result, Run
from runs.signals import bundle_imported, results_deleted


@receiver(post_save, sender=GroupSetDefinition)
@receiver(post_delete, sender=GroupSetDefinition)
def group_sets_changed(**kwargs: Any) -> None:
    """A group set was defined, edited or removed: every shared page (their selectors, their groups) is stale."""
    from benchdash import pagecache  # with the template machinery: not for every process's start

    # After the commit: bumped earlier, a request in between would cache the old page under the new key.
    transaction.on_commit(pagecache.bump_generation)


@receiver(bundle_imported)
def refresh_imported_series(bundle_id: int, **kwargs: Any) -> None:
    """New runs arrived: their series' comparisons, home-page summaries and regressions are refreshed."""
    # Imported here: the tasks module brings Celery and the comparisons, which a process that imports nothing
    # (a command's --help, a migration) has no use for.
    from reports.tasks import refresh_after_import

    refresh_after_import(bundle_id)


# The series' matrices (reports.matrix) are read only at the stamp of the runs they were written from; a result or
# microbenchmark changed in place (the admin) leaves the stamp as it was, so what it changed is dropped here, after
# the commit, and read from the results table until the series' next refresh.
def _forget_matrices(run_ids: list[int] | None) -> None:
    if run_ids is None:
        SeriesMatrix.objects.all().delete()
        return
    series = Run.objects.filter(pk__in=run_ids).values_list("server_id", "workload_id").distinct()
    for server_id, workload_id in series:
        SeriesMatrix.objects.filter(server_id=server_id, workload_id=workload_id).delete()


@receiver(post_save, sender=Result, dispatch_uid="reports.result_saved")
def result_saved(instance: Result, created: bool = False, raw: bool = False, **kwargs: Any) -> None:
    if not created and not raw:
        run_ids = [instance.run_id]
        transaction.on_commit(lambda: _forget_matrices(run_ids))


@receiver(results_deleted, dispatch_uid="reports.results_deleted")
def results_deleted_in_place(run_ids: list[int], **kwargs: Any) -> None:
    transaction.on_commit(lambda: _forget_matrices(list(run_ids)))


@receiver(post_save, sender=Microbenchmark, dispatch_uid="reports.microbenchmark_saved")
@receiver(post_delete, sender=Microbenchmark, dispatch_uid="reports.microbenchmark_deleted")
def microbenchmark_changed(created: bool = False, raw: bool = False, **kwargs: Any) -> None:
    # A microbenchmark's name or warm-up mark is in every matrix that holds its results, whatever the series.
    if not created and not raw:
        transaction.on_commit(lambda: _forget_matrices(None))
