"""The warning of a comparison that mixes runs of the two scan formulas, in Chromium, on a desktop and a phone."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from runs.importer import submit_and_import
from runs.models import Run
from runs.tests.hostile import tgz_of_files
from runs.tests.test_scan_eras import PG174, PG1122, SCAN_QPS, run_files, spec_value

if TYPE_CHECKING:
    from playwright.sync_api import Page


@pytest.fixture
def mixed_eras(transactional_db: None, corpus: Path) -> Run:
    """Postgres 11.22 as its tarball has it (tps × rows / 1000) and 17.4 with its scan value the spec's; the base."""
    newer = run_files(corpus, PG174)
    newer[f"{PG174}/{SCAN_QPS}"] = f"{spec_value(newer, PG174):.1f}\tpgsql scan range=100\n".encode()
    for name, files in (("pg1122.tgz", run_files(corpus, PG1122)), ("pg174.tgz", newer)):
        submit_and_import(tgz_of_files(files), name=name, source="command", overrides={"server": "pg-48"})
    return Run.objects.get(name=PG1122)


@pytest.mark.parametrize("viewport", [(1400, 900), (390, 844)], indirect=True)
def test_the_warning_fits_the_screen_names_both_eras_and_one_click_reads_scan_by_the_spec(
    page: Page, mixed_eras: Run, viewport: tuple[int, int], console_errors: list[str]
) -> None:
    page.goto(f"/compare/?base={mixed_eras.pk}")
    warning = page.locator("#scan-era-warning")
    assert warning.get_attribute("role") == "alert"
    text = warning.inner_text()
    assert f"tps×rows/1000: {PG1122}" in text and f"spec: {PG174}" in text
    box = warning.bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= viewport[0]

    page.locator("#scan-spec-link").click()
    page.wait_for_url("**scan_formula=spec**")
    assert page.locator("#scan-era-warning").count() == 0
    assert page.locator("#id_scan_formula").input_value() == "spec"
    assert page.locator("#scan-spec-note").is_visible()
    assert console_errors == []
