"""The comparison computed over arrays gives, to the bit, what the plain-Python rules give: ``stats.compare`` (the
relative QPS, flags and group summaries), the mean and spread of repeats, the noise rule; on random series with
zeros, NaN, infinities, missing results, repeats and several concurrencies. And a pickled comparison reads back
the same."""

from __future__ import annotations

import math
import pickle
from collections import defaultdict

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import suites
from reports import stats
from reports.compare import (
    Comparison,
    ComparisonError,
    ComparisonSpec,
    Series,
    SeriesResult,
    SeriesRun,
    build_comparison,
)
from reports.matrix import HW_METRICS

TESTS = (("point-query", 100), ("insert", 100), ("scan", 100), ("read-only", 10), ("update-index", 100), ("x", None))
VALUES = st.one_of(
    st.sampled_from([0.0, -0.0, 1.0, 1000.0, math.inf, math.nan, 1e-300, 1e150]),
    st.floats(min_value=0.5, max_value=1e6, allow_nan=False),
)
METRIC = st.one_of(st.none(), st.sampled_from([0.0, 2.5, math.nan]), st.floats(0, 1e4, allow_nan=False))


def _run(pk: int, build: int) -> SeriesRun:
    version = f"8.0.{build}"
    return SeriesRun(
        id=pk,
        name=f"x.my80{build:02d}_rel.z11a_c8r32.pk1",
        build_id=build,
        config_id=1,
        dbms="MySQL",
        version=version,
        version_sort=f"{build:04d}",
        build="rel",
        flavour="rel",
        config="z11a_c8r32",
    )


@st.composite
def series(draw: st.DrawFn) -> tuple[Series, dict[tuple[int, int, int], float]]:
    builds = draw(st.lists(st.integers(1, 4), min_size=2, max_size=7))  # a build twice: its runs are repeats
    runs = [_run(pk, build) for pk, build in enumerate(builds, start=1)]
    results = []
    for run in runs:
        for index, (test, range_size) in enumerate(TESTS):
            for dop in (1, 4):
                if draw(st.integers(0, 5)) == 0:
                    continue  # missing
                metrics = tuple(draw(METRIC) for _ in HW_METRICS)
                results.append(
                    SeriesResult(run.id, index + 1, test, range_size, dop, draw(VALUES), metrics, suites.SYSBENCH.name)
                )
    red, green = draw(st.sampled_from([(0.95, 1.05), (0.99, 1.01), (1.0, 1.0)]))
    spec = ComparisonSpec(
        base_run_id=runs[draw(st.integers(0, len(runs) - 1))].id,
        dop=draw(st.sampled_from([None, 1, 4])),
        red=red,
        green=green,
        noise_k=draw(st.sampled_from([0.5, 2.0])),
    )
    order = draw(st.permutations(results))  # the order the database gives them in is no order
    return Series(
        spec=spec,
        suite=suites.SYSBENCH.name,
        server="bee",
        server_id=1,
        workload="sysbench",
        workload_id=1,
        base_run_id=spec.base_run_id,
        pk_mode=1,
        runs=tuple(runs),
        results=tuple(order),
    ), {}


def _grouped(comparison: Comparison) -> dict[str, list[str]]:
    return {g: [label for label in comparison.labels if comparison.group_of.get(label) == g] for g in comparison.groups}


@settings(max_examples=150, deadline=None, report_multiple_bugs=False)
@given(series())
def test_the_arrays_give_what_the_plain_rules_give(drawn: tuple[Series, object]) -> None:
    found, _ = drawn
    dops = {r.dop for r in found.results}
    if not dops or (found.spec.dop is not None and found.spec.dop not in dops):
        with pytest.raises(ComparisonError, match="no results"):  # refused, as before
            build_comparison(found)
        return
    comparison = build_comparison(found)
    base, others = comparison.base, [c.key for c in comparison.others]
    spec = found.spec
    expected = stats.compare(comparison.qps, base, others, _grouped(comparison), red=spec.red, green=spec.green)
    result = comparison.result
    assert (result.labels, result.ungrouped, result.runs, result.groups) == (
        expected.labels,
        expected.ungrouped,
        expected.runs,
        expected.groups,
    )
    assert repr(result.relative) == repr(expected.relative)
    assert result.flags == expected.flags
    assert repr(dict(result.summaries)) == repr(expected.summaries)
    assert repr({g: dict(by) for g, by in comparison.summaries.items()}) == repr(
        {g: {key: expected.summaries[(g, key)] for key in others} for g in expected.groups}
    )

    # Each cell: the mean of its repeats in the series' order of runs, their spread, each metric's mean.
    rank = {run.id: i for i, run in enumerate(found.runs)}
    column_of = {run_id: c.key for c in comparison.columns for run_id in c.run_ids}
    samples: dict[tuple[str, str], list[SeriesResult]] = defaultdict(list)
    for r in sorted(found.results, key=lambda r: (rank[r.run_id], r.test)):
        if r.dop == comparison.dop:
            label = f"{r.test}_range={r.range_size}" if r.range_size is not None else r.test
            samples[(column_of[r.run_id], label)].append(r)
    repeated = any(len(values) > 1 for values in samples.values())
    for (key, label), values in samples.items():
        cell = comparison.cells[(key, label)]
        qps = [r.qps for r in values]
        assert repr(cell.qps) == repr(sum(qps) / len(qps))
        assert repr(cell.cv) == repr(stats.spread(qps).cv if len(qps) > 1 else None)
        means = {}
        for i, name in enumerate(HW_METRICS):
            present = [r.metrics[i] for r in values if r.metrics[i] is not None]
            means[name] = sum(present) / len(present) if present else None
        assert repr(cell.metrics) == repr(means)
    for key in others:
        for label in comparison.labels:
            cell = comparison.cells[(key, label)]
            rel, flag = expected.relative[key][label], expected.flags[key][label]
            noisy = False
            if repeated:
                base_cell, own = comparison.cells.get((base, label)), comparison.cells.get((key, label))
                base_cv = base_cell.cv if base_cell is not None else None
                noisy = flag in ("red", "green") and not stats.outside_noise(rel, base_cv, own.cv, spec.noise_k)
            assert (repr(cell.relative), cell.flag, cell.noisy) == (repr(rel), "grey" if noisy else flag, noisy)
            assert comparison.flags[key][label] == cell.flag and comparison.noisy[key][label] == cell.noisy
    assert repr(comparison.qps) == repr(
        {
            c.key: {lb: cell.qps for (k, lb), cell in comparison.cells.items() if k == c.key and cell.measured}
            for c in comparison.columns
        }
    )

    metrics, of_base = comparison.metrics, comparison.metrics[base]
    assert repr(comparison.metric_ratios) == repr(
        {
            key: {
                label: {
                    name: stats.metric_ratio(metrics[key].get(label, {}).get(name), of_base.get(label, {}).get(name))
                    for name in HW_METRICS
                }
                for label in comparison.labels
            }
            for key in others
        }
    )

    again = pickle.loads(pickle.dumps(comparison, pickle.HIGHEST_PROTOCOL))
    assert repr(list(again.cells.items())) == repr(list(comparison.cells.items()))
    assert repr(again.result) == repr(comparison.result)
    assert repr(again.as_json()) == repr(comparison.as_json())
