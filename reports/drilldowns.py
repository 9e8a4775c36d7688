"""The drill-down's comparisons computed ahead: each microbenchmark's, of each DBMS's default comparison of a
series, written when the series is refreshed and read by its page instead of computing it.

A stored comparison is the one the page would compute from scratch (``build_comparison`` over what
``load_series`` reads for that microbenchmark, taken from one read of the whole series). It is stored under
the key of what it was computed from, the comparison's spec and the series' stamp (which changes whenever a run
of the series arrives or goes), and read only under the key the page computes: a series changed since its
refresh is computed from scratch until the refresh after that change writes its rows again. Group set
definitions, which a comparison reads too, drop every row when they change (``reports.signals``).
"""

from __future__ import annotations

import hashlib
import json
import logging
import pickle
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any, cast

from django.conf import settings
from django.utils.safestring import SafeString

from reports import charts, releaseview, rendering
from reports.compare import (
    PAYLOAD_VERSION,
    Comparison,
    ComparisonError,
    ComparisonSpec,
    build_comparison,
    load_series,
    series_stamp,
)
from reports.errorbars import with_error_bars
from reports.models import DrilldownData
from runs.models import Result

log = logging.getLogger(__name__)

# Bump with any change to what a stored comparison holds (besides PAYLOAD_VERSION's): old rows are never read.
FORMAT = 2
# The name of the page's parts in ``Comparison.derived``.
DERIVED = "drilldown"


def page_spec(base_run_id: int) -> ComparisonSpec:
    """The comparison a drill-down asks for with only its base in the query (``reports.views._spec``'s defaults:
    scan as each run reported it)."""
    return ComparisonSpec(base_run_id=base_run_id, scan_formula="era")


def stored_key(spec: ComparisonSpec, stamp: str) -> str:
    """What a stored comparison was computed from: the spec and the series' stamp (``series_stamp``)."""
    raw = json.dumps(asdict(spec), sort_keys=True) + "|" + stamp
    return f"dd:{FORMAT}:{PAYLOAD_VERSION}:{hashlib.sha256(raw.encode()).hexdigest()}"


def stored(spec: ComparisonSpec, stamp: str, microbenchmark_id: int) -> Comparison | None:
    """The microbenchmark's comparison of ``spec`` as stored for the series at ``stamp``; None when there is none
    (not the default comparison, or the series changed since its refresh)."""
    found = (
        DrilldownData.objects.filter(key=stored_key(spec, stamp), microbenchmark_id=microbenchmark_id)
        .values_list("comparison", flat=True)
        .first()
    )
    if found is None:
        return None
    try:
        comparison = pickle.loads(bytes(found))  # written by the worker (store), never from a request
    except (AttributeError, ImportError, TypeError, pickle.UnpicklingError) as exc:
        # A row of a release whose comparison had another shape (FORMAT not bumped): computed instead, and said.
        log.warning("stored drill-down of microbenchmark %s not readable (%s): computed", microbenchmark_id, exc)
        return None
    if not isinstance(comparison, Comparison):
        log.warning("stored drill-down of microbenchmark %s is not a comparison: computed", microbenchmark_id)
        return None
    return comparison


def store(server_id: int, workload_id: int, base_run_ids: Iterable[int]) -> int:
    """Compute and store every microbenchmark's comparison of each default comparison (one per base in
    ``base_run_ids``) of the series, in place of what was stored for it before; returns how many were stored."""
    stamp = series_stamp(server_id, workload_id)
    rows = []
    for base_run_id in base_run_ids:
        spec = page_spec(base_run_id)
        try:
            series = load_series(spec, latencies=True)
        except ComparisonError:
            continue
        key = stored_key(spec, stamp)
        for one in series.each_microbenchmark():
            microbenchmark_id = cast(int, one.microbenchmark_id)
            try:
                comparison = build_comparison(one)
            except ComparisonError:
                continue
            comparison.cache_key = ""
            # Views of the cells worked out when first read: worked out here, the page reads them stored.
            for view in ("qps", "cv", "metrics", "relative", "flags", "noisy", "metric_ratios", "_version_labels"):
                getattr(comparison, view)
            # The page's table rows and charts (the charts of the release view a page with no ``releases`` shows).
            label = next(iter(comparison.microbenchmark_ids), None)
            if label is not None and label in comparison.labels:
                charted = releaseview.in_view(comparison, "long-term", settings.BENCHDASH_RELEASE_LINES).comparison
                releaseview.provisional_labels(comparison, settings.BENCHDASH_RELEASE_LINES)
                comparison.derived[DERIVED] = page_parts(comparison, microbenchmark_id, label, charted)
            rows.append(
                DrilldownData(
                    server_id=server_id,
                    workload_id=workload_id,
                    microbenchmark_id=microbenchmark_id,
                    key=key,
                    comparison=pickle.dumps(comparison, protocol=pickle.HIGHEST_PROTOCOL),
                )
            )
    # No transaction needed: a page reading in between finds no row and computes its own. Two refreshes of the
    # series at once store the same rows: the second's are the first's.
    DrilldownData.objects.filter(server_id=server_id, workload_id=workload_id).delete()
    DrilldownData.objects.bulk_create(rows, batch_size=100, ignore_conflicts=True)
    return len(rows)


def forget_all() -> None:
    """Every stored comparison dropped (what they were computed from changed in a way no stamp shows)."""
    DrilldownData.objects.all().delete()


@dataclass(frozen=True)
class DrilldownParts:
    """What a drill-down shows of its comparison: each column's point and table row (in column order, none
    highlighted), the latency percentile the runs measured, and the charts of the columns ``charted`` names."""

    label: str
    points: list[charts.DrilldownPoint]
    rows: list[SafeString]
    percentile: float | None
    charted: tuple[str, ...]
    figures: dict[str, dict[str, Any]]


def page_parts(comparison: Comparison, microbenchmark_id: int, label: str, charted: Comparison) -> DrilldownParts:
    """The drill-down's table rows and charts of ``label`` (``charted``: the comparison as its charts show it)."""
    column_of_run = {rid: c.key for c in comparison.columns for rid in c.run_ids}
    latency, percentile = column_latencies(comparison, microbenchmark_id, column_of_run)
    points = [point(comparison, column.key, label, latency.get(column.key, [])) for column in comparison.columns]
    rows = [
        rendering.drilldown_row(
            p, comparison.flags.get(p["key"], {}).get(label, ""), base=p["key"] == comparison.base, highlighted=False
        )
        for p in points
    ]
    shown = {c.key for c in charted.columns}
    charted_points = [p for p in points if p["key"] in shown]
    figures = charts.drilldown_charts(charted_points, microbenchmark=label, percentile=percentile)
    # ± one standard deviation of repeated runs on the QPS bars, where a column was run more than once.
    cvs = [comparison.cv.get(column.key, {}).get(label) for column in charted.columns]
    figures["qps"] = with_error_bars(figures["qps"], [p["qps"] for p in charted_points], cvs)
    return DrilldownParts(label, points, rows, percentile, tuple(c.key for c in charted.columns), figures)


def column_latencies(
    comparison: Comparison, microbenchmark_id: int, column_of_run: dict[int, str]
) -> tuple[dict[str, list[tuple[float | None, float | None]]], float | None]:
    """Per column, the (average, percentile) latencies of its runs; and the percentile the runs measured (p95,
    p99): the first the columns give, in their order."""
    latency: dict[str, list[tuple[float | None, float | None]]] = {}
    percentile_of_run = {}
    for run_id, avg, pct_ms, pct in latencies(comparison, microbenchmark_id, column_of_run):
        latency.setdefault(column_of_run[run_id], []).append((avg, pct_ms))
        percentile_of_run[run_id] = pct
    return latency, next((p for rid in column_of_run if (p := percentile_of_run.get(rid))), None)


def point(
    comparison: Comparison, key: str, label: str, latency: list[tuple[float | None, float | None]]
) -> charts.DrilldownPoint:
    """One column of the drill-down: its cell's QPS, relative QPS (1 for the base) and HW metrics with their ratio
    to the base's, and its runs' mean latencies."""
    is_base = key == comparison.base
    cell = comparison.cells.get((key, label))
    qps = cell.qps if cell is not None else None
    metrics = (cell.metrics if cell is not None and cell.qps is not None else None) or {}
    ratios = comparison.metric_ratios.get(key, {}).get(label, {}) if not is_base else {}
    relative = 1.0 if is_base else (cell.relative if cell is not None else None)
    return charts.DrilldownPoint(
        key=key,
        version_label=comparison.version_label(key),
        qps=qps,
        relative=relative if qps is not None else None,
        lat_avg_ms=mean_of([a for a, _ in latency]),
        lat_pct_ms=mean_of([p for _, p in latency]),
        cpu_o=metrics.get("cpu_o"),
        cs_o=metrics.get("cs_o"),
        rkb_o=metrics.get("rkb_o"),
        wkb_o=metrics.get("wkb_o"),
        cpu_o_ratio=1.0 if is_base else ratios.get("cpu_o"),
        cs_o_ratio=1.0 if is_base else ratios.get("cs_o"),
        rkb_o_ratio=1.0 if is_base else ratios.get("rkb_o"),
        wkb_o_ratio=1.0 if is_base else ratios.get("wkb_o"),
    )


def latencies(
    comparison: Comparison, microbenchmark_id: int, column_of_run: dict[int, str]
) -> list[tuple[int, float | None, float | None, float | None]]:
    """(run id, average ms, percentile ms, percentile) of the microbenchmark at the comparison's concurrency, by
    run id: read with its results when the comparison is of this microbenchmark alone, else in a query of their
    own (the cached comparison of the series keeps none). Not in the model's order: that joins four tables to
    sort a few rows that the columns put in order anyway."""
    if comparison.latency is not None:
        return [
            (found.run_id, found.avg_ms, found.percentile_ms, found.percentile)
            for found in sorted(comparison.latency)
            if found.dop == comparison.dop and found.run_id in column_of_run
        ]
    return list(
        Result.objects.filter(run_id__in=column_of_run, microbenchmark_id=microbenchmark_id, dop=comparison.dop)
        .order_by("run_id")
        .values_list("run_id", "lat_avg_ms", "lat_pct_ms", "lat_pct")
    )


def mean_of(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else None
