"""A chart shows its data before plotly.js has arrived (a plain SVG first paint), and plotly.js takes it over."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from runs.models import Microbenchmark, Run

if TYPE_CHECKING:
    from playwright.sync_api import Page, Route

    from tests.browser.conftest import DemoData

pytestmark = pytest.mark.browser

BASE = "x.my5651_rel_o2nofp.z12a_c8r32.pk1"
SKETCHED = """() => Array.from(document.querySelectorAll('.chart')).map((chart) => {
  const svg = chart.querySelector('svg.first-paint');
  return svg ? svg.querySelectorAll('path[d^="M"], rect').length : 0;
})"""


def _drill_url() -> str:
    base = Run.objects.get(name=BASE)
    point = Microbenchmark.objects.get(test="point-query", range_size=100)
    return f"/microbenchmarks/{point.pk}/?base={base.pk}"


def _no_plotly(page: Page) -> None:
    def refuse(route: Route) -> None:
        route.abort()

    page.route("**/plotly*.js", refuse)


def test_without_plotly_js_every_line_and_bar_chart_of_the_drill_down_shows_its_data(
    page: Page, demo_data: DemoData
) -> None:
    _no_plotly(page)
    page.goto(_drill_url(), wait_until="load")
    page.wait_for_function("() => document.querySelectorAll('.chart svg.first-paint').length === 3")
    qps, latency, hw = page.evaluate(SKETCHED)
    assert qps > 3 and latency == 2 and hw == 4  # bars and the relative line; two latency lines; four HW lines
    assert page.evaluate("typeof window.Plotly") == "undefined"


def test_without_plotly_js_the_comparison_s_group_charts_show_a_line_per_microbenchmark(
    page: Page, demo_data: DemoData
) -> None:
    _no_plotly(page)
    page.goto(f"/compare/?base={Run.objects.get(name=BASE).pk}", wait_until="load")
    page.wait_for_function("() => document.querySelectorAll('section.group .chart svg.first-paint').length > 0")
    lines = page.evaluate(SKETCHED)
    assert lines[:4] == [9, 5, 8, 10]  # one line per microbenchmark of each group, as plotly.js draws them


def test_plotly_js_takes_the_chart_over_and_no_first_paint_is_left_behind(
    page: Page, demo_data: DemoData, console_errors: list[str]
) -> None:
    page.goto(_drill_url(), wait_until="load")
    page.locator(".chart").last.locator(".main-svg").first.wait_for()
    assert page.locator("svg.first-paint").count() == 0
    assert console_errors == []


FETCHED_AFTER = """() => {
  const mark = performance.getEntriesByName('benchdash:first-paint')[0];
  const plotly = performance.getEntriesByType('resource').find((r) => r.name.includes('plotly'));
  const blocking = Array.from(document.querySelectorAll('head script[src]')).filter((s) => !s.defer && !s.async);
  const preloads = document.querySelectorAll('link[rel=preload], link[rel=modulepreload]').length;
  return [mark ? mark.startTime : null, plotly ? plotly.startTime : null, blocking.length, preloads];
}"""


@pytest.mark.parametrize("page_kind", ["drill-down", "comparison"])
def test_plotly_js_is_asked_for_only_once_the_first_paint_is_on_screen(
    page: Page, demo_data: DemoData, page_kind: str
) -> None:
    url = _drill_url() if page_kind == "drill-down" else f"/compare/?base={Run.objects.get(name=BASE).pk}"
    page.goto(url, wait_until="load")
    page.wait_for_function("() => typeof window.Plotly !== 'undefined'")
    first_paint, plotly_fetched, blocking, preloads = page.evaluate(FETCHED_AFTER)
    assert first_paint is not None and plotly_fetched is not None
    assert plotly_fetched >= first_paint, (first_paint, plotly_fetched)
    assert (blocking, preloads) == (0, 0)  # nothing in head holds the first paint back


DETAILS_AFTER = """() => {
  const mark = performance.getEntriesByName('benchdash:first-paint')[0];
  const details = performance.getEntriesByType('resource').filter((r) => new URL(r.name).pathname.endsWith('/details'));
  return [mark ? mark.startTime : null, details.map((r) => r.startTime)];
}"""


def test_the_drill_down_asks_for_its_details_once_its_first_paint_is_on_screen(page: Page, demo_data: DemoData) -> None:
    """Asked for with the page, the details held one of the server's workers while the page's scripts came."""
    page.goto(_drill_url(), wait_until="load")
    page.locator("#drill-details:not([hx-get]) h2#stories").wait_for()
    first_paint, details = page.evaluate(DETAILS_AFTER)
    assert first_paint is not None and len(details) == 1, (first_paint, details)
    assert details[0] > first_paint, (first_paint, details)
