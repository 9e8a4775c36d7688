"""``GET /api/compare`` is made once per change of its series and answered from the cache, with a strong ETag."""

from __future__ import annotations

import json

import pytest
from django.core.cache import cache
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from reports.compare import ComparisonSpec, compute_comparison
from runs import synthetic
from runs.importer import submit_and_import
from runs.models import Bundle, Result, Run

pytestmark = pytest.mark.django_db


def _import(*versions: str, seed: int = 7) -> None:
    # A series' first run is the same measurements whatever its version (the import would skip it as a
    # duplicate): another seed makes another run.
    spec = synthetic.SeriesSpec(versions=versions, seed=seed)
    submit_and_import(synthetic.bundle_bytes(spec), name=f"{'-'.join(versions)}.tgz", source=Bundle.Source.COMMAND)


@pytest.fixture
def base() -> Run:
    _import("5.6.51", "5.7.44", "8.0.28")
    return Run.objects.get(name__startswith="x.my5651")


def _etag(response: object) -> str:
    value = response["ETag"]  # type: ignore[index]
    assert isinstance(value, str)
    return value


def test_the_json_answer_has_a_strong_etag_and_is_the_comparisons_json_form(base: Run, client: Client) -> None:
    response = client.get("/api/compare", {"base": base.name})
    assert response.status_code == 200 and response["Content-Type"].startswith("application/json")
    etag = _etag(response)
    assert etag.startswith('"') and etag.endswith('"') and not etag.startswith("W/")
    body = response.json()
    # The comparison's JSON form, and beside it the line on which releases the view read (every release here).
    release_view = body.pop("release_view")
    assert body == json.loads(json.dumps(compute_comparison(ComparisonSpec(base_run_id=base.pk)).as_json()))
    assert release_view["releases"] == "all" and release_view["left_out"] == []


def test_the_same_etag_in_if_none_match_gets_a_304_without_a_body(base: Run, client: Client) -> None:
    etag = _etag(client.get("/api/compare", {"base": base.name}))
    again = client.get("/api/compare", {"base": base.name}, HTTP_IF_NONE_MATCH=etag)
    assert again.status_code == 304 and again.content == b"" and _etag(again) == etag
    # Weak comparison, as If-None-Match asks, and one of a list; "*" matches any.
    assert client.get("/api/compare", {"base": base.name}, HTTP_IF_NONE_MATCH=f'"x", W/{etag}').status_code == 304
    assert client.get("/api/compare", {"base": base.name}, HTTP_IF_NONE_MATCH="*").status_code == 304
    other = client.get("/api/compare", {"base": base.name}, HTTP_IF_NONE_MATCH='"something-else"')
    assert other.status_code == 200 and other.content and _etag(other) == etag


def test_a_cached_answer_is_the_same_bytes_and_computes_nothing(base: Run, client: Client) -> None:
    first = client.get("/api/compare", {"base": base.name})
    with CaptureQueriesContext(connection) as queries:
        second = client.get("/api/compare", {"base": base.name})
    assert second.content == first.content and _etag(second) == _etag(first)
    # Resolving the base and the series' stamp only; the results are not read again.
    assert queries.captured_queries
    assert not any(Result._meta.db_table in q["sql"] for q in queries.captured_queries)


def test_a_new_import_into_the_series_changes_the_etag_and_the_answer(base: Run, client: Client) -> None:
    before = client.get("/api/compare", {"base": base.name})
    runs_before = len(before.json()["columns"])
    _import("8.0.30", seed=8)
    assert Run.objects.filter(server=base.server, workload=base.workload).count() == runs_before + 1
    after = client.get("/api/compare", {"base": base.name}, HTTP_IF_NONE_MATCH=_etag(before))
    assert after.status_code == 200 and _etag(after) != _etag(before)
    assert len(after.json()["columns"]) == runs_before + 1


def test_the_answer_survives_a_cleared_cache_with_the_same_etag(base: Run, client: Client) -> None:
    first = client.get("/api/compare", {"base": base.name})
    cache.clear()
    again = client.get("/api/compare", {"base": base.name}, HTTP_IF_NONE_MATCH=_etag(first))
    assert again.status_code == 304 and _etag(again) == _etag(first)


def test_each_format_and_query_is_its_own_document(base: Run, client: Client) -> None:
    as_json = client.get("/api/compare", {"base": base.name})
    tsv = client.get("/api/compare", {"base": base.name, "format": "tsv"})
    by_id = client.get("/api/compare", {"base": str(base.pk)})
    stricter = client.get("/api/compare", {"base": base.name, "red": "0.99"})
    assert tsv["Content-Type"].startswith("text/tab-separated-values") and _etag(tsv) != _etag(as_json)
    assert by_id.content == as_json.content and _etag(by_id) == _etag(as_json)
    assert stricter.json()["thresholds"]["red"] == 0.99 and _etag(stricter) != _etag(as_json)
    assert client.get("/api/compare", {"base": base.name, "format": "tsv"}, HTTP_IF_NONE_MATCH=_etag(as_json)).content


def test_a_bad_request_is_a_400_without_an_etag_and_is_not_kept(base: Run, client: Client) -> None:
    bad = client.get("/api/compare", {"base": base.name, "group_set": "nope"})
    assert bad.status_code == 400 and "ETag" not in bad and "unknown group set" in bad.json()["detail"]
    assert client.get("/api/compare", {"base": base.name, "group_set": "nope"}).status_code == 400
