"""Release lines on the real mysql-small series in Chromium: its 9.4 and 9.5 innovation releases are left out of the
charts by default, named on the page, one click brings them back, and the concurrency rule is stated beside them."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from runs.models import Run

if TYPE_CHECKING:
    from playwright.sync_api import Page

    from tests.browser.conftest import DemoData

pytestmark = pytest.mark.browser

BASE = "x.my5651_rel_o2nofp.z12a_c8r32.pk1"
INNOVATION = ("MySQL 9.4.0", "MySQL 9.5.0")


def _chart_versions(page: Page) -> set[str]:
    """The versions the first group chart draws (its x axis's categories, which its lines share)."""
    figure = json.loads(page.locator("script#chart-0").text_content() or "{}")
    return set(figure["layout"]["xaxis"]["categoryarray"])


def test_one_click_brings_the_innovation_releases_back_into_the_charts(
    page: Page, demo_data: DemoData, console_errors: list[str]
) -> None:
    base = Run.objects.get(name=BASE)
    page.goto(f"/compare/?base={base.pk}", wait_until="load")

    note = page.locator("#release-note")
    # The default view: the long-term lines plus the newest release (9.5.0, provisional); 9.4.0 is left out.
    older, newest = INNOVATION
    assert older in note.inner_text() and newest in note.inner_text()
    assert _chart_versions(page) & set(INNOVATION) == {newest}
    assert all(page.locator("#relative-table th", has_text=v).count() == 1 for v in INNOVATION)
    assert "warm-ups not counted" in page.locator("#concurrency").inner_text()

    note.locator("#releases-all").click()
    page.wait_for_url("**releases=all**")
    assert set(INNOVATION) <= _chart_versions(page)
    assert page.locator("#release-note").get_attribute("data-releases") == "all"

    # And the form's switch: long-term releases everywhere, tables included, kept in the URL.
    page.locator("#id_releases").select_option("long-term")
    page.wait_for_url("**releases=long-term**")
    page.locator('#release-note[data-releases="long-term"]').wait_for()
    assert page.locator("#relative-table th", has_text=older).count() == 0
    assert page.locator("#relative-table th", has_text=newest).count() == 1
    assert console_errors == []
