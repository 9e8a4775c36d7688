"""Figures are written as plain dicts, and each is exactly what plotly.py's own validation makes of it.

The charts are no longer built through ``plotly.graph_objects`` (its validators
and deep copies were most of a comparison page's rendering time). plotly.py is
still the judge here: it refuses a property plotly.js does not have or a value of
the wrong kind, and ``Figure(figure).to_json()`` drops unset properties, adds
trace types and writes out the template. A figure that comes back unchanged is
what the graph_objects code produced.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import plotly.graph_objects as go
import pytest

from reports import charts, scaleup_charts
from reports.charts import IbenchStepPoint, Marker
from reports.compare import Comparison
from reports.scaleup import Curve
from reports.tests.conftest import set_relative
from reports.tests.test_charts import SERIES


def _as_plotly_writes_it(figure: dict[str, Any]) -> dict[str, Any]:
    written: dict[str, Any] = json.loads(go.Figure(figure).to_json())
    return written


def _assert_plotly_keeps(figure: dict[str, Any]) -> None:
    assert _as_plotly_writes_it(figure) == figure
    json.dumps(figure, allow_nan=False)


def _comparison_figures(comparison: Comparison) -> list[dict[str, Any]]:
    figures = [charts.heatmap(comparison)]
    for group in comparison.groups:
        figures += [
            charts.group_line_chart(comparison, group),
            charts.group_line_chart(comparison, group, log=True),
            charts.group_line_chart(comparison, group, y_min=0.9, y_max=1.1),
            charts.group_bar_chart(comparison, group),
            charts.group_bar_chart(comparison, group, y_max=1.0, log=True),
        ]
    return figures


def test_every_comparison_chart_is_what_plotly_writes_for_it(comparison: Comparison) -> None:
    for figure in _comparison_figures(comparison):
        _assert_plotly_keeps(figure)


def test_charts_with_infinite_and_missing_values_and_clipped_points_are_what_plotly_writes(
    comparison: Comparison,
) -> None:
    label = comparison.labels[0]
    set_relative(comparison, comparison.others[0].key, label, math.inf)
    set_relative(comparison, comparison.others[1].key, label, None)
    set_relative(comparison, comparison.others[2].key, label, 0.2)
    group = comparison.group_of[label]
    figures = [
        charts.heatmap(comparison),
        charts.group_line_chart(comparison, group),
        charts.group_bar_chart(comparison, group),
    ]
    assert any("∞" in json.dumps(figure, ensure_ascii=False) for figure in figures)
    assert "∞" in json.dumps(figures[1], ensure_ascii=False)  # the line chart too, not only the heatmap
    for figure in figures:
        _assert_plotly_keeps(figure)


def test_markers_and_bug_badges_added_to_a_figure_are_what_plotly_writes(comparison: Comparison) -> None:
    key, label = comparison.others[0].key, comparison.labels[0]
    marker = Marker(arrived=key, fixed=comparison.others[-1].key, text="MDEV-33894", kind="regression")
    line = charts.with_markers(charts.group_line_chart(comparison, comparison.group_of[label]), [marker])
    heat = charts.with_heatmap_badges(charts.heatmap(comparison), [(key, label, "MDEV-33894")])
    assert len(line["layout"]["shapes"]) > 3 and heat["data"][-1]["type"] == "scatter"
    _assert_plotly_keeps(line)
    _assert_plotly_keeps(heat)


def test_bugs_of_two_regressions_arrived_in_one_version_share_one_label_kept_inside_the_plot(
    comparison: Comparison,
) -> None:
    first, last = comparison.others[0].key, comparison.others[-1].key
    group = comparison.groups[0]
    chart = charts.group_line_chart(comparison, group)
    markers = [
        Marker(arrived=first, fixed=None, text="MySQL bug #102037", kind="regression"),
        Marker(arrived=first, fixed=None, text="PS-8822", kind="regression"),
        Marker(arrived=last, fixed=None, text="MDEV-33894", kind="regression"),
    ]
    drawn = charts.with_markers(chart, markers)
    added = drawn["layout"]["annotations"][len(chart["layout"].get("annotations", [])) :]
    assert [a["text"] for a in added] == ["MySQL bug #102037, PS-8822 (arrived)", "MDEV-33894 (arrived)"]
    # Rightwards from the first column, leftwards from the last: never over the y axis's ticks or off the edge.
    assert [a["xanchor"] for a in added] == ["left", "right"]
    assert drawn["layout"]["margin"] == chart["layout"]["margin"]
    _assert_plotly_keeps(drawn)


def test_labels_of_neighbouring_columns_stand_one_above_the_other_with_the_room_for_it(comparison: Comparison) -> None:
    # Side by side, "MySQL bug #102037 (arrived)" and "MySQL bug #111111 (arrived)" one column apart print over
    # each other (at 390 px a column is ~45 px): the second goes a line higher, the top margin a line taller.
    assert len(comparison.others) >= 2
    chart = charts.group_line_chart(comparison, comparison.groups[0])
    first, second = comparison.others[0].key, comparison.others[1].key
    markers = [
        Marker(arrived=second, fixed=None, text="MySQL bug #111111", kind="regression"),
        Marker(arrived=first, fixed=None, text="MySQL bug #102037", kind="regression"),
    ]
    drawn = charts.with_markers(chart, markers)
    added = drawn["layout"]["annotations"][len(chart["layout"].get("annotations", [])) :]
    shifts = {a["text"]: a["yshift"] for a in added}
    assert shifts == {"MySQL bug #102037 (arrived)": 0, "MySQL bug #111111 (arrived)": charts.MARKER_LINE_PX}
    assert drawn["layout"]["margin"]["t"] == chart["layout"]["margin"]["t"] + charts.MARKER_LINE_PX
    # The title stays at the top of the taller margin, above the raised label, not centred in it.
    assert drawn["layout"]["title"]["yref"] == "container" and drawn["layout"]["title"]["y"] == 1
    _assert_plotly_keeps(drawn)


def test_a_regression_and_an_improvement_at_one_version_get_a_line_each_and_the_room_for_it(
    comparison: Comparison,
) -> None:
    key = comparison.others[1].key
    chart = charts.group_line_chart(comparison, comparison.groups[0])
    markers = [
        Marker(arrived=key, fixed=None, text="MDEV-1", kind="regression"),
        Marker(arrived=key, fixed=None, text="MDEV-2", kind="improvement"),
    ]
    drawn = charts.with_markers(chart, markers)
    (label,) = drawn["layout"]["annotations"][len(chart["layout"].get("annotations", [])) :]
    assert label["text"].split("<br>") == [
        f'<span style="color:{charts.RED}">MDEV-1 (arrived)</span>',
        f'<span style="color:{charts.GREEN}">MDEV-2 (arrived)</span>',
    ]
    assert drawn["layout"]["margin"]["t"] == chart["layout"]["margin"]["t"] + charts.MARKER_LINE_PX
    # The title stays at the top of the taller margin, above the raised label, not centred in it.
    assert drawn["layout"]["title"]["yref"] == "container" and drawn["layout"]["title"]["y"] == 1
    _assert_plotly_keeps(drawn)


def test_a_heatmap_bug_badge_sits_in_its_cells_corner_not_over_its_value(comparison: Comparison) -> None:
    key, label = comparison.others[2].key, comparison.labels[3]
    heat = charts.heatmap(comparison)
    badged = charts.with_heatmap_badges(heat, [(key, label, "MDEV-33894")])
    (corner,) = badged["layout"]["shapes"][len(heat["layout"]["shapes"]) :]
    # Pixel-sized, anchored at the cell's top-right corner (category indices: column 2, row 3, y reversed).
    assert (corner["xanchor"], corner["yanchor"]) == (2.5, 2.5) and corner["xsizemode"] == "pixel"
    hover = badged["data"][-1]
    assert hover["marker"]["opacity"] == 0 and hover["text"] == ["MDEV-33894"]
    assert "diamond" not in json.dumps(badged)
    _assert_plotly_keeps(badged)


@pytest.mark.parametrize("percentile", [95.0, None])
def test_drilldown_charts_are_what_plotly_writes(percentile: float | None) -> None:
    for figure in charts.drilldown_charts(SERIES, microbenchmark="scan_range=100", percentile=percentile).values():
        _assert_plotly_keeps(figure)


def test_insert_benchmark_charts_are_what_plotly_writes() -> None:
    points = [
        IbenchStepPoint(key="a", version_label="8.0.43", value=10.0, relative=None, flag="base", sla_missed=False),
        IbenchStepPoint(key="b", version_label="8.4.6", value=8.0, relative=0.8, flag="red", sla_missed=True),
        IbenchStepPoint(key="c", version_label="9.5.0", value=None, relative=None, flag="missing", sla_missed=False),
    ]
    rates = {"a": {"ips": [1, 2, 3], "seconds_per_point": 2}, "b": {"ips": [4.5], "qps": [1.5]}}
    histograms = {
        "a": {"buckets": ["1ms", "2ms"], "insert": {"counts": [3, 1], "max_s": 0.5}},
        "b": {"insert": {"counts": [0, 0]}},
        "c": {},
    }
    for figure in (
        charts.ibench_step_chart("l.i1", "inserts/s", points),
        charts.ibench_rate_over_time("qr100", "ips", rates, {"a": "MySQL 8.0.43"}, target=800.0),
        charts.ibench_rate_over_time("qr100", "qps", rates, {}),
        charts.ibench_rt_histogram("l.i1", "insert", histograms, {"a": "MySQL 8.0.43"}),
    ):
        _assert_plotly_keeps(figure)


def test_scale_up_charts_are_what_plotly_writes() -> None:
    curves = [Curve("a", "MySQL 8.0.43", (1.0, 2.0, None)), Curve("b", "MySQL 8.4.6", (math.inf, 0.5, 1.2))]
    for figure in (
        scaleup_charts.absolute_chart("point-query", [1, 2, 4], curves),
        scaleup_charts.absolute_chart("point-query", [4], curves[:1], unit="cpu/o"),
        scaleup_charts.relative_chart("point-query", [1, 2, 4], curves),
    ):
        _assert_plotly_keeps(figure)


def test_a_property_plotly_does_not_know_would_be_refused() -> None:
    # The judge works: a misspelt property is not silently dropped.
    with pytest.raises(ValueError, match="linee"):
        _as_plotly_writes_it({"data": [{"type": "scatter", "linee": {}}], "layout": {}})


def test_the_chart_modules_import_no_plotly() -> None:
    code = (
        "import sys, reports.charts, reports.scaleup_charts; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('plotly', '_plotly_utils')))"
    )
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
