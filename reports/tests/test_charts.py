"""The Plotly figures of reports.charts, checked against a comparison built from the real mysql-small corpus."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from reports import charts
from reports.charts import DrilldownPoint
from reports.compare import Column, Comparison
from reports.tests.conftest import members, set_relative

# The compared runs of mysql-small in semantic version order, written out by hand: 5.7 < 8.0 < 8.4 < 9.4 < 9.5,
# and the two builds of 8.4.6 by build name.
EXPECTED_ORDER = [
    "x.my5744_rel_o2nofp.z12a_c8r32.pk1",
    "x.my8043_rel_o2nofp.z12a_c8r32.pk1",
    "x.my8044_rel_o2nofp.z12a_c8r32.pk1",
    "x.my8406_rel_o2nofp.z12a_c8r32.pk1",
    "x.my8406v2_rel_o2nofp.z12a_c8r32.pk1",
    "x.my8407_rel_o2nofp.z12a_c8r32.pk1",
    "x.my9400_rel_o2nofp.z12a_c8r32.pk1",
    "x.my9500_rel_o2nofp.z12a_c8r32.pk1",
]


def _finite(values: list[float | None]) -> list[float]:
    return [v for v in values if v is not None and math.isfinite(v)]


# --------------------------------------------------------------------------- group line chart


def test_the_line_chart_has_exactly_one_trace_per_microbenchmark_of_the_group(comparison: Comparison) -> None:
    # Reference and threshold lines are layout shapes, not traces: the legend lists microbenchmarks only.
    assert len(comparison.groups) == 4
    for group in comparison.groups:
        figure = charts.group_line_chart(comparison, group)
        assert len(figure["data"]) == len(members(comparison, group))
        assert [trace["name"] for trace in figure["data"]] == members(comparison, group)
        assert {trace["type"] for trace in figure["data"]} == {"scatter"}


def test_a_page_sends_the_lines_without_the_x_they_share_with_the_axis_and_says_so(comparison: Comparison) -> None:
    figure = charts.group_line_chart(comparison, comparison.groups[0])
    sent = charts.for_the_page(figure)
    categories = figure["layout"]["xaxis"]["categoryarray"]
    assert all("x" not in trace for trace in sent["data"])
    assert sent["layout"]["meta"] == {**figure["layout"]["meta"], "x_from_axis": True}
    # Everything else as it was, and the figure itself untouched (it is cached and drawn again).
    assert [{**trace, "x": categories} for trace in sent["data"]] == figure["data"]
    assert all(trace["x"] == categories for trace in figure["data"])
    # A line of other x (fewer versions), on another axis, or a figure without categories, is sent whole.
    other = {**figure, "data": [{**figure["data"][0], "x": categories[1:]}, {**figure["data"][1], "xaxis": "x2"}]}
    assert charts.for_the_page(other) is other
    plain = {**figure, "layout": {**figure["layout"], "xaxis": {"type": "category"}}}
    assert charts.for_the_page(plain) is plain
    # A bar chart's bars stand on its categories (the group's microbenchmarks) too.
    bars = charts.group_bar_chart(comparison, comparison.groups[0])
    assert all("x" not in trace for trace in charts.for_the_page(bars)["data"])


@pytest.mark.parametrize("scale", [{}, {"y_max": 1.05}, {"y_min": 0.97, "y_max": 1.1}, {"log": True}])
def test_plain_lines_are_drawn_exactly_as_the_general_path_draws_them(
    comparison: Comparison, monkeypatch: pytest.MonkeyPatch, scale: dict[str, Any]
) -> None:
    real = charts._plain_line
    taken: list[bool] = []

    def counted(*args: Any) -> Any:
        found = real(*args)
        taken.append(found is not None)
        return found

    monkeypatch.setattr(charts, "_plain_line", counted)
    fast = [charts.group_line_chart(comparison, group, **scale) for group in comparison.groups]
    monkeypatch.setattr(charts, "_plain_line", lambda *args: None)
    general = [charts.group_line_chart(comparison, group, **scale) for group in comparison.groups]
    assert json.dumps(fast) == json.dumps(general)
    if not scale:
        assert any(taken)  # the plain path drawn
    if scale.get("y_max") == 1.05:
        assert not all(taken)  # and lines with points beyond the axis, by the general path


def test_the_reference_line_and_both_thresholds_are_drawn_as_shapes(comparison: Comparison) -> None:
    figure = charts.group_line_chart(comparison, "point queries")
    lines = {(s["y0"], s["line"].get("dash")) for s in figure["layout"]["shapes"] if s["type"] == "line"}
    assert lines == {(1.0, None), (comparison.spec.red, "dot"), (comparison.spec.green, "dot")}


def test_the_x_axis_is_the_compared_columns_in_semantic_version_order(comparison: Comparison) -> None:
    comparison.columns.reverse()  # the chart must not rely on the order it is handed
    figure = charts.group_line_chart(comparison, "writes")
    keys = figure["layout"]["meta"]["keys"]  # x label → column key, sent once instead of on every point
    for trace in figure["data"]:
        assert [keys[x] for x in trace["x"]] == EXPECTED_ORDER
    xaxis = figure["layout"]["xaxis"]
    assert xaxis["type"] == "category"
    assert [keys[x] for x in xaxis["categoryarray"]] == EXPECTED_ORDER
    assert xaxis["tickvals"] == xaxis["categoryarray"]


def test_tick_text_names_the_version_and_adds_the_flavour_only_where_versions_repeat(comparison: Comparison) -> None:
    ticktext = charts.group_line_chart(comparison, "writes")["layout"]["xaxis"]["ticktext"]
    assert ticktext == [
        "MySQL 5.7.44",
        "MySQL 8.0.43",
        "MySQL 8.0.44",
        "MySQL 8.4.6<br>rel_o2nofp",
        "MySQL 8.4.6<br>v2_rel_o2nofp",
        "MySQL 8.4.7",
        "MySQL 9.4.0",
        "MySQL 9.5.0",
    ]


def test_y_values_are_the_relative_qps_to_four_significant_digits(comparison: Comparison) -> None:
    checked = 0
    for group in comparison.groups:
        figure = charts.group_line_chart(comparison, group)
        keys = figure["layout"]["meta"]["keys"]
        for trace in figure["data"]:
            for x, y in zip(trace["x"], trace["y"], strict=True):
                exact = comparison.relative[keys[x]][trace["name"]]
                assert exact is not None and y == pytest.approx(exact, rel=5e-4, abs=5e-5)
                assert float(f"{y:.4g}") == y  # rounded, to keep the payload small
                checked += 1
    assert checked == 8 * 32  # 8 compared columns × the 32 grouped microbenchmarks


def test_hover_shows_run_microbenchmark_relative_absolute_and_base_qps(comparison: Comparison) -> None:
    trace = charts.group_line_chart(comparison, "point queries")["data"][1]
    label = trace["name"]
    assert label == "point-query_range=100"
    template = trace["hovertemplate"]
    # A plain line (no ∞, no noisy point) formats relative QPS from y and carries only QPS per point.
    for part in ("%{fullData.name}", "%{x}", "relative QPS: %{y:.2f}", "QPS: %{customdata:,}"):
        assert part in template
    base_qps = comparison.qps[comparison.base][label]
    assert base_qps is not None and f"base QPS: {round(base_qps):,}" in template
    key = EXPECTED_ORDER[2]
    assert trace["customdata"][2] == round(comparison.qps[key][label] or 0)
    assert trace["y"][2] == pytest.approx(comparison.relative[key][label], abs=5e-5)


def test_a_missing_result_is_a_gap_never_zero(comparison: Comparison) -> None:
    label = members(comparison, "writes")[0]
    key = EXPECTED_ORDER[3]
    set_relative(comparison, key, label, None)
    trace = charts.group_line_chart(comparison, "writes")["data"][0]
    assert trace["name"] == label
    assert trace["y"][3] is None and trace["customdata"][3] is None  # a gap, whichever customdata form
    assert trace["connectgaps"] is False
    assert all(y is not None and y > 0 for i, y in enumerate(trace["y"]) if i != 3)


def test_an_infinite_ratio_is_clipped_to_the_top_and_marked(comparison: Comparison) -> None:
    label = members(comparison, "point queries")[2]
    set_relative(comparison, EXPECTED_ORDER[1], label, math.inf)
    figure = charts.group_line_chart(comparison, "point queries")
    json.dumps(figure, allow_nan=False)  # JSON has no infinity: this raises if one slipped through
    trace = figure["data"][2]
    clipped = trace["y"][1]
    others = _finite([y for t in figure["data"] for y in t["y"]])
    assert clipped == max(others) and clipped < figure["layout"]["yaxis"]["range"][1]
    assert trace["text"][1] == "∞" and trace["customdata"][1][0].startswith("∞")
    assert "text" not in figure["data"][0]  # only the line with an infinite point carries text


def test_the_y_axis_starts_on_a_step_of_005_just_below_the_lowest_value(comparison: Comparison) -> None:
    for group in comparison.groups:
        figure = charts.group_line_chart(comparison, group)
        lowest = min(_finite([y for trace in figure["data"] for y in trace["y"]]))
        start = figure["layout"]["yaxis"]["range"][0]
        assert lowest - 0.05 <= start < lowest
        assert round(start / 0.05, 6) == round(start / 0.05)
    writes_lowest = min(
        _finite([comparison.relative[key][label] for key in EXPECTED_ORDER for label in members(comparison, "writes")])
    )
    assert round(writes_lowest, 2) == 0.52  # insert on 9.5.0, as in the reference qps.rel.all.tsv: start at 0.50
    assert charts.group_line_chart(comparison, "writes")["layout"]["yaxis"]["range"][0] == 0.5


def test_a_given_y_min_is_where_the_axis_starts(comparison: Comparison) -> None:
    assert charts.group_line_chart(comparison, "writes", y_min=0.3)["layout"]["yaxis"]["range"][0] == 0.3


def test_a_value_below_a_given_y_min_sits_on_the_bottom_edge_labelled_with_its_value(comparison: Comparison) -> None:
    label = members(comparison, "writes")[1]
    set_relative(comparison, EXPECTED_ORDER[2], label, 0.35)  # a collapse, like MariaDB 10.5.29's
    figure = charts.group_line_chart(comparison, "writes", y_min=0.85)
    trace = figure["data"][1]
    assert figure["layout"]["yaxis"]["range"][0] == 0.85
    assert trace["y"][2] == 0.85 and trace["text"][2] == "▼0.35"
    assert trace["customdata"][2][0].startswith("0.35")
    # Without y_min the axis goes down to show it.
    assert charts.group_line_chart(comparison, "writes")["layout"]["yaxis"]["range"][0] == 0.3


def test_one_outlier_does_not_squash_the_other_lines_into_a_band(comparison: Comparison) -> None:
    group = "point queries"
    label = members(comparison, group)[0]
    for key in EXPECTED_ORDER:
        for other in members(comparison, group):
            set_relative(comparison, key, other, 1.0 + 0.01 * EXPECTED_ORDER.index(key))
    set_relative(comparison, EXPECTED_ORDER[-1], label, 2.87)  # Postgres hot-points
    figure = charts.group_line_chart(comparison, group)
    start, end = figure["layout"]["yaxis"]["range"]
    assert end < 1.5, "the top is set by the other lines"
    assert figure["data"][0]["y"][-1] == end and figure["data"][0]["text"][-1] == "▲2.87"
    assert figure["data"][0]["textposition"][-1] == "bottom center"  # inside the plot, under the edge
    # The other lines span at least a third of the height instead of a sliver.
    assert (1.07 - 1.0) / (end - start) > 0.15
    # A given y_max shows the outlier whole.
    assert charts.group_line_chart(comparison, group, y_max=3.0)["layout"]["yaxis"]["range"][1] == 3.0
    assert "text" not in charts.group_line_chart(comparison, group, y_max=3.0)["data"][0]


def test_a_collapse_is_never_cut_off_by_the_outlier_rule(comparison: Comparison) -> None:
    label = members(comparison, "writes")[0]
    set_relative(comparison, EXPECTED_ORDER[-1], label, 0.05)
    figure = charts.group_line_chart(comparison, "writes")
    assert figure["layout"]["yaxis"]["range"][0] < 0.05
    assert figure["data"][0]["y"][-1] == 0.05


def test_the_log_scale_shows_collapse_and_outlier_with_the_range_in_log_units(comparison: Comparison) -> None:
    label = members(comparison, "writes")[0]
    set_relative(comparison, EXPECTED_ORDER[1], label, 0.35)
    set_relative(comparison, EXPECTED_ORDER[2], label, 2.87)
    figure = charts.group_line_chart(comparison, "writes", log=True)
    axis = figure["layout"]["yaxis"]
    assert axis["type"] == "log"
    low, high = (10**v for v in axis["range"])
    assert low < 0.35 and high > 2.87
    reference = figure["layout"]["shapes"][0]
    assert reference["y0"] == 1.0  # plotly.js places shapes in data units even on a log axis
    labels = {note["text"]: note["y"] for note in figure["layout"]["annotations"]}
    assert labels["≥ 1.05"] == pytest.approx(math.log10(1.05))  # annotations, like the range, in log10 units
    assert figure["data"][0]["y"][1] == 0.35 and figure["data"][0]["y"][2] == 2.87
    assert "text" not in figure["data"][0]


def test_versions_are_categories_with_markers_and_only_a_thin_guide_line(comparison: Comparison) -> None:
    figure = charts.group_line_chart(comparison, "writes")
    assert figure["layout"]["xaxis"]["type"] == "category"
    for trace in figure["data"]:
        assert "markers" in trace["mode"]
        assert trace["line"]["width"] < trace["marker"]["size"] / 4


def test_the_bar_view_has_one_bar_per_version_for_the_newest_versions(comparison: Comparison) -> None:
    figure = charts.group_bar_chart(comparison, "writes", limit=3)
    assert [t["type"] for t in figure["data"]] == ["bar"] * 3
    assert [t["name"] for t in figure["data"]] == ["MySQL 8.4.7", "MySQL 9.4.0", "MySQL 9.5.0"]
    assert figure["data"][0]["x"] == members(comparison, "writes")
    assert figure["layout"]["barmode"] == "group" and figure["layout"]["meta"]["omitted"] == len(EXPECTED_ORDER) - 3
    assert figure["layout"]["yaxis"]["range"][0] == 0.0  # a bar's length is its value
    label = members(comparison, "writes")[0]
    assert figure["data"][2]["y"][0] == pytest.approx(comparison.relative[EXPECTED_ORDER[-1]][label], abs=1e-3)


def test_a_bar_beyond_a_given_y_max_is_cut_at_the_top_and_labelled(comparison: Comparison) -> None:
    label = members(comparison, "writes")[0]
    set_relative(comparison, EXPECTED_ORDER[-1], label, 2.87)
    figure = charts.group_bar_chart(comparison, "writes", y_max=1.5)
    newest = figure["data"][-1]
    assert newest["y"][0] == 1.5 and newest["text"][0] == "▲2.87"


def test_an_unknown_group_is_refused_with_the_known_ones(comparison: Comparison) -> None:
    with pytest.raises(ValueError, match="point queries"):
        charts.group_line_chart(comparison, "no such group")


def test_markers_and_colours_differ_between_lines_of_a_group(comparison: Comparison) -> None:
    traces = charts.group_line_chart(comparison, "writes")["data"]
    assert len(traces) == 10
    assert len({t["marker"]["symbol"] for t in traces}) == 10
    assert len({t["line"]["color"] for t in traces}) == 10


def test_the_legend_sits_below_the_plot(comparison: Comparison) -> None:
    legend = charts.group_line_chart(comparison, "writes")["layout"]["legend"]
    assert legend["orientation"] == "h" and legend["y"] == 0 and legend["yanchor"] == "bottom"


# --------------------------------------------------------------------------- heatmap


def test_the_heatmap_is_every_microbenchmark_by_every_compared_column(comparison: Comparison) -> None:
    comparison.columns.reverse()
    figure = charts.heatmap(comparison)
    trace = figure["data"][0]
    keys = figure["layout"]["meta"]["keys"]
    assert trace["type"] == "heatmap"
    # 32 grouped + 2 stray .pre tests and scan.warm (a measured scan), ungrouped
    assert len(trace["z"]) == len(comparison.labels) == 35
    assert {len(row) for row in trace["z"]} == {len(comparison.others)} == {8}
    assert [keys[x] for x in trace["x"]] == EXPECTED_ORDER
    assert sorted(trace["y"]) == sorted(comparison.labels)
    for i, label in enumerate(trace["y"]):
        for j, x in enumerate(trace["x"]):
            key = keys[x]
            assert trace["z"][i][j] == pytest.approx(comparison.relative[key][label], rel=5e-4, abs=5e-5)


def test_heatmap_rows_come_in_group_order_with_ungrouped_last(comparison: Comparison) -> None:
    rows = charts.heatmap(comparison)["data"][0]["y"]
    order = [*comparison.groups, None]
    positions = [order.index(comparison.group_of.get(label)) for label in rows]
    assert positions == sorted(positions)
    assert rows[-3:] == ["point-query.pre_range=100", "range-notcovered-si.pre_range=100", "scan.warm_range=100"]


def test_the_heatmap_colour_scale_is_centred_on_one_with_the_thresholds_band_labelled_once(
    comparison: Comparison,
) -> None:
    trace = charts.heatmap(comparison)["data"][0]
    assert trace["zmid"] == 1
    assert trace["zmax"] - 1 == pytest.approx(1 - trace["zmin"])
    # Ends and the grey band, one label each: two threshold labels 0.1 apart overlapped on a phone.
    red, green = comparison.spec.red, comparison.spec.green
    assert trace["colorbar"]["tickvals"] == [trace["zmin"], pytest.approx((red + green) / 2), trace["zmax"]]
    assert trace["colorbar"]["ticktext"] == [f"{trace['zmin']:.2f}", f"{red:.2f}–{green:.2f}", f"{trace['zmax']:.2f}"]
    # Grey exactly between the thresholds, so a cell's colour agrees with the tables' red/green flags.
    span = trace["zmax"] - trace["zmin"]
    grey = [position for position, colour in trace["colorscale"] if colour == "#eceef2"]
    assert grey == [
        pytest.approx((comparison.spec.red - trace["zmin"]) / span, abs=1e-4),
        pytest.approx((comparison.spec.green - trace["zmin"]) / span, abs=1e-4),
    ]


def test_heatmap_cells_show_two_decimals_and_carry_the_ids_a_click_handler_needs(comparison: Comparison) -> None:
    figure = charts.heatmap(comparison)
    trace, meta = figure["data"][0], figure["layout"]["meta"]
    label, x = trace["y"][0], trace["x"][0]
    key = meta["keys"][x]
    # No infinite cell: each cell formats its own z to 2 decimals, no text array is sent.
    assert trace["texttemplate"] == "%{z:.2f}" and trace.get("text") is None
    assert trace["z"][0][0] == pytest.approx(comparison.relative[key][label], abs=5e-5)
    # What a click needs comes from the figure's meta: the row's microbenchmark and the column's key.
    assert meta["microbenchmarks"][label] == comparison.microbenchmark_ids[label]
    assert trace["customdata"][0][0] == round(comparison.qps[key][label] or 0)


def test_heatmap_missing_cells_are_empty_and_infinite_ones_say_so(comparison: Comparison) -> None:
    rows = charts.heatmap(comparison)["data"][0]["y"]
    set_relative(comparison, EXPECTED_ORDER[0], rows[0], None)
    set_relative(comparison, EXPECTED_ORDER[1], rows[1], math.inf)
    figure = charts.heatmap(comparison)
    json.dumps(figure, allow_nan=False)
    trace = figure["data"][0]
    assert trace["z"][0][0] is None and trace["text"][0][0] == ""
    assert trace["z"][1][1] == trace["zmax"] and trace["text"][1][1] == "∞"


# --------------------------------------------------------------------------- payload


def test_the_heatmap_and_all_group_charts_of_a_comparison_fit_in_250_kb(comparison: Comparison) -> None:
    figures = [charts.heatmap(comparison), *(charts.group_line_chart(comparison, g) for g in comparison.groups)]
    size = sum(len(json.dumps(figure, allow_nan=False).encode()) for figure in figures)
    assert size < 250_000
    # plotly.py's default template alone is ~6 KB per figure: it must not be in the payload.
    assert all(len(json.dumps(figure["layout"].get("template", {}))) < 300 for figure in figures)


def test_the_charts_module_imports_no_django() -> None:
    code = "import sys, reports.charts; print(sorted(m for m in sys.modules if m.split('.')[0] == 'django'))"
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# --------------------------------------------------------------------------- drilldown


def _point(key: str, label: str, qps: float | None, relative: float | None, **ratios: float | None) -> DrilldownPoint:
    return DrilldownPoint(
        key=key,
        version_label=label,
        qps=qps,
        relative=relative,
        lat_avg_ms=0.42,
        lat_pct_ms=0.91,
        cpu_o=0.000667,
        cs_o=3.833,
        rkb_o=0.0,
        wkb_o=1.5,
        cpu_o_ratio=ratios.get("cpu_o_ratio", 1.0),
        cs_o_ratio=ratios.get("cs_o_ratio", 1.0),
        rkb_o_ratio=ratios.get("rkb_o_ratio", 1.0),
        wkb_o_ratio=ratios.get("wkb_o_ratio", 1.0),
    )


SERIES = [
    _point("x.my8043", "MySQL 8.0.43", 16847.2, 1.0),
    _point("x.my8406", "MySQL 8.4.6", None, None, cpu_o_ratio=1.1523),
    _point("x.my9500", "MySQL 9.5.0", 16016.4, 0.95071, cpu_o_ratio=None, wkb_o_ratio=math.inf),
]


def test_drilldown_gives_qps_latency_and_hw_charts() -> None:
    figures = charts.drilldown_charts(SERIES, microbenchmark="point-query_range=100", percentile=95)
    assert set(figures) == {"qps", "latency", "hw"}
    for figure in figures.values():
        json.dumps(figure, allow_nan=False)
        assert figure["layout"]["title"]["text"].startswith("point-query_range=100: ")
        for trace in figure["data"]:
            assert trace["x"] == ["MySQL 8.0.43", "MySQL 8.4.6", "MySQL 9.5.0"]
        assert figure["layout"]["xaxis"]["type"] == "category" and "tickvals" not in figure["layout"]["xaxis"]
        assert figure["layout"]["meta"]["keys"] == {
            "MySQL 8.0.43": "x.my8043",
            "MySQL 8.4.6": "x.my8406",
            "MySQL 9.5.0": "x.my9500",
        }


def test_two_drilldown_columns_of_one_version_keep_apart_by_their_column_keys() -> None:
    twins = [SERIES[0], {**SERIES[0], "key": "x.my8043v2"}]
    figure = charts.drilldown_charts(twins)["qps"]  # type: ignore[list-item]
    assert figure["data"][0]["x"] == ["MySQL 8.0.43 x.my8043", "MySQL 8.0.43 x.my8043v2"]
    assert set(figure["layout"]["meta"]["keys"].values()) == {"x.my8043", "x.my8043v2"}


def test_the_drilldown_qps_chart_has_absolute_bars_and_relative_line_on_a_second_axis() -> None:
    figure = charts.drilldown_charts(SERIES)["qps"]
    bars, line = figure["data"]
    assert bars["type"] == "bar" and bars["y"] == [16847, None, 16016]
    assert line["type"] == "scatter" and line["yaxis"] == "y2" and line["y"] == [1.0, None, 0.9507]
    assert figure["layout"]["yaxis2"]["overlaying"] == "y"
    assert [s["y0"] for s in figure["layout"]["shapes"]] == [1.0] and figure["layout"]["shapes"][0]["yref"] == "y2"


def test_the_drilldown_latency_chart_names_the_percentile() -> None:
    figure = charts.drilldown_charts(SERIES, percentile=99)["latency"]
    assert [t["name"] for t in figure["data"]] == ["avg latency", "p99 latency"]
    assert figure["data"][1]["y"] == [0.91, 0.91, 0.91]


def test_the_drilldown_hw_chart_has_one_line_per_metric_with_gaps_and_clipped_infinity() -> None:
    figure = charts.drilldown_charts(SERIES)["hw"]
    names = [t["name"] for t in figure["data"]]
    assert names == ["CPU / operation", "context switches / operation", "KB read / operation", "KB written / operation"]
    cpu, _, _, wkb = figure["data"]
    assert cpu["y"] == [1.0, 1.152, None]
    assert wkb["y"][2] >= 1.152 and wkb["text"] == [None, None, "∞"]
    assert cpu["customdata"][0] == ["1.00", 0.000667]
    assert [s["y0"] for s in figure["layout"]["shapes"]] == [1.0]


# --------------------------------------------------------------------------- helpers


def test_plot_config_is_responsive_without_logo_and_downloads_a_png_with_a_safe_name() -> None:
    config = charts.plot_config("writes x.my8406 [b/c]")
    assert config["responsive"] is True and config["displaylogo"] is False
    assert config["toImageButtonOptions"] == {"format": "png", "filename": "writes_x.my8406_b_c"}


def test_plot_config_offers_nothing_that_sends_the_data_out_of_the_tool() -> None:
    config = charts.plot_config("writes")
    assert config["showLink"] is False and config["showSendToCloud"] is False
    assert config["showEditInChartStudio"] is False
    assert {"sendDataToCloud", "editInChartStudio"} <= set(config["modeBarButtonsToRemove"])


def _column(key: str, version: str, flavour: str, config: str = "z12a_c8r32", dbms: str = "MySQL") -> Column:
    return Column(
        key=key,
        run_ids=[1],
        dbms=dbms,
        version=version,
        version_sort=version,
        build=key,
        flavour=flavour,
        config=config,
        started_at=None,
    )


@pytest.mark.parametrize(
    ("columns", "expected"),
    [
        ([_column("a", "8.0.44", "rel"), _column("b", "8.4.6", "rel")], ["MySQL 8.0.44", "MySQL 8.4.6"]),
        ([_column("a", "8.4.6", "rel"), _column("b", "8.4.6", "v2")], ["MySQL 8.4.6 rel", "MySQL 8.4.6 v2"]),
        (
            [_column("a", "8.4.6", "rel", "c8r32"), _column("b", "8.4.6", "rel", "c32r128")],
            ["MySQL 8.4.6 rel c8r32", "MySQL 8.4.6 rel c32r128"],
        ),
        (
            [_column("a", "10.6.20", "", dbms="MariaDB"), _column("b", "10.6.20", "")],
            ["MariaDB 10.6.20", "MySQL 10.6.20"],
        ),
    ],
)
def test_column_labels_add_detail_only_until_names_are_unique(columns: list[Column], expected: list[str]) -> None:
    assert list(charts.column_labels(columns).values()) == expected


@pytest.mark.parametrize(
    ("values", "expected"), [([0.87, 0.93], 0.85), ([0.85, 1.2], 0.8), ([1.3, 1.4], 0.9), ([None, 0.7012], 0.7)]
)
def test_default_y_min_is_a_step_below_the_lowest_value_or_the_red_threshold(
    values: list[Any], expected: float
) -> None:
    assert charts.default_y_min(values, red=0.95) == expected


def test_lines_leaving_the_axis_at_one_version_share_one_label_the_most_extreme_value(comparison: Comparison) -> None:
    writes = members(comparison, "writes")
    key = EXPECTED_ORDER[4]
    set_relative(comparison, key, writes[0], 0.6)
    set_relative(comparison, key, writes[1], 0.4)
    set_relative(comparison, key, writes[2], 0.5)
    figure = charts.group_line_chart(comparison, "writes", y_min=0.85)
    labelled = [t["text"][4] for t in figure["data"] if t.get("text") and t["text"][4]]
    below = [v for label in writes if (v := comparison.relative[key][label]) is not None and v < 0.85]
    assert len(below) >= 3
    assert labelled == [f"▼{min(below):.2f}"]  # one label, on the lowest point
    assert figure["data"][1]["text"][4] == labelled[0]
    # Every clipped point still sits on the edge and tells its own value in the hover.
    for trace, value in zip(figure["data"][:3], (0.6, 0.4, 0.5), strict=True):
        assert trace["y"][4] == 0.85 and trace["customdata"][4][0].startswith(f"{value:.2f}")


def test_a_group_charts_title_puts_the_base_on_a_line_of_its_own_and_shortens_a_long_name(
    comparison: Comparison,
) -> None:
    # Plotly neither wraps nor shortens a title: at 390 px a long one ran off the chart.
    title = charts.group_line_chart(comparison, "writes")["layout"]["title"]["text"]
    assert title == "writes<br><span style='font-size:12px'>(base MySQL 5.6.51 = 1)</span>"
    long = "range queries over the secondary index, covered and not covered, cold"
    shortened = charts._titled(long, "(base X = 1)").split("<br>")[0]
    assert len(shortened) == charts.GROUP_TITLE_CHARS and shortened.endswith("…") and long.startswith(shortened[:-1])
    layout = charts.group_absolute_chart(comparison, "writes")["layout"]
    assert layout["title"]["text"].startswith("writes<br>") and layout["margin"]["t"] == 58
