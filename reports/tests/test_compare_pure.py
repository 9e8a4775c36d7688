"""build_comparison computes from plain values: no database, hand-built series."""

from __future__ import annotations

import pytest

import suites
from reports.compare import ComparisonError, ComparisonSpec, Series, SeriesResult, SeriesRun, build_comparison
from suites.ibench.sla import SlaSample

NO_METRICS = (None,) * 6


def _run(pk: int, version: str, *, build_id: int | None = None) -> SeriesRun:
    return SeriesRun(
        id=pk,
        name=f"x.my{version.replace('.', '')}_rel.z11a_c8r32.pk1",
        build_id=build_id or pk,
        config_id=1,
        dbms="MySQL",
        version=version,
        version_sort=version,
        build="rel",
        flavour="rel",
        config="z11a_c8r32",
    )


def _series(runs: list[SeriesRun], results: list[SeriesResult], **overrides: object) -> Series:
    values: dict[str, object] = {
        "spec": ComparisonSpec(base_run_id=runs[0].id),
        "suite": suites.SYSBENCH.name,
        "server": "bee",
        "server_id": 1,
        "workload": "sysbench",
        "workload_id": 1,
        "base_run_id": runs[0].id,
        "pk_mode": 1,
        "runs": tuple(runs),
        "results": tuple(results),
    }
    values.update(overrides)
    return Series(**values)  # type: ignore[arg-type]


def _result(run_id: int, test: str, qps: float, *, dop: int = 1, range_size: int | None = 100) -> SeriesResult:
    return SeriesResult(run_id, sum(map(ord, test)), test, range_size, dop, qps, NO_METRICS, suites.SYSBENCH.name)


def test_a_comparison_of_two_versions_is_computed_from_plain_values_without_the_database():
    runs = [_run(1, "5.6.51"), _run(2, "8.0.22")]
    results = [
        _result(1, "point-query", 1000.0),
        _result(2, "point-query", 800.0),
        _result(1, "insert", 500.0),
        _result(2, "insert", 600.0),
    ]
    comparison = build_comparison(_series(runs, results))
    other = comparison.others[0].key
    assert comparison.suite == suites.SYSBENCH.name
    assert comparison.group_set == "current-32"
    assert comparison.relative[other]["point-query_range=100"] == pytest.approx(0.8)
    assert comparison.relative[other]["insert_range=100"] == pytest.approx(1.2)
    assert comparison.flags[other]["point-query_range=100"] == "red"


def test_repeated_runs_of_one_build_are_averaged_into_one_column():
    runs = [_run(1, "5.6.51"), _run(2, "8.0.22"), _run(3, "8.0.22", build_id=2)]
    results = [_result(1, "scan", 100.0), _result(2, "scan", 90.0), _result(3, "scan", 110.0)]
    comparison = build_comparison(_series(runs, results))
    assert [column.repeats for column in comparison.columns] == [1, 2]
    assert comparison.qps[comparison.others[0].key]["scan_range=100"] == pytest.approx(100.0)


def test_the_main_concurrency_is_the_one_the_base_ran_most():
    runs = [_run(1, "5.6.51"), _run(2, "8.0.22")]
    results = [_result(r, t, 10.0, dop=d) for r in (1, 2) for t in ("scan", "insert") for d in (1, 8)]
    results.append(_result(1, "delete", 10.0, dop=8))
    assert build_comparison(_series(runs, results)).dop == 8


def test_a_series_without_results_cannot_be_compared():
    with pytest.raises(ComparisonError, match="no results"):
        build_comparison(_series([_run(1, "5.6.51")], []))


def test_the_group_set_follows_the_suite_attribute_not_the_test_names():
    runs = [_run(1, "8.0.22"), _run(2, "8.0.28")]
    results = [
        SeriesResult(run_id, 1, "fillseq", None, 1, qps, NO_METRICS, suites.DBBENCH.name)
        for run_id, qps in ((1, 100.0), (2, 90.0))
    ]
    assert build_comparison(_series(runs, results, suite=suites.DBBENCH.name)).group_set == "db_bench"


def test_an_insert_benchmark_step_whose_inserts_missed_the_sla_is_grey_not_red():
    runs = [_run(1, "8.0.22"), _run(2, "8.0.28")]
    results = [
        SeriesResult(run_id, 1, "qr100", None, 1, qps, NO_METRICS, suites.IBENCH.name)
        for run_id, qps in ((1, 1000.0), (2, 500.0))
    ]
    samples = (
        SlaSample(1, "qr100", 1, 100.0, 100, 1, False),
        SlaSample(2, "qr100", 1, 10.0, 100, 1, False),  # a tenth of the target rate
    )
    comparison = build_comparison(_series(runs, results, suite=suites.IBENCH.name, sla_samples=samples))
    other = comparison.others[0].key
    assert comparison.sla_missed == {(other, "qr100")}
    assert comparison.flags[other]["qr100"] == "grey"
