"""Explain one relative-QPS change: the HW-efficiency ratios that moved with it, and what else changed.

``explain(comparison, column_key, label)`` answers the question a write-up
answers by hand ("QPS dropped 20% on point-query; CPU per query is up 25%, so
the new version does more work per query"): the QPS change of one build on one
microbenchmark, the per-operation HW metrics of ``comparison.metric_ratios``
ranked by how far they are from 1, and the configuration and command-line
differences between that build's run and the base run. The result is a plain
dict for ``templates/reports/diff/explain.html``.
"""

from __future__ import annotations

import math
from typing import Any

from reports import stats
from reports.compare import Comparison
from reports.diff import RunDiff
from reports.run_settings import run_diff_for_column

# (key in comparison.metric_ratios, printed name, what more of it means). All are costs per operation:
# more per operation while QPS falls is a consistent explanation.
EXPLAIN_METRICS: tuple[tuple[str, str, str], ...] = (
    ("cpu_o", "cpu/o", "CPU per operation"),
    ("cs_o", "cs/o", "context switches per operation"),
    ("r_o", "r/o", "storage reads per operation"),
    ("rkb_o", "rKB/o", "KB read per operation"),
    ("wkb_o", "wKB/o", "KB written per operation"),
)


def explain(comparison: Comparison, column_key: str, label: str, *, run_diff: RunDiff | None = None) -> dict[str, Any]:
    """The QPS change of ``column_key`` on ``label`` and what explains it.

    Pass ``run_diff`` (from ``run_diff_for_column``) when explaining many
    microbenchmarks of one build, so the settings are read once.
    """
    keys = [c.key for c in comparison.columns]
    if column_key not in keys:
        raise ValueError(f"no column {column_key!r} in this comparison")
    if column_key == comparison.base:
        raise ValueError(f"{column_key!r} is the base: there is no change to explain")
    if label not in comparison.labels:
        raise ValueError(f"no microbenchmark {label!r} in this comparison")

    rel = comparison.relative[column_key].get(label)
    red, green = comparison.spec.red, comparison.spec.green
    ratios = comparison.metric_ratios_of(column_key).get(label, {})
    values = comparison.metrics.get(column_key, {}).get(label, {})
    base_values = comparison.metrics.get(comparison.base, {}).get(label, {})

    metrics: list[dict[str, Any]] = []
    for key, name, meaning in EXPLAIN_METRICS:
        ratio = ratios.get(key)
        if ratio is None:
            continue
        # From a base about zero (``stats.ABOUT_ZERO``) a ratio says nothing: no flag, it explains nothing.
        near_zero = stats.about_zero(key, base_values.get(key))
        distance = 0.0 if near_zero else _distance(ratio)
        significant = not near_zero and stats.flag(ratio, red, green) in ("red", "green")
        more = ratio > 1
        # Costs: more per operation explains a drop, less explains a gain.
        changed = _direction(rel, red, green) in ("regression", "improvement")
        explains = significant and changed and rel is not None and ((rel < 1 and more) or (rel > 1 and not more))
        metrics.append(
            {
                "key": key,
                "name": name,
                "meaning": meaning,
                "ratio": ratio,
                "value": values.get(key),
                "base_value": base_values.get(key),
                "distance": distance,
                "change_pct": _pct(ratio),
                "significant": significant,
                "near_zero": near_zero,
                "explains": explains,
                "text": _metric_text(name, meaning, ratio, significant),
            }
        )
    metrics.sort(key=lambda m: (-m["distance"], m["name"]))
    missing = [name for key, name, _ in EXPLAIN_METRICS if ratios.get(key) is None]

    diff = run_diff if run_diff is not None else run_diff_for_column(comparison, column_key)
    label_options = [o for o in diff.commands.options if label in o.labels]
    flag = comparison.flags[column_key].get(label, "missing")
    return {
        "run_id": comparison.column(column_key).run_ids[0],
        "base_run_id": comparison.spec.base_run_id,
        "column": column_key,
        "version": comparison.version_label(column_key),
        "base": comparison.base,
        "base_version": comparison.version_label(comparison.base),
        "server": comparison.server,
        "label": label,
        "dop": comparison.dop,
        "qps": comparison.qps[column_key].get(label),
        "base_qps": comparison.qps[comparison.base].get(label),
        "relative": rel,
        "change_pct": _pct(rel),
        "change_text": f"{_pct(rel):+.0f}%" if _pct(rel) is not None else "",
        "flag": flag,
        "noisy": comparison.noisy[column_key].get(label, False),
        "direction": _direction(rel, red, green),
        "metrics": metrics,
        "missing_metrics": missing,
        "explained_by": [m for m in metrics if m["explains"]],
        "summary": _summary(rel, label, comparison.dop, metrics, red, green),
        "config": diff,
        "config_changes": diff.differences,
        "highlighted": diff.highlighted,
        "command_options": label_options,
        "warnings": diff.warnings,
    }


def _distance(ratio: float) -> float:
    """How far from 1 on a log scale, so 0.5× and 2× rank alike; 0 and ∞ are farthest."""
    if ratio <= 0 or math.isinf(ratio):
        return math.inf
    return abs(math.log(ratio))


def _pct(ratio: float | None) -> float | None:
    if ratio is None or math.isinf(ratio):
        return None
    return (ratio - 1) * 100


def _direction(rel: float | None, red: float, green: float) -> str:
    if rel is None:
        return "missing"
    if rel <= red:
        return "regression"
    if rel >= green:
        return "improvement"
    return "unchanged"


def _metric_text(name: str, meaning: str, ratio: float, significant: bool) -> str:
    if math.isinf(ratio):
        return f"{name} ∞× base: the base measured none"
    pct = (ratio - 1) * 100
    if not significant:
        return f"{name} {ratio:.2f}× base: {meaning} about the same"
    return f"{name} {ratio:.2f}× base: {abs(pct):.0f}% {'more' if pct > 0 else 'less'} {meaning}"


def _summary(rel: float | None, label: str, dop: int, metrics: list[dict[str, Any]], red: float, green: float) -> str:
    if rel is None:
        return f"{label} is missing in one of the runs at concurrency {dop}: nothing to explain."
    if math.isinf(rel):
        head = f"{label} at concurrency {dop}: the base measured 0 QPS"
    else:
        head = f"{label} at concurrency {dop}: QPS {rel:.2f}× base ({(rel - 1) * 100:+.0f}%)"
    explaining = [m for m in metrics if m["explains"]]
    if explaining:
        return f"{head}; explained by " + ", ".join(m["text"] for m in explaining[:3]) + "."
    if not metrics:
        return f"{head}; no HW metrics (sb.met) for this microbenchmark in one of the runs."
    moved = [m for m in metrics if m["significant"]]
    unchanged = _direction(rel, red, green) == "unchanged"
    if moved and unchanged:
        return f"{head}, about the same; yet " + ", ".join(m["text"] for m in moved[:3]) + "."
    if moved:
        return f"{head}; the HW metrics that moved ({', '.join(m['name'] for m in moved)}) moved the other way."
    gate = min(1 - red, green - 1) * 100
    return f"{head}; no per-operation HW metric moved by more than {gate:.0f}%."
