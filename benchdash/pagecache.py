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

A page is kept cut at its placeholders, twice: as UTF-8 and as gzip, each piece
of text deflated once when kept. A response is one round trip to the cache (the
generation and the page together), then a join of the pieces with the
visitor's parts; with gzip, the visitor's parts go in as stored deflate blocks
and the checksum is carried over the kept pieces without reading them. No
compressed byte depends on a visitor's token.

The cache is an optimisation only: an entry evicted, the whole cache cleared or
the cache server down all lead to a fresh render, never to a wrong page.
"""

from __future__ import annotations

import hashlib
import logging
import math
import secrets
import struct
import time
import zlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib.messages import get_messages
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse, QueryDict
from django.middleware.csrf import get_token
from django.template.loader import get_template
from django.utils.cache import patch_vary_headers
from django.utils.http import parse_etags
from django.utils.safestring import mark_safe

from benchdash import hooks
from benchdash.clientip import client_address

log = logging.getLogger(__name__)


# What else a page's copy depends on for one visitor (the actions their roles allow, say): functions the apps
# that know provide at start-up (``hooks.PAGE_VARIANTS``); a page is kept once per distinct combination.
def _variants() -> tuple[Callable[[HttpRequest], str], ...]:
    return hooks.provided(hooks.PAGE_VARIANTS)


# Entries are found again through keys that change with the data; the lifetime only bounds what an
# unvisited page costs the cache.
PAGE_SECONDS = 3600
FORMAT = 4  # of the cached value; part of the key, so an upgrade never reads an old one
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


def _counter_key(name: str) -> str:
    return f"benchdash:counter:{name}"


def counter(name: str) -> int:
    """A number that changes whenever ``bump(name)`` is called.

    Kept in the cache. A counter that is missing (never set, evicted, cache
    cleared) starts again from the clock in nanoseconds, a value it never had,
    so keys made from its old values are never used again; a cache that is down
    gives a value no key has used either.
    """
    key = _counter_key(name)
    try:
        value = cache.get(key)
        if value is None:
            # Added: the value is ours. Not added: another process started the counter first; theirs is read.
            started = time.time_ns()
            value = started if cache.add(key, started, None) else cache.get(key)
        return int(value) if value is not None else time.time_ns()
    except Exception:
        log.warning("cache unavailable: counter %s not read", name, exc_info=True)
        return time.time_ns()


def bump(name: str) -> None:
    key = _counter_key(name)
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
    return _Visitor(request).identity(_split(nonce, html))


# A shared page is kept cut at its placeholders: text, then what each visitor gets in their place (these
# markers), then text. A response joins the pieces; nothing scans the page per request.
_CSRF, _USERNAV = 0, 1
_Piece = bytes | int


def _split(nonce: str, html: bytes) -> tuple[_Piece, ...]:
    markers = {_csrf_placeholder(nonce).encode(): _CSRF, _usernav_placeholder(nonce).encode(): _USERNAV}
    # Found with bytes.find, not a pattern: the nonce is new on every page, so a pattern would be compiled for
    # each one. Neither marker contains the other, so their places never overlap.
    places: list[tuple[int, bytes]] = []
    for marker in markers:
        at = html.find(marker)
        while at != -1:
            places.append((at, marker))
            at = html.find(marker, at + len(marker))
    pieces: list[_Piece] = []
    start = 0
    for at, marker in sorted(places):
        pieces += [html[start:at], markers[marker]]
        start = at + len(marker)
    pieces.append(html[start:])
    return tuple(p for p in pieces if p != b"")


class _Visitor:
    """This visitor's own parts of a shared page, made when first needed."""

    def __init__(self, request: HttpRequest) -> None:
        self.request = request
        self._parts: dict[int, bytes] = {}

    def part(self, marker: int) -> bytes:
        if marker not in self._parts:
            if marker == _CSRF:
                self._parts[marker] = get_token(self.request).encode()
            else:
                self._parts[marker] = self._usernav().encode()
        return self._parts[marker]

    def _usernav(self) -> str:
        # The account links read only the visitor, the request and the token: rendered without the context
        # processors, which would look up the visitor's permissions and flash messages for nothing.
        context = {"user": self.request.user, "request": self.request, "csrf_token": self.part(_CSRF).decode()}
        return get_template("base.html#usernav").render(context)

    def identity(self, pieces: tuple[_Piece, ...]) -> bytes:
        return b"".join(self.part(p) if isinstance(p, int) else p for p in pieces)

    def gzip(self, pieces: tuple[_Gzipped | int, ...]) -> bytes:
        """A gzip member whose shared text was compressed once, when kept, with this visitor's parts put in
        as stored (uncompressed) deflate blocks between them. Each piece of text was compressed on its own,
        so no compressed byte depends on a visitor's token (nothing for a BREACH-style guess to measure)."""
        out = [_GZIP_HEADER]
        crc = size = 0
        for piece in pieces:
            if isinstance(piece, int):
                data = self.part(piece)
                for at in range(0, len(data), 0xFFFF):
                    chunk = data[at : at + 0xFFFF]
                    out += [b"\x00", struct.pack("<HH", len(chunk), len(chunk) ^ 0xFFFF), chunk]
                crc = zlib.crc32(data, crc)
                size += len(data)
            else:
                out.append(piece.deflated)
                crc = _crc_after(piece.shift, crc) ^ piece.crc
                size += piece.size
        out += [_DEFLATE_END, struct.pack("<II", crc, size & 0xFFFFFFFF)]
        return b"".join(out)


# gzip (RFC 1952): no name, no time, unknown OS. The deflate stream (RFC 1951) is a run of non-final blocks,
# each piece ending on a byte boundary (a sync flush), closed by an empty final block with fixed codes.
_GZIP_HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"
_DEFLATE_END = b"\x03\x00"


@dataclass(frozen=True)
class _Gzipped:
    """A piece of a shared page's text, deflated once; its CRC-32 and size, and ``shift`` to carry a running
    CRC-32 over it: ``crc32(text, c) == _crc_after(shift, c) ^ crc32(text)``, so a response never reads the
    text again to make its checksum."""

    deflated: bytes
    crc: int
    size: int
    shift: tuple[int, ...]


def _gzipped(text: bytes) -> _Gzipped:
    compressor = zlib.compressobj(6, zlib.DEFLATED, -15)
    deflated = compressor.compress(text) + compressor.flush(zlib.Z_SYNC_FLUSH)
    return _Gzipped(deflated, zlib.crc32(text), len(text), _crc_shift(len(text)))


# CRC-32's polynomial, bit-reversed as zlib computes it.
_CRC32_POLY = 0xEDB88320


def _crc_shift(length: int) -> tuple[int, ...]:
    """The columns of M for a text of ``length`` bytes (see ``_Gzipped``), one per bit of the starting value.

    CRC-32 is affine in its starting value: crc32(text, c) = M·c ^ crc32(text, 0), M depending on the length
    alone, so each column is crc32 of that many zero bytes from one bit, less crc32 of them from 0. Only the
    top bit's is computed so: M multiplies by x^(8·length) modulo the polynomial, which commutes with
    multiplying by x, and in zlib's bit order bit k - 1 is bit k times x. One pass over the zeros, not 32
    (a 400 KB comparison page spent milliseconds on them)."""
    zeros = bytes(length)
    column = zlib.crc32(zeros, 1 << 31) ^ zlib.crc32(zeros)
    columns = [column]
    for _ in range(31):
        column = (column >> 1) ^ (_CRC32_POLY if column & 1 else 0)
        columns.append(column)
    return tuple(reversed(columns))


def _crc_after(shift: tuple[int, ...], crc: int) -> int:
    out = bit = 0
    while crc:
        if crc & 1:
            out ^= shift[bit]
        crc >>= 1
        bit += 1
    return out


def accepts_gzip(request: HttpRequest) -> bool:
    """Whether Accept-Encoding allows gzip (RFC 9110 12.5.3): named, or covered by ``*``, with a weight above 0.
    ``gzip;q=0`` refuses it (Django's GZipMiddleware only looks for the word)."""
    weights: dict[str, float] = {}
    for item in request.headers.get("Accept-Encoding", "").lower().split(","):
        coding, *params = (part.strip() for part in item.split(";"))
        weight = 1.0
        for param in params:
            name, _, value = param.partition("=")
            if name.strip() == "q":
                try:
                    weight = float(value)
                except ValueError:
                    weight = 0.0
        if coding:
            weights[coding] = weight
    gzip = weights.get("gzip", weights.get("x-gzip", weights.get("*", 0.0)))
    return gzip > 0


def cacheable(request: HttpRequest) -> bool:
    """GET without pending flash messages (those are one visitor's and shown once)."""
    return request.method == "GET" and len(get_messages(request)) == 0  # type: ignore[arg-type]


# Bounds on the parameters a prefix admits: a longer name, or more of them, are no page's parameters.
_PREFIXED_NAME_MAX = 80
_PREFIXED_MAX = 32
# A value longer than this is no value any page offers (names, searches and numbers are all shorter).
_VALUE_MAX = 200

# How a parameter's value is written canonically: the text to key and render with ("" drops the parameter),
# or ValueError for a value the page does not take (it is rendered, with the page's own error, but never kept).
Canon = Callable[[str], str]


def number(low: float, high: float) -> Canon:
    """A finite number within [low, high], written one way: ``1.50``, ``1.5e0`` and ``+1.5`` are ``1.5``."""

    def canon(value: str) -> str:
        found = float(value)  # ValueError for text
        if not (math.isfinite(found) and low <= found <= high):
            raise ValueError(f"{value!r} is outside {low:g}..{high:g}")
        return repr(int(found)) if found.is_integer() and abs(found) < 2**53 else repr(found)

    return canon


def integer(low: int, high: int) -> Canon:
    """ASCII digits naming a whole number within [low, high], without leading zeros."""

    def canon(value: str) -> str:
        text = value.strip()
        if not (text.isascii() and text.isdigit()) or not low <= int(text) <= high:
            raise ValueError(f"{value!r} is not a whole number from {low} to {high}")
        return str(int(text))

    return canon


def choice(*values: str) -> Canon:
    """One of ``values`` (the page's own spellings)."""

    def canon(value: str) -> str:
        if value not in values:
            raise ValueError(f"{value!r} is not one of {', '.join(values)}")
        return value

    return canon


def flag(value: str) -> str:
    """A checkbox, as Django's BooleanField reads it: "false" and "0" are off (dropped), anything else "on"."""
    return "" if value.strip().lower() in ("false", "0") else "on"


def text(value: str) -> str:
    """Any short text, as given."""
    if len(value) > _VALUE_MAX:
        raise ValueError("too long")
    return value


# Parameters every page reads the same way.
COMMON_KINDS: dict[str, Canon] = {"page": integer(1, 10**6)}


@dataclass(frozen=True)
class Canonical:
    """A query in canonical form: what the page renders from, whether a copy may be kept, and the names that came
    in through a prefix (``y_max_*``), which a kept copy must show the page offers (see ``page``)."""

    query: QueryDict
    cacheable: bool
    prefixed: tuple[str, ...]


def _kind_of(name: str, kinds: Mapping[str, Canon], prefixes: tuple[str, ...]) -> Canon:
    """How a parameter's values are written: its kind by name, else by its "prefix*", else as text."""
    return kinds.get(name) or next((kinds[f"{p}*"] for p in prefixes if name.startswith(p) and f"{p}*" in kinds), text)


def _written(values: list[str], canon: Canon) -> tuple[list[str], bool]:
    """The values as their kind writes them (empty ones dropped), and whether the kind understood them all (a
    value it refuses stays as given)."""
    written = []
    understood = True
    for value in values:
        try:
            written.append(canon(value))
        except ValueError:
            written.append(value)
            understood = False
    return [w for w in written if w], understood


def canonicalise(
    query: QueryDict,
    params: Iterable[str],
    multi: Iterable[str] = (),
    blank: Iterable[str] = (),
    kinds: Mapping[str, Canon] | None = None,
) -> Canonical:
    """Only ``params`` of ``query`` (a name ending in ``*``: every parameter beginning with the rest), one way of
    writing each: empty values dropped, a repeated single-valued parameter reduced to the value the page would
    read (the last), a multi-valued one's values de-duplicated and sorted, each value written as its kind says
    (``kinds``, by name or by "prefix*"; ``text`` otherwise); the parameters in sorted order. A parameter of
    ``blank`` given with no value keeps one empty value (it means something there: ``base=`` asks for the run
    picker), so it adds one variant at most. A value its kind refuses stays as given, and the query is not
    cacheable."""
    params, many, keep_blank = tuple(params), set(multi), set(blank)
    kinds = {**COMMON_KINDS, **(kinds or {})}
    # A name ending in "*" stands for every parameter it begins (``y_max_*``: one per chart), each single-valued.
    prefixes = tuple(p[:-1] for p in params if p.endswith("*"))
    named = {p for p in params if not p.endswith("*")}
    prefixed = sorted(n for n in query if prefixes and n.startswith(prefixes) and len(n) <= _PREFIXED_NAME_MAX)
    named |= set(prefixed[:_PREFIXED_MAX])
    out = QueryDict(mutable=True)
    cacheable = True
    for name in sorted(named | many):
        given = query.getlist(name)
        values = [v for v in given if v.strip()]
        if not values:
            if given and name in keep_blank:
                out.setlist(name, [""])
            continue
        canon = _kind_of(name, kinds, prefixes)
        written, understood = _written(sorted(set(values)) if name in many else values[-1:], canon)
        cacheable = cacheable and understood
        if written:
            out.setlist(name, sorted(set(written)) if name in many else written)
    out._mutable = False
    return Canonical(out, cacheable, tuple(n for n in prefixed[:_PREFIXED_MAX] if n in out))


def canonical_query(
    query: QueryDict,
    params: Iterable[str],
    multi: Iterable[str] = (),
    blank: Iterable[str] = (),
    kinds: Mapping[str, Canon] | None = None,
) -> QueryDict:
    """``canonicalise``'s query alone."""
    return canonicalise(query, params, multi, blank, kinds).query


def _offers(html: str, names: Iterable[str]) -> bool:
    """Whether the rendered page has a control for each name (a made-up ``y_max_<name>`` has none)."""
    return all(f'name="{name}"' in html for name in names)


def anonymous_render_allowed(request: HttpRequest) -> bool:
    """Whether an anonymous visitor's address may have one more page rendered this minute.

    Renders a cache hit spares are free; each render for an anonymous visitor counts against
    ``BENCHDASH_ANONYMOUS_RENDERS_PER_MINUTE`` per client address, so nobody without an account can make the
    server render (and keep) page after page of made-up queries. Signed-in users are not counted."""
    budget = settings.BENCHDASH_ANONYMOUS_RENDERS_PER_MINUTE
    user = getattr(request, "user", None)
    if budget <= 0 or (user is not None and user.is_authenticated):
        return True
    minute = int(time.time() // 60)
    key = f"pagecache:renders:{client_address(request)}:{minute}"
    try:
        cache.add(key, 0, 120)
        return int(cache.incr(key)) <= budget
    except Exception:  # the cache down: nothing is kept either, and the budget has nowhere to live
        return True


def too_many_renders() -> HttpResponse:
    response = HttpResponse(
        "Too many different pages asked for from this address in a minute; try again in a minute, or log in.\n",
        status=429,
        content_type="text/plain; charset=utf-8",
    )
    response["Retry-After"] = str(60 - int(time.time()) % 60)
    return response


def page(
    request: HttpRequest,
    key: str | None,
    render: Callable[[dict[str, Any]], str | HttpResponse],
    *,
    params: Iterable[str] = (),
    multi: Iterable[str] = (),
    blank: Iterable[str] = (),
    kinds: Mapping[str, Canon] | None = None,
) -> HttpResponse:
    """The page for this visitor: from the cache under ``key``, else ``render(context)``, kept when shared.

    ``key`` is any text that changes with everything the page shows except the
    query (it is hashed); None means "do not share". ``params`` are the query
    parameters the page reads (``multi`` those read as lists, ``blank`` those
    whose empty value means something, ``kinds`` how values are written): the
    page is rendered from them alone, in canonical form, and they complete the
    key. A query with a value its kind refuses, or a prefixed name the rendered
    page does not offer, is answered without keeping a copy. Anonymous renders
    are budgeted per address (``anonymous_render_allowed``).
    ``render`` gets the context entries to add (the placeholders when the page
    is shared) and returns the HTML, or a response of its own (an error) that
    is returned as it is and never kept.
    """
    canonical = canonicalise(request.GET, params, multi, blank, kinds)
    request.GET = canonical.query  # type: ignore[assignment]  # immutable, as Django's
    if key is None or not canonical.cacheable or not cacheable(request):
        if not anonymous_render_allowed(request):
            return too_many_renders()
        out = render({})
        return out if isinstance(out, HttpResponse) else HttpResponse(out)
    text = f"{key}|{variant_of(request)}|{bool(getattr(request, 'htmx', False))}|{request.GET.urlencode()}"
    full_key = f"page:{FORMAT}:{hashlib.sha256(text.encode()).hexdigest()}"
    gzipped = accepts_gzip(request)
    current, entry = _get(full_key, gzipped)
    if entry is None:
        if not anonymous_render_allowed(request):
            return too_many_renders()
        nonce = secrets.token_hex(_NONCE_BYTES)
        out = render(shared_context(nonce))
        if isinstance(out, HttpResponse):
            return out
        # Kept cut at its placeholders, as UTF-8 and, once a visitor accepts gzip, deflated too: a response joins
        # pieces, it never encodes, scans or compresses the whole page. A response without gzip compresses
        # nothing: the first visitor that accepts it deflates the kept pieces (_get), never renders again.
        pieces = _split(nonce, out.encode())
        deflated = _deflated(pieces) if gzipped else None
        if _offers(out, canonical.prefixed):
            _set(full_key, current, pieces, deflated)
        entry = deflated if deflated is not None else pieces
    visitor = _Visitor(request)
    if gzipped:
        response = HttpResponse(visitor.gzip(entry))  # type: ignore[arg-type]
        response["Content-Encoding"] = "gzip"
    else:
        response = HttpResponse(visitor.identity(entry))  # type: ignore[arg-type]
    patch_vary_headers(response, ("Accept-Encoding",))
    return response


def variant_of(request: HttpRequest) -> str:
    """What else a shared copy depends on for this visitor (see ``_variants``)."""
    return "|".join(variant(request) for variant in _variants())


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


def _get(key: str, gzipped: bool) -> tuple[int, tuple[Any, ...] | None]:
    """The generation and, when kept under it, the page in the encoding asked for: one round trip. Asked for
    gzip, a page kept only as UTF-8 (rendered for a visitor without gzip) is deflated and kept deflated too."""
    counter_key = _counter_key("generation")
    identity_key = f"{key}:identity"
    keys = [counter_key, f"{key}:gzip", identity_key] if gzipped else [counter_key, identity_key]
    try:
        found = cache.get_many(keys)
    except Exception:
        log.warning("cache unavailable: page rendered afresh", exc_info=True)
        return time.time_ns(), None
    current = found.get(counter_key)
    if current is None:
        return generation(), None
    entry = _current(found.get(keys[1]), current)
    if entry is None and gzipped:
        pieces = _current(found.get(identity_key), current)
        if pieces is not None:
            entry = _deflated(pieces)
            _set(key, int(current), None, entry)
    return int(current), entry


def _current(entry: Any, current: Any) -> tuple[Any, ...] | None:
    """A kept page's pieces when it was kept under the generation ``current``, else None."""
    if isinstance(entry, tuple) and len(entry) == 2 and entry[0] == current and isinstance(entry[1], tuple):
        return entry[1]
    return None


def _deflated(pieces: tuple[Any, ...]) -> tuple[_Gzipped | int, ...]:
    return tuple(p if isinstance(p, int) else _gzipped(p) for p in pieces)


def _set(
    key: str, current: int, pieces: tuple[_Piece, ...] | None, deflated: tuple[_Gzipped | int, ...] | None
) -> None:
    # Kept with the generation it was made under: a page of an older one is never served.
    kept: dict[str, tuple[int, tuple[Any, ...]]] = {}
    if pieces is not None:
        kept[f"{key}:identity"] = (current, pieces)
    if deflated is not None:
        kept[f"{key}:gzip"] = (current, deflated)
    try:
        cache.set_many(kept, PAGE_SECONDS)
    except Exception:
        log.warning("cache unavailable: page not kept", exc_info=True)
