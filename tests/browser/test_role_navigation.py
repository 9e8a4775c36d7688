"""What each role sees in Chromium: the navigation and the comparison's save button follow the permission rule.

With ``BENCHDASH_SCREENSHOTS=DIR`` the top of each role's comparison page is kept there to look at.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from conftest import SMALL_BASE_RUN
from tests.browser.conftest import DemoData

if TYPE_CHECKING:
    from playwright.sync_api import Page

pytestmark = pytest.mark.django_db(transaction=True)

# role -> (Upload link, Admin link, Save report button)
SEES = {
    "anonymous": (False, False, False),
    "viewer": (False, False, False),
    "uploader": (True, False, True),
    "triager": (False, False, True),
    "admin": (True, True, True),
}


@pytest.mark.parametrize("role", list(SEES))
def test_each_role_sees_only_the_actions_it_may_take(
    page: Page, log_in: Callable[[str], None], demo_refreshed: DemoData, role: str, tmp_path: Path
) -> None:
    from django.contrib.auth.models import User

    from runs.models import Run

    if role != "anonymous":
        log_in(role)
        User.objects.filter(username=role).update(is_staff=role == "admin")  # the demo's admin is staff
    upload, admin, save = SEES[role]
    page.goto("/")
    nav = page.get_by_role("navigation", name="Main")
    assert nav.get_by_role("link", name="Benchmarks").is_visible()  # reading them follows the read rule
    assert nav.get_by_role("link", name="Upload", exact=True).count() == int(upload)
    assert nav.get_by_role("link", name="Admin", exact=True).count() == int(admin)
    # The MySQL series' comparison (nine versions); a series of one run has nothing to compare or save.
    base = Run.objects.get(name=SMALL_BASE_RUN)
    page.locator(f'a[href$="/compare/?base={base.pk}"]').first.click()
    page.wait_for_selector("#comparison")
    assert page.get_by_role("button", name="Save report").count() == int(save)
    shots = Path(os.environ.get("BENCHDASH_SCREENSHOTS", tmp_path))
    page.screenshot(path=str(shots / f"nav-{role}.png"), clip={"x": 0, "y": 0, "width": 1280, "height": 120})
