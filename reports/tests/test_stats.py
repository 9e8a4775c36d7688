"""The comparison math of reports.stats, checked against independent computations."""

from __future__ import annotations

import math
import random
import statistics

import pytest

from reports.stats import (
    GroupSummary,
    compare,
    flag,
    json_safe,
    metric_ratio,
    outside_noise,
    relative_qps,
    spread,
    summarize,
)

# --------------------------------------------------------------------------- relative_qps / metric_ratio


def test_relative_qps_is_value_over_base_and_never_rounded():
    assert relative_qps(1.0, 3.0) == 1.0 / 3.0
    assert relative_qps(2617.42, 2327.1) == 2617.42 / 2327.1


@pytest.mark.parametrize(("value", "base"), [(None, 100.0), (100.0, None), (None, None), (math.nan, 1.0)])
def test_relative_qps_is_none_when_either_side_is_missing(value, base):
    assert relative_qps(value, base) is None


def test_relative_qps_over_a_zero_base_is_infinite_and_zero_over_zero_is_one():
    assert relative_qps(5.0, 0.0) == math.inf
    assert relative_qps(0.0, 0.0) == 1.0


def test_relative_qps_of_zero_over_a_positive_base_is_zero_not_missing():
    assert relative_qps(0.0, 10.0) == 0.0


def test_metric_ratio_follows_the_spec_rules_for_zero_and_missing():
    assert metric_ratio(0.0, 0.0) == 1.0
    assert metric_ratio(0.031, 0.0) == math.inf
    assert metric_ratio(0.0, 0.003) == 0.0
    assert metric_ratio(None, 0.5) is None
    assert metric_ratio(0.5, None) is None
    assert metric_ratio(3.0, 2.0) == 1.5


def test_metric_ratio_over_infinite_base_is_zero():
    assert metric_ratio(1.0, math.inf) == 0.0


# --------------------------------------------------------------------------- flag


def test_flag_is_red_at_exactly_the_red_threshold_and_green_at_exactly_the_green_one():
    assert flag(0.95) == "red"
    assert flag(1.05) == "green"
    # Ratios computed from QPS land on the same doubles as the literals.
    assert flag(relative_qps(95.0, 100.0)) == "red"
    assert flag(relative_qps(105.0, 100.0)) == "green"


def test_flag_is_grey_just_inside_the_thresholds():
    assert flag(math.nextafter(0.95, 1.0)) == "grey"
    assert flag(math.nextafter(1.05, 0.0)) == "grey"
    assert flag(1.0) == "grey"


def test_flag_of_missing_is_missing_and_of_infinity_is_green():
    assert flag(None) == "missing"
    assert flag(math.nan) == "missing"
    assert flag(math.inf) == "green"
    assert flag(0.0) == "red"


def test_flag_thresholds_are_configurable():
    assert flag(0.92, red=0.9, green=1.1) == "grey"
    assert flag(0.9, red=0.9, green=1.1) == "red"
    assert flag(1.1, red=0.9, green=1.1) == "green"


# --------------------------------------------------------------------------- summarize


def _independent_summary(values: dict[str, float | None]) -> dict[str, object]:
    present = {label: v for label, v in values.items() if v is not None}
    finite = [v for v in present.values() if math.isfinite(v)]
    lo = min(present.values()) if present else None
    hi = max(present.values()) if present else None
    return {
        "min": lo,
        "max": hi,
        "avg": statistics.mean(finite) if finite else None,
        "median": statistics.median(finite) if finite else None,
        "n": len(present),
        "total": len(values),
        "min_label": next((k for k, v in present.items() if v == lo), None),
        "max_label": next((k for k, v in present.items() if v == hi), None),
        "missing": tuple(k for k, v in values.items() if v is None),
    }


def _assert_matches(summary: GroupSummary, expected: dict[str, object]) -> None:
    for name in ("avg", "median"):
        got, want = getattr(summary, name), expected[name]
        if want is None:
            assert got is None, name
        else:
            assert got == pytest.approx(want, rel=1e-12), name
    for name in ("min", "max", "n", "total", "min_label", "max_label", "missing"):
        assert getattr(summary, name) == expected[name], name


@pytest.mark.parametrize("seed", range(20))
def test_summarize_agrees_with_statistics_mean_and_median_with_values_missing(seed):
    rng = random.Random(seed)
    size = rng.randint(1, 12)
    values: dict[str, float | None] = {
        f"t{i}_range=100": (None if rng.random() < 0.2 else round(rng.uniform(0.5, 1.5), 4)) for i in range(size)
    }
    _assert_matches(summarize(values), _independent_summary(values))


def test_summarize_counts_missing_in_total_but_not_in_the_statistics():
    summary = summarize({"a": 1.0, "b": None, "c": 3.0})
    assert (summary.n, summary.total) == (2, 3)
    assert summary.missing == ("b",)
    assert summary.avg == 2.0
    assert summary.median == 2.0
    assert summary.count_text == "2 of 3"
    assert not summary.complete


def test_summarize_says_just_n_when_nothing_is_missing():
    assert summarize({"a": 1.0, "b": 2.0}).count_text == "2"


def test_summarize_keeps_infinity_as_max_but_out_of_avg_and_median():
    summary = summarize({"a": 0.8, "b": math.inf, "c": 1.2})
    assert summary.max == math.inf
    assert summary.max_label == "b"
    assert summary.min == 0.8
    assert summary.avg == pytest.approx(1.0)
    assert summary.median == pytest.approx(1.0)
    assert summary.infinite == ("b",)
    assert summary.n == 3


def test_summarize_of_only_missing_values_has_no_statistics():
    summary = summarize({"a": None, "b": None})
    assert (summary.min, summary.max, summary.avg, summary.median) == (None, None, None, None)
    assert (summary.n, summary.total) == (0, 2)
    assert summary.min_label is None


def test_summarize_of_an_empty_group_is_zero_of_zero():
    summary = summarize({})
    assert (summary.n, summary.total, summary.avg) == (0, 0, None)


def test_summarize_gives_the_first_label_on_ties():
    summary = summarize({"x": 1.0, "y": 1.0, "z": 1.0})
    assert summary.min_label == "x"
    assert summary.max_label == "x"


def test_summarize_treats_nan_as_missing():
    summary = summarize({"a": math.nan, "b": 2.0})
    assert summary.missing == ("a",)
    assert summary.avg == 2.0


# --------------------------------------------------------------------------- compare


def _synthetic(seed: int, runs: int, tests: int) -> dict[str, dict[str, float | None]]:
    rng = random.Random(seed)
    return {
        f"run{r}": {
            f"test{t}_range=100": (None if rng.random() < 0.05 else rng.uniform(100.0, 20000.0)) for t in range(tests)
        }
        for r in range(runs)
    }


def test_compare_relative_values_and_flags_match_the_single_value_functions():
    qps = _synthetic(1, runs=6, tests=10)
    labels = list(qps["run0"])
    result = compare(qps, "run0", ["run1", "run2", "run5"], {"all": labels})
    for run in ("run1", "run2", "run5"):
        for label in labels:
            expected = relative_qps(qps[run][label], qps["run0"][label])
            assert result.relative[run][label] == expected
            assert result.flags[run][label] == flag(expected)


def test_compare_gives_the_single_value_functions_answers_on_every_edge_value():
    edges = [None, 0, 0.0, -0.0, 1, 0.95, 1.05, 2.5, math.inf, -math.inf, math.nan, 1e-300]
    labels = [f"t{i}" for i in range(len(edges))]
    # Every value over every base: run i has the i-th edge value everywhere, label j the j-th in the base.
    qps = {f"run{i}": dict.fromkeys(labels, value) for i, value in enumerate(edges)}
    qps["base"] = dict(zip(labels, edges, strict=True))
    result = compare(qps, "base", list(qps)[:-1], {"all": labels})
    for run, values in list(qps.items())[:-1]:
        for label in labels:
            expected = relative_qps(values[label], qps["base"][label])
            got = result.relative[run][label]
            assert got == expected or (got != got and expected != expected)
            assert result.flags[run][label] == flag(expected)


def test_compare_group_summaries_agree_with_an_independent_computation():
    qps = _synthetic(2, runs=8, tests=20)
    labels = list(qps["run0"])
    groups = {"first": labels[:7], "second": labels[7:15], "third": labels[15:]}
    runs = [f"run{i}" for i in range(1, 8)]
    result = compare(qps, "run0", runs, groups)
    for group, members in groups.items():
        for run in runs:
            values: dict[str, float | None] = {}
            for label in members:
                value, base = qps[run][label], qps["run0"][label]
                values[label] = None if value is None or base is None else value / base
            _assert_matches(result.summary(group, run), _independent_summary(values))


def test_compare_marks_a_test_absent_from_a_run_as_missing_and_keeps_it_in_n_of_n():
    qps = {
        "base": {"a": 100.0, "b": 200.0, "c": 300.0},
        "new": {"a": 90.0, "c": 330.0},
    }
    result = compare(qps, "base", ["new"], {"g": ["a", "b", "c"]})
    assert result.relative["new"]["b"] is None
    assert result.flags["new"] == {"a": "red", "b": "missing", "c": "green"}
    summary = result.summary("g", "new")
    assert (summary.n, summary.total, summary.missing) == (2, 3, ("b",))


def test_compare_lists_tests_in_no_group_as_ungrouped_and_still_computes_them():
    qps = {"base": {"a": 100.0, "adhoc": 50.0}, "new": {"a": 100.0, "adhoc": 100.0, "only-new": 7.0}}
    result = compare(qps, "base", ["new"], {"g": ["a"]})
    assert result.ungrouped == ["adhoc", "only-new"]
    assert result.labels == ["a", "adhoc", "only-new"]
    assert result.relative["new"]["adhoc"] == 2.0
    assert result.flags["new"]["only-new"] == "missing"


def test_compare_counts_a_group_test_that_no_run_has():
    result = compare({"base": {"a": 1.0}, "new": {"a": 1.0}}, "base", ["new"], {"g": ["a", "never-ran"]})
    assert result.summary("g", "new").count_text == "1 of 2"


def test_compare_with_an_unknown_base_makes_everything_missing():
    result = compare({"new": {"a": 1.0}}, "gone", ["new"], {"g": ["a"]})
    assert result.flags["new"]["a"] == "missing"
    assert result.summary("g", "new").n == 0


def test_compare_uses_the_given_thresholds():
    qps = {"base": {"a": 100.0}, "new": {"a": 92.0}}
    assert compare(qps, "base", ["new"], {"g": ["a"]}).flags["new"]["a"] == "red"
    assert compare(qps, "base", ["new"], {"g": ["a"]}, red=0.9, green=1.1).flags["new"]["a"] == "grey"


# --------------------------------------------------------------------------- noise


def test_spread_agrees_with_the_statistics_module():
    values = [101.0, 98.5, 100.2, 99.1, 103.4]
    result = spread(values)
    assert result.mean == pytest.approx(statistics.mean(values))
    assert result.stdev == pytest.approx(statistics.stdev(values))
    assert (result.min, result.max) == (98.5, 103.4)
    assert result.cv == pytest.approx(statistics.stdev(values) / statistics.mean(values))


def test_spread_of_one_value_has_no_deviation():
    assert spread([42.0]) == (42.0, 0.0, 42.0, 42.0, 0.0)


def test_spread_of_nothing_is_an_error():
    with pytest.raises(ValueError, match="at least one"):
        spread([])


def test_outside_noise_flags_only_changes_beyond_k_times_the_combined_cv():
    # cv 0.03 and 0.04 combine to 0.05; with k = 2 the noise band is ±0.10.
    assert not outside_noise(1.09, 0.03, 0.04)
    assert not outside_noise(0.91, 0.03, 0.04)
    assert outside_noise(1.11, 0.03, 0.04)
    assert outside_noise(0.89, 0.03, 0.04)
    assert not outside_noise(1.11, 0.03, 0.04, k=3.0)


def test_outside_noise_with_no_repeats_on_either_side_leaves_it_to_the_thresholds():
    assert outside_noise(1.01, None, None)


def test_outside_noise_uses_the_known_side_when_only_one_has_repeats():
    assert not outside_noise(1.05, 0.03, None)
    assert outside_noise(1.07, None, 0.03)


def test_outside_noise_never_flags_missing_and_always_flags_infinity():
    assert not outside_noise(None, 0.01, 0.01)
    assert outside_noise(math.inf, 0.5, 0.5)


def test_outside_noise_with_noiseless_repeats_flags_any_change():
    assert outside_noise(1.001, 0.0, 0.0)
    assert not outside_noise(1.0, 0.0, 0.0)


def test_json_safe_turns_what_json_cannot_say_into_strings_and_nulls_at_any_depth() -> None:
    value = {1: [1.5, None, math.inf, (-math.inf, math.nan), "x", 2, True, {"k": [math.nan, 0.25]}]}
    assert json_safe(value) == {"1": [1.5, None, "inf", ["-inf", None], "x", 2, True, {"k": [None, 0.25]}]}
    assert json_safe((1.0, 2.0)) == [1.0, 2.0] and json_safe(math.nan) is None
