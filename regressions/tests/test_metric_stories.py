"""HW metrics tell stories of their own when they step where QPS does not: records, list tab, JSON and API."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from regressions import stories as st
from regressions.detection import StorySeries, detect_regressions, find_stories
from regressions.models import Regression
from runs.models import Run

VERSIONS = [f"1.{i}.0" for i in range(7)]


def series(values: list[float | None], metric: str = st.QPS, subject: str = "update-inlist_range=100") -> st.Series:
    points = tuple(st.Point(v, x, build=f"b{v}") for v, x in zip(VERSIONS, values, strict=False))
    return st.Series(subject, points, metric=metric)


# --------------------------------------------------------------------------- the rule, pure


def test_a_cs_per_operation_jump_with_flat_qps_is_a_regression_story_of_its_own() -> None:
    qps = st.build_stories(series([1.0, 1.01, 0.99, 1.0, 1.01, 0.99, 1.0]))
    assert qps == []
    (story,) = st.metric_stories(series([2.0, 2.02, 1.98, 6.2, 6.1, 6.25, 6.2], "cs/o"), qps, VERSIONS)
    assert (story.kind, story.metric, story.arrived_in, story.previous_version) == (
        "regression",
        "cs/o",
        "1.3.0",
        "1.2.0",
    )
    assert 2.0 < story.change < 2.2 and story.fixed_in is None and story.is_open
    assert story.summary.startswith("cs/o now +") and "arrived in 1.3.0" in story.summary
    assert story.as_dict()["metric"] == "cs/o" and story.as_dict()["kind"] == "regression"


def test_a_falling_cost_is_an_improvement_and_a_cost_back_up_again_fixes_a_regression() -> None:
    (gain,) = st.metric_stories(series([10.0, 10.1, 9.9, 6.0, 6.1, 5.9, 6.0], "cpu/o"), [], VERSIONS)
    assert gain.kind == "improvement" and gain.change < -0.35 and gain.worst_change < -0.35
    (loss,) = st.metric_stories(series([10.0, 10.1, 9.9, 14.0, 14.1, 10.0, 10.1], "cpu/o"), [], VERSIONS)
    assert loss.kind == "regression" and loss.fixed_in == "1.5.0" and not loss.is_open
    assert loss.worst_change > 0.35


def test_a_falling_insert_benchmark_p99_rate_is_a_regression() -> None:
    (story,) = st.metric_stories(series([900.0, 910.0, 890.0, 300.0, 310.0, 290.0, 300.0], "p99 rate"), [], VERSIONS)
    assert story.kind == "regression" and story.change < -0.6


def test_a_metric_step_where_a_qps_story_moves_is_told_by_that_story_not_again() -> None:
    qps_series = series([1.0, 1.01, 0.99, 0.6, 0.61, 0.59, 0.6])
    (qps,) = st.build_stories(qps_series)
    cs = series([2.0, 2.02, 1.98, 6.2, 6.1, 6.25, 6.2], "cs/o")
    assert st.metric_stories(cs, [qps], VERSIONS) == []
    (attached,) = st.with_metric_steps(qps, [cs], VERSIONS).metric_steps
    assert attached.metric == "cs/o" and attached.explains and attached.text == "cs/o ×3.1 at the same version (1.3.0)"
    # A step two versions later than the QPS story is a story of its own.
    later = series([2.0, 2.02, 1.98, 2.0, 2.01, 6.25, 6.2], "cs/o")
    (own,) = st.metric_stories(later, [qps], VERSIONS)
    assert own.arrived_in == "1.5.0"


def test_steps_from_or_to_almost_nothing_are_noise_unless_the_level_matters() -> None:
    # An idle read path: 0 → 0.01 KB per operation is nothing, however large the ratio.
    assert st.metric_stories(series([0.0, 0.0, 0.0, 0.01, 0.01, 0.01, 0.01], "rKB/o"), [], VERSIONS) == []
    assert st.metric_steps(series([0.0, 0.0, 0.0, 0.01, 0.01, 0.01, 0.01], "rKB/o")) == []
    # "×0": a small read rate that vanished (the data fit in the buffer pool) explains no QPS drop.
    assert st.metric_stories(series([0.3, 0.31, 0.29, 0.0, 0.0, 0.0, 0.0], "rKB/o"), [], VERSIONS) == []
    assert st.metric_steps(series([0.3, 0.31, 0.29, 0.0, 0.0, 0.0, 0.0], "rKB/o")) == []
    # Starting to read 4 KB per operation from storage matters wherever it came from.
    (story,) = st.metric_stories(series([0.0, 0.0, 0.0, 4.0, 4.1, 3.9, 4.0], "rKB/o"), [], VERSIONS)
    assert story.kind == "regression" and story.arrived_in == "1.3.0"
    (step,) = st.metric_steps(series([0.0, 0.0, 0.0, 4.0, 4.1, 3.9, 4.0], "rKB/o"))
    assert step.text == "rKB/o 0 → 4 at 1.3.0"


def test_a_metric_step_under_the_metric_minimum_change_is_a_step_but_no_story() -> None:
    quiet_cpu = series([10.0, 10.0, 10.01, 10.7, 10.7, 10.71, 10.7], "cpu/o")
    (step,) = st.metric_steps(quiet_cpu)
    assert 1.06 < step.ratio < 1.08
    assert st.metric_stories(quiet_cpu, [], VERSIONS) == []


def test_a_one_version_excursion_of_a_metric_is_no_story() -> None:
    assert st.metric_stories(series([2.0, 2.02, 1.98, 6.2, 2.0, 2.01, 1.99], "cs/o"), [], VERSIONS) == []


def _grouped(qps: dict[str, list[float]], cs: dict[str, list[float]]) -> StorySeries:
    """A series of microbenchmarks of one group, "writes", with their QPS and cs/o."""
    return StorySeries(
        chosen=list(range(len(VERSIONS))),
        unused={},
        long_term=[True] * len(VERSIONS),
        qps=[
            st.Series(label, series(values).points, group="writes", releases="long-term")
            for label, values in qps.items()
        ],
        metrics={label: [series(values, "cs/o", label)] for label, values in cs.items()},
        versions=VERSIONS,
    )


def test_a_group_tells_metric_stories_from_its_members_median_and_folds_the_members_into_them() -> None:
    flat = [1.0, 1.01, 0.99, 1.0, 1.01, 0.99, 1.0]
    built = _grouped(
        {"insert_range=100": flat, "delete_range=100": flat, "update-one_range=100": flat},
        {
            "insert_range=100": [4.0, 4.02, 3.98, 6.0, 6.02, 5.98, 6.0],
            "delete_range=100": [5.0, 5.03, 4.98, 7.5, 7.4, 7.6, 7.5],
            "update-one_range=100": [3.0, 3.01, 2.99, 3.0, 3.01, 2.99, 3.0],  # no step: the median moves anyway
        },
    )
    told = [s for s in find_stories(built) if s.metric == "cs/o"]
    (group,) = [s for s in told if s.is_group]
    assert (group.subject, group.kind, group.arrived_in, group.group) == ("writes", "regression", "1.3.0", "writes")
    assert group.change == pytest.approx(6.0 / 4.0 - 1, abs=0.02)
    assert group.qps_change == pytest.approx(0.0, abs=0.02)
    assert group.summary.endswith("; QPS +0% over the same versions")
    members = {s.subject: s for s in told if not s.is_group}
    assert set(members) == {"insert_range=100", "delete_range=100"}
    assert all(s.folded_into == "writes" and s.group == "writes" for s in members.values())


def test_a_group_metric_step_where_the_groups_qps_story_moves_is_told_by_that_story() -> None:
    drop = [1.0, 1.01, 0.99, 0.6, 0.61, 0.59, 0.6]
    cs = [4.0, 4.02, 3.98, 6.0, 6.02, 5.98, 6.0]
    built = _grouped({"a_range=1": drop, "b_range=1": drop}, {"a_range=1": cs, "b_range=1": cs})
    told = find_stories(built)
    assert [s.metric for s in told if s.is_group] == ["qps"]
    (group,) = [s for s in told if s.is_group]
    assert any(m.metric == "cs/o" and m.explains for m in group.metric_steps)
    assert all(s.metric == "qps" for s in told)


# --------------------------------------------------------------------------- records, list, JSON, API


@pytest.fixture
def detected(small_base: Run) -> Run:
    detect_regressions(small_base.server_id, small_base.workload_id)
    return small_base


@pytest.mark.django_db
def test_detection_stores_metric_stories_beside_the_qps_ones_and_updates_them_in_place(detected: Run) -> None:
    metric_records = Regression.objects.exclude(metric="qps")
    assert metric_records.exists()
    for record in metric_records.select_related("microbenchmark"):
        assert record.metric in st.METRICS and record.microbenchmark is not None and not record.outlier
        higher_is_worse = st.METRICS[record.metric].higher_is_worse
        rising = record.change is None or record.change > 0  # None: from a level of 0
        assert record.kind == ("regression" if rising == higher_is_worse else "improvement")
        assert record.summary.startswith(record.metric) and record.evidence["metric"] == record.metric
        # No QPS story of the same microbenchmark arrives at the same version: that one would carry the step.
        assert not Regression.objects.filter(
            metric="qps", microbenchmark=record.microbenchmark, arrived_in=record.arrived_in
        ).exists()
    before = sorted(Regression.objects.values_list("pk", "metric", "kind", "arrived_in_id", "microbenchmark_id"))
    again = detect_regressions(detected.server_id, detected.workload_id)
    assert again.created == again.removed == 0 and again.unchanged == len(before)
    assert (
        sorted(Regression.objects.values_list("pk", "metric", "kind", "arrived_in_id", "microbenchmark_id")) == before
    )


@pytest.mark.django_db
def test_metric_stories_have_their_own_tab_and_leave_the_qps_tabs_as_they_were(detected: Run) -> None:
    client = Client()

    def listed(**filters: str) -> list[dict]:
        answer = client.get("/api/regressions", {**filters, "limit": 500})
        assert answer.status_code == 200
        return answer.json()["items"]

    hw = listed(tab="metrics", state="any")
    assert hw and {r["metric"] for r in hw} <= set(st.METRICS)
    assert len(hw) == Regression.objects.exclude(metric="qps").count()
    for tab in ("open", "improvements", "fixed", "outliers"):
        assert {r["metric"] for r in listed(tab=tab, state="any")} <= {"qps"}
    one = hw[0]["metric"]
    assert {r["metric"] for r in listed(tab="all", metric=one)} == {one}
    page = client.get(reverse("regressions:regression_list"), {"tab": "metrics", "state": "any"})
    html = page.content.decode()
    assert page.status_code == 200 and 'data-tab="metrics"' in html and "HW metrics" in html
    assert [r.pk for r in page.context["page"].object_list] == [r["id"] for r in hw]
    assert f"<strong>{one}</strong>".replace("/", "/") in html and "<th>Metric</th>" in html
    default = client.get(reverse("regressions:regression_list"))
    assert all(r.metric == "qps" for r in default.context["page"].object_list)
    assert "<th>Metric</th>" not in default.content.decode()
    # On the "all" tab a metric story's kind names its metric.
    everything = client.get(reverse("regressions:regression_list"), {"tab": "all", "state": "any"}).content.decode()
    assert f'data-metric="{one}">· {one}</span>' in everything and "<th>Metric</th>" not in everything


@pytest.mark.django_db
def test_the_json_of_detect_regressions_names_each_records_metric(small_base: Run) -> None:
    out = io.StringIO()
    call_command("detect_regressions", "--format", "json", stdout=out)
    records = json.loads(out.getvalue())
    metrics = {r["metric"] for r in records}
    assert "qps" in metrics and metrics - {"qps"} and metrics <= {"qps", *st.METRICS}
    for record in records:
        if record["metric"] != "qps":
            assert record["summary"].startswith(record["metric"]) and not record["outlier"]


@pytest.mark.django_db
def test_a_metric_storys_page_names_the_metric_and_shows_its_levels_per_operation(detected: Run) -> None:
    record = Regression.objects.exclude(metric="qps").select_related("microbenchmark").first()
    assert record is not None
    html = Client().get(record.get_absolute_url()).content.decode()
    assert f'<span data-metric="{record.metric}">{record.metric}</span>' in html
    assert f"{record.metric} per operation as measured" in html and "relative QPS" not in html
    values = record.evidence["values"][record.microbenchmark.label]  # type: ignore[union-attr]
    shown = next(v for v in values if v is not None)
    # The measured level itself, not a ratio rounded to two decimals.
    assert f">{shown:.4g}</td>" in html


@pytest.mark.django_db
def test_mysql_9_5_inserts_cs_per_operation_step_is_a_hw_metric_story_not_a_qps_regression(small_base: Run) -> None:
    # The raw sb.met files: insert's cs/o was 3.95 from 8.0.43 to 9.4.0 and is 5.73 in 9.5.0 (cs/s 32,747 →
    # 44,384 at about the same rate) while QPS went from 8,291 to 7,743 (−5.8 % against the level before).
    out = io.StringIO()
    call_command("detect_regressions", "--format", "json", "--releases", "all", stdout=out)
    records = json.loads(out.getvalue())
    (insert,) = [r for r in records if r["subject"] == "insert_range=100" and r["arrived_in"] == "9.5.0"]
    assert (insert["metric"], insert["kind"], insert["previous_version"]) == ("cs/o", "regression", "9.4.0")
    assert insert["change"] == pytest.approx(5.732 / 3.950 - 1, abs=0.02)
    # Against the level the line sequence held from 8.0.43 to 9.4.0 (8,259, 8,121, 8,291 QPS at 8.0.43, 8.4.6 and
    # 9.4.0; 8.0.44 and 8.4.7 are their lines' own states, off it: stories rule 9).
    assert insert["qps_change"] == pytest.approx(7742.59 / ((8259 + 8121 + 8291) / 3) - 1, abs=0.005)
    assert not insert["open"] and not insert["outlier"] and insert["folded_into"] is None
    # No QPS story arrives or moves at 9.5.0 beyond a provisional step.
    for record in records:
        if record["metric"] == "qps" and not record["outlier"]:
            assert all(e["version"] != "9.5.0" or e["provisional"] for e in record["events"])
    record = Regression.objects.get(pk=insert["id"])
    assert not record.is_open_story
    html = Client().get(record.get_absolute_url()).content.decode()
    assert record.qps_change_text in ("−5.8%", "−5.9%")
    assert f"{record.qps_change_text} from 9.4.0 to 9.5.0" in html and "a HW-metric story, not a QPS regression" in html
    assert insert["id"] not in [r["id"] for r in Client().get("/api/regressions", {"releases": "all"}).json()["items"]]
