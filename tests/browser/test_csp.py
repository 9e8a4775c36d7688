"""The Content-Security-Policy holds in Chromium: charts, htmx swaps and the API docs work, nothing is refused.

Chromium reports every refused script or style as a ``securitypolicyviolation``
event (collected here) and a console error (collected by the rig), so a policy
too strict for plotly.js or htmx fails these tests, and so does one too loose to
stop an injected inline script.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from playwright.sync_api import Page

    from tests.browser.conftest import DemoData

pytestmark = pytest.mark.browser

COLLECT_VIOLATIONS = """
window.__csp = [];
document.addEventListener("securitypolicyviolation", (e) => {
  window.__csp.push(`${e.effectiveDirective} refused ${e.blockedURI || "inline"} (${e.sourceFile}:${e.lineNumber})`);
});
"""


@pytest.fixture
def watched(page: Page) -> Page:
    page.context.add_init_script(COLLECT_VIOLATIONS)
    return page


def _violations(page: Page) -> list[str]:
    return list(page.evaluate("() => window.__csp"))


def _base(demo_data: DemoData) -> int:
    run_id = demo_data.mysql.runs[0].id
    assert run_id is not None
    return run_id


def test_the_comparison_page_draws_its_charts_under_the_policy(
    watched: Page, demo_data: DemoData, console_errors: list[str]
) -> None:
    response = watched.goto(f"/compare/?base={_base(demo_data)}")
    assert response is not None and "script-src 'self'" in response.headers["content-security-policy"]
    figures = watched.locator("[data-figure]")
    assert figures.count() >= 4
    for n in range(figures.count()):
        figures.nth(n).locator(".main-svg").first.wait_for()  # plotly.js draws each, those off screen when idle
    assert watched.locator("[data-figure][data-drawn='1']").count() == figures.count()
    assert _violations(watched) == [] and console_errors == []


def test_the_heatmap_and_a_drill_down_draw_under_the_policy(
    watched: Page, demo_data: DemoData, console_errors: list[str]
) -> None:
    from runs.models import Result

    base = _base(demo_data)
    watched.goto(f"/compare/heatmap?base={base}")
    watched.locator("[data-figure] .main-svg").first.wait_for()
    microbenchmark_id = Result.objects.filter(run_id=base).values_list("microbenchmark_id", flat=True).first()
    watched.goto(f"/microbenchmarks/{microbenchmark_id}/?base={base}")
    watched.locator("[data-figure] .main-svg").first.wait_for()
    assert _violations(watched) == [] and console_errors == []


def test_an_htmx_swap_of_the_comparison_keeps_working_under_the_policy(
    watched: Page, demo_data: DemoData, console_errors: list[str]
) -> None:
    watched.goto(f"/compare/?base={_base(demo_data)}")
    watched.locator("[data-figure] .main-svg").first.wait_for()
    watched.evaluate("document.querySelectorAll('[data-figure]').forEach((el) => { el.dataset.before = 'swap'; })")
    with watched.expect_response(lambda r: "/compare/" in r.url and r.request.headers.get("hx-request") == "true"):
        # Any control of the form re-renders the comparison fragment through htmx.
        watched.locator("form.controls select").first.select_option(index=1)
    swapped = watched.locator("[data-figure]:not([data-before])").first
    swapped.locator(".main-svg").first.wait_for()  # the swapped-in charts are drawn by plotly.js too
    assert _violations(watched) == [] and console_errors == []


def test_the_api_docs_load_swagger_from_our_own_static_files(
    watched: Page, demo_data: DemoData, console_errors: list[str]
) -> None:
    watched.goto("/api/docs")
    watched.get_by_text("/api/bundles/", exact=False).first.wait_for()
    assert _violations(watched) == [] and console_errors == []


def test_an_injected_inline_script_is_refused(watched: Page, demo_data: DemoData, console_errors: list[str]) -> None:
    # What an XSS would do: put a <script> with code into the page. The policy must stop it from running.
    watched.goto("/")
    ran = watched.evaluate(
        """() => new Promise((resolve) => {
             window.__ran = false;
             const s = document.createElement("script");
             s.textContent = "window.__ran = true";
             document.body.appendChild(s);
             setTimeout(() => resolve(window.__ran), 50);
           })"""
    )
    assert ran is False
    assert any(v.startswith("script-src") for v in _violations(watched))
    console_errors.clear()  # Chromium logs the refusal too; that one is expected here
