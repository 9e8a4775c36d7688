"""Every chart is drawn by plotly.js's cartesian bundle, served from benchdash's own static files: one chart path."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from runs.models import Microbenchmark, Run

if TYPE_CHECKING:
    from playwright.sync_api import Locator, Page

    from tests.browser.conftest import DemoData

pytestmark = pytest.mark.browser

BASE = "x.my5651_rel_o2nofp.z12a_c8r32.pk1"
LINES_PER_GROUP = {
    "point queries": 9,
    "range queries without aggregation": 5,
    "range queries with aggregation": 8,
    "writes": 10,
}
DRAWN = """() => Array.from(document.querySelectorAll('section.group')).map((section) => {
  const chart = section.querySelector('.chart');
  return [section.querySelector('h3').firstChild.textContent.trim(), chart.data ? chart.data.length : null];
})"""


def _wait_for_plotly(chart: Locator) -> None:
    """Until plotly.js has drawn ``chart`` (a ``.chart`` div: Plotly.newPlot draws into it)."""
    chart.locator(".main-svg").first.wait_for()


@pytest.mark.parametrize("viewport", [(1280, 900), (390, 844)], indirect=True)
def test_every_group_chart_is_a_plotly_chart_without_any_interaction_even_out_of_view(
    page: Page, demo_data: DemoData, console_errors: list[str]
) -> None:
    base = Run.objects.get(name=BASE)
    page.goto(f"/compare/?base={base.pk}", wait_until="load")
    # The last group is far below the fold at either width: it is drawn when the browser is idle, so a printout
    # or a full-page capture shows it without scrolling.
    _wait_for_plotly(page.locator("section.group .chart").last)
    assert dict(page.evaluate(DRAWN)) == LINES_PER_GROUP
    assert page.locator("svg.svgchart, .chart-hint").count() == 0  # no server drawing beside it
    assert console_errors == []


def test_the_page_runs_plotly_js_s_cartesian_bundle_of_the_plotly_package_s_version(
    page: Page, demo_data: DemoData
) -> None:
    from reports import staticfiles

    base = Run.objects.get(name=BASE)
    page.goto(f"/compare/?base={base.pk}", wait_until="load")
    page.wait_for_function("() => typeof window.Plotly !== 'undefined'")
    served = page.evaluate("fetch(document.getElementById('plotly-js').content).then((r) => r.text())")
    assert served.startswith("/**\n* plotly.js (cartesian - minified) v"), served[:80]
    assert len(served) < 2_000_000  # not the 4.8 MB full bundle
    assert page.evaluate("Plotly.version") == staticfiles.bundle_version(staticfiles.full_bundle())


def test_a_drill_down_draws_its_bar_line_and_hw_charts_with_plotly(
    page: Page, demo_data: DemoData, console_errors: list[str]
) -> None:
    base = Run.objects.get(name=BASE)
    microbenchmark = Microbenchmark.objects.get(test="point-query", range_size=100)
    page.goto(f"/microbenchmarks/{microbenchmark.pk}/?base={base.pk}", wait_until="load")
    qps, latency, hw = (page.locator(f'[data-figure="drill-{name}"]') for name in ("qps", "latency", "hw"))
    for chart in (qps, latency, hw):
        _wait_for_plotly(chart)
    assert "bar" in qps.evaluate("el => el.data.map((t) => t.type)")
    assert hw.evaluate("el => el.data.length") == 4
    assert latency.evaluate("el => el.data.length") == 2
    # Its stories and why the newest version changed load after the charts and the table (htmx), in their place.
    details = page.locator("#drill-details")
    details.locator("section.explain").wait_for()
    assert details.get_attribute("hx-get") is None and page.locator("#drill-details").count() == 1
    assert details.locator("h2#stories").count() == 1 and "Why it changed" in details.inner_text()
    assert "point-query_range=100 · MySQL " in details.inner_text() and " vs MySQL 5.6.51" in details.inner_text()
    assert page.locator("#drill-suite-metrics").count() == 1
    assert console_errors == []
