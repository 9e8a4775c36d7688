"""axe-core, run in Chromium over every page of the site with real data: no serious or critical violation.

axe-core is pinned in package.json and installed by ``make install`` beside plotly.js (``.venv/js``); it is read
from there and injected into each page (the context bypasses our CSP for that one script), never fetched.
Pages are visited logged in as an admin, so the forms and actions only a role sees are checked too.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page
    from pytest_django.live_server_helper import LiveServer

    from tests.browser.conftest import DemoData

pytestmark = pytest.mark.browser

AXE = Path(sys.prefix) / "js" / "node_modules" / "axe-core" / "axe.min.js"
BLOCKING = ("serious", "critical")


def _pages(demo: DemoData) -> list[str]:
    from regressions.models import Regression
    from runs.models import Result, Run

    base = Run.objects.get(name="x.my5651_rel_o2nofp.z12a_c8r32.pk1").pk
    other = Run.objects.filter(server=Run.objects.get(pk=base).server).exclude(pk=base).order_by("pk").first()
    microbenchmark = Result.objects.filter(run_id=base).values_list("microbenchmark_id", flat=True).first()
    regression = Regression.objects.order_by("pk").first()
    assert other is not None and regression is not None
    return [
        "/",
        f"/compare/?base={base}",
        f"/compare/heatmap?base={base}",
        f"/compare/hw?base={base}",
        f"/compare/timeline?base={base}",
        f"/compare/scaleup?base={base}",
        f"/microbenchmarks/{microbenchmark}/?base={base}",
        f"/microbenchmarks/{microbenchmark}/timeline?base={base}",
        "/compare/?suite=db_bench",
        "/ibench/",
        "/runs/",
        f"/runs/{base}/",
        f"/diff/?a={base}&b={other.pk}",
        "/bundles/",
        f"/bundles/{demo.mysql.bundle_id}/",
        "/upload/",
        "/regressions/",
        f"/regressions/{regression.pk}/",
        "/regressions/alerts/",
        "/reports/",
        "/search/?q=point-query",
        "/targets/",
        "/targets/new/",
        "/benchmarks/",
        "/benchmarks/schedules/",
        "/account/tokens/",
        "/no-such-page/",
    ]


@pytest.fixture
def audited_page(browser: Browser, live_server: LiveServer) -> Iterator[Page]:
    """A desktop page whose context lets the test inject axe-core past the site's CSP (script-src 'self')."""
    context = browser.new_context(viewport={"width": 1400, "height": 900}, base_url=live_server.url, bypass_csp=True)
    context.set_default_timeout(60_000)  # a busy machine; the audit is not a speed test
    yield context.new_page()
    context.close()


def _violations(page: Page) -> list[str]:
    page.add_script_tag(path=str(AXE))
    results: dict[str, Any] = page.evaluate(
        "() => axe.run(document, {resultTypes: ['violations'], runOnly: ['wcag2a', 'wcag2aa', 'best-practice']})"
    )
    found = []
    for violation in results["violations"]:
        if violation["impact"] in BLOCKING:
            targets = [", ".join(node["target"]) for node in violation["nodes"][:3]]
            found.append(f"{violation['impact']} {violation['id']}: {violation['help']} at {targets}")
    return found


def _log_in_as_admin(page: Page, user_with_role: Callable[..., Any]) -> None:
    user = user_with_role("admin", username="auditor")
    user.set_password("axe-audit-password")
    user.save()
    page.goto("/account/login/")
    page.get_by_label("Username").fill("auditor")
    page.get_by_label("Password").fill("axe-audit-password")
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url("**/")


@pytest.mark.slow(40)
def test_every_page_has_no_serious_or_critical_accessibility_violation(
    audited_page: Page, demo_refreshed: DemoData, user_with_role: Callable[..., Any]
) -> None:
    if not AXE.is_file():
        pytest.skip(f"axe-core is not installed ({AXE}): make install puts it there with npm")
    page = audited_page
    page.goto("/account/login/")
    report = {"/account/login/ (logged out)": _violations(page)}
    _log_in_as_admin(page, user_with_role)
    for path in _pages(demo_refreshed):
        page.goto(path)
        page.wait_for_load_state("networkidle")
        report[path] = _violations(page)
    failing = {path: found for path, found in report.items() if found}
    assert not failing, "\n".join(f"{path}:\n  " + "\n  ".join(found) for path, found in failing.items())
