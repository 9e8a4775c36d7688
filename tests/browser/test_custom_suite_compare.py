"""A custom suite's documents, compared on the comparison page in the groups they brought, on desktop and phone."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from runs.importer import submit_and_import
from runs.models import Run
from runs.tests.test_openformat_import import ENGINE_GROUPS, engine_bundle

if TYPE_CHECKING:
    from playwright.sync_api import Page

pytestmark = pytest.mark.browser

# Where to keep the screenshots for a person to look at (unset: the test's own temporary folder).
SHOTS = os.environ.get("BENCHDASH_SCREENSHOTS")


@pytest.mark.parametrize("viewport", [(1400, 900), (390, 844)], indirect=True)
def test_a_custom_suites_comparison_shows_its_own_groups_and_fits_the_screen(
    page: Page, viewport: tuple[int, int], transactional_db: None, console_errors: list[str], tmp_path: Path
) -> None:
    submit_and_import(engine_bundle(), name="engine.tgz", source="command")
    base = Run.objects.get(build__version__text="10.11.19")
    page.goto(f"/compare/?base={base.pk}&dop=2", wait_until="load")
    page.screenshot(path=Path(SHOTS or tmp_path) / f"custom-suite-compare-{viewport[0]}.png", full_page=True)
    headings = page.locator("section.group h3").evaluate_all("hs => hs.map(h => h.firstChild.textContent.trim())")
    assert headings == list(ENGINE_GROUPS)
    for group in ENGINE_GROUPS:
        assert page.locator("section.group h3", has_text=group).first.is_visible()
    rows = page.locator("table tr", has_text="READ_RANGE_TXN")
    assert any(rows.nth(at).is_visible() for at in range(rows.count()))
    # Wide tables scroll inside their frames; the page itself never scrolls sideways.
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    assert console_errors == []
