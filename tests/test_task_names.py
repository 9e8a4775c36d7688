"""Each Celery task is registered under its own app's name; the names reports' tasks had before still run them."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable, Iterator

import pytest

from reports.models import SeriesSummary
from reports.tasks import LEGACY_NAMES
from runs import synthetic
from runs.importer import submit_and_import
from runs.models import Bundle, Run
from tests import live


def _our_tasks() -> dict[str, object]:
    from benchdash.celery import app

    app.loader.import_default_modules()
    return {name: task for name, task in app.tasks.items() if not name.startswith("celery.")}


def test_every_task_is_named_after_the_app_that_defines_it() -> None:
    tasks = _our_tasks()
    assert {"reports.tasks.refresh_series_task", "reports.tasks.refresh_lost_series"} <= set(tasks)
    misnamed = [
        name
        for name, task in tasks.items()
        if name not in LEGACY_NAMES and name.split(".")[0] != task.run.__module__.split(".")[0]  # type: ignore[attr-defined]
    ]
    assert misnamed == []


def test_an_old_task_name_runs_the_same_function_as_the_new_one() -> None:
    tasks = _our_tasks()
    for old, new in (
        ("runs.tasks.refresh_series_task", "reports.tasks.refresh_series_task"),
        ("runs.tasks.refresh_lost_series", "reports.tasks.refresh_lost_series"),
    ):
        assert tasks[old].run is tasks[new].run  # type: ignore[attr-defined]


@pytest.fixture
def worker() -> Iterator[Callable[[], subprocess.Popen[bytes]]]:
    with live.celery_workers("task-names") as start:
        yield start


@pytest.mark.worker
@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_a_message_queued_under_the_old_name_is_run_by_a_real_worker(
    worker: Callable[[], subprocess.Popen[bytes]],
) -> None:
    from benchdash.celery import app

    worker()
    spec = synthetic.SeriesSpec(versions=("8.0.28", "8.0.36", "8.4.3"), seed=3)
    submit_and_import(synthetic.bundle_bytes(spec), name="names.tar.gz", source=Bundle.Source.COMMAND)
    run = Run.objects.first()
    assert run is not None
    series = {"server_id": run.server_id, "workload_id": run.workload_id}
    SeriesSummary.objects.filter(**series).delete()  # the command's import announces nothing; none is due

    # What a web process of the previous release put in the queue.
    app.send_task("runs.tasks.refresh_series_task", args=(run.server_id, run.workload_id))
    _wait(lambda: SeriesSummary.objects.filter(**series).exists(), "the refresh sent under its old name")


def _wait(predicate: Callable[[], bool], what: str, seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.2)
    pytest.fail(f"timed out after {seconds:.0f} s waiting for {what}")
