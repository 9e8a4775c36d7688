"""The target form's "Ask the server" button in a real browser: the stored password stays with its endpoint.

The hidden ``target`` input rides along with every HTMX request of the edit page (``hx-include="closest form"``),
so this is the path the red-team finding used; a fake PostgreSQL server on another loopback port must hear nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import pytest

from runner.models import Target
from runner.tests.services import FakePostgres

if TYPE_CHECKING:
    from playwright.sync_api import Page

pytestmark = pytest.mark.browser

SECRET = "Browser-Stored-Secret-5"


def test_asking_another_port_from_the_edit_page_needs_the_password_again(
    page: Page, log_in: Callable[[str], None]
) -> None:
    log_in("admin")
    target = Target.objects.create(
        name="lab PostgreSQL",
        kind="postgres",
        host="127.0.0.1",
        port=5432,
        user="bench",
        password=SECRET,
        database="sbtest",
        build_label="pg1520_rel",
        config_label="z12a_c8r32",
        server_name="lab-1",
    )
    fake = FakePostgres()
    try:
        page.goto(f"/targets/{target.pk}/edit/")
        page.get_by_label("Port").fill(str(fake.port))
        page.get_by_role("button", name="Ask the server").click()
        note = page.locator("#build-proposal [role=status]")
        note.wait_for()
        assert "enter the password again" in note.inner_text()
        assert fake.connections == 0 and not fake.received

        page.get_by_label("Password", exact=True).fill("Typed-In-The-Browser")
        page.get_by_role("button", name="Ask the server").click()
        page.wait_for_function(
            "() => document.querySelector('#build-proposal [role=status]')?.textContent.includes('could not')"
        )
        assert "could not connect" in page.locator("#build-proposal [role=status]").inner_text()
        assert fake.saw("Typed-In-The-Browser") and not fake.saw(SECRET)

        # Saving the moved target without the password is refused on the page, and nothing is stored.
        page.get_by_label("Password", exact=True).fill("")
        page.get_by_role("button", name="Save").click()
        assert page.get_by_text("enter the password again").first.is_visible()
        target.refresh_from_db()
        assert target.port == 5432 and target.password == SECRET
    finally:
        fake.close()
