"""The comparison's HW-efficiency section, the search by kind, the heatmap's palette and the drill-down's error bars."""

from __future__ import annotations

import html
import json
import math
import re
import statistics
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.test import Client

from regressions import bugs as bugrefs
from regressions.models import Bug, Regression
from reports.compare import ComparisonSpec, get_comparison
from reports.errorbars import spreads, with_error_bars
from reports.hw import _number, cost_flag, cost_legend, hw_context
from reports.palette import BETTER_DARK, NEUTRAL, WORSE_DARK, colour_blind_heatmap
from runs.models import Microbenchmark, Run, Server

pytestmark = pytest.mark.django_db


@pytest.fixture
def imported(corpus: Path, django_capture_on_commit_callbacks: Any) -> Run:
    with django_capture_on_commit_callbacks(execute=True):
        call_command("import_bundle", str(corpus / "sysbench-mysql-small"), "--server", "hetzner-ax162 8-core")
    return Run.objects.get(name="x.my5651_rel_o2nofp.z12a_c8r32.pk1")


def test_a_cost_ratio_is_flagged_like_qps_with_more_counted_as_worse() -> None:
    assert cost_flag(1.10, 0.95, 1.05) == "red"  # 10% more CPU per query
    assert cost_flag(0.90, 0.95, 1.05) == "green"
    assert cost_flag(1.02, 0.95, 1.05) == "grey"
    assert cost_flag(0.0, 0.95, 1.05) == "green" and cost_flag(math.inf, 0.95, 1.05) == "red"
    assert cost_flag(None, 0.95, 1.05) == "missing"


def test_the_hw_section_has_per_group_medians_and_per_microbenchmark_ratios_from_the_metrics_export(
    imported: Run,
) -> None:
    comparison = get_comparison(ComparisonSpec(base_run_id=imported.pk))
    context = hw_context(comparison)
    assert [name for _, name, _ in context["hw_names"]] == ["cpu/o", "cs/o", "rKB/o", "wKB/o"]
    newest = comparison.others[-1].key
    label = "point-query_range=100"
    ratio = comparison.metric_ratios[newest][label]["cpu_o"]
    cpu = next(m for m in context["hw_metrics"] if m["key"] == "cpu_o")
    row = next(r for r in cpu["rows"] if r["label"] == label)
    cell = str(row["cells"]).split("</td>")[-2]
    assert f">{ratio:.2f}" in cell and f"num {cost_flag(ratio, 0.95, 1.05)}" in cell
    # The version's absolute value is on hover, the base's in the row's own column.
    own = comparison.metrics[newest][label]["cpu_o"]
    theirs = comparison.metrics[comparison.base][label]["cpu_o"]
    assert f'title="cpu/o {_number(own)}"' in cell and row["base"] == _number(theirs)
    group = context["hw_groups"][0]
    assert len(group["rows"]) == len(comparison.others)
    # A group's cell: the median ratio, and on hover the version's and the base's median levels.
    members = [mb for mb in comparison.labels if comparison.group_of.get(mb) == group["name"]]
    theirs = statistics.median(comparison.metrics[comparison.base][mb]["cpu_o"] for mb in members)
    own = statistics.median(comparison.metrics[newest][mb]["cpu_o"] for mb in members)
    first = str(group["rows"][-1]["cells"]).split("</td>")[0]
    assert f'title="median {_number(own)}, base {_number(theirs)}"' in first


@pytest.mark.parametrize(("red", "green"), [(0.95, 1.05), (0.9, 1.2)])
def test_the_hw_legend_names_the_cost_ratios_the_colours_switch_at(red: float, green: float) -> None:
    legend = cost_legend(red, green)
    red_from, green_to = 1 / red, 1 / green
    assert f"{red_from:.3f}× the base's or more" in legend and f"{green_to:.3f}× or less" in legend
    assert "⁻¹" not in legend
    # The ratios printed are those cost_flag switches at, on the right side of each.
    assert cost_flag(red_from * 1.0001, red, green) == "red" and cost_flag(red_from * 0.999, red, green) == "grey"
    assert cost_flag(green_to * 0.999, red, green) == "green" and cost_flag(green_to * 1.001, red, green) == "grey"


def test_the_hw_page_says_its_thresholds_as_cost_ratios(imported: Run, client: Client) -> None:
    html = client.get("/compare/hw", {"base": imported.pk, "red": "0.9", "green": "1.25"}).content.decode()
    assert "⁻¹" not in html and "spends 1.111× the base" in html and "0.800× or less" in html


def test_the_hw_page_answers_alone_and_as_a_fragment(imported: Run, client: Client) -> None:
    page = client.get("/compare/hw", {"base": imported.pk})
    assert page.status_code == 200
    html = page.content.decode()
    assert "<html" in html and "cpu/o" in html and "point queries" in html
    fragment = client.get("/compare/hw", {"base": imported.pk}, headers={"HX-Request": "true"}).content.decode()
    assert "<html" not in fragment and 'id="hw-section"' in fragment
    # Without a base it takes the default one, like the other comparison pages.
    assert client.get("/compare/hw").status_code == 200
    compare = client.get("/compare/", {"base": imported.pk}).content.decode()
    assert "/compare/hw?" in compare


def test_the_hw_page_shows_one_metric_table_at_a_time_with_a_switch_to_each_other(
    imported: Run, client: Client
) -> None:
    def tables(html: str) -> list[str]:
        return re.findall(r'<section class="hw-metric" data-metric="(\w+)"', html)

    hx = {"HX-Request": "true"}
    default = client.get("/compare/hw", {"base": imported.pk}, headers=hx).content.decode()
    # cpu/o first, alone; a link to each other metric swaps the section for its table.
    assert tables(default) == ["cpu_o"]
    assert 'aria-current="true" data-metric="cpu_o"' in default
    for key in ("cs_o", "rkb_o", "wkb_o"):
        link = re.search(rf'<a href="([^"]*metric={key})" hx-get="([^"]*)" hx-target="#hw-section"', default)
        assert link is not None and html.unescape(link.group(1)) == html.unescape(link.group(2))
        assert f"base={imported.pk}" in link.group(1)
        switched = client.get(html.unescape(link.group(2)), headers=hx).content.decode()
        assert tables(switched) == [key] and f'aria-current="true" data-metric="{key}"' in switched
        # The per-group tables keep every metric whichever table is shown.
        assert switched.count('<section class="hw-group"') == default.count('<section class="hw-group"') > 0
    write = client.get("/compare/hw", {"base": imported.pk, "metric": "wkb_o"}, headers=hx).content.decode()
    comparison = get_comparison(ComparisonSpec(base_run_id=imported.pk))
    label = "update-one_range=100"
    ratio = comparison.metric_ratios[comparison.others[-1].key][label]["wkb_o"]
    row = re.search(rf">{label}</a></td>.*?</tr>", write, re.S)
    assert row is not None and f">{ratio:.2f}</td></tr>" in row.group(0)
    # An unknown metric falls back to the first, never an empty section.
    assert tables(client.get("/compare/hw", {"base": imported.pk, "metric": "qps"}, headers=hx).content.decode()) == [
        "cpu_o"
    ]


def test_search_finds_bug_keys_servers_workloads_groups_and_microbenchmarks(imported: Run, client: Client) -> None:
    ref = bugrefs.parse("MDEV-34178")
    bug = Bug.objects.create(tracker=ref.tracker, key=ref.key, url=ref.url, title="point-query got slower")
    regression = Regression.objects.filter(microbenchmark__isnull=False).first()
    if regression is None:
        mb = Microbenchmark.objects.get(test="point-query", range_size=100)
        regression = Regression.objects.create(
            server=imported.server,
            workload=imported.workload,
            microbenchmark=mb,
            arrived_in=Run.objects.get(name="x.my8043_rel_o2nofp.z12a_c8r32.pk1").build.version,
        )
    regression.bugs.add(bug)

    html = client.get("/search/", {"q": "mdev-34178"}).content.decode()
    assert 'id="found-bugs"' in html and "MDEV-34178" in html and f"/regressions/{regression.pk}/" in html

    server = Server.objects.get(name="hetzner-ax162 8-core")
    html = client.get("/search/", {"q": "hetz"}).content.decode()
    assert 'id="found-servers"' in html and f"/servers/{server.pk}/" in html and f"?base={imported.pk}" in html

    html = client.get("/search/", {"q": "point queries"}).content.decode()
    assert 'id="found-groups"' in html and "group_set=current-32" in html and "#g-point-queries" in html

    html = client.get("/search/", {"q": imported.workload.name[:12]}).content.decode()
    assert 'id="found-workloads"' in html

    html = client.get("/search/", {"q": "update-index"}).content.decode()
    assert 'id="found-microbenchmarks"' in html

    html = client.get("/search/", {"q": "no-such-thing-at-all"}).content.decode()
    assert 'id="search-empty"' in html


def test_the_header_of_every_page_has_the_search_box(client: Client, db: None) -> None:
    html = client.get("/regressions/").content.decode()
    assert 'class="header-search"' in html and 'action="/search/"' in html


def test_the_heatmap_uses_orange_and_blue_at_the_same_stops_and_keeps_the_cached_figure() -> None:
    scale = [[0.0, "#8e1b1b"], [0.4, "#f2a7a7"], [0.4, "#eceef2"], [0.6, "#eceef2"], [0.6, "#a6dcb5"], [1.0, "#14602c"]]
    figure = {"data": [{"type": "heatmap", "colorscale": scale}], "layout": {}}
    recoloured = colour_blind_heatmap(figure)
    stops = recoloured["data"][0]["colorscale"]
    assert [s[0] for s in stops] == [s[0] for s in scale]
    assert stops[0][1] == WORSE_DARK and stops[2][1] == NEUTRAL and stops[-1][1] == BETTER_DARK
    assert not any(colour in {"#8e1b1b", "#14602c"} for _, colour in stops)
    assert figure["data"][0]["colorscale"] is scale  # the cached figure is untouched


def test_the_heatmap_page_shows_the_legend_and_its_values_as_a_table(imported: Run, client: Client) -> None:
    html = client.get("/compare/heatmap", {"base": imported.pk}).content.decode()
    assert WORSE_DARK in html and BETTER_DARK in html and "heatmap-legend" in html
    assert 'id="heatmap-table"' in html and "point-query_range=100" in html


def test_the_heatmap_is_as_wide_as_its_versions_need_so_a_few_fit_a_phone(imported: Run, client: Client) -> None:
    html = client.get("/compare/heatmap", {"base": imported.pk}).content.decode()
    width = re.search(r'<div class="chart" style="min-width: (\d+)rem" data-figure="heatmap-figure"', html)
    table = html[html.index('id="heatmap-table"') :]
    versions = table[: table.index("</thead>")].count('<th class="num" title=')
    assert width is not None and 0 < versions < 9
    # Row names and a 3 rem column per version, not the 44 rem that many versions need (and scroll sideways).
    assert int(width.group(1)) == 16 + 3 * versions <= 40


def test_error_bars_are_one_standard_deviation_of_repeats_and_absent_without_them() -> None:
    assert spreads([1000.0, 2000.0, None], [0.02, None, 0.1]) == [20.0, None, None]
    figure = {"data": [{"type": "bar", "y": [1000.0, 2000.0]}, {"type": "scatter"}], "layout": {}}
    drawn = with_error_bars(figure, [1000.0, 2000.0], [0.02, 0.05])
    assert drawn["data"][0]["error_y"]["array"] == [20.0, 100.0]
    assert "error_y" not in drawn["data"][1] and "error_y" not in figure["data"][0]
    assert with_error_bars(figure, [1000.0, 2000.0], [None, None]) is figure


def test_the_timeline_puts_each_run_at_its_date_with_its_version_and_marks_the_regressions(
    imported: Run, client: Client
) -> None:
    from reports.timeline import figure, points, regressions

    mb = Microbenchmark.objects.get(test="point-query", range_size=100)
    found, dop = points(imported, mb)
    runs = Run.objects.filter(server=imported.server, workload=imported.workload)
    assert len(found) == runs.count() and dop is not None
    assert [p.when for p in found] == sorted(p.when for p in found)
    # Two builds of 8.4.6 are two runs of one version: the second is compared with the first.
    repeated = [p for p in found if p.version == "8.4.6"]
    assert len(repeated) == 2 and repeated[0].change is None
    assert repeated[1].change == pytest.approx(repeated[1].qps / repeated[0].qps)
    assert all(p.change is None for p in found if p.version != "8.4.6")
    base_point = next(p for p in found if p.run_id == imported.pk)
    assert base_point.qps == pytest.approx(24515, rel=1e-3)

    regression = Regression.objects.create(
        server=imported.server,
        workload=imported.workload,
        microbenchmark=mb,
        arrived_in=Run.objects.get(name="x.my8043_rel_o2nofp.z12a_c8r32.pk1").build.version,
    )
    records = regressions(imported, mb)  # through the regressions app's provider, as the page reads them
    assert ("regression", "8.0.43", None) in [(r.kind, r.arrived, r.fixed) for r in records]
    drawn = figure(found, records, title="t")
    assert len(drawn["data"]) == len({p.version for p in found})
    assert drawn["layout"]["shapes"] and "▼ 8.0.43" in [a["text"] for a in drawn["layout"]["annotations"]]

    html = client.get(f"/microbenchmarks/{mb.pk}/timeline", {"base": imported.pk}).content.decode()
    assert 'id="timeline-figure"' in html and "File time" not in html and "file time" in html
    assert f"/regressions/{regression.pk}/" in html
    drill = client.get(f"/microbenchmarks/{mb.pk}/", {"base": imported.pk}).content.decode()
    assert f"/microbenchmarks/{mb.pk}/timeline?" in drill


def test_a_run_page_calls_its_time_the_file_time(imported: Run, client: Client) -> None:
    html = client.get(f"/runs/{imported.pk}/").content.decode()
    assert "Started" not in html and "File time" in html


def test_a_group_timeline_has_each_runs_median_relative_qps_and_is_linked_from_each_group(
    imported: Run, client: Client
) -> None:
    from reports.timeline import group_points

    comparison = get_comparison(ComparisonSpec(base_run_id=imported.pk))
    members = [label for label in comparison.labels if comparison.group_of.get(label) == "point queries"]
    found = group_points(imported, [comparison.microbenchmark_ids[label] for label in members], comparison.dop)
    newest = comparison.others[-1]
    point = next(p for p in found if p.run_id == newest.run_ids[0])
    expected = sorted(comparison.relative[newest.key][label] for label in members)[len(members) // 2]
    assert point.qps == pytest.approx(expected, rel=1e-6)
    assert next(p for p in found if p.run_id == imported.pk).qps == pytest.approx(1.0)

    html = client.get("/compare/timeline", {"base": imported.pk, "group": "point queries"}).content.decode()
    assert 'id="timeline-figure"' in html and "median relative QPS" in html
    assert client.get("/compare/timeline", {"base": imported.pk, "group": "no such group"}).status_code == 404
    compare = client.get("/compare/", {"base": imported.pk}).content.decode()
    assert "/compare/timeline?" in compare and "group=point%20queries" in compare


def test_a_timeline_of_runs_whose_file_times_are_a_moment_apart_is_drawn_in_version_order(
    imported: Run, client: Client
) -> None:
    # The corpus's result files were all written within a second (an unpacked archive's are): their times say
    # nothing of when the runs ran, so the x axis is the versions, not milliseconds of one afternoon.
    html = client.get("/compare/timeline", {"base": imported.pk, "group": "point queries"}).content.decode()
    assert 'id="timeline-version-order"' in html and "point queries by version" in html
    figure = _timeline_figure(html)
    axis = figure["layout"]["xaxis"]
    assert axis["type"] == "category"
    assert axis["categoryarray"] == [
        "5.6.51", "5.7.44", "8.0.43", "8.0.44", "8.4.6", "8.4.6 (2)", "8.4.7", "9.4.0", "9.5.0"
    ]  # fmt: skip
    assert all(shape["x0"] in axis["categoryarray"] for shape in figure["layout"]["shapes"])


def test_a_timeline_keeps_dates_that_order_the_runs(imported: Run, client: Client) -> None:
    from datetime import timedelta

    from reports.timeline import dates_order_runs, points

    runs = Run.objects.filter(server=imported.server, workload=imported.workload).order_by("-pk")
    for hours, run in enumerate(runs):  # the newest version ran first: dates, not versions, order the chart
        Run.objects.filter(pk=run.pk).update(started_at=run.started_at + timedelta(hours=2 * hours))
    mb = Microbenchmark.objects.get(test="point-query", range_size=100)
    found, _ = points(imported, mb)
    assert dates_order_runs(found) and found[0].version == "9.5.0"
    html = client.get(f"/microbenchmarks/{mb.pk}/timeline", {"base": imported.pk}).content.decode()
    assert 'id="timeline-version-order"' not in html
    figure = _timeline_figure(html)
    assert figure["layout"]["xaxis"]["type"] == "date"
    assert figure["data"][-1]["x"][0] == found[0].when.isoformat()


def _timeline_figure(html: str) -> dict[str, Any]:
    start = html.index('<script id="timeline-figure" type="application/json">')
    text = html[html.index(">", start) + 1 : html.index("</script>", start)]
    figure: dict[str, Any] = json.loads(text)
    return figure


def test_group_charts_carry_error_bars_of_repeated_runs_and_none_without_repeats() -> None:
    from reports.charts import group_bar_chart, group_line_chart, relative_spread
    from reports.compare import ComparisonSpec, compute_comparison
    from runs import synthetic
    from runs.importer import submit_and_import
    from runs.models import Bundle, Run

    spec = synthetic.SeriesSpec(versions=("8.0.28", "8.0.30", "8.0.32"), repeats=3, noise=0.04, steps=(), seed=7)
    submit_and_import(synthetic.bundle_bytes(spec), name="rep.tgz", source=Bundle.Source.COMMAND)
    base = Run.objects.filter(build__version__text="8.0.28").order_by("pk").first()
    assert base is not None
    comparison = compute_comparison(ComparisonSpec(base_run_id=base.pk))
    group = comparison.groups[0]
    line = group_line_chart(comparison, group, y_min=0.0, y_max=3.0)
    keys = [c.key for c in comparison.others]
    for trace in line["data"]:
        label = trace["name"]
        expected = []
        for key in keys:
            rel = comparison.relative[key][label]
            cv, cv_base = comparison.cv[key][label], comparison.cv[comparison.base][label]
            assert cv is not None and cv_base is not None
            expected.append(pytest.approx(rel * math.sqrt(cv * cv + cv_base * cv_base), abs=1e-4))
            assert relative_spread(comparison, key, label) == expected[-1]
        assert trace["error_y"]["array"] == expected and trace["error_y"]["visible"] is True
    bars = group_bar_chart(comparison, group, y_min=0.0, y_max=3.0)
    assert all(any(trace["error_y"]["array"]) for trace in bars["data"])
    from reports.tests.test_chart_dicts import _assert_plotly_keeps

    for figure in (line, bars, group_line_chart(comparison, group, log=True)):
        _assert_plotly_keeps(figure)  # error bars as plotly itself writes them

    # A point drawn at the axis edge has no error bar: its bar would claim a spread around the wrong value.
    clipped = group_line_chart(comparison, group, y_min=0.0, y_max=0.5)
    assert all("error_y" not in trace for trace in clipped["data"])

    # One run per version: no error bars at all, not bars of zero.
    single = synthetic.SeriesSpec(versions=("9.0.1", "9.0.2"), cpus=16, seed=8)  # another server: its own series
    submit_and_import(synthetic.bundle_bytes(single), name="one.tgz", source=Bundle.Source.COMMAND)
    base = Run.objects.filter(build__version__text="9.0.1").first()
    assert base is not None
    once = compute_comparison(ComparisonSpec(base_run_id=base.pk))
    assert all("error_y" not in trace for trace in group_line_chart(once, once.groups[0])["data"])
