"""Whole pages shared by every visitor, kept in the cache, with each visitor's own parts put in per response.

A comparison page of 60 runs × 42 tests is ~2,500 table cells and a chart per
group; rendering it costs tens of milliseconds, serving it from here about one.
What differs between visitors is small and marked by placeholders when the
page is rendered for sharing: the CSRF token (the save form, htmx's header)
and the account links of the top bar. Each shared render makes its own
placeholders from a random nonce kept with the page, so text in the data
(a workload's name, a note) can never be mistaken for one; ``personalise``
puts the visitor's own parts in on every response, so no visitor ever gets
another's token.

Keys hold everything the page depends on; data that changes without a new run
(group set definitions) bumps ``generation``, which every key includes. The
query string takes part only through the parameters the page understands, in
one canonical form, and the page is rendered from that canonical query alone:
made-up parameters neither make new entries nor show up in a shared page.

The cache is an optimisation only: an entry evicted, the whole cache cleared or
the cache server down all lead to a fresh render, never to a wrong page.
"""

from __future__ import annotations

import hashlib
import logging
import secrets
import time
from collections.abc import Callable, Iterable
from typing import Any

from django.contrib.messages import get_messages
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse, QueryDict
from django.middleware.csrf import get_token
from django.template.loader import render_to_string
from django.utils.http import parse_etags
from django.utils.safestring import mark_safe

log = logging.getLogger(__name__)

# What else a page's copy depends on for one visitor (the actions their roles allow, say): functions the apps
# that know register at start-up (``register_variant``); a page is kept once per distinct combination.
_variants: list[Callable[[HttpRequest], str]] = []


def register_variant(variant: Callable[[HttpRequest], str]) -> None:
    if variant not in _variants:
        _variants.append(variant)


# Entries are found again through keys that change with the data; the lifetime only bounds what an
# unvisited page costs the cache.
PAGE_SECONDS = 3600
FORMAT = 3  # of the cached value; part of the key, so an upgrade never reads an old one
_NONCE_BYTES = 16


def _csrf_placeholder(nonce: str) -> str:
    return f"benchdash-csrf-{nonce}"


def _usernav_placeholder(nonce: str) -> str:
    return f"<!--benchdash:usernav:{nonce}-->"


def cached(key: str) -> Any:
    """``cache.get(key)``, or None (a miss) while the cache is unreachable: nothing in it is needed."""
    try:
        return cache.get(key)
    except Exception:
        log.warning("cache unavailable: %s computed afresh", key, exc_info=True)
        return None


def keep(key: str, value: Any, seconds: int) -> None:
    """``cache.set``, skipped while the cache is unreachable (the value is computed again next time)."""
    try:
        cache.set(key, value, seconds)
    except Exception:
        log.warning("cache unavailable: %s not kept", key, exc_info=True)


def counter(name: str) -> int:
    """A number that changes whenever ``bump(name)`` is called.

    Kept in the cache. A counter that is missing (never set, evicted, cache
    cleared) starts again from the clock in nanoseconds, a value it never had,
    so keys made from its old values are never used again; a cache that is down
    gives a value no key has used either.
    """
    key = f"benchdash:counter:{name}"
    try:
        value = cache.get(key)
        if value is None:
            cache.add(key, time.time_ns(), None)
            value = cache.get(key)
        return int(value) if value is not None else time.time_ns()
    except Exception:
        log.warning("cache unavailable: counter %s not read", name, exc_info=True)
        return time.time_ns()


def bump(name: str) -> None:
    key = f"benchdash:counter:{name}"
    try:
        try:
            cache.incr(key)
        except ValueError:  # missing: a value it never had is as good as one more
            cache.set(key, time.time_ns(), None)
    except Exception:
        # Pages keyed by the old value may be served until the cache comes back with the counter gone
        # (it then restarts from the clock); nothing else can be done without the cache.
        log.warning("cache unavailable: counter %s not bumped", name, exc_info=True)


def generation() -> int:
    """Changes whenever shared settings that pages depend on change (group set definitions)."""
    return counter("generation")


def bump_generation() -> None:
    bump("generation")


def shared_context(nonce: str) -> dict[str, Any]:
    """Context entries that render a page for every visitor: placeholders instead of their own parts."""
    return {"csrf_token": _csrf_placeholder(nonce), "usernav_placeholder": mark_safe(_usernav_placeholder(nonce))}


def personalise(request: HttpRequest, nonce: str, html: bytes) -> bytes:
    """The shared page (UTF-8) rendered with ``nonce``, with this visitor's CSRF token and account links."""
    html = html.replace(_csrf_placeholder(nonce).encode(), get_token(request).encode())
    usernav = _usernav_placeholder(nonce).encode()
    if usernav in html:
        nav = render_to_string("base.html#usernav", {}, request)
        html = html.replace(usernav, nav.encode(), 1)
    return html


def cacheable(request: HttpRequest) -> bool:
    """GET without pending flash messages (those are one visitor's and shown once)."""
    return request.method == "GET" and len(get_messages(request)) == 0  # type: ignore[arg-type]


# Bounds on the parameters a prefix admits: a longer name, or more of them, are no page's parameters.
_PREFIXED_NAME_MAX = 80
_PREFIXED_MAX = 32


def canonical_query(
    query: QueryDict, params: Iterable[str], multi: Iterable[str] = (), blank: Iterable[str] = ()
) -> QueryDict:
    """Only ``params`` of ``query`` (a name ending in ``*``: every parameter beginning with the rest), one way of
    writing each: empty values dropped, a repeated single-valued
    parameter reduced to the value the page would read (the last), a multi-valued one's values de-duplicated
    and sorted; the parameters in sorted order. A parameter of ``blank`` given with no value keeps one empty
    value (it means something there: ``base=`` asks for the run picker), so it adds one variant at most."""
    params, many, keep_blank = tuple(params), set(multi), set(blank)
    # A name ending in "*" stands for every parameter it begins (``y_max_*``: one per chart), each single-valued.
    prefixes = tuple(p[:-1] for p in params if p.endswith("*"))
    named = {p for p in params if not p.endswith("*")}
    prefixed = sorted(n for n in query if prefixes and n.startswith(prefixes) and len(n) <= _PREFIXED_NAME_MAX)
    named |= set(prefixed[:_PREFIXED_MAX])
    out = QueryDict(mutable=True)
    for name in sorted(named | many):
        given = query.getlist(name)
        values = [v for v in given if v.strip()]
        if not values:
            if given and name in keep_blank:
                out.setlist(name, [""])
            continue
        out.setlist(name, sorted(set(values)) if name in many else values[-1:])
    out._mutable = False
    return out


def page(
    request: HttpRequest,
    key: str | None,
    render: Callable[[dict[str, Any]], str | HttpResponse],
    *,
    params: Iterable[str] = (),
    multi: Iterable[str] = (),
    blank: Iterable[str] = (),
) -> HttpResponse:
    """The page for this visitor: from the cache under ``key``, else ``render(context)``, kept when shared.

    ``key`` is any text that changes with everything the page shows except the
    query (it is hashed); None means "do not share". ``params`` are the query
    parameters the page reads (``multi`` those read as lists, ``blank`` those
    whose empty value means something): the page is rendered from them alone,
    in canonical form, and they complete the key.
    ``render`` gets the context entries to add (the placeholders when the page
    is shared) and returns the HTML, or a response of its own (an error) that
    is returned as it is and never kept.
    """
    request.GET = canonical_query(request.GET, params, multi, blank)  # type: ignore[assignment]  # immutable, as Django's
    if key is None or not cacheable(request):
        out = render({})
        return out if isinstance(out, HttpResponse) else HttpResponse(out)
    text = f"{key}|{variant_of(request)}|{bool(getattr(request, 'htmx', False))}|{request.GET.urlencode()}"
    full_key = f"page:{FORMAT}:{generation()}:{hashlib.sha256(text.encode()).hexdigest()}"
    entry = _get(full_key)
    if entry is None:
        nonce = secrets.token_hex(_NONCE_BYTES)
        out = render(shared_context(nonce))
        if isinstance(out, HttpResponse):
            return out
        # Kept as UTF-8 bytes: no encoding of the whole page per response, and the cache stores it as is.
        entry = (nonce, out.encode())
        _set(full_key, entry)
    nonce, html = entry
    return HttpResponse(personalise(request, nonce, html))


def variant_of(request: HttpRequest) -> str:
    """What else a shared copy depends on for this visitor (see ``register_variant``)."""
    return "|".join(variant(request) for variant in _variants)


def document(request: HttpRequest, key: str, produce: Callable[[], tuple[bytes, str] | HttpResponse]) -> HttpResponse:
    """An API document shared like a page: its bytes kept under ``key``, with a strong ETag, and a 304 to a client
    that already has them.

    ``key`` is any text that changes with everything the document holds (the
    series' stamp, the request's canonical parameters); the generation and the
    visitor's variant are added, as for pages. ``produce`` returns the bytes
    and their content type, or a response of its own (an error), returned as it
    is and never kept. The ETag is the bytes' hash, so it changes exactly when
    they do, whichever process made them.
    """
    text = f"{key}|{variant_of(request)}"
    full_key = f"doc:{FORMAT}:{generation()}:{hashlib.sha256(text.encode()).hexdigest()}"
    entry = _get_document(full_key)
    if entry is None:
        out = produce()
        if isinstance(out, HttpResponse):
            return out
        body, content_type = out
        entry = (f'"{hashlib.sha256(body).hexdigest()[:40]}"', content_type, body)
        _set_document(full_key, entry)
    etag, content_type, body = entry
    # A 304 carries no body: the client shows the copy it has.
    response = HttpResponse(status=304) if _client_has(request, etag) else HttpResponse(body, content_type=content_type)
    response["ETag"] = etag
    # Kept by the client, but asked about again each time: a new import changes the document at once.
    response["Cache-Control"] = "no-cache"
    return response


def _client_has(request: HttpRequest, etag: str) -> bool:
    # If-None-Match compares weakly (RFC 9110): W/"x" names the same bytes as "x".
    wanted = parse_etags(request.headers.get("If-None-Match", ""))
    return "*" in wanted or any(tag.removeprefix("W/") == etag for tag in wanted)


def _get_document(key: str) -> tuple[str, str, bytes] | None:
    try:
        entry = cache.get(key)
    except Exception:
        log.warning("cache unavailable: document made afresh", exc_info=True)
        return None
    if isinstance(entry, tuple) and len(entry) == 3 and all(isinstance(v, str) for v in entry[:2]):
        return entry if isinstance(entry[2], bytes) else None
    return None


def _set_document(key: str, entry: tuple[str, str, bytes]) -> None:
    try:
        cache.set(key, entry, PAGE_SECONDS)
    except Exception:
        log.warning("cache unavailable: document not kept", exc_info=True)


def _get(key: str) -> tuple[str, bytes] | None:
    try:
        entry = cache.get(key)
    except Exception:
        log.warning("cache unavailable: page rendered afresh", exc_info=True)
        return None
    if isinstance(entry, tuple) and len(entry) == 2 and isinstance(entry[0], str) and isinstance(entry[1], bytes):
        return entry
    return None


def _set(key: str, entry: tuple[str, bytes]) -> None:
    try:
        cache.set(key, entry, PAGE_SECONDS)
    except Exception:
        log.warning("cache unavailable: page not kept", exc_info=True)
