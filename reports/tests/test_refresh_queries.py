"""The worker's refresh of a series after an import (comparison, home-page summary, regression detection)
reads and writes in a fixed number of queries, however many runs the series has."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext

from reports.models import SeriesSummary
from reports.series import refresh_series
from runs import synthetic
from runs.importer import submit_and_import
from runs.models import Bundle, Run

pytestmark = pytest.mark.django_db


def _import_series(server: str, versions: int) -> tuple[int, int]:
    spec = synthetic.SeriesSpec(
        versions=tuple(f"8.{i // 10}.{i % 10}" for i in range(versions)),
        seed=versions,
        steps=(synthetic.Step(versions // 2, "point", 0.8), synthetic.Step(versions - 1, "", 0.9)),
    )
    data = synthetic.bundle_bytes(spec, extra_files={"benchdash.toml": f'server = "{server}"\n'.encode()})
    submit_and_import(data, name=f"{server}.tar.gz", source=Bundle.Source.COMMAND)
    run = Run.objects.filter(server__name=server).values("server_id", "workload_id").first()
    assert run is not None
    return run["server_id"], run["workload_id"]


def _refresh_queries(series: tuple[int, int]) -> int:
    # Cold, as after an import: the new runs change every cache key of the series.
    cache.clear()
    with CaptureQueriesContext(connection) as captured:
        refresh_series(*series)
    return len(captured)


def test_a_refresh_takes_no_more_queries_for_a_long_series_than_for_a_short_one() -> None:
    short = _import_series("short", 6)
    long = _import_series("long", 40)
    # The first refresh stores the stories detection finds, the second finds them stored: both are bounded.
    first = (_refresh_queries(short), _refresh_queries(long))
    again = (_refresh_queries(short), _refresh_queries(long))
    assert first[1] <= first[0] and again[1] <= again[0], (first, again)
    assert SeriesSummary.objects.get(server__name="long").runs == 40


def test_a_refresh_of_a_long_series_stays_under_a_fixed_query_budget(django_assert_max_num_queries: Any) -> None:
    series = _import_series("long", 40)
    cache.clear()
    with django_assert_max_num_queries(30):
        refresh_series(*series)
