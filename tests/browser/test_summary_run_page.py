"""A run read from a summary table says where its concurrency, server and workload came from; a custom suite's
comparison offers no scan formula; a db_bench bundle lists the files it did not read. Desktop and phone."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from runs.importer import archive_directory, submit_and_import
from runs.models import Bundle, Run
from runs.tests.test_openformat_import import engine_bundle

if TYPE_CHECKING:
    from playwright.sync_api import Page

pytestmark = pytest.mark.browser

SHOTS = os.environ.get("BENCHDASH_SCREENSHOTS")
BASE = "x.my5651_rel_o2nofp.z12a_c8r32.pk1"
VARIANCE = "dbbench/results/aws_variance_rocksdb/c6i.4xlarge.ht0.nt4"


def _fits(page: Page) -> bool:
    return bool(page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"))


@pytest.mark.parametrize("viewport", [(1400, 900), (390, 844)], indirect=True)
def test_summary_sources_scan_choice_and_unread_files_on_desktop_and_phone(
    page: Page,
    viewport: tuple[int, int],
    transactional_db: None,
    corpus: Path,
    console_errors: list[str],
    tmp_path: Path,
) -> None:
    shots = Path(SHOTS or tmp_path)
    folder = tmp_path / "b" / "pn53" / "dop8"
    folder.mkdir(parents=True)
    shutil.copyfile(corpus / "sysbench-mysql-small" / "qps.abs.all.tsv", folder / "qps.abs.all.tsv")
    submit_and_import(archive_directory(tmp_path / "b"), name="tables.tgz", source=Bundle.Source.COMMAND)
    run = Run.objects.get(name=BASE)
    page.goto(run.get_absolute_url(), wait_until="load")
    page.screenshot(path=shots / f"summary-run-{viewport[0]}.png", full_page=True)
    sources = page.locator("#summary-sources li")
    assert sources.all_inner_texts() == [
        "Concurrency 8: from the folder it sits in (dop8)",
        "Server pn53: from the folder above its dop8 folder (pn53)",
        "Workload sysbench (parameters unknown): not said: a summary table never says its workload",
    ]
    assert sources.first.is_visible() and _fits(page)

    submit_and_import(engine_bundle(), name="engine.tgz", source=Bundle.Source.COMMAND)
    custom = Run.objects.get(build__version__text="10.11.19")
    page.goto(f"/compare/?base={custom.pk}&dop=2", wait_until="load")
    assert page.locator("#id_dop").is_visible()
    assert page.locator("#id_scan_formula").count() == 0

    unread = tmp_path / "c6i"
    unread.mkdir()
    for name in ("sum.byrx.txt", "sum.byrx.txt.sdev"):
        shutil.copyfile(corpus / VARIANCE / name, unread / name)
    report = submit_and_import(archive_directory(unread), name="c6i.tgz", source=Bundle.Source.COMMAND)
    page.goto(Bundle.objects.get(pk=report.bundle_id).get_absolute_url(), wait_until="load")
    not_read = page.locator("details.ignored-files", has=page.locator("summary", has_text="not read"))
    not_read.locator("summary").click()
    page.screenshot(path=shots / f"bundle-not-read-{viewport[0]}.png", full_page=True)
    assert not_read.get_by_text("c6i/sum.byrx.txt", exact=True).is_visible()
    assert _fits(page)
    assert console_errors == []
