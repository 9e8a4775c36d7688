"""The upload flow in Chromium: the page keeps its layout, and the bundle page follows the import to its end.

Each test saves full-page screenshots of the states it passes through (in its
temporary directory) for a person to look at: queued, importing, imported,
failed and the duplicate notice, at desktop and phone width.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from runs.models import Bundle

if TYPE_CHECKING:
    from playwright.sync_api import Page

pytestmark = pytest.mark.browser

DESKTOP = (1400, 900)
PHONE = (390, 844)
both_widths = pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["1400", "390"])
PG174 = "x.pg174_o2nofp.x10a_wm1_c32r128.pk1"


def _shot(page: Page, tmp_path: Path, name: str) -> None:
    width = page.viewport_size["width"] if page.viewport_size else 0
    path = tmp_path / f"{name}-{width}.png"
    page.screenshot(path=str(path), full_page=True)
    print(f"screenshot: {path}")


def _assert_layout(page: Page, *, uploader: bool = True) -> None:
    """Header, navigation (with the Upload link for those who may upload) and one main heading, and nothing
    wider than the window."""
    assert page.locator("header.topbar").is_visible()
    nav = page.get_by_role("navigation", name="Main")
    assert nav.get_by_role("link", name="Upload", exact=True).count() == int(uploader)
    assert page.locator("h1").count() == 1
    body_width, window_width = page.evaluate("() => [document.body.scrollWidth, window.innerWidth]")
    assert body_width <= window_width + 1, f"<body> is {body_width}px wide in a {window_width}px window"


def _upload(page: Page, name: str, data: bytes) -> None:
    page.goto("/upload/")
    page.get_by_label("Result bundle").set_input_files({"name": name, "mimeType": "application/gzip", "buffer": data})
    page.get_by_role("button", name="Upload", exact=True).click()


@both_widths
def test_uploads_keep_the_layout_and_say_imported_failed_or_already_imported(
    page: Page, log_in: Callable[[str], None], corpus: Path, tmp_path: Path, console_errors: list[str]
) -> None:
    log_in("uploader")
    data = (corpus / "sysbench-pg-tarballs" / f"{PG174}.tar.gz").read_bytes()

    _upload(page, f"{PG174}.tar.gz", data)
    page.wait_for_url(re.compile(r"/bundles/\d+/$"))
    bundle = Bundle.objects.get()
    assert page.get_by_role("heading", level=1).inner_text() == f"Bundle {bundle.pk}: {PG174}.tar.gz"
    assert page.locator("#bundle-status .status").inner_text() == "imported"
    assert page.get_by_role("link", name=PG174).is_visible()
    _assert_layout(page)
    _shot(page, tmp_path, "imported")

    _upload(page, "again.tar.gz", data)
    notice = page.locator("#upload-panel").get_by_role("status")
    notice.wait_for()
    assert re.fullmatch(
        rf"Already imported on \d{{4}}-\d\d-\d\d \d\d:\d\d as bundle {bundle.pk} \({PG174}\.tar\.gz\)\.\s+"
        r"These exact bytes were uploaded before; nothing new was stored\.",
        notice.inner_text().strip(),
    ), notice.inner_text()
    assert page.url.endswith("/upload/")  # the form's request swapped its panel; no fragment in place of the page
    _assert_layout(page)
    _shot(page, tmp_path, "duplicate")
    notice.get_by_role("link", name=f"bundle {bundle.pk}").click()
    page.wait_for_url(f"**/bundles/{bundle.pk}/")

    _upload(page, "notes.tar.gz", b"these are my notes, not results\n" * 20)
    page.wait_for_url(re.compile(r"/bundles/\d+/$"))
    assert page.locator("#bundle-status .status").inner_text() == "failed"
    assert "not a tar" in page.get_by_role("alert").inner_text()
    _assert_layout(page)
    _shot(page, tmp_path, "failed")

    # Other bytes holding a run imported before: the new bundle says nothing new was stored, and links it.
    from runs.tests.hostile import tgz_of_files

    run = "x.my5651_rel_o2nofp.z12a_c8r32.pk1"
    files = {f"{run}/{p.name}": p.read_bytes() for p in (corpus / "sysbench-mysql-small" / run).iterdir()}
    _upload(page, "first.tgz", tgz_of_files(files))
    page.wait_for_url(re.compile(r"/bundles/\d+/$"))
    files["NOTES.txt"] = b"packed again\n"
    _upload(page, "second.tgz", tgz_of_files(files))
    page.get_by_text("Nothing new: its run was imported before, from other bundles.").wait_for()
    assert page.locator(".notice[role=status]").get_by_role("link", name=run).is_visible()
    _assert_layout(page)
    _shot(page, tmp_path, "nothing-new")
    assert console_errors == []


@both_widths
def test_the_bundle_page_follows_the_import_from_queued_to_imported_and_then_stops_polling(
    page: Page, log_in: Callable[[str], None], corpus: Path, tmp_path: Path, console_errors: list[str]
) -> None:
    from django.utils import timezone

    from runs.importer import import_bundle, store_bundle

    log_in("viewer")
    data = (corpus / "sysbench-pg-tarballs" / f"{PG174}.tar.gz").read_bytes()
    bundle, _ = store_bundle(data, name=f"{PG174}.tar.gz", source=Bundle.Source.UPLOAD)
    polls: list[str] = []
    page.on("request", lambda request: polls.append(request.url) if request.headers.get("hx-request") else None)

    page.goto(bundle.get_absolute_url())
    status = page.locator("#bundle-status")
    assert status.locator(".status").inner_text() == "queued"
    assert "waiting for a worker" in status.inner_text()
    _assert_layout(page, uploader=False)
    _shot(page, tmp_path, "queued")

    progress = {"phase": "storing", "files_read": 96, "runs_found": 1, "runs_new": 1, "runs_stored": 0}
    Bundle.objects.filter(pk=bundle.pk).update(status="importing", progress=progress, heartbeat_at=timezone.now())
    page.get_by_text("storing: 0 of 1 new run stored").wait_for()
    assert status.locator(".status").inner_text() == "importing"
    _assert_layout(page, uploader=False)
    _shot(page, tmp_path, "importing")

    Bundle.objects.filter(pk=bundle.pk).update(status="queued", heartbeat_at=None)
    import_bundle(bundle.pk)
    page.get_by_role("link", name=PG174).wait_for()
    # A poll made while the import ran may show the run's link with "importing": the next one says "imported".
    status.locator(".status", has_text=re.compile(r"^imported$")).wait_for()
    assert status.get_attribute("hx-trigger") is None
    seen = len(polls)
    page.wait_for_timeout(2500)
    assert len(polls) == seen, "the page kept polling after the import ended"
    assert seen >= 2 and all(url.endswith(bundle.get_absolute_url()) for url in polls)
    _assert_layout(page, uploader=False)
    assert console_errors == []
