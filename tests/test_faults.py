"""Faults, for real: a web process killed mid-import, database connections cut under load, the broker down.

Each test starts its own gunicorn on a loopback port against the test database
(and, for the broker, its own Celery worker on a queue of its own) and stops
them by process id. The shared PostgreSQL and Redis are never stopped: a
dropped connection is made with pg_terminate_backend on the test database's own
connections, and "Redis down" is a Redis URL pointing at a closed loopback port.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.db import connection
from django.utils import timezone

from accounts.permissions import UPLOADER, create_token
from runs import synthetic
from runs.models import Bundle, Result, Run
from tests import live

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


def _wait(predicate: Callable[[], bool], seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.1)
    pytest.fail(f"timed out after {seconds:.0f} s waiting for {what}")


def _upload(server: live.Gunicorn, token: str, data: bytes, name: str, timeout: float = 120) -> tuple[int, bytes]:
    body, content_type = live.multipart({}, {"file": (name, data)})
    headers = {"Authorization": f"Bearer {token}", "Content-Type": content_type}
    return server.request("POST", "/api/bundles/", body, headers, timeout=timeout)


def _results_being_written() -> bool:
    """Another connection of the test database is inside a transaction that has inserted result rows."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation "
            "JOIN pg_stat_activity a ON a.pid = l.pid "
            "WHERE c.relname = 'runs_result' AND l.mode = 'RowExclusiveLock' "
            "AND a.datname = current_database() AND a.pid <> pg_backend_pid()"
        )
        return bool(cursor.fetchone()[0])


@pytest.fixture
def uploader_token(user_with_role: Callable[..., Any]) -> str:
    return create_token(user_with_role(UPLOADER), "fault tests")[1]


# --------------------------------------------------------------------------- kill -9 of a web process mid-import


@pytest.mark.slow(20)
def test_a_web_process_killed_mid_import_leaves_no_partial_rows_and_the_same_upload_then_succeeds(
    tmp_path: Path, uploader_token: str
) -> None:
    live.require_postgresql()
    spec = synthetic.SeriesSpec(versions=tuple(f"8.0.{n}" for n in range(10, 40)), dops=(1, 8, 16), seed=5)
    data = synthetic.bundle_bytes(spec)
    expected_results = len(spec.versions) * len(spec.tests) * len(spec.dops)

    # The killed import's claim goes stale 2 s after its last heartbeat, then the same upload takes it over.
    with live.gunicorn(tmp_path, workers=1, threads=2, env={"BUNDLE_CLAIM_STALE_SECONDS": "2"}) as server:
        (worker,) = server.started
        outcome: dict[str, Any] = {}

        def upload() -> None:
            try:
                outcome["response"] = _upload(server, uploader_token, data, "big.tar.gz")
            except OSError as exc:  # the connection dies with the process: that is the point
                outcome["error"] = exc

        # Eager import in the web process: the bundle row is committed first, then runs are stored in one
        # transaction. The import writes its runs and results, then waits for the run files table, which
        # another connection holds locked: the process is killed with that transaction surely open.
        with live.table_locked("runs_runfile"):
            client = threading.Thread(target=upload)
            client.start()
            _wait(lambda: live.waiting_for_lock("runs_runfile"), 120, "the import to reach the run files")
            assert _results_being_written()
            os.kill(worker, signal.SIGKILL)
            client.join(timeout=60)
            assert not client.is_alive() and "error" in outcome, outcome

        bundle = Bundle.objects.get()  # read after the kill: committed before the import's transaction began
        # PostgreSQL rolls the dead process's transaction back when it notices the connection gone.
        _wait(lambda: not _results_being_written(), 30, "the killed import's transaction to be rolled back")
        assert bundle.status == Bundle.Status.IMPORTING  # claimed by the dead process, nothing of it stored
        assert Run.objects.count() == 0 and Result.objects.count() == 0

        server.wait_for_workers(1)  # gunicorn's master starts a new worker
        time.sleep(2.5)  # its claim is stale now: nobody beats its heartbeat
        status, body = _upload(server, uploader_token, data, "big.tar.gz")
        assert status == 201, body[:500]
        assert Bundle.objects.count() == 1 and Bundle.objects.get().status == Bundle.Status.IMPORTED
        assert Run.objects.count() == len(spec.versions) and Result.objects.count() == expected_results


# --------------------------------------------------------------------------- dropped database connections

READERS = 8
CUTS = 5


def test_requests_survive_their_database_connections_being_terminated_and_the_app_recovers_without_restart(
    tmp_path: Path, small_base: Run, request: pytest.FixtureRequest
) -> None:
    live.require_postgresql()
    paths = [
        "/",
        "/runs/",
        f"/runs/{small_base.pk}/",
        f"/compare/?base={small_base.pk}",
        "/api/regressions",
        "/healthz",
    ]

    with live.gunicorn(tmp_path, workers=2, threads=4) as server:
        outcomes: Counter[str] = Counter()
        stop = threading.Event()

        def reader(n: int) -> None:
            i = n
            while not stop.is_set():
                path = paths[i % len(paths)]
                i += 1
                try:
                    status, _body = server.request("GET", path, timeout=30)
                    outcomes[str(status)] += 1
                except TimeoutError:
                    outcomes["timeout"] += 1
                except OSError:
                    outcomes["connection error"] += 1

        readers = [threading.Thread(target=reader, args=(n,)) for n in range(READERS)]
        for thread in readers:
            thread.start()
        # Paced by answers, not by the clock: on a loaded machine each phase simply takes longer.
        try:
            _wait(lambda: outcomes["200"] >= 20, 120, "the readers' first answers")
            terminated = 0
            for _ in range(CUTS):  # cut every connection of the app while the readers run
                terminated += live.terminate_other_backends()
                answered = sum(outcomes.values())
                _wait(lambda a=answered: sum(outcomes.values()) >= a + 2 * READERS, 120, "answers after a cut")
            answered = outcomes["200"]
            _wait(lambda: outcomes["200"] >= answered + 20, 120, "answers after the last cut")
        finally:
            stop.set()
            for thread in readers:
                thread.join(timeout=60)
        assert terminated >= 2, "the app held no database connection to cut"
        request.node.user_properties.extend(
            [
                ("connections_terminated", terminated),
                ("answered_200", outcomes["200"]),
                ("answered_500", outcomes["500"]),
            ]
        )

        # Every request got an HTTP answer: a 200, or a clean 500 for one whose query was cut. None hung and
        # no process died (the same workers serve before and after).
        # A cut connection fails its request cleanly: a 500 from a page, or /healthz's own 503 (database
        # unavailable), never a hang or a dead worker. Only a request in flight at a cut can fail, so the
        # failures are bounded by the readers at each cut, however slow the machine.
        assert set(outcomes) <= {"200", "500", "503"}, outcomes
        # (a connection is held per serving thread: 2 workers × 4 threads)
        assert outcomes["500"] + outcomes["503"] <= CUTS * max(READERS, 2 * 4), outcomes
        assert server.worker_pids() == server.started
        # Recovered without a restart: every page answers again, through new connections.
        for path in paths * 3:
            assert server.request("GET", path, timeout=30)[0] == 200, path


# --------------------------------------------------------------------------- broker down at upload time


@pytest.fixture
def worker_queue(tmp_path: Path) -> Iterator[Callable[..., subprocess.Popen[bytes]]]:
    """Celery workers over the real Redis on a queue of this test's own; all stopped by pid at the end."""
    with live.celery_workers("test-faults", {"BENCHDASH_VAR_DIR": str(tmp_path)}) as start:
        yield start


@pytest.mark.slow(15)
@pytest.mark.worker
def test_an_upload_while_the_broker_is_down_is_kept_queued_and_imported_once_it_is_back(
    tmp_path: Path,
    corpus: Path,
    uploader_token: str,
    worker_queue: Callable[[], subprocess.Popen[bytes]],
    request: pytest.FixtureRequest,
) -> None:
    from runs.tasks import REQUEUE_AFTER, requeue_bundles

    data = (corpus / "sysbench-pg-tarballs" / "x.pg174_o2nofp.x10a_wm1_c32r128.pk1.tar.gz").read_bytes()
    dead_redis = f"redis://127.0.0.1:{live.closed_port()}/9"
    with live.gunicorn(tmp_path, workers=1, threads=2, env={"REDIS_URL": dead_redis}) as server:
        started = time.monotonic()
        status, body = _upload(server, uploader_token, data, "pg174.tar.gz")
        took = time.monotonic() - started
    assert status == 202, body[:500]  # stored; the task could not be sent
    assert took < 30, f"the upload hung {took:.0f} s on the dead broker"
    request.node.user_properties.append(("upload_with_dead_broker_s", round(took, 1)))
    bundle = Bundle.objects.get()
    assert bundle.status == Bundle.Status.QUEUED and Run.objects.count() == 0

    # The bundle's task was never sent. A worker resumes such bundles by itself when it connects to the broker
    # (it asks requeue_bundles, which leaves fresh uploads to their own task: this one is made old enough).
    Bundle.objects.filter(pk=bundle.pk).update(uploaded_at=timezone.now() - REQUEUE_AFTER - timedelta(seconds=5))
    worker_queue()
    _wait(lambda: Bundle.objects.get(pk=bundle.pk).status == Bundle.Status.IMPORTED, 120, "the worker's import")
    assert Run.objects.filter(bundle=bundle).count() == 1
    assert Result.objects.filter(run__bundle=bundle).count() == 40  # 39 tests and the load step
    assert requeue_bundles() == 0  # nothing left to send


# --------------------------------------------------------------------------- /healthz names what is down


def _health(server: live.Gunicorn) -> tuple[int, dict[str, Any], float]:
    started = time.monotonic()
    status, body = server.request("GET", "/healthz", timeout=30)
    return status, json.loads(body), time.monotonic() - started


def test_healthz_names_the_database_broker_or_cache_that_is_down_quickly_and_without_a_login(
    tmp_path: Path,
) -> None:
    with live.services_behind_proxies() as (proxies, env):
        pg, broker, cache_redis = proxies["database"], proxies["broker"], proxies["cache"]
        env["BENCHDASH_PUBLIC_BROWSING"] = "0"  # private: healthz must still answer without a login
        with live.gunicorn(tmp_path, workers=1, threads=2, env=env) as server:
            status, body, _took = _health(server)
            assert (status, body) == (
                200,
                {"status": "ok", "down": [], "database": "ok", "broker": "ok", "cache": "ok"},
            )
            for proxy, name in ((broker, "broker"), (cache_redis, "cache"), (pg, "database")):
                proxy.cut()
                status, body, took = _health(server)
                assert status == 503 and body["down"] == [name], body
                assert body[name].startswith("unavailable"), body
                assert took < 5, f"healthz took {took:.1f} s with the {name} down"
                proxy.restore()
                _wait(lambda: _health(server)[0] == 200, 30, f"healthz to see the {name} back")
            # A database that accepts and never answers: the probe still answers, in about its timeout.
            pg.hang()
            for _ in range(3):  # each probe on its own connection, each cut off at its deadline
                status, body, took = _health(server)
                assert status == 503 and body["down"] == ["database"], body
                assert took < 5, f"healthz took {took:.1f} s with the database not answering"
            pg.restore()
            _wait(lambda: _health(server)[0] == 200, 30, "healthz to see the database answer again")
            broker.cut()
            cache_redis.cut()
            status, body, _took = _health(server)
            assert status == 503 and body["down"] == ["broker", "cache"], body


# --------------------------------------------------------------------------- upload spool of a killed process


def test_an_upload_spooled_to_disk_leaves_nothing_behind_when_its_web_process_is_killed(
    tmp_path: Path, uploader_token: str
) -> None:
    live.require_postgresql()
    spool = tmp_path / "spool"
    spool.mkdir()
    size = 24 * 1024 * 1024  # above the 10 MiB kept in memory: this one goes to disk
    boundary = "benchdashspooltest"
    head = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.tar.gz"\r\n'
        "Content-Type: application/octet-stream\r\n\r\n"
    ).encode()
    tail = f"\r\n--{boundary}--\r\n".encode()
    with live.gunicorn(tmp_path, workers=1, threads=2, env={"BENCHDASH_UPLOAD_TEMP_DIR": str(spool)}) as server:
        (worker,) = server.started

        def spooled() -> list[str]:
            """The worker's open files in the spool directory."""
            found = []
            for fd in Path(f"/proc/{worker}/fd").iterdir():
                with contextlib.suppress(OSError):
                    target = os.readlink(fd)
                    if target.startswith(str(spool)):
                        found.append(target)
            return found

        with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
            request_head = (
                "POST /api/bundles/ HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                f"Authorization: Bearer {uploader_token}\r\n"
                f"Content-Type: multipart/form-data; boundary={boundary}\r\n"
                f"Content-Length: {len(head) + size + len(tail)}\r\n\r\n"
            ).encode()
            sock.sendall(request_head + head)
            chunk = os.urandom(1024 * 1024)
            sent = 0
            # Send most of the file and stop: the worker holds a partly written spool file.
            while sent < size - 4 * len(chunk):
                sock.sendall(chunk)
                sent += len(chunk)
            _wait(lambda: bool(spooled()), 60, "the upload to be spooled to disk")
            assert all(target.endswith("(deleted)") for target in spooled()), spooled()
            os.kill(worker, signal.SIGKILL)
            _wait(lambda: not Path(f"/proc/{worker}").exists() or _zombie(worker), 30, "the worker to die")
        server.wait_for_workers(1)
    assert list(spool.iterdir()) == []
    assert Bundle.objects.count() == 0


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True
