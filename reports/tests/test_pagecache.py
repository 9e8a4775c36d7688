"""Comparison pages are rendered once and shared: each visitor still gets their own token and account links."""

from __future__ import annotations

import gzip
import re
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from regressions.detection import detect_regressions
from regressions.models import Regression
from reports.models import GroupSetDefinition
from runs.importer import submit_and_import
from runs.models import Bundle, Microbenchmark, Run
from runs.signals import announce_import

pytestmark = pytest.mark.django_db

TOKEN_RE = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')


def _pages(small_base: Run) -> list[str]:
    mb = Microbenchmark.objects.get(test="point-query", range_size=100)
    return [
        f"/compare/?base={small_base.pk}",
        f"/compare/heatmap?base={small_base.pk}",
        f"/microbenchmarks/{mb.pk}/?base={small_base.pk}",
    ]


def _strip_personal(html: str) -> str:
    html = TOKEN_RE.sub("", html)
    html = re.sub(r"hx-headers='[^']*'", "", html)
    return re.sub(r'<nav aria-label="Main">.*?</nav>', "", html, flags=re.S)


def test_a_second_visitor_gets_the_same_page_from_the_cache_with_their_own_token_and_links(
    small_base: Run, user_with_role: Callable[..., Any]
) -> None:
    alice = user_with_role("viewer", "alice")
    for url in _pages(small_base):
        anonymous = Client()
        first = anonymous.get(url).content.decode()
        member = Client()
        member.force_login(alice)
        with CaptureQueriesContext(connection) as queries:
            response = member.get(url)
        second = response.content.decode()

        assert response.status_code == 200
        assert not response.templates, f"{url}: rendered again instead of served from the cache"
        # The cached page costs a few small queries, none growing with the data: the base, the series and
        # regression stamps, the session and its user, and the user's and groups' permissions (the copy of the
        # page depends on which actions the visitor may take).
        assert len(queries) <= 7, (url, [q["sql"] for q in queries])
        assert _strip_personal(first) == _strip_personal(second)
        assert 'alice<span class="wide-only"> · API tokens</span>' in second and "alice" not in first
        assert "Log in" in first and "Log out" in second and "Log out" not in first
        assert "benchdash-csrf-placeholder" not in second and "benchdash:usernav" not in second
        first_tokens = set(TOKEN_RE.findall(first)) | set(re.findall(r'"X-CSRFToken": "([^"]+)"', first))
        second_tokens = set(TOKEN_RE.findall(second)) | set(re.findall(r'"X-CSRFToken": "([^"]+)"', second))
        assert second_tokens and not first_tokens & second_tokens


def test_an_anonymous_visitor_s_cached_page_costs_one_query_and_no_session(small_base: Run) -> None:
    for url in _pages(small_base):
        Client().get(url)
        visitor = Client()
        with CaptureQueriesContext(connection) as queries:
            response = visitor.get(url)
        assert response.status_code == 200 and not response.templates, url
        # The series' stamps in one statement; no session, user or permission lookups for a visitor who has none.
        assert len(queries) == 1, (url, [q["sql"] for q in queries])
        assert "sessionid" not in response.cookies


def test_a_browser_asking_for_gzip_gets_the_shared_page_compressed_with_its_own_token(small_base: Run) -> None:
    url = f"/compare/?base={small_base.pk}"
    plain = Client().get(url)
    zipped = [Client().get(url, headers={"accept-encoding": "gzip, deflate, br"}) for _ in range(2)]
    pages = []
    for response in zipped:
        assert response.status_code == 200 and not response.templates
        assert response["Content-Encoding"] == "gzip" and "Accept-Encoding" in response["Vary"]
        assert len(response.content) < len(plain.content) / 4
        # One gzip member, nothing after it: what every browser's decoder reads.
        decoder = zlib.decompressobj(wbits=31)
        html = decoder.decompress(response.content) + decoder.flush()
        assert decoder.eof and not decoder.unused_data and html == gzip.decompress(response.content)
        pages.append(html.decode())
    assert "Accept-Encoding" in plain["Vary"] and not plain.has_header("Content-Encoding")
    assert _strip_personal(pages[0]) == _strip_personal(pages[1]) == _strip_personal(plain.content.decode())
    tokens = [re.findall(r'"X-CSRFToken": "([^"]+)"', html) for html in pages]
    assert tokens[0] and tokens[1] and tokens[0] != tokens[1]
    assert "benchdash-csrf-" not in pages[0] and "benchdash:usernav" not in pages[0]


def test_a_page_kept_for_a_browser_asking_for_gzip_serves_a_visitor_without_it_and_the_reverse(
    small_base: Run,
) -> None:
    url = f"/compare/?base={small_base.pk}"
    first = Client().get(url, headers={"accept-encoding": "gzip"})
    plain = Client().get(url)
    assert first.templates and not plain.templates  # rendered once, then served as kept
    assert _strip_personal(gzip.decompress(first.content).decode()) == _strip_personal(plain.content.decode())
    other = f"/compare/?base={small_base.pk}&red=0.9"
    rendered = Client().get(other)
    # Rendered for a visitor without gzip, the page is deflated only when one asks for it, and kept so.
    zipped = [Client().get(other, headers={"accept-encoding": "gzip"}) for _ in range(2)]
    assert rendered.templates and not any(response.templates for response in zipped)
    for response in zipped:
        assert response["Content-Encoding"] == "gzip"
        html = gzip.decompress(response.content).decode()
        assert _strip_personal(html) == _strip_personal(rendered.content.decode())


def test_a_gzipped_page_carries_visitor_parts_of_any_length(rf: Any) -> None:
    from benchdash import pagecache

    nonce = "ab" * 16
    shared = pagecache.shared_context(nonce)
    html = f"<body x='{shared['csrf_token']}'>{shared['usernav_placeholder']}".encode() + b"<p>table</p>" * 20_000
    html += f"<form>{shared['csrf_token']}</form>".encode()
    pieces = pagecache._split(nonce, html)
    deflated = tuple(p if isinstance(p, int) else pagecache._gzipped(p) for p in pieces)
    visitor = pagecache._Visitor(rf.get("/"))
    visitor._parts = {pagecache._CSRF: b"t" * 70_000, pagecache._USERNAV: "<a>é</a>".encode()}
    expected = visitor.identity(pieces)
    assert expected.count(b"t" * 70_000) == 2 and b"benchdash" not in expected
    assert gzip.decompress(visitor.gzip(deflated)) == expected


@pytest.mark.parametrize("length", [0, 1, 7, 4096, 65_537])
def test_the_crc_shift_of_a_piece_is_the_one_of_its_definition(length: int) -> None:
    """Each column: crc32 of ``length`` zero bytes from that one bit set, less crc32 of them from 0."""
    from benchdash import pagecache

    zeros = bytes(length)
    defined = tuple(zlib.crc32(zeros, 1 << bit) ^ zlib.crc32(zeros) for bit in range(32))
    assert pagecache._crc_shift(length) == defined
    text = bytes(range(256)) * (length // 256) + b"x" * (length % 256)
    for start in (0, 1, 0xDEADBEEF, 0xFFFFFFFF):
        assert pagecache._crc_after(pagecache._crc_shift(length), start) ^ zlib.crc32(text) == zlib.crc32(text, start)


def test_the_log_in_link_returns_each_visitor_to_the_page_they_asked_for(small_base: Run) -> None:
    url = f"/compare/?base={small_base.pk}&red=0.9"
    Client().get(url)
    html = Client().get(url).content.decode()
    assert f"/account/login/?next=/compare/%3Fbase%3D{small_base.pk}%26red%3D0.9" in html


def test_a_run_leaving_the_series_a_triage_and_a_group_set_change_each_give_a_new_page(
    small_base: Run, django_capture_on_commit_callbacks: Any
) -> None:
    client = Client()
    url = f"/compare/?base={small_base.pk}"
    client.get(url)
    assert not client.get(url).templates  # cached

    detect_regressions(small_base.server_id, small_base.workload_id)  # what the worker does after an import
    assert client.get(url).templates, "new regression records must show at once"
    regression = Regression.objects.filter(server=small_base.server, workload=small_base.workload).first()
    assert regression is not None
    regression.state = Regression.State.NOISE
    regression.save()
    assert client.get(url).templates, "a triage must show at once"

    assert not client.get(url).templates
    newest = Run.objects.filter(server=small_base.server, workload=small_base.workload).order_by("-pk").first()
    assert newest is not None and newest != small_base
    newest_name = newest.name
    assert newest_name in client.get(url).content.decode()
    newest.delete()
    page = client.get(url)
    assert page.templates and newest_name not in page.content.decode()

    assert not client.get(url).templates
    with django_capture_on_commit_callbacks(execute=True):
        GroupSetDefinition.objects.create(name="mine", rules=[["points", "re:point"]])
    page = client.get(url)
    assert page.templates, "a new group set must show in the selector at once"
    assert '<option value="mine"' in page.content.decode()


def test_a_page_with_a_flash_message_is_neither_served_from_nor_kept_in_the_cache(
    small_base: Run, rf: Any, user_with_role: Callable[..., Any]
) -> None:
    from django.contrib.messages.storage.fallback import FallbackStorage
    from django.contrib.sessions.backends.db import SessionStore

    from reports.views import compare

    url = f"/compare/?base={small_base.pk}"
    Client().get(url)  # the shared page is cached

    request = rf.get(url)
    request.session = SessionStore()
    request.user = user_with_role("viewer")
    request.htmx = False
    request._messages = FallbackStorage(request)
    request._messages.add(25, "Target db1 saved.")
    html = compare(request).content.decode()
    assert "Target db1 saved." in html  # rendered for this visitor, not the cached page

    later = Client().get(url)
    assert not later.templates and "Target db1 saved." not in later.content.decode()


def test_the_run_list_and_home_change_when_a_run_is_deleted_or_added(
    small_base: Run, corpus: Path, django_capture_on_commit_callbacks: Any
) -> None:
    client = Client()
    for url in ("/runs/", "/"):
        client.get(url)
        assert not client.get(url).templates
    doomed = Run.objects.exclude(pk=small_base.pk).order_by("pk").first()
    assert doomed is not None
    with django_capture_on_commit_callbacks(execute=True):
        doomed.delete()
    listing = client.get("/runs/")
    assert listing.templates and f'href="/runs/{doomed.pk}/"' not in listing.content.decode()
    assert client.get("/").templates

    tarball = corpus / "sysbench-pg-tarballs" / "x.pg174_o2nofp.x10a_wm1_c32r128.pk1.tar.gz"
    submit_and_import(tarball.read_bytes(), name=tarball.name, source=Bundle.Source.COMMAND)
    listing = client.get("/runs/")
    assert listing.templates and "x.pg174_o2nofp.x10a_wm1_c32r128.pk1" in listing.content.decode()


# --------------------------------------------------------------------------- placeholders, keys, lifetime


def test_a_workload_named_like_a_placeholder_is_shown_as_typed_and_never_carries_a_visitors_token(
    django_capture_on_commit_callbacks: Any,
) -> None:
    from runs import synthetic

    name = "wl benchdash-csrf-placeholder <!--benchdash:usernav-->"
    manifest = f'workload = "{name}"\n'.encode()
    spec = synthetic.SeriesSpec(versions=("8.0.40", "8.0.41"), dops=(1,), seed=3)
    data = synthetic.bundle_bytes(spec, extra_files={"benchdash.toml": manifest})
    report = submit_and_import(data, name="placeholder.tar.gz", source=Bundle.Source.COMMAND)
    # Home lists the series the refresh after the import's commit summarised.
    with django_capture_on_commit_callbacks(execute=True):
        announce_import(report.bundle_id)
    assert Run.objects.filter(workload__name=name).count() == 2

    pages = [Client().get("/").content.decode(), Client().get("/").content.decode()]  # the second from the cache
    tokens = []
    for html in pages:
        assert "wl benchdash-csrf-placeholder &lt;!--benchdash:usernav--&gt;" in html  # as typed, escaped
        # The visitor's token appears only where the page puts it (htmx's header), never in the data.
        (token,) = re.findall(r'"X-CSRFToken": "([^"]+)"', html)
        assert re.fullmatch(r"[A-Za-z0-9]{32,64}", token) and html.count(token) == 1
        tokens.append(token)
    assert tokens[0] != tokens[1] and "Log in" in pages[1]


def test_made_up_parameters_share_one_cache_entry_and_never_show_up_in_the_page(small_base: Run) -> None:
    from django.core.cache import cache

    url = f"/compare/?base={small_base.pk}"
    baseline = _strip_personal(Client().get(url).content.decode())
    keys_before = _page_keys(cache)
    variants = [
        f"{url}&utm=1",
        f"{url}&utm=2&ref=evil%22%3E",
        f"/compare/?utm=3&base={small_base.pk}&red=",
        f"/compare/?base={small_base.pk}&base={small_base.pk}",
    ]
    for variant in variants:
        response = Client().get(variant)
        assert response.status_code == 200
        assert not response.templates, f"{variant}: rendered again instead of served from the cache"
        # (the visitor's own log-in link returns them to the URL they typed; the shared page never does)
        shared = _strip_personal(response.content.decode())
        assert "utm" not in shared and "evil" not in shared
        assert shared == baseline
    assert _page_keys(cache) == keys_before

    # A parameter the page reads is part of the key; its forms are canonical (order, repeats of a list).
    ids = sorted(Run.objects.filter(server=small_base.server).values_list("pk", flat=True))[:3]
    a = Client().get(f"{url}&runs={ids[2]}&runs={ids[1]}&red=0.9")
    assert a.status_code == 200 and a.templates
    b = Client().get(f"/compare/?red=0.9&runs={ids[1]}&runs={ids[2]}&runs={ids[1]}&base={small_base.pk}&x=1")
    assert b.status_code == 200 and not b.templates
    assert _strip_personal(a.content.decode()) == _strip_personal(b.content.decode())


def _page_keys(cache: Any) -> int:
    """How many entries the page cache holds (locmem or Redis)."""
    if hasattr(cache, "_cache") and isinstance(cache._cache, dict):
        return sum(":page:" in key for key in cache._cache)
    client = cache._cache.get_client(None)
    return sum(1 for _ in client.scan_iter(match=f"{cache.key_prefix}:*:page:*"))


def test_shared_pages_live_at_most_an_hour() -> None:
    from benchdash import pagecache

    assert 0 < pagecache.PAGE_SECONDS <= 3600


def test_every_page_still_works_when_the_cache_is_emptied_between_and_during_requests(
    small_base: Run, user_with_role: Callable[..., Any]
) -> None:
    from django.core.cache import cache

    member = Client()
    member.force_login(user_with_role("viewer", "bob"))
    for url in [*_pages(small_base), "/", "/runs/"]:
        before = member.get(url)
        assert before.status_code == 200, url
        cache.clear()  # everything the cache held, counters included, is gone
        after = member.get(url)
        assert after.status_code == 200 and after.templates, url
        assert _strip_personal(after.content.decode()) == _strip_personal(before.content.decode()), url
    # Emptied while data changes: a run added after the clear shows, and nothing stale comes back.
    runs_before = member.get("/runs/").content.decode()
    cache.clear()
    spec = runs_synthetic_spec()
    submit_and_import(_bundle(spec), name="late.tar.gz", source=Bundle.Source.COMMAND)
    cache.clear()
    runs_after = member.get("/runs/").content.decode()
    assert runs_after != runs_before and "8.0.77" in runs_after


def runs_synthetic_spec() -> Any:
    from runs import synthetic

    return synthetic.SeriesSpec(versions=("8.0.77",), dops=(1,), seed=9)


def _bundle(spec: Any) -> bytes:
    from runs import synthetic

    return synthetic.bundle_bytes(spec)


def test_one_chart_s_own_y_axis_top_is_part_of_the_key_and_a_flood_of_such_names_is_bounded(small_base: Run) -> None:
    from django.http import QueryDict

    from benchdash.pagecache import canonical_query

    url = f"/compare/?base={small_base.pk}"
    auto = Client().get(url).content.decode()
    topped = Client().get(f"{url}&y_max_writes=1.25")
    assert topped.status_code == 200 and topped.templates  # not the cached page without it
    assert 'name="y_max_writes" id="id_y_max_writes" form="compare-controls" value="1.25"' in topped.content.decode()
    assert 'value="1.25"' not in auto
    again = Client().get(f"{url}&y_max_writes=1.25&utm=1")
    assert not again.templates  # the same canonical query: served from the cache

    flood = QueryDict(mutable=True)
    for i in range(100):
        flood[f"y_max_g{i:03d}"] = "2"
    flood["y_max_" + "x" * 200] = "2"
    kept = canonical_query(flood, ("base", "y_max_*"))
    assert len(kept) == 32 and all(len(name) <= 80 for name in kept)
