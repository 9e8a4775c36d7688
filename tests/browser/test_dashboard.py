"""The dashboard as a user drives it in Chromium: the comparison swaps in place, charts, exports, heatmap, upload."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from runs.models import Run

if TYPE_CHECKING:
    from playwright.sync_api import Page

    from tests.browser.conftest import DemoData

BASE = "x.my5651_rel_o2nofp.z12a_c8r32.pk1"


def _cell(page: Page, label: str, version: str) -> str:
    """The relative-QPS cell of ``label`` in the column headed ``version``."""
    headers = page.locator("#relative-table thead th").all_inner_texts()
    column = next(i for i, text in enumerate(headers) if text.splitlines()[0].strip() == version)
    return page.locator(f'#relative-table tr[data-label="{label}"] td').nth(column).inner_text().strip()


def test_changing_the_base_swaps_the_tables_in_place_with_the_right_numbers(page: Page, demo_data: DemoData) -> None:
    base = Run.objects.get(name=BASE)
    page.goto(f"/compare/?base={base.pk}")
    assert _cell(page, "point-query_range=100", "MySQL 9.5.0") == f"{16016 / 24515:.2f}"
    page.evaluate("window.__notReloaded = true")

    new_base = Run.objects.get(name="x.my8043_rel_o2nofp.z12a_c8r32.pk1")
    with page.expect_response(lambda r: "/compare/" in r.url and r.request.headers.get("hx-request") == "true"):
        page.get_by_label("Base run").select_option(str(new_base.pk))
    page.locator("#comparison p.muted strong", has_text="8.0.43").wait_for()

    assert page.evaluate("window.__notReloaded === true")  # swapped by htmx, not a page load
    assert f"base={new_base.pk}" in page.url  # a real URL to share and bookmark
    assert _cell(page, "point-query_range=100", "MySQL 9.5.0") == f"{16016 / 16847:.2f}"
    assert _cell(page, "point-query_range=100", "MySQL 5.6.51") == f"{24515 / 16847:.2f}"


def test_each_group_chart_has_one_line_per_microbenchmark(page: Page, demo_data: DemoData) -> None:
    base = Run.objects.get(name=BASE)
    page.goto(f"/compare/?base={base.pk}")
    # plotly.js draws every chart, those off screen when the browser is idle.
    for section in page.locator("section.group").all():
        section.locator(".js-plotly-plot").wait_for()
    traces = page.evaluate(
        "Array.from(document.querySelectorAll('section.group')).map(s => "
        "[s.querySelector('h3').firstChild.textContent.trim(), s.querySelector('.js-plotly-plot').data.length])"
    )
    assert dict(traces) == {
        "point queries": 9,
        "range queries without aggregation": 5,
        "range queries with aggregation": 8,
        "writes": 10,
    }


def test_the_csv_export_downloads_the_reference_table(page: Page, demo_data: DemoData, corpus: Path) -> None:
    base = Run.objects.get(name=BASE)
    page.goto(f"/compare/?base={base.pk}")
    with page.expect_download() as download:
        page.get_by_role("link", name="CSV", exact=True).click()
    rows = list(csv.reader(io.StringIO(Path(download.value.path()).read_text())))
    reference = {
        r[0]: r[1:] for r in csv.reader(io.StringIO((corpus / "sysbench-mysql-small/qps.rel.all.csv").read_text()))
    }
    ours = {r[0]: r[1:] for r in rows}
    assert set(ours) == set(reference)
    # The whole series has one more build (8.4.6 v2) than the reference table: compare the shared columns.
    assert ours["point-query_range=100"][0] == reference["point-query_range=100"][0] == "0.88"
    assert ours["update-index_range=100"][-1] == reference["update-index_range=100"][-1]


def test_a_heatmap_cell_opens_that_microbenchmarks_drill_down(page: Page, demo_data: DemoData) -> None:
    base = Run.objects.get(name=BASE)
    page.goto(f"/compare/?base={base.pk}")
    page.locator("#heatmap").scroll_into_view_if_needed()  # loads when revealed
    page.locator("#heatmap .js-plotly-plot").wait_for()
    # Drawn, the heatmap is taller than its placeholder was: bring the cells themselves into view to click one.
    page.locator("#heatmap .nsewdrag").first.scroll_into_view_if_needed()
    box = page.locator("#heatmap .nsewdrag").first.bounding_box()
    assert box is not None
    # The top-left cell: the first microbenchmark (hot-points) in the first compared version (5.7.44).
    page.mouse.click(box["x"] + 5, box["y"] + 5)
    page.wait_for_url("**/microbenchmarks/**")
    assert "hot-points_range=100" in page.locator("h1").inner_text()
    assert "column=x.my5744" in page.url


@pytest.mark.parametrize("viewport", [(390, 844)], indirect=True)
def test_the_comparison_page_fits_a_phone(page: Page, demo_data: DemoData) -> None:
    base = Run.objects.get(name=BASE)
    page.goto(f"/compare/?base={base.pk}")
    assert page.evaluate("document.body.scrollWidth <= window.innerWidth + 1")
    assert page.get_by_label("Base run").is_visible()


def test_an_upload_shows_its_progress_and_then_links_to_the_new_runs(
    page: Page, log_in: Callable[[str], None], corpus: Path
) -> None:
    log_in("uploader")
    page.goto("/upload/")
    tarball = corpus / "sysbench-pg-tarballs" / "x.pg1023_o2nofp.x10a_wm1_c32r128.pk1.tar.gz"
    page.get_by_label("Result bundle").set_input_files(str(tarball))
    page.get_by_label("Server", exact=True).fill("48-core server")
    page.get_by_role("button", name="Upload", exact=True).click()
    page.wait_for_url("**/bundles/**")
    assert page.locator(".status.imported").first.inner_text() == "imported"
    page.get_by_role("link", name="x.pg1023_o2nofp.x10a_wm1_c32r128.pk1").click()
    page.wait_for_url("**/runs/**")
    assert page.locator("h1").inner_text() == "x.pg1023_o2nofp.x10a_wm1_c32r128.pk1"
