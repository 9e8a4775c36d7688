"""HW metrics from a base about zero (``reports.stats.ABOUT_ZERO``): no ratio story, no flag, the two levels."""

from __future__ import annotations

import pytest

from regressions import stories as st
from reports import stats
from reports.compare import ComparisonSpec, compute_comparison
from reports.explain import explain
from reports.hw import hw_context
from runs.models import Run

VERSIONS = ("1.0", "1.1", "1.2", "1.3", "1.4", "1.5", "1.6")


def _series(metric: str, values: tuple[float, ...]) -> st.Series:
    return st.Series("scan_range=100", tuple(map(st.Point, VERSIONS, values)), metric=metric)


def test_the_floors_are_one_rule_for_stories_and_the_comparison() -> None:
    for name, floor in stats.ABOUT_ZERO_BY_NAME.items():
        if name in st.METRICS:
            assert st.METRICS[name].floor == floor
    assert stats.about_zero("cs_o", 0.08) and stats.about_zero("cs/o", 0.08) and not stats.about_zero("cs/o", 3.8)
    assert stats.about_zero("wkb_o", 0.003) and stats.about_zero("rkb_o", 0.0) and not stats.about_zero("cpu_o", 1e-5)


def test_a_metric_story_from_about_zero_says_the_two_levels_never_a_ratio() -> None:
    # A scan's cs/o from 0.08 to 160 per operation (+141588 % as a ratio), QPS unchanged.
    (story,) = st.metric_stories(_series("cs/o", (0.08, 0.08, 0.081, 160.0, 161.0, 160.0, 159.0)), [], VERSIONS)
    assert "%" not in story.summary and "0.081 → 160" in story.summary
    # A small cs/o level that moves between two levels about zero tells nothing.
    assert st.metric_stories(_series("cs/o", (0.01, 0.01, 0.01, 0.07, 0.07, 0.07, 0.07)), [], VERSIONS) == []


@pytest.mark.django_db
def test_the_comparison_flags_no_ratio_from_a_base_about_zero(small_base: Run) -> None:
    comparison = compute_comparison(ComparisonSpec(base_run_id=small_base.pk))
    context = hw_context(comparison)
    wkb = next(m for m in context["hw_metrics"] if m["key"] == "wkb_o")
    # point-query writes 0.003 KB per operation in 5.6.51 and 0 after: once "0.00, green".
    row = next(r for r in wkb["rows"] if r["label"] == "point-query_range=100")
    assert row["cells"].count('class="num about-zero"') == len(comparison.others)
    assert "green" not in row["cells"] and "red" not in row["cells"] and " → 0</td>" in row["cells"]
    # A ratio from a real base keeps its flag: update-one's wKB/o (2.71 per operation in 5.6.51).
    update = next(r for r in wkb["rows"] if r["label"] == "update-one_range=100")
    assert "about-zero" not in update["cells"] and "red" in update["cells"]
    # "Why it changed" makes no claim from it either.
    column = comparison.others[-1].key
    found = {m["key"]: m for m in explain(comparison, column, "point-query_range=100")["metrics"]}
    assert found["wkb_o"]["near_zero"] and not found["wkb_o"]["significant"] and not found["wkb_o"]["explains"]
