"""The static SVG drawings of reports.svgchart, checked on real figures from reports.charts (mysql-small corpus)."""

from __future__ import annotations

import copy
import math
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from conftest import SMALL_BASE_RUN
from reports import charts, svgchart
from reports.compare import Comparison
from reports.tests.conftest import members, set_relative
from runs.models import Run

SVG = "{http://www.w3.org/2000/svg}"
WIDTH = 1180


def _draw(figure: dict[str, Any], width: int = WIDTH) -> ET.Element:
    svg = svgchart.render(figure, width=width, id_prefix="t")
    assert svg is not None
    return ET.fromstring(svg)  # raises on anything that is not well-formed XML


def _traces(root: ET.Element) -> list[ET.Element]:
    return [e for e in root.iter(f"{SVG}path") if e.get("class") == "trace"]


def _segments(d: str) -> list[list[tuple[float, float]]]:
    """A trace's path as its unbroken runs of points: a new run at every M (a gap)."""
    runs: list[list[tuple[float, float]]] = []
    for command, x, y in re.findall(r"([ML])(-?[\d.]+),(-?[\d.]+)", d):
        if command == "M":
            runs.append([])
        runs[-1].append((float(x), float(y)))
    assert "".join(c + f"{x},{y}" for c, x, y in re.findall(r"([ML])(-?[\d.]+),(-?[\d.]+)", d)) == d
    return runs


def _plot_area(root: ET.Element) -> tuple[float, float, float, float]:
    """(left, top, right, bottom) of the plot area, from the clip path that holds the data."""
    rect = root.find(f"{SVG}defs/{SVG}clipPath/{SVG}rect")
    assert rect is not None
    x, y, w, h = (float(rect.get(a) or 0) for a in ("x", "y", "width", "height"))
    return x, y, x + w, y + h


def _y_of(root: ET.Element, figure: dict[str, Any], value: float) -> float:
    low, high = figure["layout"]["yaxis"]["range"]
    _, top, _, bottom = _plot_area(root)
    return bottom - (value - low) / (high - low) * (bottom - top)


def _texts(root: ET.Element) -> list[str]:
    return ["".join(e.itertext()) for e in root.iter(f"{SVG}text")]


# --------------------------------------------------------------------------- the lines


def test_each_microbenchmark_is_one_line_in_its_colour_with_its_markers(comparison: Comparison) -> None:
    for group in comparison.groups:
        figure = charts.group_line_chart(comparison, group)
        root = _draw(figure)
        traces = _traces(root)
        assert [t.get("data-name") for t in traces] == members(comparison, group)
        markers = {m.get("id"): m for m in root.iter(f"{SVG}marker")}
        for element, trace in zip(traces, figure["data"], strict=True):
            assert element.get("stroke") == trace["line"]["color"]
            assert len(_segments(element.get("d") or "")) == 1  # no gaps in this corpus: one unbroken line
            # Every point carries the trace's marker, drawn in the trace's colour.
            url = element.get("marker-mid")
            assert url and url == element.get("marker-start") == element.get("marker-end")
            symbol = markers[url.removeprefix("url(#").removesuffix(")")].find(f"{SVG}path")
            assert symbol is not None and symbol.get("fill") == trace["marker"]["color"]


def test_points_keep_their_order_and_stand_where_their_relative_qps_says(comparison: Comparison) -> None:
    figure = charts.group_line_chart(comparison, "writes")
    root = _draw(figure)
    left, _, right, _ = _plot_area(root)
    columns = len(figure["layout"]["xaxis"]["categoryarray"])
    checked = 0
    for element, trace in zip(_traces(root), figure["data"], strict=True):
        (points,) = _segments(element.get("d") or "")
        assert len(points) == columns == len(trace["y"])
        xs = [x for x, _ in points]
        assert all(left < x < right for x in xs)
        steps = [b - a for a, b in pairwise(xs)]
        assert min(steps) > 0 and max(steps) - min(steps) < 0.25  # left to right, one category apart
        for (_, y), value in zip(points, trace["y"], strict=True):
            assert y == pytest.approx(_y_of(root, figure, value), abs=0.1)
            checked += 1
    assert checked == 10 * columns
    # Relative to each other: in a column, a higher relative QPS is higher up (a smaller y).
    drawn = {t.get("data-name"): _segments(t.get("d") or "")[0] for t in _traces(root)}
    values = {t["name"]: t["y"] for t in figure["data"]}
    assert values["insert_range=100"][-1] < values["update-index_range=100"][-1]
    assert drawn["insert_range=100"][-1][1] > drawn["update-index_range=100"][-1][1]
    for column in range(columns):
        by_value = sorted(values, key=lambda name: values[name][column])
        by_height = sorted(drawn, key=lambda name: -drawn[name][column][1])
        assert [values[n][column] for n in by_value] == [values[n][column] for n in by_height]


def test_a_missing_result_is_a_gap_in_the_line(comparison: Comparison) -> None:
    label = members(comparison, "writes")[0]
    keys = list(charts.group_line_chart(comparison, "writes")["layout"]["meta"]["keys"].values())
    set_relative(comparison, keys[3], label, None)
    figure = charts.group_line_chart(comparison, "writes")
    first = _traces(_draw(figure))[0]
    assert first.get("data-name") == label
    before, after = _segments(first.get("d") or "")
    assert len(before) == 3 and len(after) == len(keys) - 4  # nothing drawn at the missing column, no bridge
    step = before[1][0] - before[0][0]
    assert after[0][0] - before[-1][0] == pytest.approx(2 * step, abs=0.2)


def test_a_gap_is_bridged_when_the_trace_connects_gaps(comparison: Comparison) -> None:
    figure = copy.deepcopy(charts.group_line_chart(comparison, "writes"))
    figure["data"][0]["y"][3] = None
    figure["data"][0]["connectgaps"] = True
    (points,) = _segments(_traces(_draw(figure))[0].get("d") or "")
    assert len(points) == len(figure["data"][0]["y"]) - 1


def test_a_dashed_trace_is_dashed_like_plotlys(comparison: Comparison) -> None:
    figure = copy.deepcopy(charts.group_line_chart(comparison, "writes"))
    figure["data"][0]["line"]["dash"] = "dash"
    traces = _traces(_draw(figure))
    assert traces[0].get("stroke-dasharray") == "9,9"  # plotly: 3 × max(width, 3)
    assert traces[1].get("stroke-dasharray") is None


def test_an_infinite_ratio_is_drawn_at_the_top_with_its_mark(comparison: Comparison) -> None:
    label = members(comparison, "point queries")[2]
    keys = list(charts.group_line_chart(comparison, "point queries")["layout"]["meta"]["keys"].values())
    set_relative(comparison, keys[1], label, math.inf)
    figure = charts.group_line_chart(comparison, "point queries")
    root = _draw(figure)
    marks = [e for e in root.iter(f"{SVG}text") if e.get("class") == "point-text"]
    assert ["".join(m.itertext()) for m in marks] == ["∞"]
    (points,) = _segments(_traces(root)[2].get("d") or "")
    assert float(marks[0].get("y") or 0) < points[1][1]  # above its point
    assert points[1][1] == pytest.approx(_y_of(root, figure, figure["data"][2]["y"][1]), abs=0.1)


# --------------------------------------------------------------------------- shapes, annotations, axes


def test_the_reference_line_and_the_thresholds_are_drawn_at_their_values(comparison: Comparison) -> None:
    figure = charts.group_line_chart(comparison, "point queries")
    root = _draw(figure)
    left, _, right, _ = _plot_area(root)
    lines = {
        (round(float(e.get("y1") or 0), 1), e.get("stroke"), e.get("stroke-dasharray"))
        for e in root.iter(f"{SVG}line")
        if e.get("class") == "shape"
    }
    assert lines == {
        (round(_y_of(root, figure, 1.0), 1), charts.REFERENCE, None),
        (round(_y_of(root, figure, comparison.spec.red), 1), charts.RED, "3,3"),
        (round(_y_of(root, figure, comparison.spec.green), 1), charts.GREEN, "3,3"),
    }
    reference = next(e for e in root.iter(f"{SVG}line") if e.get("stroke") == charts.REFERENCE)
    assert float(reference.get("x1") or 0) == pytest.approx(left, abs=0.1)
    assert float(reference.get("x2") or 0) == pytest.approx(right, abs=0.1)
    # The bands are below the gridlines and the lines, the threshold labels drawn as text.
    bands = [e.get("fill") for e in root.iter(f"{SVG}rect") if e.get("class") == "shape"]
    assert bands == ["rgba(198,40,40,0.07)", "rgba(27,127,59,0.07)"]
    assert {"≤ 0.95", "≥ 1.05"} <= set(_texts(root))


def test_a_bug_marker_is_a_vertical_line_at_its_version_with_its_label(comparison: Comparison) -> None:
    figure = charts.group_line_chart(comparison, "point queries")
    keys = figure["layout"]["meta"]["keys"]
    arrived = keys["MySQL 8.0.43"]
    marked = charts.with_markers(
        figure, [charts.Marker(arrived=arrived, fixed=None, text="MySQL bug #102037", kind="regression")]
    )
    root = _draw(marked)
    _, top, _, bottom = _plot_area(root)
    (vertical,) = [e for e in root.iter(f"{SVG}line") if e.get("x1") == e.get("x2")]
    (points,) = _segments(_traces(root)[0].get("d") or "")
    assert float(vertical.get("x1") or 0) == pytest.approx(points[1][0], abs=0.1)  # the 8.0.43 column
    assert (float(vertical.get("y1") or 0), float(vertical.get("y2") or 0)) == pytest.approx((bottom, top), abs=0.1)
    assert vertical.get("stroke") == charts.RED
    assert "MySQL bug #102037 (arrived)" in _texts(root)


def test_a_marker_label_raised_above_its_neighbours_is_drawn_higher(comparison: Comparison) -> None:
    # plotly's yshift (with_markers lifts a label that would print over its neighbour's): up by that many px.
    figure = charts.group_line_chart(comparison, "point queries")
    keys = figure["layout"]["meta"]["keys"]
    marked = charts.with_markers(
        figure,
        [
            charts.Marker(arrived=keys["MySQL 8.0.43"], fixed=None, text="MySQL bug #102037", kind="regression"),
            charts.Marker(arrived=keys["MySQL 8.0.44"], fixed=None, text="MySQL bug #111111", kind="regression"),
        ],
    )
    root = _draw(marked)
    y_of = {"".join(e.itertext()): float(e.get("y") or 0) for e in root.iter(f"{SVG}text") if e.get("y")}
    lifted = y_of["MySQL bug #102037 (arrived)"] - y_of["MySQL bug #111111 (arrived)"]
    assert lifted == pytest.approx(charts.MARKER_LINE_PX, abs=0.1)


def test_axes_have_their_tick_labels_and_titles_and_the_chart_its_title(comparison: Comparison) -> None:
    figure = charts.group_line_chart(comparison, "writes")
    root = _draw(figure)
    texts = _texts(root)
    low, high = figure["layout"]["yaxis"]["range"]
    y_ticks = [t for t in texts if re.fullmatch(r"\d\.\d\d", t)]
    assert y_ticks[0] == f"{low:.2f}" and all(low <= float(t) <= high for t in y_ticks) and len(y_ticks) >= 4
    # Category labels keep their second line (the flavour, after <br>).
    assert "MySQL 8.4.6rel_o2nofp" in texts and "MySQL 9.5.0" in texts
    assert "relative QPS" in texts
    assert "writes(base MySQL 5.6.51 = 1)" in texts  # the title's two lines: one text, the second a tspan
    title = root.find(f"{SVG}title")
    assert title is not None and title.text == "writes (base MySQL 5.6.51 = 1)"
    assert root.get("viewBox") == f"0 0 {WIDTH} 500" and root.get("width") is None  # scales to its container


def test_the_legend_names_every_microbenchmark_in_its_colour(comparison: Comparison) -> None:
    figure = charts.group_line_chart(comparison, "point queries")
    root = _draw(figure)
    legend = next(g for g in root.iter(f"{SVG}g") if g.get("class") == "legend")
    items = [g for g in legend if g.get("class") == "legend-item"]
    assert ["".join(g.find(f"{SVG}text").itertext()) for g in items] == members(comparison, "point queries")  # type: ignore[union-attr]
    assert [g.find(f"{SVG}path").get("stroke") for g in items] == [t["line"]["color"] for t in figure["data"]]  # type: ignore[union-attr]


def _many_columns(count: int) -> dict[str, Any]:
    labels = [f"MySQL 8.{i // 10}.{i % 10}" for i in range(count)]
    return {
        "data": [
            {"type": "scatter", "x": labels, "y": [1 + i / 100 for i in range(count)], "mode": "lines", "name": "a"}
        ],
        "layout": {"height": 400, "xaxis": {"type": "category"}, "yaxis": {}},
    }


def _x_labels(root: ET.Element) -> list[ET.Element]:
    ticks = next(g for g in root.iter(f"{SVG}g") if g.get("class") == "xticks")
    return list(ticks)


def test_category_labels_stand_up_and_thin_out_when_they_do_not_fit() -> None:
    few = _x_labels(_draw(_many_columns(6), width=1180))
    assert len(few) == 6 and all(e.get("transform") is None for e in few)  # side by side, level
    slanted = _x_labels(_draw(_many_columns(12), width=560))
    assert len(slanted) == 12 and all("rotate(30)" in (e.get("transform") or "") for e in slanted)
    upright = _x_labels(_draw(_many_columns(60), width=1180))
    assert len(upright) == 60 and all("rotate(90)" in (e.get("transform") or "") for e in upright)
    crowded = _x_labels(_draw(_many_columns(60), width=380))
    assert all("rotate(90)" in (e.get("transform") or "") for e in crowded)
    assert 6 <= len(crowded) < 60
    assert "".join(crowded[0].itertext()) == "MySQL 8.0.0"  # the first one is kept
    positions = [float(re.findall(r"translate\(([\d.]+)", e.get("transform") or "")[0]) for e in crowded]
    assert min(b - a for a, b in pairwise(positions)) >= 14  # a 12 px line upright


# --------------------------------------------------------------------------- escaping, ids, what is refused


def test_names_and_texts_from_user_data_are_escaped(comparison: Comparison) -> None:
    figure = copy.deepcopy(charts.group_line_chart(comparison, "writes"))
    figure["data"][0]["name"] = "<script>alert(1)</script>"
    figure["layout"]["xaxis"]["ticktext"][0] = '<img src=x onerror="alert(2)">'
    figure["layout"]["title"]["text"] = "R&D <b>writes</b> \x07"
    svg = svgchart.render(figure, width=WIDTH, id_prefix='"><script>')
    assert svg is not None
    assert "<script" not in svg and "<img" not in svg and "\x07" not in svg
    root = ET.fromstring(svg)
    texts = _texts(root)
    assert "<script>alert(1)</script>" in texts  # shown as the text it is
    assert '<img src=x onerror="alert(2)">' in texts
    assert "R&D writes " in texts  # plotly's <b> is markup, rendered bold
    assert _traces(root)[0].get("data-name") == "<script>alert(1)</script>"
    assert all(re.fullmatch(r"[\w-]+", e.get("id") or "x") for e in root.iter())


@pytest.mark.parametrize(
    "figure",
    [
        pytest.param(lambda c: charts.heatmap(c), id="heatmap"),
        pytest.param(lambda c: _drilldown(c)["qps"], id="bars and a second axis"),
        pytest.param(
            lambda c: charts.ibench_step_chart(
                "l.i0",
                "inserts/s",
                [
                    {
                        "key": "a",
                        "version_label": "A",
                        "value": 10.0,
                        "relative": None,
                        "flag": "base",
                        "sla_missed": False,
                    },
                ],
            ),
            id="bars",
        ),
        pytest.param(
            lambda c: charts.ibench_rt_histogram(
                "qr100", "query", {"a": {"buckets": ["1ms", "2ms"], "query": {"counts": [3, 4]}}}, {"a": "A"}
            ),
            id="histogram",
        ),
        pytest.param(lambda c: {"data": [], "layout": {}}, id="no traces"),
        pytest.param(
            lambda c: {**charts.group_line_chart(c, "writes"), "layout": {"xaxis": {"type": "log"}}}, id="log axis"
        ),
        pytest.param(lambda c: {"data": [{"type": "scatter", "x": [1, 2], "y": ["a", 2]}]}, id="text y values"),
        pytest.param(
            lambda c: {"data": [{"type": "scatter", "x": [1, 2], "y": [1, 2], "line": {"width": "thick"}}]},
            id="malformed: a line width that is not a number",
        ),
    ],
)
def test_a_figure_it_cannot_draw_faithfully_is_left_to_plotly(comparison: Comparison, figure: Any) -> None:
    built = figure(comparison)
    assert svgchart.render(built) is None


def _drilldown(comparison: Comparison) -> dict[str, dict[str, Any]]:
    label = "point-query_range=100"
    points = [
        charts.DrilldownPoint(
            key=column.key,
            version_label=comparison.version_label(column.key),
            qps=comparison.qps[column.key].get(label),
            relative=1.0 if column.key == comparison.base else comparison.relative[column.key].get(label),
            lat_avg_ms=0.4 + i / 10,
            lat_pct_ms=None if i == 2 else 0.9 + i / 10,
            cpu_o=1.0,
            cs_o=1.0,
            rkb_o=0.0,
            wkb_o=1.0,
            cpu_o_ratio=1.0 + i / 20,
            cs_o_ratio=1.0,
            rkb_o_ratio=math.inf if i == 3 else 1.0,
            wkb_o_ratio=1.0,
        )
        for i, column in enumerate(comparison.columns)
    ]
    return charts.drilldown_charts(points, microbenchmark=label, percentile=95)


def test_the_drill_down_latency_and_hw_charts_are_drawn(comparison: Comparison) -> None:
    figures = _drilldown(comparison)
    latency = _draw(figures["latency"], width=560)
    average, p95 = _traces(latency)
    assert len(_segments(average.get("d") or "")) == 1
    assert len(_segments(p95.get("d") or "")) == 2  # the missing p95 point
    assert "0" in _texts(latency)  # the axis starts at zero (rangemode tozero)
    hw = _draw(figures["hw"], width=560)
    assert len(_traces(hw)) == 4
    reference = [e for e in hw.iter(f"{SVG}line") if e.get("stroke") == charts.REFERENCE]
    assert len(reference) == 1
    assert "∞" in _texts(hw)


def test_a_long_per_second_series_is_drawn_thinned_with_its_extremes() -> None:
    values = [1000.0 + 500 * math.sin(n / 7) for n in range(3600)]
    values[1234] = 20000.0
    figure = charts.ibench_rate_over_time(
        "l.i1",
        "ips",
        {"a": {"ips": values, "seconds_per_point": 1}, "b": {"ips": values[:1800], "seconds_per_point": 2}},
        {"a": "MySQL 8.0", "b": "MySQL 8.4"},
        target=800.0,
    )
    root = _draw(figure, width=820)
    line_a, line_b = _traces(root)
    assert line_b.get("data-name") == "MySQL 8.4"
    (points,) = _segments(line_a.get("d") or "")
    assert len(points) < 2000  # at most four per pixel column of a ~750 px plot
    _, top, _, _ = _plot_area(root)
    assert min(y for _, y in points) == pytest.approx(top + 0.05 * (_plot_area(root)[3] - top), abs=2)  # the spike
    texts = _texts(root)
    assert "SLA 800/s" in texts and "seconds" in texts
    assert "10k" in texts and "3000" in texts  # k from 10,000 on, like plotly's
    assert any(e.get("stroke") == charts.RED for e in root.iter(f"{SVG}line"))


# --------------------------------------------------------------------------- the pages


def test_the_comparison_page_leaves_every_chart_to_plotly_with_its_figure_beside_it(
    comparison: Comparison, client: Client
) -> None:
    html = client.get("/compare/", {"base": Run.objects.get(name=SMALL_BASE_RUN).pk}).content.decode()
    charts_html = re.findall(r'<div class="chart" data-figure="(chart-\d+)"', html)
    assert charts_html == [f"chart-{i}" for i in range(len(comparison.groups))]
    assert "<svg" not in html  # one chart path: no server drawing on a page
    for chart_id in charts_html:
        assert f'<script id="{chart_id}" type="application/json">' in html


def test_the_svgchart_module_imports_no_django() -> None:
    code = (
        "import sys, reports.svgchart; print(sorted(m for m in sys.modules if m.split('.')[0] in ('django', 'plotly')))"
    )
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# --------------------------------------------------------------------------- points outside the axis


def test_the_drawing_shows_clipped_points_at_the_same_edges_and_with_the_same_values_as_plotly(
    comparison: Comparison,
) -> None:
    writes = members(comparison, "writes")
    keys = [c.key for c in sorted(comparison.others, key=lambda c: (c.version_sort, c.build, c.config))]
    set_relative(comparison, keys[2], writes[1], 0.35)
    set_relative(comparison, keys[3], writes[1], 2.87)
    figure = charts.group_line_chart(comparison, "writes", y_min=0.4, y_max=2.0)
    root = _draw(figure)
    _, top, _, bottom = _plot_area(root)
    marks = {
        "".join(e.itertext()): float(e.get("y") or 0) for e in root.iter(f"{SVG}text") if e.get("class") == "point-text"
    }
    assert set(marks) == {t for trace in figure["data"] for t in trace.get("text") or [] if t}
    assert {"▼0.35", "▲2.87"} <= set(marks)
    # Each value is written inside the plot area, beside the edge its point sits on.
    assert bottom - 40 < marks["▼0.35"] < bottom
    assert top < marks["▲2.87"] < top + 40
    assert _y_of(root, figure, 0.4) == pytest.approx(bottom, abs=0.5)
