"""HW efficiency of a comparison: cpu/o, cs/o, rKB/o and wKB/o of each version relative to the base.

The numbers are those of the metrics export (o.met): ``Comparison.metrics`` holds each column's absolute
values per microbenchmark and ``Comparison.metric_ratios`` their ratio to the base. Here they become

- per group, one row per compared version with the group's median ratio of each metric (the absolute
  medians, the version's and the base's, on hover), and
- per metric, the table the write-ups publish beside each QPS table: microbenchmarks × versions.

Each metric is a cost per operation, so more is worse: a ratio is flagged with the QPS rules applied to its
reciprocal (red at or above 1/red, green at or below 1/green), and a page's colours mean the same thing in
both sections. From a base below the metric's floor (``stats.ABOUT_ZERO``, "about zero") there is no ratio
and no flag: the cell shows the base's level and the version's. The cells are built here as HTML: 4 metrics
× 60 versions × 42 microbenchmarks is 10,000
cells, which the template engine would take seconds over.
"""

from __future__ import annotations

import math
import statistics
from html import escape
from typing import Any

from django.utils.safestring import SafeString, mark_safe

from benchdash import urlpattern
from reports import stats
from reports.compare import Comparison
from reports.templatetags.benchdash import rel

# (key in Comparison.metrics, printed name, what it counts).
HW_COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("cpu_o", "cpu/o", "CPU per operation"),
    ("cs_o", "cs/o", "context switches per operation"),
    ("rkb_o", "rKB/o", "KB read per operation"),
    ("wkb_o", "wKB/o", "KB written per operation"),
)


def cost_flag(ratio: float | None, red: float, green: float) -> str:
    """The colour of a cost ratio (more is worse): the QPS flag of its reciprocal."""
    if ratio is None or math.isnan(ratio):
        return "missing"
    if ratio == 0:
        return "green"
    return stats.flag(1.0 / ratio, red, green)


def cost_legend(red: float, green: float) -> str:
    """``cost_flag``'s colours in words: the cost ratios the QPS thresholds come to (1/red and 1/green), to three
    decimals so that no ratio printed beside them seems to sit on the wrong side."""
    return (
        f"red where a version spends {1.0 / red:.3f}× the base's or more (1 ÷ {red:.2f}, as relative QPS is red "
        f"at {red:.2f} or less), green at {1.0 / green:.3f}× or less (1 ÷ {green:.2f})"
    )


def _number(value: float | None) -> str:
    """An absolute metric, compact: 3 significant digits below 1,000, whole numbers with separators above."""
    if value is None or not math.isfinite(value):
        return "missing" if value is None else "∞"
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    if value == 0:
        return "0"
    # Three significant digits without an exponent: cpu/o is often 0.0000850, which reads better than 8.5e-05.
    decimals = max(0, 2 - math.floor(math.log10(abs(value))))
    return f"{value:.{decimals}f}"


def _median(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None and not math.isnan(v)]
    return statistics.median(present) if present else None


def _cell(
    ratio: float | None, red: float, green: float, title: str, levels: tuple[float | None, float | None] | None = None
) -> str:
    """One ratio cell; ``levels`` (the base's, the version's) when the base is about zero (``stats.ABOUT_ZERO``):
    then the two levels, no ratio and no flag."""
    if levels is not None:
        shown = f"{_number(levels[0])} → {_number(levels[1])}"
        about = f"{title} (the base is about zero: no ratio)"
        return f'<td class="num about-zero" title="{escape(about)}">{escape(shown)}</td>'
    if ratio is None:
        return f'<td class="num missing" title="{escape(title)}">missing</td>'
    flag = cost_flag(ratio, red, green)
    return f'<td class="num {flag}" title="{escape(title)}">{escape(rel(ratio))}</td>'


def _has_any(comparison: Comparison, labels: list[str], metric: str) -> bool:
    return any(
        comparison.metrics[c.key].get(label, {}).get(metric) is not None for c in comparison.columns for label in labels
    )


def measured_metrics(comparison: Comparison) -> set[str]:
    """The keys of the HW metrics any column of the comparison has a value of."""
    return {key for key, _name, _about in HW_COLUMNS if _has_any(comparison, comparison.labels, key)}


def _group_cell(comparison: Comparison, labels: list[str], column_key: str, key: str, name: str) -> str:
    """A group's cell of one metric in one version: the median ratio of the members whose base is not about
    zero; the two median levels when the group's own base is about zero."""
    base, red, green = comparison.base, comparison.spec.red, comparison.spec.green

    def absolute(column: str, label: str) -> float | None:
        return comparison.metrics[column].get(label, {}).get(key)

    value = _median(
        [
            comparison.metric_ratios.get(column_key, {}).get(label, {}).get(key)
            for label in labels
            if not stats.about_zero(key, absolute(base, label))
        ]
    )
    own = _median([absolute(column_key, label) for label in labels])
    theirs = _median([absolute(base, label) for label in labels])
    # Short: 4,800 of these at 200 versions; the group size is in its heading, the metric in the column head.
    title = f"median {_number(own)}, base {_number(theirs)}"
    return _cell(value, red, green, title, (theirs, own) if stats.about_zero(key, theirs) else None)


def hw_context(comparison: Comparison, metrics: set[str] | None = None, drilldown_query: str = "") -> dict[str, Any]:
    """What the HW-efficiency section prints: ``groups`` (per group, a row per version, every metric) and
    ``metrics`` (per metric, a row per microbenchmark), the metric names, and whether any metric was measured.

    ``metrics``: the keys whose microbenchmark table is built (each metric's entry is listed, only these carry
    ``rows`` and ``body``); ``None`` builds every one. A 200-version comparison's four tables are 34,000 cells
    (4 MB of HTML), so the page shows one at a time with a switch. ``drilldown_query``: the query the
    microbenchmarks' links to their drill-down carry."""
    red, green = comparison.spec.red, comparison.spec.green
    base = comparison.base
    others = comparison.others
    members = {
        group: [label for label in comparison.labels if comparison.group_of.get(label) == group]
        for group in comparison.groups
    }
    ungrouped = [label for label in comparison.labels if not comparison.group_of.get(label)]
    if ungrouped:
        members["ungrouped"] = ungrouped
    shown = [(key, name, about) for key, name, about in HW_COLUMNS if _has_any(comparison, comparison.labels, key)]

    def absolute(column_key: str, label: str, metric: str) -> float | None:
        return comparison.metrics[column_key].get(label, {}).get(metric)

    def ratio(column_key: str, label: str, metric: str) -> float | None:
        return comparison.metric_ratios.get(column_key, {}).get(label, {}).get(metric)

    groups = []
    for group, labels in members.items():
        if not labels:
            continue
        rows: list[dict[str, Any]] = []
        for column in others:
            cells = [_group_cell(comparison, labels, column.key, key, name) for key, name, _about in shown]
            rows.append({"label": comparison.version_label(column.key), "key": column.key, "cells": _safe(cells)})
        groups.append({"name": group, "size": len(labels), "rows": rows})

    drilldown = urlpattern.by_id("reports:drilldown")
    query = escape(drilldown_query)
    span = len(others) + 2
    metric_tables: list[dict[str, Any]] = []
    for key, name, about in shown:
        if metrics is not None and key not in metrics:
            metric_tables.append({"key": key, "name": name, "about": about, "rows": None, "body": None})
            continue
        rows = []
        body: list[str] = []
        for group, labels in members.items():
            if labels:
                body.append(
                    f'\n<tr class="group-row"><th colspan="{span}" scope="colgroup">{escape(str(group))}</th></tr>'
                )
            for label in labels:
                theirs = absolute(base, label, key)
                near_zero = stats.about_zero(key, theirs)
                cells = []
                for column in others:
                    own = absolute(column.key, label, key)
                    cells.append(
                        _cell(
                            ratio(column.key, label, key),
                            red,
                            green,
                            # The base's level is the row's second column: the cell's title names the version's.
                            f"{name} {_number(own)}",
                            (theirs, own) if near_zero else None,
                        )
                    )
                row: dict[str, Any] = {
                    "group": group,
                    "label": label,
                    "mb_id": comparison.microbenchmark_ids[label],
                    "base": _number(theirs),
                    "cells": _safe(cells),
                }
                rows.append(row)
                body.append(
                    f'\n<tr><td><a href="{drilldown(row["mb_id"])}?{query}">{escape(label)}</a></td>'
                    f'<td class="num">{escape(row["base"])}</td>{row["cells"]}</tr>'
                )
        metric_tables.append(
            {"key": key, "name": name, "about": about, "rows": rows, "body": mark_safe("".join(body))}
        )  # every text escaped above, the cells by _cell
    return {
        "hw_names": [(key, name, about) for key, name, about in shown],
        "hw_groups": groups,
        "hw_metrics": metric_tables,
        "hw_versions": [{"key": c.key, "label": comparison.version_label(c.key)} for c in others],
        "hw_legend": cost_legend(red, green),
    }


def _safe(cells: list[str]) -> SafeString:
    return mark_safe("".join(cells))  # every cell built by _cell, its text escaped


def hw_values(comparison: Comparison) -> dict[str, Any]:
    """The numbers of the HW-efficiency tables without their HTML, for write-ups: ``metrics`` (key, name) of
    the measured metrics, ``groups`` (group, [(column key, [median ratio per metric])]) and ``per_metric``
    (metric key, [(group, label, [ratio per compared column])]). Same members, medians and order as the page."""
    members: dict[str, list[str]] = {
        group: [label for label in comparison.labels if comparison.group_of.get(label) == group]
        for group in comparison.groups
    }
    ungrouped = [label for label in comparison.labels if not comparison.group_of.get(label)]
    if ungrouped:
        members["ungrouped"] = ungrouped
    shown = [(key, name) for key, name, _about in HW_COLUMNS if _has_any(comparison, comparison.labels, key)]

    def ratio(column_key: str, label: str, metric: str) -> float | None:
        return comparison.metric_ratios.get(column_key, {}).get(label, {}).get(metric)

    groups = [
        (
            group,
            [
                (column.key, [_median([ratio(column.key, label, key) for label in labels]) for key, _ in shown])
                for column in comparison.others
            ],
        )
        for group, labels in members.items()
        if labels
    ]
    per_metric = [
        (
            key,
            [
                (group, label, [ratio(column.key, label, key) for column in comparison.others])
                for group, labels in members.items()
                for label in labels
            ],
        )
        for key, _ in shown
    ]
    return {"metrics": shown, "groups": groups, "per_metric": per_metric}
