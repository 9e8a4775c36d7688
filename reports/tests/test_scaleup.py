"""Scale-up: throughput against client count, one line per version, relative to the base at the same concurrency.

The real data is ours: sysbench 1.0 run here at 1, 2, 4 and 8 threads against MariaDB 10.11 (two builds) and
PostgreSQL 15, written by the runner in the field's layout (tests/data/sysbench-scaleup.tar.gz, see its README).
"""

from __future__ import annotations

import json
import math
import re
import tarfile
from html import unescape
from pathlib import Path

import pytest
from django.test import Client

from reports import scaleup_charts
from reports.scaleup import AtConcurrency, scaleup
from runs.importer import submit_and_import
from runs.models import Bundle, Microbenchmark, Run

FIXTURE = Path(__file__).resolve().parents[2] / "tests" / "data" / "sysbench-scaleup.tar.gz"
BASE, OTHER, PG = "x.ma101119_rel.c2r8.pk1", "x.ma101119_rel2.c2r8.pk1", "x.pg1520_rel.c2r8.pk1"
DOPS = [1, 2, 4, 8]


def summary_qps() -> dict[tuple[str, str], list[float]]:
    """The runner's own sb.r.qps lines: one QPS per concurrency in run order (1, 2, 4, 8), per run and test."""
    found = {}
    with tarfile.open(FIXTURE) as tar:
        for member in tar:
            run, _, name = member.name.partition("/")
            if name.startswith("sb.r.qps."):
                line = tar.extractfile(member).read().decode()  # type: ignore[union-attr]
                *values, _engine, test, range_ = line.split()
                found[(run, f"{test}_{range_}")] = [float(v) for v in values]
    return found


@pytest.fixture
def series(db: None) -> dict[str, Run]:
    submit_and_import(
        FIXTURE.read_bytes(), name=FIXTURE.name, source=Bundle.Source.COMMAND, overrides={"server": "c2r8"}
    )
    return {run.name: run for run in Run.objects.all()}


def cells(html: str, table_id: str) -> dict[str, list[str]]:
    """A table's rows as {first cell text: [other cells' texts]}."""
    table = re.search(rf'<table[^>]*id="{table_id}".*?</table>', html, re.S)
    assert table is not None, table_id
    rows = {}
    for row in re.findall(r"<tr[^>]*>(.*?)</tr>", table.group(0), re.S)[1:]:
        texts = [unescape(re.sub(r"<[^>]+>", " ", c)).split() for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
        rows[" ".join(texts[0])] = [t[0] for t in texts[1:]]
    return rows


# --------------------------------------------------------------------------- the pure computation


def test_relative_qps_divides_by_the_base_at_the_same_concurrency_and_keeps_gaps() -> None:
    points = [
        AtConcurrency(1, {"b": {"p": 100.0}, "v": {"p": 88.0}}),
        AtConcurrency(16, {"b": {"p": 800.0}, "v": {"p": 960.0}}),
        AtConcurrency(4, {"b": {"p": 400.0}, "v": {}}),
    ]
    result = scaleup(
        points, base="b", columns=[("v", "5.1.14"), ("b", "5.0.37")], labels=["p"], group_of={"p": "g"}, groups=["g"]
    )

    assert result.dops == (1, 4, 16)
    assert [key for key, _ in result.columns] == ["b", "v"]  # the base first
    mb = result.microbenchmarks["p"]
    assert mb.qps[1].values == (88.0, None, 960.0)
    assert mb.relative[0].values == (1.0, 1.0, 1.0)
    assert mb.relative[1].values == pytest.approx((0.88, None, 1.2))  # "12% slower at 1 thread, better at 16"


def test_a_group_summarises_relative_qps_per_concurrency_and_averages_growth_from_the_lowest() -> None:
    qps = {1: {"a": 100.0, "b": 10.0}, 2: {"a": 200.0, "b": 15.0}}
    other = {1: {"a": 50.0, "b": 10.0}, 2: {"a": 50.0}}
    points = [AtConcurrency(d, {"base": qps[d], "new": other[d]}) for d in (1, 2)]
    result = scaleup(
        points,
        base="base",
        columns=[("base", "A"), ("new", "B")],
        labels=["a", "b"],
        group_of={"a": "g", "b": "g"},
        groups=["g", "empty"],
    )

    group = result.groups["g"]
    assert list(result.groups) == ["g"]  # a group with no microbenchmark here has no curves
    assert group.relative["new"][0].avg == pytest.approx(0.75) and group.relative["new"][0].count_text == "2"
    assert group.relative["new"][1].avg == pytest.approx(0.25) and group.relative["new"][1].count_text == "1 of 2"
    assert group.scaling["base"][1].avg == pytest.approx((2.0 + 1.5) / 2)
    assert group.scaling["new"][1].avg == pytest.approx(1.0)


def test_a_zero_base_is_infinite_and_drawn_at_the_top_marked() -> None:
    points = [
        AtConcurrency(1, {"b": {"p": 0.0}, "v": {"p": 5.0}}),
        AtConcurrency(2, {"b": {"p": 2.0}, "v": {"p": 3.0}}),
    ]
    result = scaleup(points, base="b", columns=[("b", "B"), ("v", "V")], labels=["p"], group_of={}, groups=[])
    rel = result.microbenchmarks["p"].relative

    assert math.isinf(rel[1].values[0])
    figure = scaleup_charts.relative_chart("t", result.dops, rel)
    line = figure["data"][1]
    assert line["text"][0] == "∞" and line["y"][0] == max(v for v in line["y"] if v is not None)
    assert figure["layout"]["xaxis"]["type"] == "log" and figure["layout"]["xaxis"]["tickvals"] == [1, 2]


# --------------------------------------------------------------------------- the page, on real runs


def test_the_microbenchmark_page_shows_each_versions_qps_per_client_count_as_measured(
    series: dict[str, Run], client: Client
) -> None:
    point = Microbenchmark.objects.get(test="point-query", range_size=100)
    html = client.get(f"/compare/scaleup?base={series[BASE].pk}&mb={point.pk}").content.decode()

    qps = cells(html, "scaleup-qps")
    expected = summary_qps()
    assert qps["MariaDB 10.11.19 rel (base)"] == [f"{v:.0f}" for v in expected[(BASE, "point-query_range=100")]]
    assert qps["MariaDB 10.11.19 rel2"] == [f"{v:.0f}" for v in expected[(OTHER, "point-query_range=100")]]
    relative = cells(html, "scaleup-relative")["MariaDB 10.11.19 rel2"]
    assert relative == [
        f"{o / b:.2f}"
        for o, b in zip(
            expected[(OTHER, "point-query_range=100")], expected[(BASE, "point-query_range=100")], strict=True
        )
    ]
    assert "CPU / operation" in html and "context switches / operation" in html
    figure = json.loads(re.search(r'<script id="scale-qps" type="application/json">(.*?)</script>', html, re.S)[1])
    assert [trace["name"] for trace in figure["data"]] == ["MariaDB 10.11.19 rel", "MariaDB 10.11.19 rel2"]
    assert figure["data"][0]["x"] == DOPS


def test_versions_of_other_dbms_are_compared_at_each_concurrency_when_ticked(
    series: dict[str, Run], client: Client
) -> None:
    scan = Microbenchmark.objects.get(test="scan", range_size=100)
    ticked = "&".join(f"runs={series[name].pk}" for name in (BASE, PG))
    html = client.get(f"/compare/scaleup?base={series[BASE].pk}&{ticked}&mb={scan.pk}").content.decode()

    expected = summary_qps()
    relative = cells(html, "scaleup-relative")["Postgres 15.20"]
    assert relative == [
        f"{p / m:.2f}"
        for p, m in zip(expected[(PG, "scan_range=100")], expected[(BASE, "scan_range=100")], strict=True)
    ]


def test_the_group_page_summarises_its_microbenchmarks_at_each_concurrency(
    series: dict[str, Run], client: Client
) -> None:
    response = client.get(f"/compare/scaleup?base={series[BASE].pk}&group=point queries")
    html = response.content.decode()

    assert response.status_code == 200
    row = cells(html, "scaleup-group")["MariaDB 10.11.19 rel2"]
    expected = summary_qps()
    ratios = [
        [o / b for o, b in zip(expected[(OTHER, label)], expected[(BASE, label)], strict=True)]
        for label in ("point-query_range=100", "random-points_range=100")
    ]
    assert row == [f"{sum(r[i] for r in ratios) / 2:.2f}" for i in range(4)]
    assert "growth" in html and 'id="scale-growth"' in html


def test_the_overview_draws_a_chart_per_group_and_links_every_page(series: dict[str, Run], client: Client) -> None:
    html = client.get(f"/compare/scaleup?base={series[BASE].pk}").content.decode()

    assert html.count('class="chart') >= 3
    assert "group=writes" in html and "&amp;mb=" in html
    assert "at the <em>same</em> number of clients" in html


def test_the_comparison_and_the_drill_down_link_to_the_scale_up_pages(series: dict[str, Run], client: Client) -> None:
    base = series[BASE].pk
    point = Microbenchmark.objects.get(test="point-query", range_size=100)

    compare = client.get(f"/compare/?base={base}").content.decode()
    drill = client.get(f"/microbenchmarks/{point.pk}/?base={base}").content.decode()

    assert re.search(rf'href="/compare/scaleup\?base={base}[^"]*" id="scaleup-link"', compare)
    assert re.search(rf'href="/compare/scaleup\?base={base}[^"]*&amp;mb={point.pk}" id="scaleup-link"', drill)


def test_an_unknown_group_or_microbenchmark_is_not_found(series: dict[str, Run], client: Client) -> None:
    base = series[BASE].pk

    assert client.get(f"/compare/scaleup?base={base}&group=nonsense").status_code == 404
    assert client.get(f"/compare/scaleup?base={base}&mb=999999").status_code == 404
    assert client.get(f"/compare/scaleup?base={base}&mb=x").status_code == 404


def test_the_page_cache_keeps_one_page_per_group_and_microbenchmark(series: dict[str, Run], client: Client) -> None:
    base = series[BASE].pk
    point = Microbenchmark.objects.get(test="point-query", range_size=100)
    scan = Microbenchmark.objects.get(test="scan", range_size=100)
    titles = []
    for query in (f"mb={point.pk}", f"mb={scan.pk}", "group=writes", "group=point queries", ""):
        for _ in range(2):  # the second request is served from the page cache
            html = client.get(f"/compare/scaleup?base={base}&{query}").content.decode()
            titles.append(re.search(r"<h1>(.*?) <span", html, re.S)[1])  # type: ignore[index]

    assert (
        titles[::2]
        == titles[1::2]
        == [
            "Scale-up: point-query_range=100",
            "Scale-up: scan_range=100",
            "Scale-up: group writes",
            "Scale-up: group point queries",
            "Scale-up: every group",
        ]
    )
