"""The regression list in a real browser: open stories by default, tabs for the other stories, the release view."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from playwright.sync_api import Page

    from tests.browser.conftest import DemoData

pytestmark = pytest.mark.browser

DESKTOP = (1400, 900)
PHONE = (390, 844)


def _rows(page: Page) -> list[int]:
    return [
        int(pk)
        for pk in page.locator("tr[data-regression]").evaluate_all("rows => rows.map(r => r.dataset.regression)")
    ]


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["1400", "390"])
def test_the_tabs_switch_between_open_stories_improvements_outliers_and_all(
    page: Page, demo_data: DemoData, console_errors: list[str]
) -> None:
    from regressions.detection import detect_regressions
    from regressions.models import Regression
    from runs.models import Run

    for server_id, workload_id in Run.objects.values_list("server_id", "workload_id").distinct():
        detect_regressions(server_id, workload_id)
    stories = list(Regression.objects.all())
    page.goto("/regressions/")
    assert page.locator("nav.tabs a.current").inner_text() == "Open regressions"
    assert sorted(_rows(page)) == sorted(r.pk for r in stories if r.is_open_story) != []
    # Each open story carries a detail line: its story, noise and builds.
    assert "σ " in page.locator("tr.story-detail").first.inner_text()

    page.locator("nav.tabs").get_by_role("link", name="Improvements").click()
    page.wait_for_url("**tab=improvements**")
    improvements = {
        r.pk
        for r in stories
        if r.kind == "improvement" and r.metric == "qps" and not r.outlier and not r.folded_into_id
    }
    assert set(_rows(page)) == improvements

    # A HW metric that stepped where QPS did not: its own tab, with the metric in a column of its own.
    page.locator("nav.tabs").get_by_role("link", name="HW metrics").click()
    page.wait_for_url("**tab=metrics**")
    assert set(_rows(page)) == {r.pk for r in stories if r.metric != "qps"} != set()
    assert page.locator("table.regressions thead th", has_text="Metric").count() == 1

    page.locator("nav.tabs").get_by_role("link", name="Outliers").click()
    page.wait_for_url("**tab=outliers**")
    assert set(_rows(page)) == {r.pk for r in stories if r.outlier}

    page.locator("nav.tabs").get_by_role("link", name="All").click()
    page.wait_for_url("**tab=all**")
    assert len(_rows(page)) == len(stories)
    # The release-view switch keeps the tab.
    page.get_by_role("link", name="every release", exact=True).click()
    page.wait_for_url("**releases=all**")
    assert "tab=all" in page.url and page.locator("nav.tabs a.current").inner_text() == "All"

    page.goto("/regressions/")
    page.locator("tr[data-regression] a").first.click()
    assert page.locator("p.headline").is_visible() and "against" in page.locator("p.headline").inner_text()
    body_width, window_width = page.evaluate("() => [document.body.scrollWidth, window.innerWidth]")
    assert body_width <= window_width + 1
    assert console_errors == []


@pytest.mark.parametrize("viewport", [(1280, 900), DESKTOP], ids=["1280", "1400"])
@pytest.mark.parametrize("tab", ["", "metrics"])
def test_on_a_desktop_screen_every_column_triage_acts_on_is_in_view_without_scrolling_sideways(
    page: Page, demo_data: DemoData, console_errors: list[str], log_in: Callable[[str], Any], tab: str
) -> None:
    """With the triage tick column (and on the HW-metrics tab, the metric's), long microbenchmark, workload and
    server names wrap: Bugs and State stay on screen rather than past the table's right edge."""
    from regressions.detection import detect_regressions
    from runs.models import Run

    for server_id, workload_id in Run.objects.values_list("server_id", "workload_id").distinct():
        detect_regressions(server_id, workload_id)
    log_in("triager")
    page.goto(f"/regressions/?tab={tab}" if tab else "/regressions/")
    assert _rows(page) != []
    wrap = page.locator(".table-wrap:has(table.regressions)")
    assert wrap.evaluate("w => w.scrollWidth - w.clientWidth") <= 1
    width = page.evaluate("window.innerWidth")
    for header in ("Bugs", "State"):
        box = page.locator("table.regressions thead th", has_text=header).bounding_box()
        assert box is not None and box["x"] + box["width"] <= width, header
    assert console_errors == []
