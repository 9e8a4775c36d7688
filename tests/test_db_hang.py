"""A PostgreSQL that hangs (accepts, never answers) behind a loopback proxy: pages and the API answer 503 within
seconds, the serving threads are freed, and everything answers again once the database does."""

from __future__ import annotations

import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from runs.models import Run
from tests import live

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

STATEMENT_TIMEOUT = 2  # seconds, for this server: the cut comes at this plus the grace
PATHS = ["/runs/", "/api/regressions", "/regressions/", "/"]
REQUESTS = 20


def test_a_hanging_database_gets_503s_within_seconds_and_the_threads_serve_again_after(
    tmp_path: Path, small_base: Run
) -> None:
    live.require_postgresql(redis=True)
    from django.conf import settings

    db = settings.DATABASES["default"]
    with live.tcp_proxy(int(db["PORT"] or 5432), db["HOST"] or "127.0.0.1") as pg:
        env = {
            "DATABASE_URL": live.database_url().replace(f":{db['PORT'] or 5432}/", f":{pg.port}/"),
            "BENCHDASH_DB_STATEMENT_TIMEOUT": str(STATEMENT_TIMEOUT),
            "BENCHDASH_DB_CONNECT_TIMEOUT": "2",
        }
        with live.gunicorn(tmp_path, workers=1, threads=4, env=env) as server:
            for path in PATHS:  # warm: each thread keeps a connection open, as in production
                assert server.request("GET", path, timeout=30)[0] == 200, path
            pg.hang()

            def one(n: int) -> tuple[str, int, float]:
                path = PATHS[n % len(PATHS)]
                started = time.monotonic()
                status, _body = server.request("GET", path, timeout=60)
                return path, status, time.monotonic() - started

            started = time.monotonic()
            with ThreadPoolExecutor(REQUESTS) as pool:
                answers = list(pool.map(one, range(REQUESTS)))
            took = time.monotonic() - started
            assert Counter(status for _path, status, _took in answers) == Counter({503: REQUESTS}), answers
            # 4 threads, each request waiting about a cut (2 + 2 s) or a connect timeout (2 s): a handful of
            # rounds, never the outage's length (the proxy would hold them for ever).
            assert took < 45, f"{REQUESTS} requests took {took:.1f} s against a hung database"
            status, body = server.request("GET", "/api/regressions", timeout=30)
            assert status == 503 and b"database is unavailable" in body
            status, body = server.request("GET", "/runs/", timeout=30)
            assert status == 503 and b"The database is not answering" in body
            pg.restore()
            deadline = time.monotonic() + 30
            while server.request("GET", "/healthz", timeout=30)[0] != 200 and time.monotonic() < deadline:
                time.sleep(0.2)
            for path in PATHS * 2:
                assert server.request("GET", path, timeout=30)[0] == 200, path
            assert server.worker_pids() == server.started  # freed, not killed and replaced
