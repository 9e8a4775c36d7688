"""The frame of every page as a new user meets it: the header one row on a laptop, two short rows on a phone,
and the comparison's first chart in view without scrolling at 1400 × 900."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import pytest

from conftest import SMALL_BASE_RUN
from runs.models import Run

if TYPE_CHECKING:
    from playwright.sync_api import Page

    from tests.browser.conftest import DemoData

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LAPTOP = (1400, 900)
PHONE = (390, 844)
BOX = "(selector) => { const r = document.querySelector(selector).getBoundingClientRect(); return [r.top, r.height]; }"


def _box(page: Page, selector: str) -> tuple[float, float]:
    top, height = page.evaluate(BOX, selector)
    return top, height


@pytest.mark.parametrize("viewport", [LAPTOP], indirect=True)
def test_logged_in_as_admin_the_navigation_and_the_search_box_fit_one_row_at_1400_px(
    page: Page, log_in: Callable[[str], None], demo_data: DemoData
) -> None:
    log_in("admin")  # the longest navigation: Upload, Admin, the account link and Log out
    page.goto(f"/compare/?base={Run.objects.get(name=SMALL_BASE_RUN).pk}")
    nav_top, nav_height = _box(page, ".topbar nav")
    search_top, search_height = _box(page, ".header-search")
    _, header_height = _box(page, ".topbar")
    assert nav_height < 30 and header_height < 60  # one row of links, not two
    assert abs((nav_top + nav_height / 2) - (search_top + search_height / 2)) < 6  # the search box beside them
    assert page.get_by_role("link", name="admin · API tokens").is_visible()  # the whole name for screen readers


@pytest.mark.parametrize("viewport", [PHONE], indirect=True)
@pytest.mark.parametrize("path", ["/", "/runs/", "/regressions/"])
def test_on_a_phone_the_header_takes_two_short_rows(page: Page, demo_data: DemoData, path: str) -> None:
    page.goto(path)
    _, header_height = _box(page, ".topbar")
    assert header_height < 100  # it was ~185 of the phone's 844 px on every page
    nav = page.locator(".topbar nav")
    # Every link is still there, in one row that scrolls sideways.
    assert nav.evaluate("(n) => n.scrollWidth > n.clientWidth")
    assert nav.get_by_role("link", name="Benchmarks").count() == 1
    assert page.evaluate("() => document.documentElement.scrollWidth") <= PHONE[0]


@pytest.mark.parametrize("viewport", [PHONE], indirect=True)
def test_logged_in_on_a_phone_the_page_is_no_wider_than_the_screen(
    page: Page, log_in: Callable[[str], None], demo_data: DemoData
) -> None:
    log_in("admin")  # the account link's name, hidden for the eye, sits at the end of the scrolling row
    page.goto("/runs/")
    assert page.evaluate("() => document.documentElement.scrollWidth") <= PHONE[0]
    assert page.get_by_role("link", name="admin · API tokens").count() == 1  # still there for screen readers


@pytest.mark.parametrize("viewport", [LAPTOP], indirect=True)
def test_the_comparisons_first_chart_is_in_view_without_scrolling(page: Page, demo_data: DemoData) -> None:
    page.goto(f"/compare/?base={Run.objects.get(name=SMALL_BASE_RUN).pk}")
    chart_top, _ = _box(page, "section.group .chart")
    assert chart_top < LAPTOP[1] - 250  # its title and the top of its plot, not only the form and notes
    # What moved out of the way is still one click off.
    assert page.locator("details.chart-help summary").is_visible()
    assert page.locator("#writeup-zip").is_visible() and page.locator("#api-link").is_visible()
