"""The scale-up pages in Chromium, on the phone and the desktop: charts drawn, nothing wider than the window,
and the way there and back from the comparison and the drill-down.

The series is ours: sysbench at 1, 2, 4 and 8 clients against two MariaDB 10.11.19 builds and PostgreSQL 15.20
(tests/data/sysbench-scaleup.tar.gz).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from runs.models import Bundle, Microbenchmark, Run

if TYPE_CHECKING:
    from playwright.sync_api import Page

pytestmark = pytest.mark.browser

FIXTURE = Path(__file__).resolve().parents[1] / "data" / "sysbench-scaleup.tar.gz"
BASE, PG = "x.ma101119_rel.c2r8.pk1", "x.pg1520_rel.c2r8.pk1"
VERSIONS = ["MariaDB 10.11.19 rel", "MariaDB 10.11.19 rel2", "Postgres 15.20"]
# Per chart on screen: its size and the names of the lines plotly.js draws.
CHARTS = """() => Array.from(document.querySelectorAll('.chart')).map((chart) => {
  const box = chart.getBoundingClientRect();
  const figure = JSON.parse(document.getElementById(chart.dataset.figure).textContent);
  const svg = chart.querySelector('svg.main-svg');
  const drawn = svg ? svg.getBoundingClientRect() : {width: 0, height: 0};
  const lines = chart.querySelectorAll('.main-svg .scatterlayer .trace').length;
  return {id: chart.dataset.figure, left: box.left, right: box.right, width: drawn.width, height: drawn.height,
          lines: lines, names: figure.data.map((trace) => trace.name),
          axis: figure.layout.yaxis.title.text, title: figure.layout.title.text};
})"""
# Drawn by plotly.js, not only the server-drawn first paint it takes over.
DRAWN = """() => Array.from(document.querySelectorAll('.chart')).every((chart) => {
  const svg = chart.querySelector('svg.main-svg');
  return svg !== null && svg.getBoundingClientRect().height > 0
    && chart.querySelectorAll('.main-svg .scatterlayer .trace').length > 0;
})"""
FITS = "() => [document.documentElement.scrollWidth, document.body.scrollWidth, window.innerWidth]"


@pytest.fixture
def series(transactional_db: None) -> dict[str, Run]:
    from runs.importer import submit_and_import

    submit_and_import(
        FIXTURE.read_bytes(), name=FIXTURE.name, source=Bundle.Source.COMMAND, overrides={"server": "c2r8"}
    )
    return {run.name: run for run in Run.objects.all()}


def _charts_drawn(page: Page, count: int) -> list[dict]:
    page.wait_for_function(DRAWN)
    charts = page.evaluate(CHARTS)
    width = page.viewport_size["width"]  # type: ignore[index]
    assert len(charts) == count, [c["id"] for c in charts]
    for chart in charts:
        assert chart["height"] > 150 and 0 < chart["width"] <= width, chart
        assert chart["left"] >= 0 and chart["right"] <= width, chart
        assert chart["lines"] == len(chart["names"]) == len(VERSIONS), chart
        assert chart["names"] == VERSIONS and chart["axis"] and chart["title"], chart
    return charts


def _fits(page: Page) -> None:
    document, body, window = page.evaluate(FITS)
    assert document <= window and body <= window, (document, body, window)


@pytest.mark.parametrize("viewport", [(1400, 900), (390, 844)], ids=["1400", "390"], indirect=True)
def test_the_scale_up_pages_draw_their_charts_fit_the_window_and_link_both_ways(
    page: Page, series: dict[str, Run], console_errors: list[str]
) -> None:
    base, pg = series[BASE].pk, series[PG].pk
    point = Microbenchmark.objects.get(test="point-query", range_size=100)

    # From the comparison (MariaDB with PostgreSQL ticked) to the overview: one chart per group.
    page.goto(f"/compare/?base={base}&runs={base}&runs={series['x.ma101119_rel2.c2r8.pk1'].pk}&runs={pg}")
    page.locator("#scaleup-link").click()
    page.wait_for_url("**/compare/scaleup?**")
    assert page.locator("h1").inner_text().startswith("Scale-up: every group")
    overview = _charts_drawn(page, 4)
    assert {c["axis"] for c in overview} == {"average relative QPS"}
    _fits(page)

    # A group: its average relative QPS and its growth, and a table per view.
    page.get_by_role("link", name="point queries: each microbenchmark, growth with clients").click()
    page.wait_for_url("**group=point+queries**")
    group = _charts_drawn(page, 2)
    assert group[1]["axis"] == "QPS / QPS at 1 client"
    assert page.locator("#scaleup-group tbody tr").count() == len(VERSIONS)
    _fits(page)

    # One of its microbenchmarks: QPS, relative QPS and CPU per operation against clients.
    page.get_by_role("link", name="point-query_range=100").click()
    page.wait_for_url(f"**mb={point.pk}**")
    charts = _charts_drawn(page, 3)
    assert [c["axis"] for c in charts] == ["QPS", "relative QPS", "CPU / operation"]
    assert page.locator("#scaleup-metric-cpu_o tbody tr").count() == len(VERSIONS)
    _fits(page)

    # To the drill-down at the comparison's concurrency, and back to the same scale-up page.
    page.get_by_role("link", name="across versions at").click()
    page.wait_for_url(f"**/microbenchmarks/{point.pk}/**")
    _fits(page)
    page.locator("#scaleup-link").click()
    page.wait_for_url(f"**/compare/scaleup?**mb={point.pk}**")
    assert page.locator("h1").inner_text().startswith("Scale-up: point-query_range=100")
    _charts_drawn(page, 3)

    # And back to the comparison it came from, with the versions still ticked.
    page.get_by_role("link", name="← back to the comparison").click()
    page.wait_for_url("**/compare/?**")
    assert f"runs={pg}" in page.url
    assert page.locator("#scaleup-link").count() == 1
    assert console_errors == []
