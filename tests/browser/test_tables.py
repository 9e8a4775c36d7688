"""Data tables in Chromium: sorting, Copy as Markdown and CSV, the phone layout; the HW section and the search box."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import pytest

from reports.compare import ComparisonSpec, get_comparison
from runs.models import Run

if TYPE_CHECKING:
    from playwright.sync_api import Page

    from tests.browser.conftest import DemoData

BASE = "x.my5651_rel_o2nofp.z12a_c8r32.pk1"
PHONE = (390, 844)


def _column(page: Page, table: str, heading: str) -> int:
    headers = page.locator(f"{table} thead tr:last-child th").all_inner_texts()
    return next(i for i, text in enumerate(headers) if text.splitlines()[0].strip().rstrip("↕▲▼ ") == heading)


def _first_group_values(page: Page, column: int) -> list[float]:
    """The relative-QPS table's values in one column for the rows of its first group, as shown."""
    return page.evaluate(
        """(column) => {
            const out = [];
            const rows = document.querySelectorAll('#relative-table tbody tr');
            let groups = 0;
            for (const tr of rows) {
                if (tr.classList.contains('group-row')) { groups += 1; if (groups > 1) break; continue; }
                out.push(parseFloat(tr.cells[column].textContent));
            }
            return out;
        }""",
        column,
    )


def test_a_click_on_a_version_header_sorts_each_group_by_it_and_a_second_click_reverses(
    page: Page, demo_data: DemoData, console_errors: list[str]
) -> None:
    base = Run.objects.get(name=BASE)
    page.goto(f"/compare/?base={base.pk}")
    column = _column(page, "#relative-table", "MySQL 9.5.0")
    header = page.locator("#relative-table thead th").nth(column)
    header.get_by_role("button").click()
    assert header.get_attribute("aria-sort") == "ascending"
    values = _first_group_values(page, column)
    assert len(values) == 9 and values == sorted(values)
    # The group header rows stay where they were: the first row is still the first group's header.
    assert page.locator("#relative-table tbody tr").first.get_attribute("class") == "group-row"
    header.get_by_role("button").click()
    assert header.get_attribute("aria-sort") == "descending"
    assert _first_group_values(page, column) == sorted(values, reverse=True)
    assert console_errors == []


def test_copy_as_markdown_gives_the_table_as_shown_with_its_groups(
    page: Page, demo_data: DemoData, console_errors: list[str]
) -> None:
    base = Run.objects.get(name=BASE)
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.goto(f"/compare/?base={base.pk}")
    tools = page.locator("#relative-table").locator("xpath=../preceding-sibling::div[@class='table-tools'][1]")
    tools.get_by_role("button", name="Copy as Markdown").click()
    tools.get_by_role("status").filter(has_text="copied").wait_for()
    text = page.locator("#relative-table").get_attribute("data-markdown")
    assert text == page.evaluate("navigator.clipboard.readText()")
    lines = text.splitlines()
    assert lines[0].startswith("| Group | Microbenchmark | base QPS | MySQL 5.7.44 |")
    assert "diff with base" not in lines[0]
    assert lines[1].startswith("| --- | --- | ---: |")
    comparison = get_comparison(ComparisonSpec(base_run_id=base.pk))
    newest = comparison.others[-1].key
    expected = f"{comparison.relative[newest]['point-query_range=100']:.2f}"
    row = next(line for line in lines if "| point-query_range=100 |" in line)
    assert row.startswith("| point queries | point-query_range=100 | 24515 |") and row.endswith(f"| {expected} |")
    assert len(lines) == 2 + len(comparison.labels)
    assert console_errors == []


def test_the_csv_button_downloads_the_table(page: Page, demo_data: DemoData) -> None:
    base = Run.objects.get(name=BASE)
    page.goto(f"/compare/?base={base.pk}")
    table = page.locator("table.summary").first
    tools = table.locator("xpath=../preceding-sibling::div[@class='table-tools'][1]")
    with page.expect_download() as download:
        tools.get_by_role("button", name="CSV").click()
    path = download.value.path()
    text = path.read_text(encoding="utf-8")
    assert download.value.suggested_filename.endswith(".csv")
    assert text.splitlines()[0] == "Version,min,max,avg,median,n,min at,max at"
    assert text.splitlines()[1].startswith("MySQL 5.7.44,")


def test_every_table_on_the_comparison_page_has_the_toolbar(page: Page, demo_data: DemoData) -> None:
    base = Run.objects.get(name=BASE)
    page.goto(f"/compare/?base={base.pk}")
    tables = page.locator(".table-wrap > table").count()
    assert tables >= 5
    # The toolbars are added when the browser is idle after loading: wait for them, then count.
    page.wait_for_function("n => document.querySelectorAll('.table-tools').length >= n", arg=tables, timeout=15_000)
    assert page.locator(".table-tools").count() == tables


def test_the_hw_section_loads_when_scrolled_to_with_ratios_flagged_and_absolutes_on_hover(
    page: Page, demo_data: DemoData, console_errors: list[str]
) -> None:
    base = Run.objects.get(name=BASE)
    page.goto(f"/compare/?base={base.pk}")
    page.locator("#hw").scroll_into_view_if_needed()
    group = page.locator("#hw .hw-group").first
    group.wait_for()
    assert group.locator("thead th").all_inner_texts()[1:] == ["cpu/o", "cs/o", "rKB/o", "wKB/o"]
    comparison = get_comparison(ComparisonSpec(base_run_id=base.pk))
    newest = comparison.others[-1].key
    row = page.locator('#hw section.hw-metric[data-metric="cpu_o"] tbody tr', has_text="point-query_range=100")
    cell = row.locator("td").last
    ratio = comparison.metric_ratios[newest]["point-query_range=100"]["cpu_o"]
    assert cell.inner_text() == f"{ratio:.2f}"
    assert "red" in (cell.get_attribute("class") or "") if ratio >= 1 / 0.95 else True
    # The cell's title is the version's own level (the base's is the row's second column).
    assert (cell.get_attribute("title") or "").startswith("cpu/o ")
    assert page.locator("#hw .table-tools").count() >= 1
    # One metric's table at a time: the switch swaps in another's in place.
    page.locator('#hw-section a[data-metric="cs_o"]').click()
    swapped = page.locator('#hw section.hw-metric[data-metric="cs_o"] tbody tr', has_text="point-query_range=100")
    cs_ratio = comparison.metric_ratios[newest]["point-query_range=100"]["cs_o"]
    assert swapped.locator("td").last.inner_text() == f"{cs_ratio:.2f}"
    assert page.locator('#hw section.hw-metric[data-metric="cpu_o"]').count() == 0
    assert page.locator('#hw-section strong[aria-current="true"]').inner_text() == "cs/o"
    assert console_errors == []


def test_the_search_box_in_the_header_finds_a_group(page: Page, demo_refreshed: DemoData) -> None:
    page.goto("/runs/")
    box = page.locator("header .header-search input[name=q]")
    box.fill("point queries")
    box.press("Enter")
    page.wait_for_url("**/search/?q=point+queries")
    section = page.locator("#found-groups")
    assert "point queries" in section.inner_text()
    section.locator("a", has_text=re.compile(r"^8-core server")).first.click()
    page.locator("#g-point-queries").wait_for()


@pytest.mark.parametrize("viewport", [PHONE], indirect=True)
def test_on_a_phone_the_home_page_shows_each_series_red_flags_within_the_screen(
    page: Page, demo_refreshed: DemoData
) -> None:
    page.goto("/")
    cell = page.locator("td[data-label='Red flags']").first
    box = cell.bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= PHONE[0]
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE[0]


def test_the_heatmap_page_copies_its_values_as_markdown_from_beside_the_chart(
    page: Page, demo_data: DemoData, console_errors: list[str]
) -> None:
    base = Run.objects.get(name=BASE)
    page.goto(f"/compare/heatmap?base={base.pk}")
    page.locator(".heatmap-wrap .js-plotly-plot").wait_for()
    tools = page.locator("#heatmap-tools .table-tools")
    tools.get_by_role("button", name="Copy as Markdown").click()
    text = page.locator("#heatmap-table").get_attribute("data-markdown") or ""
    comparison = get_comparison(ComparisonSpec(base_run_id=base.pk))
    assert len(text.splitlines()) == 2 + len(comparison.labels)
    # The colour scale is orange to blue, not red to green.
    colours = page.evaluate("document.querySelector('.heatmap-wrap .js-plotly-plot').data[0].colorscale.map(s => s[1])")
    assert colours[0] == "#b35806" and colours[-1] == "#08519c"
    assert console_errors == []
