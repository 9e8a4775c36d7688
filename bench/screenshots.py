"""Full-page screenshots of benchdash pages at desktop and phone width, for docs and layout review.

Assumes a server is already running (``make demo``, or ``manage.py runserver``)::

    .venv/bin/python bench/screenshots.py --base-url http://127.0.0.1:8000
    .venv/bin/python bench/screenshots.py /runs/ /bundles/1/

With no paths it shoots every page of the dashboard: the fixed ones in
``DEFAULT_PATHS`` and those found by following the first link of their kind
(a run, a drill-down, a regression, a timeline). Each page is saved as
``docs/screenshots/<name>.png`` at 1400 px wide and ``<name>-mobile.png`` at
390 px wide. Before each capture the page is scrolled to its end and back, so
what loads when scrolled to (the heatmap, the HW tables) and charts drawn when
in view are on the full-page picture. Console errors and sideways overflow are
printed as it goes, so a run doubles as a quick layout check. Uses Debian's
Chromium, never a download.
"""

from __future__ import annotations

import argparse
import re
import sys
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urljoin

from playwright.sync_api import Browser, ConsoleMessage, Error, Page, sync_playwright

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from tests.browser.chromium import CHROMIUM, CHROMIUM_ARGS  # noqa: E402

# (name, path) of the pages shot by default.
DEFAULT_PATHS = [
    ("home", "/"),
    ("compare", "/compare/"),
    ("compare-dbbench", "/compare/?suite=db_bench"),
    ("compare-pick", "/compare/?base="),
    ("heatmap", "/compare/heatmap"),
    ("hw", "/compare/hw"),
    ("group-timeline", "/compare/timeline?group=point+queries"),
    ("ibench", "/ibench/"),
    ("regressions", "/regressions/"),
    ("regressions-metrics", "/regressions/?tab=metrics"),
    ("scaleup", "/compare/scaleup"),
    ("targets", "/targets/"),
    ("benchmarks", "/benchmarks/"),
    ("reports", "/reports/"),
    ("runs", "/runs/"),
    ("run-diff", "/diff/"),
    ("bundles", "/bundles/"),
    ("search", "/search/?q=MDEV-34178"),
    ("search-server", "/search/?q=core"),
    ("search-group", "/search/?q=point+queries"),
    ("login", "/account/login/"),
]
# (name, page to look on, CSS selector of the link to follow): pages reached through the first such link.
FOLLOWED = [
    ("run-detail", "/runs/", "main table tbody a[href^='/runs/']"),
    ("bundle-detail", "/bundles/", "main table tbody a[href^='/bundles/']"),
    ("drilldown", "/compare/", "#relative-table tbody a[href*='/microbenchmarks/']"),
    ("timeline", "/compare/", "#relative-table tbody a[href*='/microbenchmarks/']", "a.timeline-link"),
    ("regression-detail", "/regressions/", "main a[href^='/regressions/'][href$='/']"),
]
WIDTHS = ((1400, 900, ""), (390, 844, "-mobile"))


@dataclass
class Shot:
    name: str
    path: str
    files: list[Path] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def page_name(path: str) -> str:
    """``/`` → ``home``, ``/runs/12/`` → ``runs-12``, ``/runs/?q=8.0`` → ``runs-q-8.0``."""
    slug = re.sub(r"[^A-Za-z0-9.]+", "-", path).strip("-")
    return slug or "home"


def followed_path(browser: Browser, base_url: str, start: str, *selectors: str) -> str | None:
    """The page reached from ``start`` by following the first link matching each selector in turn."""
    context = browser.new_context(base_url=base_url)
    try:
        page = context.new_page()
        page.goto(start)
        href = None
        for selector in selectors:
            link = page.locator(selector).first
            if not link.count():
                return None
            href = link.get_attribute("href")
            page.goto(urljoin(page.url, href))
        return page.url.removeprefix(base_url.rstrip("/")) if href else None
    finally:
        context.close()


def scroll_through(page: Page) -> None:
    """Scroll to the end a screen at a time and back: lazy sections load and charts in view are drawn."""
    height = page.evaluate("() => document.body.scrollHeight")
    step = page.viewport_size["height"] if page.viewport_size else 800
    y = 0
    while y < height and y < 60_000:
        page.evaluate(f"() => window.scrollTo(0, {y})")
        page.wait_for_timeout(120)
        y += step
        height = page.evaluate("() => document.body.scrollHeight")
    page.wait_for_load_state("networkidle")
    # Charts still waiting for the browser to be idle are drawn now, as for printing.
    page.evaluate("() => window.dispatchEvent(new Event('beforeprint'))")
    page.wait_for_timeout(600)
    # Tall tables scroll inside their wrapper on screen; a full-page picture shows them whole, as printing does.
    page.evaluate("() => document.documentElement.classList.add('full-capture')")
    page.evaluate("() => window.scrollTo(0, 0)")
    page.wait_for_timeout(200)


def shoot(browser: Browser, base_url: str, shot: Shot, out_dir: Path) -> None:
    for width, height, suffix in WIDTHS:
        context = browser.new_context(viewport={"width": width, "height": height}, base_url=base_url)
        try:
            page = context.new_page()
            errors: list[str] = []

            def on_console(message: ConsoleMessage, errors: list[str] = errors) -> None:
                if message.type == "error":
                    errors.append(f"{message.text} ({message.location.get('url', '?')})")

            def on_page_error(error: Error, errors: list[str] = errors) -> None:
                errors.append(f"uncaught {error}")

            page.on("console", on_console)
            page.on("pageerror", on_page_error)
            response = page.goto(shot.path, wait_until="load")
            if response is not None and not response.ok:
                shot.problems.append(f"{width}px: HTTP {response.status}")
            page.wait_for_timeout(300)  # let htmx.onLoad handlers and Plotly finish drawing
            scroll_through(page)
            target = out_dir / f"{shot.name}{suffix}.png"
            page.screenshot(path=str(target), full_page=True)
            shot.files.append(target)
            shot.problems.extend(f"{width}px: console: {e}" for e in errors)
            shot.problems.extend(f"{width}px: {p}" for p in overflow(page))
        finally:
            context.close()


def overflow(page: Page) -> list[str]:
    """Sideways overflow of the page, with the widest elements that stick out of the window."""
    body, window = page.evaluate("() => [document.body.scrollWidth, window.innerWidth]")
    if body <= window + 1:
        return []
    # Elements that stick out of the window, and elements whose own text overflows their box (a long
    # unbreakable run name in a heading): the second kind has no child element to point at.
    culprits = page.evaluate(
        """() => {
            const out = [];
            for (const el of document.querySelectorAll('body *')) {
                if (el.closest('.table-wrap, pre')) continue;
                const r = el.getBoundingClientRect();
                const style = getComputedStyle(el);
                const spills = style.overflowX === 'visible' && el.scrollWidth > el.clientWidth + 1;
                if (r.right > window.innerWidth + 1 || (spills && r.left + el.scrollWidth > window.innerWidth + 1)) {
                    const cls = el.className ? '.' + String(el.className).split(' ')[0] : '';
                    const text = (el.textContent || '').trim().replace(/\\s+/g, ' ').slice(0, 40);
                    const right = Math.round(Math.max(r.right, r.left + el.scrollWidth));
                    out.push([right, el.tagName.toLowerCase() + cls, text]);
                }
            }
            out.sort((a, b) => b[0] - a[0]);
            return out.slice(0, 4).map(([right, id, text]) => `${id} "${text}" to ${right}px`);
        }"""
    )
    return [f"<body> is {body}px wide in a {window}px window: {', '.join(culprits) or 'no single culprit'}"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", help="paths to shoot (default: every page, see DEFAULT_PATHS and FOLLOWED)")
    parser.add_argument("--base-url", default="http://127.0.0.1:8000", help="a running benchdash server")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots", help="where the PNGs go")
    args = parser.parse_args(argv)
    base_url = args.base_url.rstrip("/") + "/"

    try:
        urllib.request.urlopen(urljoin(base_url, "healthz"), timeout=5).close()
    except (urllib.error.URLError, OSError) as exc:
        print(f"no benchdash server answers at {base_url} ({exc}); start one with `make demo`", file=sys.stderr)
        return 2
    if not CHROMIUM.exists():
        print(f"Debian's Chromium is not at {CHROMIUM} (apt-get install chromium)", file=sys.stderr)
        return 2

    args.out.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        if args.paths:
            shots = [Shot(page_name(path), path) for path in args.paths]
        else:
            shots = [Shot(name, path) for name, path in DEFAULT_PATHS]
            for name, start, *selectors in FOLLOWED:
                found = followed_path(browser, base_url, start, *selectors)
                if found is None:
                    print(f"{name}: no link to follow from {start} (load data: manage.py load_demo)", file=sys.stderr)
                    continue
                shots.append(Shot(name, found))
        for shot in shots:
            shoot(browser, base_url, shot, args.out)
            print(f"{shot.path}: {', '.join(str(f.relative_to(args.out)) for f in shot.files)}")
            for problem in shot.problems:
                print(f"  ! {problem}")
        browser.close()
    return 1 if any(shot.problems for shot in shots) else 0


if __name__ == "__main__":
    sys.exit(main())
