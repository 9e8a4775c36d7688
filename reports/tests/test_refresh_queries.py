"""The worker's refresh of a series after an import (comparison, home-page summary, regression detection)
reads and writes in a fixed number of queries, however many runs the series has."""

from __future__ import annotations

import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext

from regressions.models import Regression
from reports.models import SeriesSummary
from reports.series import refresh_series
from runs import synthetic
from runs.importer import submit_and_import
from runs.models import Bundle, Run

pytestmark = pytest.mark.django_db


def _import_series(server: str, versions: int) -> tuple[int, int]:
    spec = synthetic.SeriesSpec(
        versions=tuple(f"8.0.{i}" for i in range(versions)),
        seed=versions,
        steps=(synthetic.Step(versions // 2, "point", 0.8), synthetic.Step(versions - 1, "", 0.9)),
    )
    data = synthetic.bundle_bytes(spec, extra_files={"benchdash.toml": f'server = "{server}"\n'.encode()})
    submit_and_import(data, name=f"{server}.tar.gz", source=Bundle.Source.COMMAND)
    run = Run.objects.filter(server__name=server).values("server_id", "workload_id").first()
    assert run is not None
    return run["server_id"], run["workload_id"]


def _refresh_queries(series: tuple[int, int]) -> tuple[int, int]:
    """Queries of one cold refresh (as after an import: new runs change every cache key of the series), and
    how many regression records it newly stored."""
    cache.clear()
    stored = Regression.objects.count()
    with CaptureQueriesContext(connection) as captured:
        refresh_series(*series)
    return len(captured), Regression.objects.count() - stored


def test_a_refresh_takes_no_more_queries_for_a_long_series_than_for_a_short_one() -> None:
    short = _import_series("short", 6)
    long = _import_series("long", 40)
    # The first refresh stores the stories detection finds, in one insert however many there are.
    (short_first, short_new), (long_first, long_new) = _refresh_queries(short), _refresh_queries(long)
    assert long_new > short_new > 0
    assert long_first <= short_first, (short_first, long_first)
    (short_again, none), (long_again, none_either) = _refresh_queries(short), _refresh_queries(long)
    assert none == none_either == 0
    assert long_again <= short_again, (short_again, long_again)
    assert SeriesSummary.objects.get(server__name="long").runs == 40


def test_a_refresh_of_a_long_series_stays_under_a_fixed_query_budget() -> None:
    series = _import_series("long", 40)
    first, new = _refresh_queries(series)
    # Beyond the second refresh's: the new stories' insert in its savepoint, the members' links to new group
    # stories, and what a story's identity carries since stories keep it (the stored stories read to update in
    # place, the news mark of the import's versions, the release views' shared triage). The same at any length
    # (the test above); 46 when this budget was last set. Both refreshes also write the series' matrix
    # (reports.matrix: its runs, its results, its row replaced: 8 queries).
    assert new > 0 and first <= 54, (first, new)
    again, none = _refresh_queries(series)
    # The second: as the first without the new stories' writes; the matrix written again (4 queries more than
    # before it was kept).
    assert none == 0 and again <= 34, again
