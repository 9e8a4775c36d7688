"""Whole pages shared by every visitor, kept in the cache, with each visitor's own parts put in per response.

A comparison page of 60 runs × 42 tests is ~2,500 table cells and a chart per
group; rendering it costs tens of milliseconds, serving it from here about one.
What differs between visitors is small and marked by placeholders when the
page is rendered for sharing: the CSRF token (the save form, htmx's header)
and the account links of the top bar. ``personalise`` puts the visitor's own
in on every response, so no visitor ever gets another's token.

Keys hold everything the page depends on; data that changes without a new run
(group set definitions) bumps ``generation``, which every key includes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

from django.contrib.messages import get_messages
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse
from django.middleware.csrf import get_token
from django.template.loader import render_to_string
from django.utils.safestring import mark_safe

from runs.permissions import Abilities

CSRF_PLACEHOLDER = "benchdash-csrf-placeholder"
USERNAV_PLACEHOLDER = "<!--benchdash:usernav-->"
_CSRF_BYTES = CSRF_PLACEHOLDER.encode()
_USERNAV_BYTES = USERNAV_PLACEHOLDER.encode()
PAGE_SECONDS = 24 * 3600
FORMAT = 2  # of the cached value (UTF-8 bytes); part of the key, so an upgrade never reads an old one


def counter(name: str) -> int:
    """A number that changes whenever ``bump(name)`` is called (kept in the cache: when the cache is
    cleared it restarts, and so do the pages it could have made stale)."""
    return int(cache.get(f"benchdash:counter:{name}") or 0)


def bump(name: str) -> None:
    key = f"benchdash:counter:{name}"
    try:
        cache.incr(key)
    except ValueError:  # not set yet
        cache.set(key, 1, None)


def generation() -> int:
    """Changes whenever shared settings that pages depend on change (group set definitions)."""
    return counter("generation")


def bump_generation() -> None:
    bump("generation")


def shared_context() -> dict[str, Any]:
    """Context entries that render a page for every visitor: placeholders instead of their own parts."""
    return {"csrf_token": CSRF_PLACEHOLDER, "usernav_placeholder": mark_safe(USERNAV_PLACEHOLDER)}


def personalise(request: HttpRequest, html: bytes) -> bytes:
    """The shared page (UTF-8) with this visitor's CSRF token and account links."""
    html = html.replace(_CSRF_BYTES, get_token(request).encode())
    if _USERNAV_BYTES in html:
        nav = render_to_string("base.html#usernav", {}, request)
        html = html.replace(_USERNAV_BYTES, nav.encode(), 1)
    return html


def cacheable(request: HttpRequest) -> bool:
    """GET without pending flash messages (those are one visitor's and shown once)."""
    return request.method == "GET" and len(get_messages(request)) == 0  # type: ignore[arg-type]


def page(request: HttpRequest, key: str | None, render: Callable[[dict[str, Any]], str | HttpResponse]) -> HttpResponse:
    """The page for this visitor: from the cache under ``key``, else ``render(context)``, kept when shared.

    ``key`` is any text that changes with everything the page shows (it is
    hashed); None means "do not share". ``render`` gets the context entries to
    add (the placeholders when the page is shared) and returns the HTML, or a
    response of its own (an error) that is returned as it is and never kept.
    """
    if key is None or not cacheable(request):
        out = render({})
        return out if isinstance(out, HttpResponse) else HttpResponse(personalise(request, out.encode()))
    # Actions shown depend on the visitor's roles (runs.permissions): one copy per set of abilities.
    key = f"{key}|{Abilities(request.user).fingerprint()}"
    full_key = f"page:{FORMAT}:{generation()}:{hashlib.sha256(key.encode()).hexdigest()}"
    # Kept as UTF-8 bytes: no encoding of the whole page per response, and the cache stores it as is.
    html = cache.get(full_key)
    if not isinstance(html, bytes):
        out = render(shared_context())
        if isinstance(out, HttpResponse):
            return out
        html = out.encode()
        cache.set(full_key, html, PAGE_SECONDS)
    return HttpResponse(personalise(request, html))
