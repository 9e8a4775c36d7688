"""Browser fixtures: Debian's Chromium driven by Playwright against pytest-django's live server.

No browser is ever downloaded: Playwright launches ``/usr/bin/chromium``. When
it is not installed the browser tests are skipped with the reason, except in CI
(``BENCHDASH_REQUIRE_SERVICES=1``), where a missing browser is a failure.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import pytest

from conftest import corpus_archive, services_required
from tests.browser.chromium import CHROMIUM, CHROMIUM_ARGS

if TYPE_CHECKING:
    from playwright.sync_api import Browser, ConsoleMessage, Page
    from pytest_django.live_server_helper import LiveServer

    from runs.importer import ImportReport

# Playwright's sync API keeps an asyncio event loop running in this thread for as long as the browser
# lives (the whole session), and Django refuses ORM calls inside a running loop. pytest-django documents
# this switch for Playwright; it has to be process-wide because the session browser outlives any one test.
os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

DESKTOP = (1280, 900)
PHONE = (390, 844)
TIMEOUT_MS = 15_000  # a page of this app renders in well under a second; fail fast rather than hang


class DemoData(NamedTuple):
    mysql: ImportReport
    postgres: ImportReport


def _unavailable(reason: str) -> None:
    if services_required():
        pytest.fail(f"{reason} (BENCHDASH_REQUIRE_SERVICES=1: browser tests must run)", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    if not CHROMIUM.exists():
        _unavailable(f"browser tests need Debian's Chromium at {CHROMIUM} (apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("browser tests need the playwright Python package (pip install -r requirements.txt)")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def viewport(request: pytest.FixtureRequest) -> tuple[int, int]:
    """(width, height) of the page; parametrize ``viewport`` (directly or indirectly) to change it."""
    size: tuple[int, int] = getattr(request, "param", DESKTOP)
    return size


@pytest.fixture
def console_errors() -> list[str]:
    """What the page logged as a console error or threw uncaught, filled while the test runs."""
    return []


@pytest.fixture
def page(
    browser: Browser, live_server: LiveServer, viewport: tuple[int, int], console_errors: list[str]
) -> Iterator[Page]:
    """A page in a fresh browser context (no cookies or storage shared between tests), based at the live server."""
    width, height = viewport
    context = browser.new_context(viewport={"width": width, "height": height}, base_url=live_server.url)
    context.set_default_timeout(TIMEOUT_MS)
    new_page = context.new_page()

    def on_console(message: ConsoleMessage) -> None:
        url = message.location.get("url", "?")
        # Chromium fetches /favicon.ico once per browser session, so its 404 would fail whichever test happens
        # to run first; test_smoke.py checks the favicon in a test of its own instead.
        if message.type == "error" and not url.endswith("/favicon.ico"):
            console_errors.append(f"console error at {url}: {message.text}")

    new_page.on("console", on_console)
    new_page.on("pageerror", lambda error: console_errors.append(f"uncaught {error.name}: {error.message}"))
    yield new_page
    context.close()


@pytest.fixture
def demo_data(transactional_db: None, corpus: Path) -> DemoData:
    """The mysql-small series on an 8-core server and one Postgres run on a 48-core server, as load_demo has them.

    ``transactional_db``: the live server runs in another thread with its own
    connection, so the rows must be committed for its pages to see them.
    """
    from runs.importer import submit_and_import

    mysql = submit_and_import(
        corpus_archive(corpus / "sysbench-mysql-small"),
        name="sysbench-mysql-small.tar.gz",
        source="command",
        overrides={"server": "8-core server"},
    )
    tarball = corpus / "sysbench-pg-tarballs" / "x.pg174_o2nofp.x10a_wm1_c32r128.pk1.tar.gz"
    postgres = submit_and_import(
        tarball.read_bytes(), name=tarball.name, source="command", overrides={"server": "48-core server"}
    )
    return DemoData(mysql=mysql, postgres=postgres)


@pytest.fixture
def demo_refreshed(demo_data: DemoData) -> DemoData:
    """The demo data after the refresh each import sets off (load_demo's path): the series summaries home and
    search read, and the regression stories detection finds."""
    from runs.signals import announce_import

    for report in (demo_data.mysql, demo_data.postgres):
        announce_import(report.bundle_id)
    return demo_data


@pytest.fixture
def log_in(page: Page, user_with_role: Callable[..., Any], transactional_db: None) -> Callable[[str], None]:
    """Log the page in through the real login form as a new user with ``role``."""

    def log_in_as(role: str) -> None:
        password = "browser-test-password"
        user = user_with_role(role)
        user.set_password(password)
        user.save()
        page.goto("/account/login/")
        page.get_by_label("Username").fill(user.get_username())
        page.get_by_label("Password").fill(password)
        page.get_by_role("button", name="Log in").click()
        page.wait_for_url("**/")
        assert page.get_by_role("button", name="Log out").is_visible()

    return log_in_as
