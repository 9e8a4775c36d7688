"""Charts drawn by the server show at once; plotly.js runs only when the user reaches for one (issue 4)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from reports import svgchart
from runs.models import Run

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
# What the page shows of each chart before any interaction: per group, which drawing is on screen (the layout
# width nearest the chart's) and how many lines it has.
SHOWN = """() => Array.from(document.querySelectorAll('section.group')).map((section) => {
  const shown = Array.from(section.querySelectorAll('.chart svg.svgchart'))
    .filter((svg) => svg.getBoundingClientRect().height > 0);
  return [section.querySelector('h3').firstChild.textContent.trim(),
          shown.map((svg) => svg.viewBox.baseVal.width),
          shown.map((svg) => svg.querySelectorAll('path.trace').length)];
})"""


def _compare(page: Page) -> None:
    base = Run.objects.get(name=BASE)
    page.goto(f"/compare/?base={base.pk}", wait_until="load")


def _plotly_loaded(page: Page) -> bool:
    return bool(page.evaluate("typeof window.Plotly !== 'undefined'"))


def _wait_for_plotly(chart: Locator) -> None:
    """Until plotly.js has drawn ``chart`` (a ``.chart`` div: Plotly.newPlot draws into it)."""
    chart.locator(".main-svg").first.wait_for()


def _traces(chart: Locator) -> int:
    return int(chart.evaluate("el => el.data.length"))


@pytest.mark.parametrize(("viewport", "drawing"), [((1280, 900), 1180), ((390, 844), 380)], indirect=["viewport"])
def test_group_charts_show_as_svg_with_a_line_per_microbenchmark_and_no_plotly(
    page: Page, demo_data: DemoData, console_errors: list[str], drawing: int
) -> None:
    _compare(page)
    page.wait_for_timeout(500)  # time for anything that would run plotly.js by itself to do so
    shown = page.evaluate(SHOWN)
    assert {name: lines for name, _, lines in shown} == {name: [n] for name, n in LINES_PER_GROUP.items()}
    assert {tuple(widths) for _, widths, _ in shown} == {(drawing,)}  # one drawing per chart, laid out for its width
    assert page.locator("section.group .chart").first.get_attribute("tabindex") == "0"
    assert page.get_by_text("interactive chart loads on hover or focus").first.is_visible() == (drawing > 400)
    assert not _plotly_loaded(page)
    assert page.locator(".js-plotly-plot").count() == 0
    assert console_errors == []


def test_hovering_a_chart_runs_plotly_and_turns_it_into_a_plotly_chart_in_place(
    page: Page, demo_data: DemoData, console_errors: list[str]
) -> None:
    _compare(page)
    first = page.locator("section.group .chart").first
    box = first.bounding_box()
    assert box is not None and not _plotly_loaded(page)
    first.hover()
    _wait_for_plotly(first)
    assert _plotly_loaded(page)
    assert _traces(first) == LINES_PER_GROUP["point queries"]
    assert first.locator("svg.svgchart").count() == 0 and first.locator(".chart-hint").count() == 0
    after = first.bounding_box()
    assert after is not None and abs(after["height"] - box["height"]) <= 1  # nothing below the chart moved
    # The other charts become plotly charts as they come into view, without being hovered.
    last = page.locator("section.group .chart").last
    last.scroll_into_view_if_needed()
    _wait_for_plotly(last)
    assert _traces(last) == LINES_PER_GROUP["writes"]
    assert console_errors == []


def test_focusing_a_chart_with_the_keyboard_turns_it_into_a_plotly_chart(page: Page, demo_data: DemoData) -> None:
    _compare(page)
    page.get_by_role("heading", name="Per group").click()  # where sequential focus navigation starts
    assert not _plotly_loaded(page)
    for _ in range(10):  # past the regression badges' links, if any, to the first chart
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.matches('section.group .chart')"):
            break
    focused = page.locator(".chart:focus")
    assert focused.count() == 1
    _wait_for_plotly(focused)
    assert _traces(focused) == LINES_PER_GROUP["point queries"]


def test_a_drill_down_draws_its_bar_chart_at_once_and_its_line_charts_on_intent(
    page: Page, demo_data: DemoData, console_errors: list[str]
) -> None:
    from runs.models import Microbenchmark

    base = Run.objects.get(name=BASE)
    microbenchmark = Microbenchmark.objects.get(test="point-query", range_size=100)
    page.goto(f"/microbenchmarks/{microbenchmark.pk}/?base={base.pk}", wait_until="load")
    qps, latency, hw = (page.locator(f'[data-figure="drill-{name}"]') for name in ("qps", "latency", "hw"))
    _wait_for_plotly(qps)  # bars and a second axis: only plotly.js draws that one
    assert qps.locator("svg.svgchart").count() == 0
    assert latency.locator(".main-svg").count() == 0
    assert latency.locator("svg.svgchart").count() == len(svgchart.VARIANT_WIDTHS)
    hw.hover()
    _wait_for_plotly(hw)
    assert _traces(hw) == 4
    _wait_for_plotly(latency)  # on screen too: it follows
    assert _traces(latency) == 2
    assert console_errors == []
