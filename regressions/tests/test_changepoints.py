"""Change points over version-ordered relative QPS (regressions.changepoints), on the real corpus and made-up series."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from regressions import changepoints as cp
from suites.groups import CURRENT_32, POINT_QUERIES

# The reference table's columns (qps.rel.all.tsv), preceded by its base.
VERSIONS = ["5.6.51", "5.7.44", "8.0.43", "8.0.44", "8.4.6", "8.4.7", "9.4.0", "9.5.0"]


def _reference_series(corpus: Path) -> dict[str, list[float | None]]:
    """label → relative QPS per version, base first (1.0), read from the authors' table."""
    series: dict[str, list[float | None]] = {}
    for line in (corpus / "sysbench-mysql-small" / "qps.rel.all.tsv").read_text().splitlines():
        if "\t" in line and not line.startswith("col-1\t"):
            *values, label = line.split("\t")
            series[label] = [1.0, *(float(v) for v in values)]
    return series


@pytest.fixture
def reference(corpus: Path) -> dict[str, list[float | None]]:
    series = _reference_series(corpus)
    assert len(series) == 33
    return series


def test_point_query_losses_arrive_in_two_steps_at_5_7_44_and_8_0_43(reference: dict) -> None:
    noise = cp.pooled_noise(reference.values())
    points = [label for label in reference if CURRENT_32.classify(label) == POINT_QUERIES]
    assert len(points) == 9
    at_5_7 = []
    for label in points:
        found = cp.steps(reference[label], VERSIONS, noise=noise)
        assert {s.direction for s in found} == {"regression"}, label
        assert {s.version for s in found} <= {"5.7.44", "8.0.43"}, label
        assert "8.0.43" in {s.version for s in found}, label
        at_5_7 += [label for s in found if s.version == "5.7.44"]
        # The 8.4.x and 9.x releases add nothing: the final level arrived in 8.0.43.
        arrival = cp.arrived_in(reference[label], VERSIONS, noise=noise)
        assert arrival is not None and arrival.version == "8.0.43" and arrival.direction == "regression", label
    # random-points with range=1000 lost only 1% in 5.7.44 (1.01): inside the gate, so that step is not its own.
    assert sorted(at_5_7) == sorted(p for p in points if p != "random-points_range=1000")


def test_point_query_steps_report_their_levels_and_sizes(reference: dict) -> None:
    noise = cp.pooled_noise(reference.values())
    first, second = cp.steps(reference["point-query_range=100"], VERSIONS, noise=noise)
    assert (first.previous_version, first.version) == ("5.6.51", "5.7.44")
    assert first.level_before == 1.0 and first.level_after == pytest.approx(0.88)
    assert first.change == pytest.approx(-0.12)
    assert (second.previous_version, second.version) == ("5.7.44", "8.0.43")
    assert second.level_after == pytest.approx((0.69 + 0.69 + 0.68 + 0.67 + 0.68 + 0.65) / 6)
    assert second.persists_until_version == "9.5.0" and second.ended_version is None


def test_the_noise_estimate_is_not_inflated_by_the_steps_themselves(reference: dict) -> None:
    noise = cp.pooled_noise(reference.values())
    assert noise is not None and 0.005 < noise < 0.025
    # Every series has two big steps; without them (from 8.0.43 on) the estimate is about the same.
    flat = cp.pooled_noise([values[2:] for values in reference.values()])
    assert flat is not None and noise == pytest.approx(flat, rel=0.5)


def _noisy(levels: list[float], sigma: float, seed: int) -> list[float | None]:
    rng = random.Random(seed)
    return [level * (1 + rng.gauss(0, sigma)) for level in levels]


@pytest.mark.parametrize("seed", range(20))
def test_a_flat_series_with_run_to_run_noise_has_no_step(seed: int) -> None:
    values = _noisy([1.0] * 30, 0.015, seed)
    assert cp.steps(values) == []


@pytest.mark.parametrize("seed", range(5))
def test_a_planted_step_is_found_at_its_version_despite_noise(seed: int) -> None:
    values = _noisy([1.0] * 10 + [0.85] * 10, 0.01, seed)
    (step,) = cp.steps(values)
    assert step.index == 10 and step.direction == "regression"
    assert step.change == pytest.approx(-0.15, abs=0.03)


def test_a_change_inside_the_noise_of_repeated_runs_is_not_a_step() -> None:
    values = [1.0, 1.0, 1.0, 0.93, 0.93, 0.93]
    assert cp.steps(values, cvs=[0.001] * 6)  # tight repeats: 7% is real
    assert cp.steps(values, cvs=[0.04] * 6) == []  # 4% spread: 3σ·√(2/3) ≈ 9.8% > 7%


def test_a_change_below_min_change_is_not_a_step_however_quiet_the_series() -> None:
    values = [1.0] * 5 + [0.97] * 5
    assert cp.steps(values, cvs=[0.0001] * 10) == []
    assert [s.index for s in cp.steps(values, cvs=[0.0001] * 10, min_change=0.02)] == [5]


def test_the_newest_version_alone_can_be_the_one_that_regressed() -> None:
    values = [1.0, 1.01, 0.99, 1.0, 1.0, 0.99, 1.01, 0.80]
    (step,) = cp.steps(values, VERSIONS)
    assert step.version == "9.5.0" and step.previous_version == "9.4.0"


@pytest.mark.parametrize("seed", range(5))
def test_a_slow_drift_of_one_or_two_percent_per_release_is_no_step(seed: int) -> None:
    values = _noisy([1.0 - 0.015 * i for i in range(20)], 0.005, seed)
    assert cp.steps(values) == []
    # The same total loss in one release is a step.
    assert [s.index for s in cp.steps([1.0] * 10 + [0.715] * 10)] == [10]


def test_missing_results_are_skipped_and_steps_keep_their_place_in_the_series() -> None:
    values = [1.0, None, 1.0, 1.01, None, 0.8, 0.8, 0.79]
    (step,) = cp.steps(values)
    assert step.index == 5 and step.previous_index == 3


def test_a_regression_that_comes_back_is_fixed_there_and_the_fix_is_no_record_of_its_own() -> None:
    values = [1.0, 1.0, 0.8, 0.8, 0.8, 0.99, 1.0]
    detection = cp.detect(values, VERSIONS[:7])
    regression, fix = detection.steps
    assert regression.version == "8.0.43" and regression.ended_version == "8.4.7"
    assert regression.persists_until_version == "8.4.6"
    assert fix.reverses == regression.index
    assert detection.reported_steps == (regression,)
    assert cp.arrived_in(detection) is None  # back at the base level: nothing arrived


def test_a_recovery_that_overshoots_is_an_improvement_in_its_own_right() -> None:
    detection = cp.detect([1.0, 1.0, 0.8, 0.8, 1.3, 1.3])
    regression, improvement = detection.reported_steps
    assert regression.ended_index == 4
    assert improvement.direction == "improvement" and improvement.reverses is None
    # Measured from the level before the regression it fixed: 1.0 → 1.3, not 0.8 → 1.3.
    assert improvement.level_before == 1.0 and improvement.change == pytest.approx(0.3)


def test_a_one_version_dip_and_its_fix_are_one_record_even_when_the_fix_lands_a_little_higher() -> None:
    # RocksDB fillseq with the WAL off: 33 % down in 10.6.2, back 8 % above the old level in 10.7.6.
    values = [1.0, 0.99, 1.01, 1.0, 0.66, 1.08, 1.09, 1.08, 1.07]
    regression, improvement = cp.steps(values)
    assert regression.direction == "regression" and regression.ended_index == 5
    assert improvement.index == 5 and improvement.change == pytest.approx(0.08, abs=0.01)
    # A spike that falls back is an improvement that ended; the fall is its reversal, not a second regression.
    spike = [1.4, 1.39, 1.41, 1.4, 1.4, 1.68, 1.44, 1.42, 1.41]
    (up,) = cp.steps(spike, noise=0.015)
    assert up.index == 5 and up.ended_index == 6


def test_arrived_in_is_where_the_final_level_begins_to_hold() -> None:
    # Two losses: the final level (0.67) arrives with the second.
    arrival = cp.arrived_in([1.0, 0.88, 0.67, 0.67, 0.67], VERSIONS[:5], noise=0.01)
    assert arrival is not None and arrival.version == "8.0.43" and arrival.change == pytest.approx(-0.33)
    # A partial recovery: the series has been at least 10% down since the first loss.
    arrival = cp.arrived_in([1.0, 0.8, 0.8, 0.9, 0.9], VERSIONS[:5], noise=0.01)
    assert arrival is not None and arrival.version == "5.7.44" and arrival.change == pytest.approx(-0.1)
    assert cp.arrived_in([1.0, 1.0, 1.01, 0.99]) is None


def test_a_short_series_without_repeats_uses_the_default_noise() -> None:
    detection = cp.detect([1.0, 0.8, 0.81])
    assert detection.noise == cp.DEFAULT_NOISE and detection.noise_source == "default"
    assert [s.index for s in detection.steps] == [1]
    assert cp.steps([1.0, 0.97]) == []
    # 3σ·√2 with σ = 2 %: a 7 % step between two single points is within the noise, a 9 % one is not.
    assert cp.steps([1.0, 0.93, 0.93]) == []
    assert [s.index for s in cp.steps([1.0, 0.91])] == [1]


def test_one_build_per_version_is_a_point_preferring_the_bases_build_then_a_default_flavour() -> None:
    columns = [
        ("5.6.51", "rel_o2nofp", "z12a"),
        ("8.4.6", "rel_o2nofp", "z12a"),
        ("8.4.6", "v2_rel_o2nofp", "z12a"),
        ("8.4.7", "v2_rel_o2nofp", "z12a"),
        ("8.4.7", "rel_o2nofp", "z12b"),
        ("9.5.0", "lto", "z13"),
    ]
    # 8.4.6: the base's build; 8.4.7: a default flavour on another config beats an experimental build on the
    # base's config; 9.5.0: its only build, a default flavour.
    assert cp.choose_points(columns, base_index=0) == [0, 1, 4, 5]
    # The base is always a point, and its flavour (even an experimental one) is then the first choice.
    assert cp.choose_points(columns, base_index=2) == [0, 2, 3, 5]


def test_a_default_flavour_is_made_only_of_known_build_type_parts() -> None:
    for flavour in ("", "rel", "rel_withdbg", "rel_o2nofp", "o2nofp", "rel_o2nofp_lto", "REL_withdbg"):
        assert cp.is_default_flavour(flavour), flavour
    for flavour in ("mdev16168_rel_withdbg", "v2_rel_o2nofp", "240723_2ee061c2_ilwas", "rel_hack"):
        assert not cp.is_default_flavour(flavour), flavour


def test_an_experimental_build_is_never_a_point_unless_asked_for() -> None:
    # MariaDB 12.1.1 had a release build and a build of a patch for one bug: the release build is the point.
    columns = [
        ("11.8.3", "rel_withdbg", "z12b"),
        ("12.1.1", "mdev16168_rel_withdbg", "z12b"),
        ("12.1.1", "rel_withdbg", "z12b"),
        ("12.2.1", "mdev16168_rel_withdbg", "z12b"),
    ]
    # Name order puts the patched build first; it is passed over, and 12.2.1, which has only a patched build,
    # has no point at all.
    assert cp.choose_points(columns) == [0, 2]
    assert cp.choose_points(columns, experimental=True) == [0, 2, 3]


def test_a_noisy_microbenchmark_gets_a_larger_noise_than_a_quiet_one_of_the_same_series() -> None:
    quiet = [1.0, 0.995, 1.0, 1.005, 1.0, 0.995, 1.0, 1.0]
    noisy = [1.0, 1.3, 0.95, 1.25, 0.9, 1.35, 1.0, 1.3]  # a scan or delete jumping ±30 % from run to run
    assert cp.series_noise(quiet) == (cp.NOISE_FLOOR, "series")
    sigma, source = cp.series_noise(noisy)
    assert source == "series" and sigma > 0.2
    # Its jumps are its noise, not regressions and their fixes.
    assert cp.steps(noisy) == []
    # A 15 % step in the quiet series is found.
    assert [s.index for s in cp.steps([*quiet[:4], *(v * 0.85 for v in quiet[4:])])] == [4]


def test_repeated_runs_set_the_noise_before_the_series_own_differences() -> None:
    noisy = [1.0, 1.3, 0.95, 1.25, 0.9, 1.35, 1.0, 1.3]
    assert cp.series_noise(noisy, [0.01] * 8) == (0.01, "repeats")
    assert cp.series_noise([1.0, 0.6], [None, 0.03]) == (0.03, "repeats")


def test_a_38_percent_drop_in_a_three_version_series_is_found() -> None:
    # The Insert Benchmark's l.i1 step on MySQL 5.6 → 5.7 → 8.0: three points, no repeats.
    (step,) = [s for s in cp.steps([1.0, 0.9, 0.56], ["5.6.49", "5.7.31", "8.0.22"]) if s.version == "8.0.22"]
    assert step.direction == "regression" and step.change == pytest.approx(-0.38, abs=0.01)
    assert cp.detect([1.0, 0.9, 0.56]).noise_source == "default"


def test_values_and_versions_must_have_the_same_length() -> None:
    with pytest.raises(ValueError, match="3 values but 2 versions"):
        cp.detect([1.0, 1.0, 1.0], ["a", "b"])
