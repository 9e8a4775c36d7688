"""Shared test fixtures: where the real corpus lives, and Celery's mode per test."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

CORPUS = Path(__file__).resolve().parent.parent / "shared" / "corpus"


@pytest.fixture(scope="session")
def corpus() -> Path:
    if not CORPUS.is_dir():
        if services_required():
            pytest.fail(f"CI needs the real result corpus beside the project ({CORPUS})")
        pytest.skip(f"the real result corpus is not beside the project ({CORPUS})")
    return CORPUS


@pytest.fixture(autouse=True)
def _celery_eager_unless_worker(request: pytest.FixtureRequest) -> Iterator[None]:
    """Tasks run in the test's process unless the test drives a real worker (marker ``worker``)."""
    from benchdash.celery import app

    if request.node.get_closest_marker("worker"):
        yield
        return
    saved = app.conf.task_always_eager
    app.conf.task_always_eager = True
    yield
    app.conf.task_always_eager = saved


@pytest.fixture(autouse=True)
def _fresh_cache() -> None:
    from django.core.cache import cache

    cache.clear()


def services_required() -> bool:
    """CI sets BENCHDASH_REQUIRE_SERVICES: a missing service is then a failure, never a skip."""
    return os.environ.get("BENCHDASH_REQUIRE_SERVICES") == "1"
