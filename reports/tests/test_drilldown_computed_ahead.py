"""The drill-downs computed when a series is refreshed are never read stale: through imports, deletions,
re-imports and a version arriving in the middle of the series, every microbenchmark's page is the page computed
from scratch, and it is read from what the refresh stored whenever the series has not changed since."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.core.cache import cache
from django.test import Client

from reports import drilldowns
from reports.compare import series_stamp
from reports.models import DrilldownData
from reports.series import refresh_series
from runs import synthetic
from runs.importer import submit_and_import
from runs.models import Result, Run

pytestmark = pytest.mark.django_db

VERSIONS = ("8.0.1", "8.0.2", "8.0.3", "8.0.4", "8.0.5", "8.0.6")


@pytest.fixture
def stored_reads(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Whether each page read found a stored comparison (True) or computed its own (False)."""
    found: list[bool] = []
    real = drilldowns.stored

    def counted(*args: Any, **kwargs: Any) -> Any:
        comparison = real(*args, **kwargs)
        found.append(comparison is not None)
        return comparison

    monkeypatch.setattr(drilldowns, "stored", counted)
    return found


def _import(versions: tuple[str, ...], name: str, seed: int = 7) -> None:
    """A bundle of the series imported, then its series refreshed as the worker does after an import."""
    spec = synthetic.SeriesSpec(versions=versions, seed=seed)
    submit_and_import(synthetic.bundle_bytes(spec), name=name, source="command")
    for server_id, workload_id in Run.objects.values_list("server_id", "workload_id").distinct():
        refresh_series(server_id, workload_id)


def _page(url: str) -> str:
    cache.clear()
    response = Client().get(url)
    assert response.status_code == 200, url
    # What differs between two renders of one page: the CSRF token.
    return re.sub(r'"X-CSRFToken": "[^"]*"', "", response.content.decode())


def _check_every_page(monkeypatch: pytest.MonkeyPatch, stored_reads: list[bool]) -> list[bool]:
    """Each microbenchmark's drill-down of the series' default base, as served and as computed from scratch (the
    stored rows not read): the same page. Returns, per page, whether it was read from what was stored."""
    base = Run.objects.order_by("build__version__sort_key", "pk").first()
    assert base is not None
    found = Result.objects.filter(run__server=base.server).values_list("microbenchmark_id", flat=True)
    microbenchmarks = sorted(set(found))
    assert len(microbenchmarks) >= 40
    stored_reads.clear()
    served = {mb: _page(f"/microbenchmarks/{mb}/?base={base.pk}") for mb in microbenchmarks}
    used = list(stored_reads)
    with monkeypatch.context() as scratch:
        scratch.setattr(drilldowns, "stored", lambda *args, **kwargs: None)
        for mb in microbenchmarks:
            assert served[mb] == _page(f"/microbenchmarks/{mb}/?base={base.pk}"), mb
    assert len(used) == len(microbenchmarks)
    return used


def test_every_drill_down_is_the_one_computed_from_scratch_through_imports_deletions_and_reimports(
    monkeypatch: pytest.MonkeyPatch, stored_reads: list[bool]
) -> None:
    _import(VERSIONS, "first.tgz")
    assert all(_check_every_page(monkeypatch, stored_reads))

    # Two runs deleted, one in the middle: until the series is refreshed, nothing stored is read.
    gone = Run.objects.filter(build__version__text__in=["8.0.3", "8.0.6"])
    server_id, workload_id = gone[0].server_id, gone[0].workload_id
    gone.delete()
    assert not any(_check_every_page(monkeypatch, stored_reads))
    refresh_series(server_id, workload_id)
    assert all(_check_every_page(monkeypatch, stored_reads))

    # The two versions imported again (new runs), then a version new to the series in its middle.
    _import(("8.0.3", "8.0.6"), "again.tgz", seed=8)
    assert all(_check_every_page(monkeypatch, stored_reads))
    _import(("8.0.35",), "middle.tgz", seed=9)
    assert Run.objects.filter(server_id=server_id).count() == len(VERSIONS) + 1
    assert all(_check_every_page(monkeypatch, stored_reads))

    # What is stored is one row per microbenchmark of the series' default comparison, under its current stamp.
    base = Run.objects.order_by("build__version__sort_key", "pk").first()
    assert base is not None
    key = drilldowns.stored_key(drilldowns.page_spec(base.pk), series_stamp(server_id, workload_id))
    rows = DrilldownData.objects.filter(server_id=server_id, workload_id=workload_id)
    assert rows.count() == rows.filter(key=key).count() >= 40


def test_a_changed_group_set_definition_drops_what_was_stored() -> None:
    from reports.models import GroupSetDefinition

    _import(VERSIONS[:3], "first.tgz")
    assert DrilldownData.objects.exists()
    GroupSetDefinition.objects.create(name="mine", rules=[["points", "re:point"]])
    assert not DrilldownData.objects.exists()


def test_a_run_or_version_changed_in_place_drops_what_was_stored(
    django_capture_on_commit_callbacks: Any, monkeypatch: pytest.MonkeyPatch, stored_reads: list[bool]
) -> None:
    _import(VERSIONS[:3], "first.tgz")
    assert DrilldownData.objects.exists()
    version = Run.objects.order_by("build__version__sort_key").last().build.version  # type: ignore[union-attr]
    version.text = "8.0.9"
    with django_capture_on_commit_callbacks(execute=True):
        version.save()
    assert not DrilldownData.objects.exists()
    # The page is computed from scratch meanwhile, with the corrected version; the next refresh stores it again.
    assert not any(_check_every_page(monkeypatch, stored_reads))
    run = Run.objects.first()
    assert run is not None
    refresh_series(run.server_id, run.workload_id)
    assert all(_check_every_page(monkeypatch, stored_reads))


def test_runs_changed_in_place_by_a_command_drop_what_was_stored(django_capture_on_commit_callbacks: Any) -> None:
    from runs.signals import runs_changed

    _import(VERSIONS[:3], "first.tgz")
    assert DrilldownData.objects.exists()
    with django_capture_on_commit_callbacks(execute=True):
        runs_changed.send(sender=Run)
    assert not DrilldownData.objects.exists()


def test_a_stored_row_that_cannot_be_read_is_computed_instead_and_said(caplog: pytest.LogCaptureFixture) -> None:
    _import(VERSIONS[:3], "first.tgz")
    row = DrilldownData.objects.first()
    assert row is not None
    DrilldownData.objects.filter(pk=row.pk).update(comparison=b"not a pickle")
    base = Run.objects.order_by("build__version__sort_key", "pk").first()
    assert base is not None
    response = Client().get(f"/microbenchmarks/{row.microbenchmark_id}/?base={base.pk}")
    assert response.status_code == 200
    assert "not readable" in caplog.text
