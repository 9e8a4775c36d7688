"""Load, bounded and on loopback: concurrent uploads of one bundle, and 200 concurrent readers of a comparison.

Each test starts its own gunicorn against the test database (PostgreSQL: SQLite
cannot be shared with another process), drives it from threads of this process,
stops after a fixed number of requests or a deadline, whichever comes first, and
stops the server by process id. The measured rates are kept with the test
(``--junitxml … -o junit_family=legacy`` writes them to the report).
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from accounts.permissions import UPLOADER, create_token
from runs.models import Bundle, Result, Run
from tests import live

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

UPLOADS = 50
READERS = 200
READS_EACH = 3
DEADLINE_S = 30.0


def _figure(request: pytest.FixtureRequest, name: str, value: float) -> None:
    request.node.user_properties.append((name, round(value, 1)))


def test_fifty_concurrent_uploads_of_the_same_bundle_store_one_bundle_and_import_it_once(
    tmp_path: Path, corpus: Path, user_with_role: Callable[..., Any], request: pytest.FixtureRequest
) -> None:
    live.require_postgresql()
    token = create_token(user_with_role(UPLOADER), "load")[1]
    data = (corpus / "sysbench-pg-tarballs" / "x.pg174_o2nofp.x10a_wm1_c32r128.pk1.tar.gz").read_bytes()
    body, content_type = live.multipart({"server": "pg-48"}, {"file": ("pg174.tar.gz", data)})
    headers = {"Authorization": f"Bearer {token}", "Content-Type": content_type}

    with live.gunicorn(tmp_path, workers=4, threads=4) as server:
        start = threading.Barrier(UPLOADS)
        outcomes: Counter[str] = Counter()

        def upload() -> None:
            start.wait(timeout=30)  # all at once
            try:
                status, _ = server.request("POST", "/api/bundles/", body, headers, timeout=DEADLINE_S * 2)
                outcomes[str(status)] += 1
            except OSError as exc:
                outcomes[type(exc).__name__] += 1

        threads = [threading.Thread(target=upload) for _ in range(UPLOADS)]
        began = time.monotonic()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=DEADLINE_S * 2)
        took = time.monotonic() - began

    assert not any(thread.is_alive() for thread in threads)
    # 201: this request's import stored it; 200: it was already imported; 202: another request was importing it
    # (claimed: nobody waits on a lock for it), so this one answers at once and the client polls the bundle.
    assert set(outcomes) <= {"200", "201", "202"} and sum(outcomes.values()) == UPLOADS, outcomes
    assert outcomes["201"] >= 1, outcomes
    assert Bundle.objects.count() == 1
    bundle = Bundle.objects.get()
    assert bundle.status == Bundle.Status.IMPORTED and bundle.stats["runs"] == 1
    assert Run.objects.count() == 1 and Result.objects.count() == 40  # 39 tests and the load step
    _figure(request, "uploads_per_s", UPLOADS / took)


def test_two_hundred_concurrent_readers_of_the_comparison_page_get_no_errors(
    tmp_path: Path, small_base: Run, request: pytest.FixtureRequest
) -> None:
    live.require_postgresql()
    path = f"/compare/?base={small_base.pk}"

    with live.gunicorn(tmp_path, workers=4, threads=8) as server:
        assert server.request("GET", path)[0] == 200  # the comparison is computed once, then served from cache
        start = threading.Barrier(READERS)
        outcomes: Counter[str] = Counter()
        latencies: list[float] = []
        deadline = time.monotonic() + DEADLINE_S

        def reader() -> None:
            start.wait(timeout=30)
            for _ in range(READS_EACH):
                if time.monotonic() > deadline:
                    outcomes["not sent: deadline"] += 1
                    continue
                began = time.monotonic()
                try:
                    status, page = server.request("GET", path, timeout=DEADLINE_S)
                    complete = status != 200 or b'id="relative-table"' in page
                    outcomes[str(status) if complete else "200 without the table"] += 1
                except OSError as exc:
                    outcomes[type(exc).__name__] += 1
                latencies.append(time.monotonic() - began)

        threads = [threading.Thread(target=reader) for _ in range(READERS)]
        began = time.monotonic()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=DEADLINE_S + 30)
        took = time.monotonic() - began

    assert not any(thread.is_alive() for thread in threads)
    served = outcomes["200"]
    assert set(outcomes) <= {"200", "not sent: deadline"}, outcomes
    assert served >= READERS, outcomes  # every reader got at least its first page
    latencies.sort()
    _figure(request, "requests_per_s", served / took)
    _figure(request, "p95_ms", latencies[int(len(latencies) * 0.95) - 1] * 1000)
    _figure(request, "served", served)
