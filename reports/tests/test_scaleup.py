"""Scale-up: throughput against client count, one line per version, relative to the base at the same concurrency.

The real data is ours: sysbench 1.0 run here at 1, 2, 4 and 8 threads against MariaDB 10.11 (two builds) and
PostgreSQL 15, written by the runner in the field's layout (tests/data/sysbench-scaleup.tar.gz, see its README).
"""

from __future__ import annotations

import io
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
from reports.scaleup_views import METRIC_NAMES
from runs.importer import submit_and_import
from runs.models import Bundle, Microbenchmark, Run
from suites.sysbench import parse as sysbench

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


def met_values(tar: tarfile.TarFile) -> dict[tuple[str, str, int, int], dict[str, float]]:
    """Every sb.met file of an archive as the project's own parser reads it: (run, test, range, client count) →
    HW metrics."""
    found = {}
    for member in tar:
        run, _, name = member.name.partition("/")
        parsed = sysbench.parse_file_name(name)
        if parsed is not None and parsed.kind == "met" and parsed.dop is not None:
            text = tar.extractfile(member).read().decode()  # type: ignore[union-attr]
            found[(run, parsed.test, parsed.range_size, parsed.dop)] = sysbench.parse_met(text, file_name=name)
    return found


def assert_metric_tables_hold(html: str, rows: dict[str, str], test: str, range_size: int, mets: dict) -> None:
    """Each HW metric table of a microbenchmark page, row by row (``rows``: row label → run), equals the
    runs' sb.met values at each client count the page shows; a metric no sb.met has shows no table."""
    head = re.search(r'id="scaleup-qps".*?</thead>', html, re.S)
    assert head is not None
    shown = [int(d) for d in re.findall(r"(\d+) clients?</th>", head[0])]
    for metric, (_name, digits) in METRIC_NAMES.items():
        measured = [mets[(run, test, range_size, dop)].get(metric) for run in rows.values() for dop in shown]
        if all(v is None for v in measured):
            assert f'id="scaleup-metric-{metric}"' not in html, metric
            continue
        table = cells(html, f"scaleup-metric-{metric}")
        for label, run in rows.items():
            assert table[label] == [f"{mets[(run, test, range_size, dop)][metric]:.{digits}f}" for dop in shown], (
                metric,
                label,
            )


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


def test_the_hw_metrics_per_client_count_are_the_runs_own_sb_met_values(series: dict[str, Run], client: Client) -> None:
    point = Microbenchmark.objects.get(test="point-query", range_size=100)
    html = client.get(f"/compare/scaleup?base={series[BASE].pk}&mb={point.pk}").content.decode()
    with tarfile.open(FIXTURE) as tar:
        mets = met_values(tar)

    assert_metric_tables_hold(
        html, {"MariaDB 10.11.19 rel (base)": BASE, "MariaDB 10.11.19 rel2": OTHER}, "point-query", 100, mets
    )
    # Made where iostat is not installed: vmstat's CPU and context switches only, and no KB table of zeros.
    assert 'id="scaleup-metric-cpu_o"' in html and 'id="scaleup-metric-cs_o"' in html
    assert 'id="scaleup-metric-rkb_o"' not in html and 'id="scaleup-metric-wkb_o"' not in html


def test_kb_read_and_written_per_operation_are_the_runs_own_sb_met_values(
    db: None, corpus: Path, client: Client
) -> None:
    # The author's Postgres runs carry iostat's rKB/o and wKB/o; they were measured at 40 clients only.
    mets = {}
    for version in ("1023", "174"):
        path = next((corpus / "sysbench-pg-tarballs").glob(f"x.pg{version}_*.tar.gz"))
        submit_and_import(path.read_bytes(), name=path.name, source=Bundle.Source.COMMAND, overrides={"server": "pg"})
        with tarfile.open(path) as tar:
            mets.update(met_values(tar))
    base = Run.objects.get(name__startswith="x.pg1023")
    other = Run.objects.get(name__startswith="x.pg174")
    inlist = Microbenchmark.objects.get(test="update-inlist", range_size=100)
    html = client.get(f"/compare/scaleup?base={base.pk}&mb={inlist.pk}").content.decode()

    assert_metric_tables_hold(
        html, {"Postgres 10.23 (base)": base.name, "Postgres 17.4": other.name}, "update-inlist", 100, mets
    )
    assert cells(html, "scaleup-metric-wkb_o")["Postgres 17.4"] == [
        f"{mets[(other.name, 'update-inlist', 100, 40)]['wkb_o']:.3f}"
    ]
    assert mets[(other.name, "update-inlist", 100, 40)]["rkb_o"] > 0


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
    assert '<meta name="benchdash-plotly"' in html and 'id="plotly-js"' in html  # named: it is drawn
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


def with_version(run: str, version: str) -> bytes:
    """The fixture with a manifest naming ``run`` a build of ``version`` (as a user corrects a directory name)."""
    buffer = io.BytesIO()
    with tarfile.open(FIXTURE) as source, tarfile.open(fileobj=buffer, mode="w:gz") as target:
        for member in source:
            target.addfile(member, source.extractfile(member) if member.isfile() else None)
        manifest = f'[runs."{run}"]\nversion = "{version}"\n'.encode()
        info = tarfile.TarInfo("benchdash.toml")
        info.size = len(manifest)
        target.addfile(info, io.BytesIO(manifest))
    return buffer.getvalue()


def drawn(html: str, figure_id: str) -> list[str]:
    found = re.search(rf'<script id="{figure_id}" type="application/json">(.*?)</script>', html, re.S)
    assert found is not None, figure_id
    return [trace["name"] for trace in json.loads(found[1])["data"]]


def test_the_charts_follow_the_comparisons_release_view_and_the_tables_keep_every_version(
    db: None, client: Client
) -> None:
    # MariaDB 11.2 is a short-term release, and the newest of this series: the default view reads it (the
    # newest release is what a reader asks about), provisional until a newer release arrives.
    submit_and_import(
        with_version(OTHER, "11.2.6"), name=FIXTURE.name, source=Bundle.Source.COMMAND, overrides={"server": "c2r8"}
    )
    base = Run.objects.get(name=BASE).pk
    point = Microbenchmark.objects.get(test="point-query", range_size=100)
    lts, short = "MariaDB 10.11.19", "MariaDB 11.2.6"

    def page(query: str) -> str:
        response = client.get(f"/compare/scaleup?base={base}&{query}")
        assert response.status_code == 200, response.content
        return response.content.decode()

    default = page(f"mb={point.pk}")
    assert drawn(default, "scale-qps") == drawn(default, "scale-rel") == drawn(default, "scale-cpu") == [lts, short]
    assert list(cells(default, "scaleup-qps")) == [f"{lts} (base)", short]
    assert list(cells(default, "scaleup-metric-cpu_o")) == [f"{lts} (base)", short]

    every = page(f"mb={point.pk}&releases=all")
    assert drawn(every, "scale-qps") == drawn(every, "scale-rel") == [lts, short]
    assert list(cells(every, "scaleup-relative")) == [f"{lts} (base)", short]

    long_term = page(f"mb={point.pk}&releases=long-term")
    assert drawn(long_term, "scale-qps") == [lts, short]

    group = page("group=point queries")
    assert drawn(group, "scale-rel") == drawn(group, "scale-growth") == [lts, short]
    assert list(cells(group, "scaleup-group")) == list(cells(group, "scaleup-growth")) == [f"{lts} (base)", short]

    overview = page("")
    charts = re.findall(r'<script id="(scale-\d+)"', overview)
    assert len(charts) >= 3 and all(drawn(overview, chart) == [lts, short] for chart in charts)


def test_a_series_measured_at_one_concurrency_draws_no_chart_and_keeps_its_tables(db: None, client: Client) -> None:
    buffer = io.BytesIO()
    with tarfile.open(FIXTURE) as source, tarfile.open(fileobj=buffer, mode="w:gz") as target:
        for member in source:
            parsed = sysbench.parse_file_name(member.name.partition("/")[2])
            if member.isdir() or (parsed is not None and parsed.dop == 1):
                target.addfile(member, source.extractfile(member) if member.isfile() else None)
    submit_and_import(buffer.getvalue(), name="dop1.tar.gz", source=Bundle.Source.COMMAND, overrides={"server": "c"})
    base = Run.objects.get(name=BASE).pk
    point = Microbenchmark.objects.get(test="point-query", range_size=100)

    overview = client.get(f"/compare/scaleup?base={base}").content.decode()
    html = client.get(f"/compare/scaleup?base={base}&mb={point.pk}").content.decode()

    for page in (overview, html):
        assert "measured at one concurrency only (1 client):" in page
        assert "data-figure=" not in page
        # No chart, no plotly named (a preload of it would be warned about as never used).
        assert 'id="plotly-js"' not in page
    assert cells(html, "scaleup-qps")["MariaDB 10.11.19 rel (base)"] == [
        f"{summary_qps()[(BASE, 'point-query_range=100')][0]:.0f}"
    ]


def test_the_scale_up_page_reads_its_base_run_and_series_stamp_once_for_every_concurrency(
    series: dict[str, Run],
) -> None:
    from django.core.cache import cache
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    base = series[BASE]
    url = f"/compare/scaleup?base={base.pk}"
    Client().get(url)  # what is read once per process
    cache.clear()
    with CaptureQueriesContext(connection) as queries:
        assert Client().get(url).status_code == 200
    sql = [q["sql"] for q in queries]
    base_lookups = [q for q in sql if re.search(rf'WHERE \(?"runs_run"\."id" = {base.pk}\)? ', q + " ")]
    # The page cache's key reads the series' runs (its stamp) once, in its own query; nothing reads them again.
    stamps = [q for q in sql if 'COUNT("runs_run"."id")' in q]
    assert len(base_lookups) == 1 and not stamps, sql
