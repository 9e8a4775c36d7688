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
import pickle
from collections.abc import Iterable
from dataclasses import asdict
from typing import cast

from reports.compare import (
    PAYLOAD_VERSION,
    Comparison,
    ComparisonError,
    ComparisonSpec,
    build_comparison,
    load_series,
    series_stamp,
)
from reports.models import DrilldownData

# Bump with any change to what a stored comparison holds (besides PAYLOAD_VERSION's): old rows are never read.
FORMAT = 1


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
    comparison = pickle.loads(bytes(found))  # written by the worker (store), never from a request
    if not isinstance(comparison, Comparison):
        raise TypeError(f"stored drill-down of microbenchmark {microbenchmark_id} is not a comparison")
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
