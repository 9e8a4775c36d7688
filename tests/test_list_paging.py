"""Lists that grow with use are paged: saved reports and benchmark runs show one page, with plain page links,
and the same number of queries for one page whatever the number of rows."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from reports import views as report_views
from reports.models import Report
from runner import views as runner_views
from runner.models import BenchmarkRun
from runs.models import Run
from tests.factories import TargetFactory

pytestmark = pytest.mark.django_db


def _queries(client: Client, url: str, **params: str) -> tuple[int, str]:
    with CaptureQueriesContext(connection) as captured:
        response = client.get(url, params)
    assert response.status_code == 200
    return len(captured), response.content.decode()


def test_saved_reports_are_listed_a_page_at_a_time_in_the_same_queries(
    small_base: Run, client: Client, monkeypatch: Any
) -> None:
    monkeypatch.setattr(report_views, "REPORT_PAGE_SIZE", 2)
    for i in range(3):
        Report.objects.create(name=f"report {i}", slug=f"report-{i}", base_run=small_base)
    few, first = _queries(client, "/reports/")
    assert re.findall(r">(report \d)</a>", first) == ["report 0", "report 1"]
    assert "page 1 of 2" in first and 'href="?page=2"' in first
    _, second = _queries(client, "/reports/", page="2")
    assert re.findall(r">(report \d)</a>", second) == ["report 2"]
    for i in range(3, 9):
        Report.objects.create(name=f"report {i}", slug=f"report-{i}", base_run=small_base)
    many, _ = _queries(client, "/reports/")
    assert many == few


def test_benchmark_runs_are_listed_a_page_at_a_time_newest_first_in_the_same_queries(
    client: Client, monkeypatch: Any
) -> None:
    monkeypatch.setattr(runner_views, "BENCHMARK_PAGE_SIZE", 2)
    target = TargetFactory()
    runs = [
        BenchmarkRun.objects.create(target=target, microbenchmarks=["scan_range=100"], threads=[1]) for _ in range(3)
    ]
    few, first = _queries(client, "/benchmarks/")
    shown = [int(pk) for pk in re.findall(r">#(\d+)</a>", first)]
    assert shown == [runs[2].pk, runs[1].pk]
    assert 'href="?page=2"' in first
    _, second = _queries(client, "/benchmarks/", page="2")
    assert [int(pk) for pk in re.findall(r">#(\d+)</a>", second)] == [runs[0].pk]
    for _ in range(5):
        BenchmarkRun.objects.create(target=target, microbenchmarks=["scan_range=100"], threads=[1])
    many, _ = _queries(client, "/benchmarks/")
    assert many == few
