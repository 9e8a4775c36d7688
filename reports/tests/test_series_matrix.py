"""The series matrix stored at a refresh is never read stale: through imports, deletions and re-imports, the
comparison pages (the default base, another base, a subset of runs, warm-ups included) are the pages computed
from the results table, and the matrix is read only while the series is at the refresh's stamp."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from django.core.cache import cache
from django.test import Client

from reports import matrix
from reports.series import refresh_series
from runs import synthetic
from runs.importer import submit_and_import
from runs.models import Result, Run

VERSIONS = ("8.0.1", "8.0.2", "8.0.3", "8.0.4", "8.0.5")


def test_the_arrays_give_back_each_result_with_its_nulls_and_leave_out_other_runs_and_warm_ups() -> None:
    metrics = (0.25, None, 3.0, None, 1e-300, 7.5)
    rows = [
        (11, 5, "point-query", None, "sysbench", False, 8, 1234.5, *metrics, None),
        (11, 6, "scan", 100, "sysbench", True, 8, 2.0, *(None,) * 6, 17.25),
        (12, 5, "point-query", None, "sysbench", False, 16, 1e9 + 0.125, *(1.0,) * 6, 3.0),
        (13, 5, "point-query", None, "sysbench", False, 8, 1.0, *(None,) * 6, None),
    ]
    described, arrays = matrix.encode(rows)

    kept = matrix.decode(described, arrays, {11, 12}, include_warmups=False)

    assert kept == [
        (11, 5, "point-query", None, 8, 1234.5, metrics, "sysbench", False, None),
        (12, 5, "point-query", None, 16, 1e9 + 0.125, (1.0,) * 6, "sysbench", False, 3.0),
    ]
    with_warmups = matrix.decode(described, arrays, {11}, include_warmups=True)
    assert [row[:2] for row in with_warmups] == [(11, 5), (11, 6)]
    assert with_warmups[1] == (11, 6, "scan", 100, 8, 2.0, (None,) * 6, "sysbench", True, 17.25)
    assert matrix.decode(*matrix.encode([]), {11}, include_warmups=True) == []


def _import(versions: tuple[str, ...], name: str, seed: int = 7, *, refresh: bool = True) -> None:
    spec = synthetic.SeriesSpec(versions=versions, seed=seed)
    submit_and_import(synthetic.bundle_bytes(spec), name=name, source="command")
    if refresh:
        for server_id, workload_id in Run.objects.values_list("server_id", "workload_id").distinct():
            refresh_series(server_id, workload_id)


def _series_runs() -> list[Run]:
    return list(Run.objects.order_by("build__version__sort_key", "pk"))


def _queries() -> list[tuple[str, str]]:
    """The comparison pages checked, each with its API form: the default base, another base, a subset of runs,
    warm-ups included."""
    runs = _series_runs()
    first, middle, last = runs[0].pk, runs[len(runs) // 2].pk, runs[-1].pk
    return [
        (f"base={first}", f"base={first}"),
        (f"base={middle}", f"base={middle}&scan_formula=era"),
        (f"base={middle}&runs={first}&runs={last}", f"base={middle}&runs={first},{last}"),
        (f"base={first}&include_warmups=on&scan_formula=spec", f"base={first}&include_warmups=true"),
    ]


def _served(queries: tuple[str, str]) -> tuple[str, Any]:
    """The comparison page and its API form, computed (the cache cleared)."""
    page_query, api_query = queries
    cache.clear()
    page = Client().get(f"/compare/?{page_query}")
    assert page.status_code == 200, page_query
    cache.clear()
    api = Client().get(f"/api/compare?{api_query}")
    assert api.status_code == 200, api_query
    return re.sub(r'"X-CSRFToken": "[^"]*"', "", page.content.decode()), json.loads(api.content)


def _check_pages(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Each page as served and as computed from the results table (the matrix not read): the same. Returns, per
    comparison computed, whether it read the matrix."""
    reads: list[bool] = []
    real = matrix.results

    def counted(*args: Any, **kwargs: Any) -> Any:
        found = real(*args, **kwargs)
        reads.append(found is not None)
        return found

    queries = _queries()
    with monkeypatch.context() as patched:
        patched.setattr(matrix, "results", counted)
        served = {query: _served(query) for query in queries}
    with monkeypatch.context() as scratch:
        scratch.setattr(matrix, "results", lambda *args, **kwargs: None)
        for query in queries:
            assert served[query] == _served(query), query
    assert reads
    return reads


@pytest.mark.django_db
def test_every_comparison_page_is_the_one_computed_from_the_results_through_imports_deletions_and_reimports(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _import(VERSIONS, "first.tgz")
    assert all(_check_pages(monkeypatch))

    # A run deleted: until the series is refreshed, the matrix is not read.
    gone = Run.objects.get(build__version__text="8.0.3")
    server_id, workload_id = gone.server_id, gone.workload_id
    gone.delete()
    assert not any(_check_pages(monkeypatch))
    refresh_series(server_id, workload_id)
    assert all(_check_pages(monkeypatch))

    # The version imported again (a new run), not yet refreshed: not read; refreshed: read again.
    _import(("8.0.3",), "again.tgz", seed=8, refresh=False)
    assert not any(_check_pages(monkeypatch))
    refresh_series(server_id, workload_id)
    assert all(_check_pages(monkeypatch))

    # The newest run deleted and another imported in its place (as many runs as at the refresh): not read.
    Run.objects.get(build__version__text="8.0.5").delete()
    _import(("8.0.6",), "newest.tgz", seed=9, refresh=False)
    assert Run.objects.count() == len(VERSIONS)
    assert not any(_check_pages(monkeypatch))


@pytest.mark.django_db
def test_the_matrix_holds_every_result_of_the_series_as_the_results_table_does() -> None:
    _import(VERSIONS[:3], "first.tgz")
    runs = _series_runs()
    base = runs[0]
    found = matrix.results(base.server_id, base.workload_id, [r.pk for r in runs], include_warmups=True)
    assert found is not None
    stored = sorted((row[0], row[1], row[4]) for row in found.rows())
    assert stored == sorted(Result.objects.values_list("run_id", "microbenchmark_id", "dop"))


@pytest.mark.django_db(transaction=True)
def test_a_result_or_microbenchmark_changed_in_place_is_never_read_from_the_matrix(
    monkeypatch: pytest.MonkeyPatch, admin_client: Client
) -> None:
    """Changes that leave the series' stamp as it was (the admin's): the matrix is dropped, the pages read the
    results table until the next refresh, and show the change."""
    _import(VERSIONS, "first.tgz")
    run = _series_runs()[2]
    assert all(_check_pages(monkeypatch))

    # A result's QPS corrected in place.
    result = Result.objects.filter(run=run).order_by("pk").first()
    assert result is not None
    result.qps = result.qps * 0.5
    result.save()
    assert not any(_check_pages(monkeypatch))
    refresh_series(run.server_id, run.workload_id)
    assert all(_check_pages(monkeypatch))

    # A result deleted alone, through the admin (its run stays).
    response = admin_client.post(f"/admin/runs/result/{result.pk}/delete/", {"post": "yes"})
    assert response.status_code == 302 and not Result.objects.filter(pk=result.pk).exists()
    assert not any(_check_pages(monkeypatch))
    refresh_series(run.server_id, run.workload_id)
    assert all(_check_pages(monkeypatch))

    # A microbenchmark marked a warm-up.
    microbenchmark = Result.objects.filter(run=run).order_by("pk").first().microbenchmark  # type: ignore[union-attr]
    microbenchmark.is_warmup = True
    microbenchmark.save()
    assert not any(_check_pages(monkeypatch))
