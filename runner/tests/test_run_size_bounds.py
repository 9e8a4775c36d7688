"""A triggered run's size is bounded: rows per table and rows in all, in the form and in the runner itself."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client

from runner import sysbench_runner
from runner.models import BenchmarkRun
from runner.sysbench_runner import Parameters, RunnerError
from tests.factories import TargetFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def engineer_client(client: Client, user_with_role: Callable[..., Any]) -> Client:
    client.force_login(user_with_role("admin", username="engineer"))
    return client


@pytest.mark.parametrize(
    ("tables", "rows", "error"),
    [
        ("1", str(sysbench_runner.MAX_TABLE_SIZE + 1), "less than or equal to 1000000000"),
        ("1", "1" + "0" * 30, "less than or equal to"),
        ("1000", "100000000", "rows a run may load"),
    ],
)
def test_a_run_over_the_size_bounds_is_a_form_error_and_nothing_is_queued(
    engineer_client: Client, tables: str, rows: str, error: str
) -> None:
    target = TargetFactory(password="pw")
    data = {
        "microbenchmarks": ["scan_range=100"],
        "tables": tables,
        "table_size": rows,
        "threads": "1",
        "seconds": "1",
        "warmup_seconds": "0",
    }
    response = engineer_client.post(f"/targets/{target.pk}/run/", data)
    assert response.status_code == 200 and error in response.content.decode()
    assert not BenchmarkRun.objects.exists()


def test_the_runner_refuses_parameters_over_the_bounds_whoever_made_them() -> None:
    with pytest.raises(RunnerError, match="rows per table"):
        Parameters(("scan_range=100",), 1, sysbench_runner.MAX_TABLE_SIZE + 1, (1,), 1)
    with pytest.raises(RunnerError, match="rows in all"):
        Parameters(("scan_range=100",), 11, sysbench_runner.MAX_TABLE_SIZE, (1,), 1)
    assert Parameters(("scan_range=100",), 10, sysbench_runner.MAX_TABLE_SIZE, (1,), 1).table_size
