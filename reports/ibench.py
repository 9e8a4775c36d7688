"""Insert Benchmark comparisons: the background-insert SLA, every metric column relative to the base,
the author's per-step tables, and the per-step data the Insert Benchmark page draws.

A comparison of Insert Benchmark runs is an ordinary comparison (``reports.compare``):
its labels are steps and its QPS is each step's "Q" (inserts/s, indexed rows/s or
queries/s). What only this suite has lives in ``Result.extra`` by name and is read
here, one query per kind of data whatever the number of runs.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from reports.compare import Comparison
from reports.sla import sla_checks
from reports.sla import sla_missed_cells as sla_missed_cells
from reports.stats import metric_ratio
from runs.models import Result
from suites.ibench import layout as ibench_layout
from suites.ibench import parse as ibench
from suites.ibench.sla import SlaCheck
from suites.tables import NA

# A table is printed with the historical header that has exactly its columns (without the tag).
HEADERS: tuple[tuple[str, ...], ...] = tuple(header[:-1] for header in ibench.HISTORICAL_HEADERS)
_METRIC_LOOKUPS = tuple(f"extra__{column}" for column in ibench.KNOWN_COLUMNS)


def _columns_of_runs(comparison: Comparison) -> dict[int, str]:
    return {run_id: column.key for column in comparison.columns for run_id in column.run_ids}


# --------------------------------------------------------------------------- SLA


@dataclass
class SlaCell:
    column: str
    version_label: str
    ips: float | None
    met: bool | None
    clients: int
    clients_estimated: bool


@dataclass
class SlaRow:
    """One query step: the per-client target, and per version the insert rate achieved and whether it was met."""

    step: str
    rate: int
    target_ips: int | None  # None when the versions ran with different client counts
    threshold: float | None
    cells: list[SlaCell] = field(default_factory=list)


def sla_table(comparison: Comparison) -> list[SlaRow]:
    """Per query step and version (base first): target rate, achieved inserts/s, met or not (the write-ups' SLA
    table). Repeated runs of a version show their mean insert rate and count as missed if any run missed; a version
    without the step has a cell with nothing measured (ips and met None).
    """
    checks = sla_checks(_columns_of_runs(comparison), comparison.dop)
    by_cell: dict[tuple[str, str], list[SlaCheck]] = defaultdict(list)
    for check in checks:
        by_cell[(check.step, check.column)].append(check)
    keys = [comparison.base, *(c.key for c in comparison.others)]
    rows = []
    for step in ibench.ordered_steps(check.step for check in checks):
        cells = []
        targets = set()
        rate = next(c.rate for c in checks if c.step == step)
        for key in keys:
            found = by_cell.get((step, key), [])
            ips = [c.ips for c in found if c.ips is not None]
            verdicts = [c.met for c in found]
            met = False if False in verdicts else (True if verdicts and all(verdicts) else None)
            if found:
                targets.add(found[0].target_ips)
            cells.append(
                SlaCell(
                    column=key,
                    version_label=comparison.version_label(key),
                    ips=sum(ips) / len(ips) if ips else None,
                    met=met,
                    clients=found[0].clients if found else comparison.dop,
                    clients_estimated=any(c.clients_estimated for c in found),
                )
            )
        target = targets.pop() if len(targets) == 1 else None
        rows.append(
            SlaRow(
                step=step,
                rate=rate,
                target_ips=target,
                threshold=ibench.SLA_FRACTION * target if target is not None else None,
                cells=cells,
            )
        )
    return rows


# --------------------------------------------------------------------------- every metric column


@dataclass
class StepMetrics:
    """Every summary column of each (column, step), averaged over repeats, and the texts the tables print."""

    columns: list[str]  # metric columns present, in the summary header's order
    values: dict[tuple[str, str], dict[str, float | None]]
    printed: dict[tuple[str, str], dict[str, str]]  # only for columns without repeats


def step_metrics(comparison: Comparison, steps: Iterable[str] | None = None) -> StepMetrics:
    """Every metric column of every step of the comparison's columns (one query, the big per-second lists left out)."""
    column_of_run = _columns_of_runs(comparison)
    rows = Result.objects.filter(run_id__in=list(column_of_run), dop=comparison.dop)
    if steps is not None:
        rows = rows.filter(microbenchmark__test__in=list(steps))
    samples: dict[tuple[str, str], list[tuple[dict[str, Any], dict[str, str] | None]]] = defaultdict(list)
    present: set[str] = set()
    for run_id, step, printed, *values in rows.values_list(
        "run_id", "microbenchmark__test", "extra__printed", *_METRIC_LOOKUPS
    ):
        by_name = dict(zip(ibench.KNOWN_COLUMNS, values, strict=True))
        present.update(name for name, value in by_name.items() if value is not None)
        if isinstance(printed, dict):
            present.update(name for name in printed if name in ibench.KNOWN_COLUMNS)
        samples[(column_of_run[run_id], step)].append((by_name, printed if isinstance(printed, dict) else None))
    metrics = StepMetrics(columns=_header_for(present), values={}, printed={})
    for key, found in samples.items():
        averaged: dict[str, float | None] = {}
        for name in metrics.columns:
            numbers = [float(v) for by_name, _ in found if isinstance(v := by_name.get(name), int | float)]
            averaged[name] = sum(numbers) / len(numbers) if numbers else None
        metrics.values[key] = averaged
        if len(found) == 1 and found[0][1] is not None:
            metrics.printed[key] = found[0][1]
    return metrics


def _header_for(present: set[str]) -> list[str]:
    # The smallest historical header that holds every column present: the layout these results came in.
    sizes = {len(header): header for header in reversed(HEADERS) if present <= set(header)}
    if sizes:
        return list(sizes[min(sizes)])
    known = [c for c in HEADERS[0] if c in present]
    return known + sorted(present - set(known))


def metric_ratios(
    comparison: Comparison, metrics: StepMetrics | None = None
) -> dict[str, dict[str, dict[str, float | None]]]:
    """column → step → metric column → other / base (missing if either is, 1 if both 0, inf if base 0)."""
    metrics = metrics or step_metrics(comparison)
    base = comparison.base
    steps = {step for _, step in metrics.values}
    return {
        column.key: {
            step: {
                name: metric_ratio(
                    metrics.values.get((column.key, step), {}).get(name), metrics.values.get((base, step), {}).get(name)
                )
                for name in metrics.columns
            }
            for step in ibench.ordered_steps(steps)
        }
        for column in comparison.others
    }


# --------------------------------------------------------------------------- the author's tables


def _cell_text(name: str, value: float | None, printed: Mapping[str, str] | None) -> str:
    if value is None:
        return NA
    if name in ("ips", "qps", "rps"):
        return f"{value:.0f}"  # the merge script's awk printf("%.0f")
    if printed is not None and name in printed:
        return printed[name]
    return f"{value:g}" if not value.is_integer() else f"{value:.0f}"


def _table_tag(column_key: str) -> str:
    # The merge script drops the rows prefix from the tag (100m.my8022.cx6d → my8022.cx6d).
    try:
        tag = ibench.parse_tag(column_key.split(" [", 1)[0])
    except ibench.ParseError:
        return column_key
    return f"{tag.build}.{tag.config}"


def step_tables(
    comparison: Comparison, *, absolute: bool = False, step: str | None = None, separator: str = "\t"
) -> str:
    """``rel.<step>`` (relative to the comparison's base) or ``mrg.<step>`` (absolute) of one step, or of every
    step, each after a line with its name and a blank line between them (as the author prints them in a loop)."""
    steps = ibench.ordered_steps(comparison.labels)
    if step is not None:
        if step not in steps:
            raise ValueError(f"no step {step!r} in this comparison; steps: {', '.join(steps)}")
        steps = [step]
    metrics = step_metrics(comparison, steps)
    keys = [comparison.base, *(c.key for c in comparison.others)]
    tables = []
    for name in steps:
        rows: list[tuple[str, Mapping[str, str] | None]] = []
        for key in keys:
            values = metrics.values.get((key, name))
            printed = metrics.printed.get((key, name))
            cells = None if values is None else {c: _cell_text(c, values.get(c), printed) for c in metrics.columns}
            rows.append((_table_tag(key), cells))
        table = ibench_layout.format_ibench_table(metrics.columns, rows, relative=not absolute, separator=separator)
        tables.append(table if step is not None else f"{name}\n{table}")
    return "\n".join(tables)


# --------------------------------------------------------------------------- page data


def per_second(comparison: Comparison, step: str) -> dict[str, dict[str, Any]]:
    """column → the step's per-second insert/query series (from the clients' raw output), where a run kept one.

    Repeats of a column: the first run's series (a series is a shape over time, averaging would blur it).
    """
    column_of_run = _columns_of_runs(comparison)
    found: dict[str, dict[str, Any]] = {}
    for run_id, series in (
        Result.objects.filter(run_id__in=list(column_of_run), dop=comparison.dop, microbenchmark__test=step)
        .order_by("run_id")
        .values_list("run_id", "extra__per_second")
    ):
        if isinstance(series, dict) and series.get("ips"):
            found.setdefault(column_of_run[run_id], series)
    return found


def histograms(comparison: Comparison, step: str) -> dict[str, dict[str, Any]]:
    """column → response-time histograms of the step (insert, query, …) where the raw output had them."""
    column_of_run = _columns_of_runs(comparison)
    found: dict[str, dict[str, Any]] = {}
    for run_id, hist in (
        Result.objects.filter(run_id__in=list(column_of_run), dop=comparison.dop, microbenchmark__test=step)
        .order_by("run_id")
        .values_list("run_id", "extra__rt_hist")
    ):
        if isinstance(hist, dict):
            found.setdefault(column_of_run[run_id], hist)
    return found


def steps_of(comparison: Comparison) -> list[str]:
    return ibench.ordered_steps(label for label in comparison.labels if ibench.is_step(label))
