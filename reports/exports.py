"""Exports of a comparison: the reference scripts' layouts, Markdown for write-ups, and JSON.

One function serves the command line, the API and the page's download links.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from typing import cast

import suites
from reports import ibench, markers, reference
from reports.compare import Comparison, ComparisonSpec
from runs.models import Result
from suites.sysbench import layout as sysbench_layout
from suites.sysbench import parse as sysbench
from suites.tables import ExportTable

FORMATS = ("tsv", "csv", "json", "markdown")
CONTENT_TYPES = {
    "tsv": "text/tab-separated-values; charset=utf-8",
    "csv": "text/csv; charset=utf-8",
    "json": "application/json",
    "markdown": "text/markdown; charset=utf-8",
}
EXTENSIONS = {"tsv": "tsv", "csv": "csv", "json": "json", "markdown": "md"}


def spec_for_format(spec: ComparisonSpec, fmt: str, *, metrics: bool = False) -> ComparisonSpec:
    """The reference layouts keep the tests the reference scripts keep, warm-ups such as scan.warm included."""
    if fmt in ("tsv", "csv") or metrics:
        return dataclasses.replace(spec, include_warmups=True)
    return spec


def export(
    comparison: Comparison, fmt: str, *, absolute: bool = False, metrics: bool = False, step: str | None = None
) -> str:
    """``step`` picks one Insert Benchmark step's table (every step otherwise); other suites ignore it."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; one of {', '.join(FORMATS)}")
    base = comparison.base
    keys = [base, *(c.key for c in comparison.others)]
    suite = suites.get(comparison.suite)
    if (fmt in ("tsv", "csv") or metrics) and suite.reference_layout == "steps":
        # The Insert Benchmark scripts' per-step tables, every metric column: rel.<step> or, absolute, mrg.<step>.
        separator = "," if fmt == "csv" else "\t"
        return ibench.step_tables(comparison, absolute=absolute, step=step, separator=separator)
    if metrics:
        return _metrics(comparison, keys)
    if fmt == "json":
        return json.dumps(comparison.as_json(), indent=1) + "\n"
    if fmt == "markdown":
        names = {c.key: comparison.version_label(c.key) for c in comparison.columns}
        bugs = markers.bug_lines(comparison, markers.comparison_markers(comparison))
        return reference.format_markdown_summary(comparison.result, names, bugs)
    # The suite's tests × columns table (sysbench's QPS table, db_bench's sum.abs*), from the comparison's values.
    return suite.table_layout()(export_table(comparison), fmt, not absolute)


def export_table(comparison: Comparison) -> ExportTable:
    """The comparison as the suites' export layouts read it: plain values, the base column first."""
    columns = [comparison.base, *(c.key for c in comparison.others)]
    return ExportTable(
        columns=columns,
        versions={key: comparison.column(key).version for key in columns},
        labels=list(comparison.labels),
        qps={(key, label): value for key in columns for label, value in comparison.qps[key].items()},
        pk=comparison.pk_mode,
        keep_pre=keeps_pre_rows(comparison),
        decimals=printed_decimals(comparison),
    )


# The author's QPS tables keep the .pre rows until his scripts left them out (sum_qps_csv_nopre.sh, 2024-10-28).
PRE_ROWS_DROPPED = "2024-10-28"


def keeps_pre_rows(comparison: Comparison) -> bool:
    """Whether the author's tables of these runs' era print the ``.pre`` rows: a table read from his own says
    (it had them or not); runs from their directories, by when they ran."""
    read = [c.summary_layout for c in comparison.columns if c.summary_layout]
    if read:
        return any(layout.get("pre_rows") for layout in read)
    started = [c.started_at for c in comparison.columns if c.started_at]
    return bool(started) and max(started) < PRE_ROWS_DROPPED


def printed_decimals(comparison: Comparison) -> dict[tuple[str, str], int]:
    """Per (column, label): the decimals the author's table printed a column read from it with. Its other cells
    printed %.0f, so 0; columns from run directories are not in it (their precision is not recorded)."""
    said: dict[tuple[str, str], int] = {}
    for column in comparison.columns:
        if column.summary_layout:
            decimals = column.summary_layout.get("decimals", {})
            for label in comparison.labels:
                said[(column.key, label)] = int(decimals.get(label, 0))
    return said


def _metrics(comparison: Comparison, keys: list[str]) -> str:
    """The ``o.met.all`` layout: the load step's block (sb.prepare.met) first, then one block per sb.met file
    (test at the comparison's concurrency)."""
    files, metrics = _load_blocks(comparison, keys)
    for label in comparison.labels:
        test, _, range_size = label.rpartition("_range=")
        if sysbench.is_load(test):
            continue  # printed above, whatever the comparison's concurrency
        file = f"sb.met.{test}.range{range_size}.pk{comparison.pk_mode}.dop{comparison.dop}"
        for key in keys:
            values = comparison.metrics[key].get(label)
            metrics[(key, file)] = values if values and any(v is not None for v in values.values()) else None
        # A test no run has an sb.met file of has no block, as the scripts print none for it.
        if any(metrics[(key, file)] is not None for key in keys):
            files.append(file)
    files = _in_authors_order(files, comparison.column(comparison.base).summary_layout.get("met_order", []))
    return sysbench_layout.format_met_blocks(
        keys, files, cast("Mapping[tuple[str, str], Mapping[str, float] | None]", metrics)
    )


def _in_authors_order(files: list[str], order: list[str]) -> list[str]:
    """The blocks in the order of the author's o.met the base was read from (the order its tests ran), the
    others after them; as they are for a base from its run directory."""
    rank = {file: at for at, file in enumerate(order)}
    return sorted(files, key=lambda file: rank.get(file, len(rank))) if rank else files


def _load_blocks(
    comparison: Comparison, keys: list[str]
) -> tuple[list[str], dict[tuple[str, str], Mapping[str, float | None] | None]]:
    """The sb.prepare.met blocks: each column's load step, at whatever concurrency it loaded (repeated runs
    averaged, as the comparison averages its results)."""
    column_of_run = {run_id: column.key for column in comparison.columns for run_id in column.run_ids}
    rows = (
        Result.objects.filter(run_id__in=column_of_run, microbenchmark__test=sysbench.LOAD_TEST)
        .order_by("run_id", "microbenchmark__range_size", "dop")
        .values_list("run_id", "microbenchmark__range_size", "extra", *sysbench_layout.MET_KEYS)
    )
    samples: dict[tuple[str, str], list[tuple[float | None, ...]]] = {}
    for run_id, range_size, extra, *values in rows:
        prepared_for = (extra or {}).get("prepared_for", sysbench.LOAD_TEST)
        file = f"sb.prepare.met.{prepared_for}.range{range_size}.pk{comparison.pk_mode}"
        samples.setdefault((column_of_run[run_id], file), []).append(tuple(values))
    metrics: dict[tuple[str, str], Mapping[str, float | None] | None] = {}
    for key, file in samples:
        metrics[(key, file)] = _mean_metrics(samples[(key, file)])
    # A load without its sb.prepare.met file has no block, as the author's scripts print none for it.
    files = sorted(
        {file for (_, file), values in metrics.items() if values is not None}, key=sysbench_layout.ls_sort_key
    )
    return files, metrics


def _mean_metrics(samples: list[tuple[float | None, ...]]) -> dict[str, float | None] | None:
    means: dict[str, float | None] = {}
    for i, key in enumerate(sysbench_layout.MET_KEYS):
        values = [v for s in samples if (v := s[i]) is not None]
        means[key] = sum(values) / len(values) if values else None
    return means if any(v is not None for v in means.values()) else None


def filename(comparison: Comparison, fmt: str, *, absolute: bool = False, metrics: bool = False) -> str:
    kind = "met" if metrics else ("qps.abs" if absolute else "qps.rel")
    return f"{kind}.{comparison.server}.dop{comparison.dop}.{EXTENSIONS[fmt]}".replace(" ", "_")
