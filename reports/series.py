"""Keeping a series (server + workload) fresh when runs arrive: cached comparisons, summaries, regressions."""

from __future__ import annotations

import gc
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.utils import timezone

from reports import matrix
from reports.compare import Comparison, ComparisonError, ComparisonSpec, get_comparison, series_stamp
from reports.events import series_refreshed
from reports.models import Report, SeriesSummary
from runs import branches
from runs.models import Result, Run

log = logging.getLogger(__name__)

# What the refresh writes of a series' summary (besides its key and its time).
SUMMARY_FIELDS = ("base_run", "latest_run", "runs", "red_flags", "microbenchmark_ids")


@contextmanager
def cyclic_gc_paused() -> Iterator[None]:
    """Python's cycle collector paused for the duration (and resumed unless something else had paused it).

    A refresh allocates hundreds of thousands of small objects that live until it ends (each story's points,
    every metric series of every microbenchmark, the stories' evidence) and makes next to no reference cycles:
    the collections those allocations set off walk every live object, Django's included, and free nothing
    (a fifth of a refresh's CPU time). What is freed is freed by reference counting as before; a cycle left
    meanwhile waits for the next collection."""
    paused = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if paused:
            gc.enable()


def refresh_series(server_id: int, workload_id: int, *, bundle_id: int | None = None) -> list[SeriesSummary]:
    """Compute each DBMS's default comparison and the saved reports of the series, store the home-page
    summaries, and let the apps above (regression detection) bring theirs up to date (idempotent).
    ``bundle_id``, the import that brought new runs, is passed on to them (``series_refreshed``)."""
    with cyclic_gc_paused():
        return _refresh_series(server_id, workload_id, bundle_id)


def _refresh_series(server_id: int, workload_id: int, bundle_id: int | None = None) -> list[SeriesSummary]:
    started_at = timezone.now()
    computed: dict[ComparisonSpec, Comparison] = {}
    # Every result of the series in one row, which the comparisons below and every page after read.
    matrix.store(server_id, workload_id)
    summaries, has_runs = summarise_series(server_id, workload_id, computed=computed)
    for report in Report.objects.filter(base_run__server_id=server_id, base_run__workload_id=workload_id):
        try:
            get_comparison(
                ComparisonSpec(
                    base_run_id=report.base_run_id,
                    run_ids=tuple(report.runs.values_list("pk", flat=True)),
                    group_set=report.group_set,
                    dop=report.dop,
                    red=report.red,
                    green=report.green,
                    include_warmups=report.include_warmups,
                )
            )
        except ComparisonError as exc:
            log.info("report %s not computed: %s", report.slug, exc)
    if has_runs:
        series_refreshed.send(
            sender=refresh_series,
            server_id=server_id,
            workload_id=workload_id,
            comparisons=computed,
            bundle_id=bundle_id,
            started_at=started_at,
        )
    return summaries


def summarise_series(
    server_id: int, workload_id: int, *, computed: dict[ComparisonSpec, Comparison] | None = None
) -> tuple[list[SeriesSummary], bool]:
    """Compute each DBMS's default comparison of the series and store its home-page summary (and drop the
    summaries of DBMSs no longer in it); returns the summaries and whether the series has runs at all. The
    comparisons are added to ``computed`` when it is given."""
    in_series = Run.objects.filter(server_id=server_id, workload_id=workload_id)
    # A series is its main line: a pull request's runs (or another branch's) are compared against it, never its
    # base or its latest run (runs.branches).
    runs = list(
        in_series.filter(branches.main_line())
        .order_by("build__version__sort_key", "name", "pk")
        .values("pk", "build__version__dbms_id", "created_at")
    )
    by_dbms: dict[int, list[dict[str, Any]]] = {}
    for run in runs:
        by_dbms.setdefault(int(run["build__version__dbms_id"]), []).append(dict(run))
    # One read of the series' results per refresh, so no page has to read them to know what was measured.
    measured = sorted(
        Result.objects.filter(run__server_id=server_id, run__workload_id=workload_id)
        .order_by()
        .values_list("microbenchmark_id", flat=True)
        .distinct()
    )
    summaries = []
    # Every DBMS's comparison is cached under the series' stamp: read once, not twice per DBMS (its base, then
    # the stamp).
    stamp = series_stamp(server_id, workload_id) if by_dbms else None
    for dbms_id, series in by_dbms.items():
        base_id = int(series[0]["pk"])
        spec = ComparisonSpec(base_run_id=base_id)
        comparison = get_comparison(spec, stamp=stamp)
        if computed is not None:
            computed[spec] = comparison
        latest = comparison.others[-1] if comparison.others else comparison.column(comparison.base)
        flags = sorted(
            (
                [label, comparison.relative[latest.key][label]]
                for label in comparison.labels
                if latest.key != comparison.base and comparison.flags[latest.key][label] == "red"
            ),
            key=lambda item: item[1],  # type: ignore[arg-type,return-value]
        )
        summaries.append(
            SeriesSummary(
                server_id=server_id,
                workload_id=workload_id,
                dbms_id=dbms_id,
                base_run_id=base_id,
                latest_run_id=latest.run_ids[-1],
                runs=len(series),
                red_flags=flags,
                microbenchmark_ids=measured,
            )
        )
    # Every DBMS's summary in one statement, each row inserted or, on its series, updated in place (its id kept).
    SeriesSummary.objects.bulk_create(
        summaries,
        update_conflicts=True,
        unique_fields=["server", "workload", "dbms"],
        update_fields=[*SUMMARY_FIELDS, "computed_at"],
    )
    SeriesSummary.objects.filter(server_id=server_id, workload_id=workload_id).exclude(
        dbms_id__in=list(by_dbms)
    ).delete()
    return summaries, bool(runs) or in_series.exists()
