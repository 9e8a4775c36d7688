"""The regressions table in Chromium: it sorts by a click on a header, each story's detail row stays under
its story, and its Markdown copy has one row per story."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from playwright.sync_api import Page

    from tests.browser.conftest import DemoData

pytestmark = pytest.mark.browser


def _order(page: Page) -> list[tuple[str, str]]:
    """Every body row as (kind, story id): "story" rows and the "detail" rows under them."""
    rows = page.locator("table.regressions tbody tr").evaluate_all(
        """rows => rows.map(r => r.dataset.regression ? ['story', r.dataset.regression]
                                                      : ['detail', r.dataset.detailOf || ''])"""
    )
    return [(kind, pk) for kind, pk in rows]


def _steps(page: Page) -> list[float]:
    return page.locator("table.regressions tbody tr[data-regression] td[data-label='Step']").evaluate_all(
        "cells => cells.map(c => parseFloat(c.textContent.replace('−', '-')))"
    )


@pytest.mark.parametrize("role", ["anonymous", "triager"])
def test_a_click_on_step_sorts_the_stories_and_each_detail_row_follows_its_story(
    page: Page, demo_data: DemoData, console_errors: list[str], log_in: Callable[[str], Any], role: str
) -> None:
    from regressions.detection import detect_regressions
    from runs.models import Run

    for server_id, workload_id in Run.objects.values_list("server_id", "workload_id").distinct():
        detect_regressions(server_id, workload_id)
    if role != "anonymous":
        log_in(role)  # the triage column adds a tick box to every story
    page.goto("/regressions/?tab=all")
    table = page.locator("table.regressions")
    table.locator("thead th", has_text="Step").get_by_role("button").wait_for()
    before = _order(page)
    assert len(before) >= 4

    step = table.locator("thead th", has_text="Step")
    step.get_by_role("button").click()
    assert step.get_attribute("aria-sort") == "ascending"
    after = _order(page)
    steps = _steps(page)
    assert steps == sorted(steps) and len(set(steps)) > 1
    assert sorted(after) == sorted(before)
    # Story, then its own detail row, all the way down.
    for i in range(0, len(after), 2):
        assert after[i][0] == "story" and after[i + 1] == ("detail", after[i][1])
    step.get_by_role("button").click()
    assert _steps(page) == sorted(steps, reverse=True)
    assert all(_order(page)[i + 1] == ("detail", _order(page)[i][1]) for i in range(0, len(after), 2))

    # The detail row spans every column of the header.
    columns = table.locator("thead tr th").count()
    assert table.locator("tr.story-detail td").first.get_attribute("colspan") == str(columns)

    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    tools = table.locator("xpath=../preceding-sibling::div[@class='table-tools'][1]")
    tools.get_by_role("button", name="Copy as Markdown").click()
    tools.get_by_role("status").filter(has_text="copied").wait_for()
    lines = (table.get_attribute("data-markdown") or "").splitlines()
    assert lines[0].startswith("| Kind | Microbenchmark or group |") and lines[0].endswith("| Story |")
    assert "tick" not in lines[0]
    assert len(lines) == 2 + len(after) // 2  # header, rule, one row per story
    width = lines[0].count(" | ")
    assert all(line.count(" | ") >= width for line in lines[2:])
    assert console_errors == []
