"""Smoke test in a real browser: the main pages render, log no errors and fit a phone's width."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from playwright.sync_api import Page

    from tests.browser.conftest import DemoData

pytestmark = pytest.mark.browser

DESKTOP = (1280, 900)
PHONE = (390, 844)
both_widths = pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["1280", "390"])


def _assert_body_fits_the_window(page: Page) -> None:
    # Wide tables scroll inside their .table-wrap; the page itself must never scroll sideways.
    body_width, window_width = page.evaluate("() => [document.body.scrollWidth, window.innerWidth]")
    assert body_width <= window_width + 1, f"<body> is {body_width}px wide in a {window_width}px window"


@both_widths
def test_the_home_page_lists_servers_and_workloads(
    page: Page, demo_refreshed: DemoData, console_errors: list[str]
) -> None:
    page.goto("/")
    assert page.get_by_role("heading", level=1, name="Servers and workloads").is_visible()
    table = page.locator("main table")
    assert table.get_by_role("cell", name="8-core server", exact=True).is_visible()
    assert table.get_by_role("cell", name="48-core server", exact=True).is_visible()
    assert console_errors == []
    _assert_body_fits_the_window(page)
    if page.viewport_size == {"width": DESKTOP[0], "height": DESKTOP[1]}:
        # Every column, the Compare buttons last, is on a desktop screen: long names wrap instead.
        from django.core.cache import cache

        from runs.models import Server, Workload

        Server.objects.filter(name="48-core server").update(name="48-core server, 2 sockets, SMT off, 256 GB")
        for workload in Workload.objects.all():
            Workload.objects.filter(pk=workload.pk).update(name=f"{workload.name}, 40 clients, 300 s per test")
        cache.clear()
        page.reload()
        wrap = page.locator("main .table-wrap").first
        assert wrap.evaluate("w => w.scrollWidth - w.clientWidth") <= 1


@both_widths
def test_the_runs_page_lists_every_imported_run(page: Page, demo_data: DemoData, console_errors: list[str]) -> None:
    page.goto("/runs/")
    assert page.get_by_role("heading", level=1, name="Runs").is_visible()
    names = [run.name for report in demo_data for run in report.runs]
    assert len(names) == 10
    assert page.get_by_text(f"{len(names)} runs", exact=True).is_visible()
    links = page.locator("main table tbody a")
    assert sorted(links.all_inner_texts()) == sorted(names)
    assert console_errors == []
    _assert_body_fits_the_window(page)
    if page.viewport_size == {"width": DESKTOP[0], "height": DESKTOP[1]}:
        # On a desktop screen the list needs no sideways scroll: server and workload names wrap, Status stays in view.
        wrap = page.locator("main .table-wrap").first
        assert wrap.evaluate("w => w.scrollWidth - w.clientWidth") <= 1


@both_widths
def test_a_run_page_opened_from_the_runs_list_shows_the_run_and_its_results(
    page: Page, demo_data: DemoData, console_errors: list[str]
) -> None:
    page.goto("/runs/")
    first = page.locator("main table tbody a").first
    name = first.inner_text()
    first.click()
    page.wait_for_url("**/runs/*/")
    assert page.get_by_role("heading", level=1, name=name).is_visible()
    assert page.get_by_role("heading", level=2, name="Results").is_visible()
    assert page.locator("main table tbody tr").count() > 30  # every microbenchmark of the run
    assert console_errors == []
    _assert_body_fits_the_window(page)


@both_widths
@pytest.mark.parametrize(
    ("path", "heading", "role"),
    [("/bundles/", "Bundles", None), ("/upload/", "Upload a result bundle", "uploader")],
)
def test_the_bundle_and_upload_pages_render_without_errors(
    page: Page,
    demo_data: DemoData,
    console_errors: list[str],
    log_in: Callable[[str], None],
    path: str,
    heading: str,
    role: str | None,
) -> None:
    if role:
        log_in(role)
    page.goto(path)
    assert page.get_by_role("heading", level=1, name=heading).is_visible()
    assert console_errors == []
    _assert_body_fits_the_window(page)


def test_the_icon_the_pages_declare_can_be_loaded(page: Page, demo_data: DemoData) -> None:
    # Without <link rel="icon"> Chromium asks for /favicon.ico, and its 404 is a console error on every new session.
    page.goto("/")
    href = page.evaluate(
        "() => document.querySelector('link[rel~=icon]')?.href ?? new URL('/favicon.ico', location.href).href"
    )
    if not href.startswith("data:"):
        response = page.request.get(href)
        assert response.ok, f"the page's icon {href} answers {response.status}"


def test_a_script_error_on_the_page_is_caught_by_the_rig(
    page: Page, demo_data: DemoData, console_errors: list[str]
) -> None:
    # The rig itself must be able to fail: an uncaught error and a console.error both land in console_errors.
    page.goto("/")
    page.evaluate("() => { console.error('logged on purpose'); setTimeout(() => { throw new Error('thrown'); }); }")
    page.wait_for_timeout(100)
    assert any("logged on purpose" in e for e in console_errors)
    assert any("thrown" in e for e in console_errors)
