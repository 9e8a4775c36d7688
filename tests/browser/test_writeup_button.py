"""The comparison page's write-up buttons in Chromium: one click downloads the post, or the .zip with its charts."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from reports.compare import ComparisonSpec, get_comparison
from runs.models import Run

if TYPE_CHECKING:
    from playwright.sync_api import Page

    from tests.browser.conftest import DemoData

pytestmark = pytest.mark.browser

BASE = "x.my5651_rel_o2nofp.z12a_c8r32.pk1"


@pytest.mark.parametrize("viewport", [(1400, 900), (390, 844)], ids=["1400", "390"], indirect=True)
def test_one_click_downloads_the_write_up_zip_with_the_post_and_every_group_chart(
    page: Page, demo_data: DemoData, console_errors: list[str], tmp_path: Path
) -> None:
    base = Run.objects.get(name=BASE)
    comparison = get_comparison(ComparisonSpec(base_run_id=base.pk))
    page.goto(f"/compare/?base={base.pk}")
    button = page.locator("#writeup-zip")
    assert button.is_visible()
    with page.expect_download() as download_info:
        button.click()
    download = download_info.value
    assert download.suggested_filename.endswith(".zip")
    path = tmp_path / download.suggested_filename
    download.save_as(path)
    archive = zipfile.ZipFile(io.BytesIO(path.read_bytes()))
    names = archive.namelist()
    groups = {g for g in comparison.group_of.values() if g}
    assert names[0] == "writeup.md"
    assert len([n for n in names if n.startswith("charts/") and n.endswith(".svg")]) == len(groups)
    text = archive.read("writeup.md").decode()
    assert text.startswith("# MySQL 5.6.51 → 9.5.0 on 8-core server")
    assert "## Builds, configuration, hardware" in text and "## Open regression stories" in text
    assert console_errors == []


def test_the_markdown_button_downloads_the_post_alone(
    page: Page, demo_data: DemoData, console_errors: list[str], tmp_path: Path
) -> None:
    base = Run.objects.get(name=BASE)
    page.goto(f"/compare/?base={base.pk}")
    with page.expect_download() as download_info:
        page.locator("#writeup-markdown").click()
    download = download_info.value
    assert download.suggested_filename.endswith(".md")
    path = tmp_path / download.suggested_filename
    download.save_as(path)
    text = path.read_text()
    assert "## Relative QPS per microbenchmark" in text and "`point-query_range=100`" in text
    assert console_errors == []
