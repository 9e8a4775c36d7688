"""Regression stories: one story per microbenchmark and group, outliers set aside, metric steps."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from regressions import stories as st
from suites.groups import CURRENT_32

# The reference table's columns (qps.rel.all.tsv), preceded by its base.
MYSQL = ["5.6.51", "5.7.44", "8.0.43", "8.0.44", "8.4.6", "8.4.7", "9.4.0", "9.5.0"]
MARIADB = ["10.2.44", "10.3.39", "10.4.34", "10.5.27", "10.6.20", "10.8.8", "10.9.8", "10.11.10", "11.4.4"]


def series(values: list[float | None], versions: list[str] | None = None, **options: object) -> st.Series:
    versions = versions or [f"1.{i}.0" for i in range(len(values))]
    points = tuple(st.Point(v, x, build=f"b{v}") for v, x in zip(versions, values, strict=True))
    return st.Series(str(options.pop("subject", "t")), points, **options)  # type: ignore[arg-type]


@pytest.fixture
def mysql(corpus: Path) -> list[st.Series]:
    """The author's relative-QPS table of MySQL 5.6.51 → 9.5.0 (one client) as series, grouped as the UI groups."""
    found = []
    for line in (corpus / "sysbench-mysql-small" / "qps.rel.all.tsv").read_text().splitlines():
        if "\t" in line and not line.startswith("col-1\t"):
            *values, label = line.split("\t")
            found.append(
                series(
                    [1.0, *(float(v) for v in values)], MYSQL, subject=label, group=CURRENT_32.classify(label) or None
                )
            )
    return found


def test_a_blip_at_one_version_does_not_split_a_regression_into_a_fix_and_a_new_arrival() -> None:
    # The 10.5 point-query loss, with 10.8.8 back near the old level for one version only.
    values = [1.0, 1.01, 0.99, 0.64, 0.65, 0.98, 0.63, 0.64, 0.65]
    (story,) = st.build_stories(series(values, MARIADB))
    assert story.kind == "regression" and story.arrived_in == "10.5.27" and story.previous_version == "10.4.34"
    assert story.fixed_in is None and story.is_open
    assert story.outliers == ("10.8.8",)
    assert [e.kind for e in story.events] == ["arrival"]
    # Now: the newest version against the version before the arrival, as the comparison shows the two.
    assert story.current_change == 0.65 / 0.99 - 1 and story.level_before == 0.99
    assert story.change == 0.64 / 0.99 - 1


def test_an_excursion_outside_any_story_is_a_story_of_kind_outlier_not_a_regression() -> None:
    (story,) = st.build_stories(series([1.0, 1.0, 0.8, 1.0, 1.01, 0.99]))
    assert story.kind == "outlier" and story.arrived_in == "1.2.0" and story.ended_in == "1.3.0"
    assert story.change == pytest.approx(-0.2) and not story.is_open
    assert "outlier at 1.2.0" in story.summary


def test_a_one_version_dip_whose_next_version_overshoots_is_an_outlier_beside_one_improvement() -> None:
    # db_bench fillseq under O_DIRECT, RocksDB 9.8.4 → 10.10.0: 10.6.2 alone lost a third, 10.7.6 came back 8 %
    # above 10.5.5. Not a regression "fixed" by the very step an improvement "arrives" with.
    versions = ["9.8.4", "9.9.3", "9.10.0", "9.11.2", "10.0.1", "10.1.3", "10.2.3", "10.3.4"]
    versions += ["10.4.2", "10.5.5", "10.6.2", "10.7.6", "10.8.3", "10.9.1", "10.10.0"]
    values = [1.0, 1.02, 1.01, 1.0, 1.03, 1.01, 1.03, 1.0, 0.98, 1.01, 0.67, 1.10, 1.09, 1.08, 1.09]
    (story,) = st.build_stories(series(values, versions))
    assert (story.kind, story.arrived_in, story.previous_version) == ("improvement", "10.7.6", "10.5.5")
    assert story.outliers == ("10.6.2",) and story.change == pytest.approx(1.10 / 1.01 - 1, abs=0.01)
    # The same dip returning above an improvement's level the other way is set aside too.
    mirrored = [1.0, 1.0, 1.0, 1.0, 1.4, 0.9, 0.9, 0.9]
    assert st.outlier_indexes(mirrored, 0.01) == [4]
    # A return that stays on the excursion's side is a step, not an outlier.
    assert st.outlier_indexes([1.0, 1.0, 1.0, 0.6, 0.85, 0.85, 0.85], 0.01) == []


DBBENCH = ["9.8.4", "9.9.3", "9.10.0", "9.11.2", "10.0.1", "10.1.3", "10.2.3", "10.3.4"]
DBBENCH += ["10.4.2", "10.5.5", "10.6.2", "10.7.6", "10.8.3", "10.9.1", "10.10.0"]


def test_a_dip_and_a_spike_in_a_row_around_one_level_are_outliers_of_one_story() -> None:
    # db_bench overwriteandwait, buffered IO (the author's sum.abs0.iobuf): +40 % in 9.9.3, held to 10.10.0,
    # with 10.6.2 low and 10.7.6 high for one version each. One improvement, not four events.
    values = [1.00, 1.38, 1.45, 1.39, 1.41, 1.39, 1.40, 1.39, 1.41, 1.40, 1.23, 1.68, 1.42, 1.47, 1.42]
    (story,) = st.build_stories(series(values, DBBENCH))
    assert (story.kind, story.arrived_in, story.previous_version) == ("improvement", "9.9.3", "9.8.4")
    assert [e.kind for e in story.events] == ["arrival"] and story.ended_in is None
    assert story.outliers == ("10.6.2", "10.7.6")
    assert story.summary == "now +42% against 9.8.4: arrived in 9.9.3 (+38%), outlier 10.6.2, 10.7.6"


def test_two_versions_on_the_same_side_are_a_level_a_loss_and_its_fix_not_outliers() -> None:
    # Two versions below the level before, then back: a short-lived regression, fixed.
    (story,) = st.build_stories(series([1.0, 1.0, 1.0, 1.0, 0.7, 0.68, 1.0, 1.0, 1.0, 1.0]))
    assert story.kind == "regression" and story.arrived_in == "1.4.0" and story.fixed_in == "1.6.0"
    assert story.outliers == ()
    # A dip and a spike after which the series does not come back is no excursion: the last level is news.
    stories = st.build_stories(series([1.0, 1.0, 1.0, 1.0, 0.7, 1.4, 1.4, 1.4, 1.4]))
    assert stories and all("1.5.0" not in s.outliers for s in stories)
    assert any(s.kind == "improvement" and s.current_change == pytest.approx(0.4, abs=0.01) for s in stories)


def test_arrival_partial_recovery_fix_and_return_are_one_story() -> None:
    values = [1.0, 1.0, 0.7, 0.7, 0.85, 0.85, 1.0, 1.0, 0.7, 0.7]
    story, gain = st.build_stories(series(values))
    # The partial recovery's +21 % is also an improvement record of its own, naming the story it sits in (5b).
    assert (gain.kind, gain.arrived_in, gain.events[0].within) == ("improvement", "1.4.0", "regression 1.2.0")
    assert [(e.kind, e.version) for e in story.events] == [
        ("arrival", "1.2.0"),
        ("partial recovery", "1.4.0"),
        ("fixed", "1.6.0"),
        ("returned", "1.8.0"),
    ]
    # The return reopens the story: no "fixed in" while it is back.
    assert story.fixed_in is None and story.is_open
    assert [e.version for e in story.partial_recoveries] == ["1.4.0"]
    assert [e.version for e in story.returns] == ["1.8.0"]
    assert story.worst_change == pytest.approx(-0.3) and story.current_change == pytest.approx(-0.3)


def test_a_fixed_regression_is_closed_and_says_where() -> None:
    (story,) = st.build_stories(series([1.0, 1.0, 0.7, 0.7, 1.0, 1.0]))
    assert story.fixed_in == "1.4.0" and story.ended_in == "1.4.0" and not story.is_open
    assert story.current_change == pytest.approx(0.0)


def test_changes_are_measured_from_the_level_before_the_arrival_not_from_the_base() -> None:
    # The base is far above; the story starts at the level just before the drop.
    (story,) = st.build_stories(series([1.0, 1.0, 1.0, 1.0, 1.0, 0.8, 0.8, 0.8]))
    assert story.level_before == pytest.approx(1.0)
    up_then_down = st.build_stories(series([1.0, 1.0, 1.3, 1.3, 1.3, 1.0, 1.0, 1.0]))
    # The gain given back is a loss of its own (rule 5b): a regression record from 1.3 at 1.4.0.
    assert [s.kind for s in up_then_down] == ["improvement", "regression"]
    assert up_then_down[1].level_before == 1.3 and up_then_down[1].events[0].within == "improvement 1.2.0"
    assert up_then_down[0].ended_in == "1.5.0" and up_then_down[0].fixed_in is None


def test_a_gain_lost_and_more_ends_the_improvement_and_starts_a_regression_from_the_same_level() -> None:
    improvement, regression = st.build_stories(series([1.0, 1.0, 1.3, 1.3, 0.7, 0.7]))
    assert improvement.kind == "improvement" and improvement.ended_in == "1.4.0"
    assert regression.kind == "regression" and regression.arrived_in == "1.4.0"
    assert regression.previous_version == "1.3.0"
    # Its step is between the two versions it names; where it stands is measured against the level before the
    # gain, as for the improvement.
    assert regression.change == pytest.approx(0.7 / 1.3 - 1)
    assert regression.events[0].change_vs_before == pytest.approx(-0.3)
    assert regression.current_change == pytest.approx(-0.3)
    assert regression.reference_version == "1.1.0"
    assert regression.summary == "now −30% against 1.1.0: arrived in 1.4.0 (−46%)"
    assert "better again" not in improvement.summary and "given back in 1.4.0" in improvement.summary


def test_a_steady_series_and_a_slow_drift_tell_no_story() -> None:
    assert st.build_stories(series([1.0, 1.01, 0.99, 1.0, 1.02, 0.99, 1.0])) == []
    assert [s for s in st.build_stories(series([1.0, 0.98, 0.96, 0.94, 0.92, 0.9, 0.88])) if s.kind != "outlier"] == []


def test_a_short_series_uses_the_default_noise_so_a_38_percent_drop_is_found() -> None:
    (story,) = st.build_stories(series([1.0, 0.9, 0.56], ["5.6.49", "5.7.31", "8.0.22"], subject="l.i1"))
    assert story.noise.source == "default" and story.noise.sigma == pytest.approx(0.02)
    assert "default" in story.noise.text and "3 points" in story.noise.text
    assert story.arrived_in == "5.7.31"
    assert story.summary == "now −44% against 5.6.49: arrived in 5.7.31 (−10%), worse in 8.0.22 (−38%)"
    assert [(e.kind, e.version, round(e.change, 2)) for e in story.events] == [
        ("arrival", "5.7.31", -0.10),
        ("further", "8.0.22", -0.38),
    ]


def test_noise_comes_from_repeats_when_there_are_any() -> None:
    points = tuple(st.Point(f"1.{i}.0", v, cv=0.004) for i, v in enumerate([1.0, 1.0, 0.95, 0.95, 0.95]))
    (story,) = st.build_stories(st.Series("t", points))
    assert story.noise.source == "repeats" and story.noise.sigma == pytest.approx(0.004)
    assert "repeated runs" in story.noise.text


def test_noise_of_a_longer_series_without_repeats_is_its_own_mad_with_a_floor() -> None:
    noise = st.series_noise(series([1.0, 1.0, 1.0, 1.0, 1.0, 1.0]))
    assert noise.source == "MAD" and noise.sigma == pytest.approx(0.01)
    assert "floored at 1%" in noise.text


def test_an_insert_benchmark_step_that_missed_its_sla_is_no_point() -> None:
    points = [st.Point(f"1.{i}.0", v) for i, v in enumerate([1.0, 1.0, 1.0, 1.0, 1.0])]
    points.append(st.Point("1.5.0", 0.5, sla_missed=True))
    assert st.build_stories(st.Series("qr100", tuple(points))) == []
    points[-1] = st.Point("1.5.0", 0.5)
    assert [s.arrived_in for s in st.build_stories(st.Series("qr100", tuple(points)))] == ["1.5.0"]


def test_the_newest_release_alone_can_be_where_a_regression_arrived() -> None:
    (story,) = st.build_stories(series([1.0, 1.0, 1.01, 0.99, 1.0, 0.8]))
    assert story.arrived_in == "1.5.0" and story.outliers == () and not story.events[0].provisional


def test_a_small_step_on_the_newest_version_alone_is_provisional_until_the_next_version() -> None:
    (story,) = st.build_stories(series([1.0, 1.0, 1.01, 0.99, 1.0, 0.93]))
    assert story.events[0].provisional and "provisional" in story.summary
    (confirmed,) = st.build_stories(series([1.0, 1.0, 1.01, 0.99, 1.0, 0.93, 0.93]))
    assert not confirmed.events[0].provisional


def test_builds_and_release_view_pass_through() -> None:
    (story,) = st.build_stories(series([1.0, 1.0, 0.7, 0.7], releases="all"))
    assert story.releases == "all"
    assert story.builds == ("b1.0.0", "b1.1.0", "b1.2.0", "b1.3.0")


def test_a_group_story_is_told_from_the_median_series_and_stands_for_its_members() -> None:
    members = [
        series([1.0, 1.0, 0.7, 0.7], subject="a", group="writes"),
        series([1.0, 1.0, 0.72, 0.71], subject="b", group="writes"),
        series([1.0, 1.0, 1.0, 1.0], subject="c", group="writes"),
    ]
    median = st.group_series("writes", members)
    assert [p.value for p in median.points] == [1.0, 1.0, 0.72, 0.71] and median.is_group
    found = st.stories_for(members)
    group = [s for s in found if s.is_group]
    assert [(s.subject, s.arrived_in) for s in group] == [("writes", "1.2.0")]
    assert {s.subject: s.folded_into for s in found if not s.is_group} == {"a": "writes", "b": "writes"}


def test_group_members_must_share_their_versions() -> None:
    with pytest.raises(ValueError, match="same versions"):
        st.group_series("g", [series([1.0, 0.9]), series([1.0, 0.9], ["2.0", "2.1"])])


def test_a_metric_step_at_the_same_version_explains_the_story() -> None:
    versions = ["10.4.34", "10.5.27", "10.6.20", "10.11.10"]
    (story,) = st.build_stories(series([1.0, 0.6, 0.61, 0.6], versions, subject="update-inlist_range=100"))
    cs = series([2.0, 6.2, 6.3, 6.2], versions, subject="update-inlist_range=100", metric="cs/o")
    cpu = series([100.0, 101.0, 99.0, 100.0], versions, subject="update-inlist_range=100", metric="cpu/o")
    later = series([1.0, 1.0, 1.0, 3.0], versions, subject="update-inlist_range=100", metric="rKB/o")
    attached = st.with_metric_steps(story, [cs, cpu, later], versions)
    (step,) = attached.metric_steps
    assert step.metric == "cs/o" and step.at == "arrival" and step.explains and step.worse
    assert step.ratio == pytest.approx(3.1, abs=0.05)
    assert step.text == "cs/o ×3.1 at the same version (10.5.27)"


def test_a_metric_getting_better_with_a_regression_is_listed_but_does_not_explain_it() -> None:
    versions = ["1.0", "1.1", "1.2"]
    (story,) = st.build_stories(series([1.0, 0.6, 0.6], versions))
    (step,) = st.coinciding_steps(story, st.metric_steps(series([2.0, 1.0, 1.0], versions, metric="cpu/o")), versions)
    assert not step.worse and not step.explains


def test_metric_levels_below_their_floor_make_no_step() -> None:
    assert st.metric_steps(series([0.001, 0.001, 0.004, 0.004], metric="rKB/o")) == []
    assert st.metric_steps(series([0.0, 0.0, 0.5, 0.5], metric="stall%")) == []
    (step,) = st.metric_steps(series([0.0, 0.0, 5.0, 5.0], metric="stall%"))
    assert step.text.startswith("stall% 0 → 5")


def test_on_the_mysql_series_each_of_the_authors_findings_is_a_story(mysql: list[st.Series]) -> None:
    found = st.stories_for(mysql)
    groups = {s.subject: s for s in found if s.is_group}
    # Point queries ~10% slower in 5.7.44 and ~30% by 8.0; range queries without aggregation ~15% then ~30%;
    # writes 10–20% slower in 5.7.44 and much more from 8.0 on.
    for name, first, now in (
        ("point queries", (-0.15, -0.05), (-0.40, -0.20)),
        ("range queries without aggregation", (-0.20, -0.10), (-0.40, -0.25)),
        ("writes", (-0.22, -0.08), (-0.55, -0.30)),
    ):
        story = groups[name]
        assert story.kind == "regression" and story.arrived_in == "5.7.44" and story.is_open, name
        assert first[0] <= story.change <= first[1], name
        assert now[0] <= story.current_change <= now[1], name
        assert [e.version for e in story.events] == ["5.7.44", "8.0.43"], name
    writes = [s for s in found if s.group == "writes" and s.kind == "regression" and s.current_change <= -0.38]
    assert len(writes) >= 4
    # New regressions stopped arriving after 8.0.43: no story moves later, but for 9.5.0's write drop, which
    # the newest version alone shows (provisional).
    assert {e.version for s in found for e in s.events if not e.provisional} <= {"5.7.44", "8.0.43"}
    # Member stories arriving where their group's story arrives or gets worse are folded into it.
    listed = [s for s in found if s.kind != "outlier" and s.folded_into is None]
    assert {s.subject for s in listed if s.is_group} == set(groups)
    assert all(s.group is None for s in listed if not s.is_group and s.kind == "regression")


def test_the_insert_benchmarks_p99_rate_getting_lower_explains_a_regression() -> None:
    versions = ["5.6.49", "5.7.31", "8.0.22"]
    (story,) = st.build_stories(series([1.0, 1.0, 0.6], versions, subject="l.i1"))
    rate = series([1747.0, 1750.0, 250.0], versions, subject="l.i1", metric="p99 rate")
    (step,) = st.with_metric_steps(story, [rate], versions).metric_steps
    assert step.worse and step.explains and step.at == "arrival"


def test_a_story_serialises_to_json_with_the_fields_the_command_prints() -> None:
    versions = ["1.0", "1.1", "1.2"]
    (story,) = st.build_stories(series([1.0, 0.6, 0.6], versions, subject="update-inlist_range=100"))
    story = st.with_metric_steps(story, [series([0.0, 5.0, 5.0], versions, metric="stall%")], versions)
    data = json.loads(json.dumps(story.as_dict(), allow_nan=False))
    assert {k: data[k] for k in ("kind", "metric", "subject", "arrived_in", "previous_version", "fixed_in")} == {
        "kind": "regression",
        "metric": "qps",
        "subject": "update-inlist_range=100",
        "arrived_in": "1.1",
        "previous_version": "1.0",
        "fixed_in": None,
    }
    assert data["change"] == pytest.approx(-0.4) and data["outlier"] is False and data["open"] is True
    assert data["builds"] == ["b1.0", "b1.1", "b1.2"] and data["noise_source"] == "default"
    assert data["events"][0]["kind"] == "arrival"
    assert data["metric_steps"][0]["ratio"] == "inf"


def test_the_insert_benchmarks_l_i1_drop_is_found_in_the_authors_merged_table(corpus: Path) -> None:
    rows = (corpus / "ibench-2021" / "100m" / "res.in" / "mrg.l.i1").read_text().splitlines()
    header = rows[0].split("\t")
    ips = {r.split("\t")[-1]: float(r.split("\t")[header.index("ips")]) for r in rows[1:] if r.strip()}
    versions = ["5.6.49", "5.7.31", "8.0.22"]
    values = [ips[f"my{v.replace('.', '')}.cx6d"] / ips["my5649.cx6d"] for v in versions]
    (story,) = st.build_stories(series(values, versions, subject="l.i1"))
    assert story.kind == "regression" and story.is_open
    drop = next(e for e in story.events if e.version == "8.0.22")
    assert drop.change == pytest.approx(12970 / 20790 - 1) and not drop.provisional


def test_a_noisy_test_without_steps_tells_no_regression_story() -> None:
    # A scan that jumps ±10–15 % from version to version around one level: its own MAD sets the gate.
    jitter = [1.0, 1.12, 0.9, 1.05, 0.88, 1.1, 0.95, 1.13, 0.9, 1.04, 0.89, 1.08]
    found = st.build_stories(series(jitter))
    assert [s for s in found if s.kind != "outlier"] == []
    assert st.series_noise(series(jitter)).sigma > 0.05
