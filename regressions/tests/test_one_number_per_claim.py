"""One number per claim: a story's step is the ratio the comparison shows between the two versions it names.

On the whole demo corpus (the MySQL series, Postgres, the Insert Benchmark, db_bench), every event of every
story is checked against the comparison of its series: a microbenchmark's step against the relative QPS
of its two columns, a group's against the group's median there. "Before" is the value at the version before,
never a blend of the level's versions; the page, the JSON and an alert say the same labelled figures.
"""

from __future__ import annotations

import io
import json
import math
from pathlib import Path

import pytest
from django.core.management import call_command
from django.test import Client

from regressions import alert_message
from regressions.alerts import facts_for
from regressions.models import Regression
from regressions.views import _explanation
from reports.compare import Comparison, ComparisonSpec, get_comparison

pytestmark = pytest.mark.django_db


@pytest.fixture
def demo(corpus: Path) -> list[Regression]:
    call_command("load_demo", corpus=corpus, no_demo_user=True, stdout=io.StringIO())
    call_command("detect_regressions", stdout=io.StringIO())
    call_command("detect_regressions", releases="all", stdout=io.StringIO())
    return list(
        Regression.objects.select_related(
            "microbenchmark", "arrived_in", "previous_version", "base_run", "server", "workload", "arrived_in__dbms"
        ).order_by("pk")
    )


def _column(comparison: Comparison, version: str, builds: list[str]) -> str:
    """The comparison's column of a version: the build the story rests on."""
    found = [c.key for c in comparison.columns if c.version == version and c.build in builds]
    assert len(found) == 1, (version, builds, found)
    return found[0]


def _shown(comparison: Comparison, record: Regression, column: str) -> float | None:
    """What the comparison shows for the record's subject in a column: relative QPS, or the group's median."""
    if column == comparison.base:
        return 1.0  # the base against itself: every member's relative QPS is 1
    if record.microbenchmark_id is not None:
        return comparison.relative[column].get(record.microbenchmark.label)  # type: ignore[union-attr]
    return comparison.summaries[record.group][column].median


def test_every_step_of_every_demo_story_is_the_ratio_the_comparison_shows_for_its_two_versions(
    demo: list[Regression],
) -> None:
    comparisons: dict[int, Comparison] = {}
    checked = 0
    for record in demo:
        if record.metric != "qps" or record.outlier:
            continue
        comparison = comparisons.setdefault(
            record.base_run_id,  # type: ignore[arg-type]
            get_comparison(ComparisonSpec(base_run_id=record.base_run_id)),  # type: ignore[arg-type]
        )
        for event in record.story_events:
            before = _shown(comparison, record, _column(comparison, event["previous_version"], record.builds))
            after = _shown(comparison, record, _column(comparison, event["version"], record.builds))
            assert before and after is not None
            assert math.isclose(event["change"], after / before - 1, rel_tol=1e-9, abs_tol=1e-12), (record, event)
            assert math.isclose(event["previous_level"], before, rel_tol=1e-12), (record, event)
            assert math.isclose(event["level"], after, rel_tol=1e-12), (record, event)
            checked += 1
        arrival = record.story_events[0]
        # The story's step is its arrival's; "before" is the value at the version before the arrival.
        assert record.change == arrival["change"]
        assert record.level_before == arrival["previous_level"] or arrival["against"] != record.previous_version.text  # type: ignore[union-attr]
    assert checked > 100, checked


def test_the_page_the_json_and_the_alert_state_the_same_labelled_figures(demo: list[Regression]) -> None:
    # MySQL's hot-points_range=100 (the example): −13 % in 5.7.44, worse in 8.0.43, to 9.5.0 (the newest).
    record = next(
        r
        for r in demo
        if r.microbenchmark_id
        and r.microbenchmark.label == "hot-points_range=100"  # type: ignore[union-attr]
        and r.arrived_in.dbms.name == "MySQL"
        and r.releases == "long-term"
    )
    assert (record.arrived_in.text, record.previous_version.text) == ("5.7.44", "5.6.51")  # type: ignore[union-attr]
    figures = record.figures
    # 8.0.43's step is 0.633 / 0.866, read at the two versions: the story once said −30.2 % from a 0.93 blend of
    # 5.6.51 and 5.7.44, and "why it changed" −27 %.
    worse = record.story_events[1]
    assert (worse["kind"], worse["version"], worse["previous_version"]) == ("further", "8.0.43", "5.7.44")
    assert worse["previous_level"] == pytest.approx(0.866, abs=0.001) and worse["change"] == pytest.approx(
        -0.269, abs=0.001
    )
    assert figures.level_before == 1.0 and figures.step == pytest.approx(-0.134, abs=0.001)
    step, now = figures.step_text, figures.now_text
    assert step == "−13.4% at 5.7.44 against 5.6.51 (relative QPS 1.00 → 0.87)"
    assert now == "−33.8% at 9.5.0 against 5.6.51 (relative QPS 0.66)"

    body = Client().get(record.get_absolute_url()).content.decode()
    assert step in body and now in body
    # "Why it changed" reads the comparison against the version before the arrival: the same step.
    explanation = _explanation(record)
    assert explanation is not None and explanation["base_version"] == "MySQL 5.6.51"
    assert math.isclose(explanation["relative"], 1 + figures.step, rel_tol=1e-9)  # type: ignore[operator]
    assert "(-13%)" in body.split("Why it changed", 1)[1]

    out = io.StringIO()
    call_command("detect_regressions", format="json", stdout=out)
    printed = next(r for r in json.loads(out.getvalue()) if r["id"] == record.pk)
    assert printed["figures"] == figures.as_json() and printed["change"] == figures.step

    text = alert_message.text(facts_for(record))
    assert f"Step at arrival: {step}" in text and f"Now: {now}" in text
    assert "Change:" not in text
