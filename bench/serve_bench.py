"""Comparison pages per second served as in production, and the list pages rendered from scratch.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres REDIS_URL=redis://127.0.0.1:6379/N \\
        .venv/bin/python bench/serve_bench.py [--database bd_served_bench] [--runs 60] [--clients 20]
            [--seconds 10] [--workers 2] [--worker-class sync|gthread] [--threads 4]
            [--encoding gzip|identity] [--client wrk|threads] [--lists] [--reuse]

Builds a throwaway database (``--database``, whose name must begin with
``bd_served``: it is dropped and created again) on the server of DATABASE_URL,
never the one the URL names, with a generated archive of ``--runs`` runs
(``bench/generate.py``: series of 60 versions × 42 microbenchmarks), imported
with the worker's after-import refresh run in the import's process, so the
series' summaries and regression records exist as they would in production.
The Redis database of REDIS_URL holds the page cache (its keys are cleared).

Then it serves the app as in production (``BENCHDASH_MODE=production``,
static files collected, public browsing, DEBUG off) with gunicorn on a free
loopback port, loads the comparison page of the first series once (rendered
and kept), checks that two responses carry different CSRF tokens and the CSP
header, and fires GETs of that page from ``--clients`` concurrent clients for
``--seconds``: ``wrk`` (Debian package) when installed, else as many Python
threads. Each request asks for ``--encoding`` as a browser does. It prints
pages/s, p50/p95 latency, errors, the CPU time per page of gunicorn (master
and workers), of the PostgreSQL backends serving the database, and of the
Redis server (all its clients: it may be shared), and the load average.

With ``--lists`` it also renders the home page, the run list and the
regression list from scratch in this process (the cache cleared before each):
wall and CPU time, size and SQL query count; run it at two archive sizes to
see whether they grow.

Loopback only, bounded in time; gunicorn is stopped by its process id.
"""

from __future__ import annotations

import argparse
import gzip
import http.client
import os
import re
import secrets
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "bench" / "out"
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))
from run import free_port, percentile, run_threads  # noqa: E402

TARGET_PAGES_PER_SECOND = 200.0
UNREAD_QUEUE = "bd-served-unread"
LIST_PAGES = {"home": "/", "runs": "/runs/", "regressions": "/regressions/"}

WRK_SCRIPT = """
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("RESULT %d %d %d %d %d %d %d %d %d\\n", summary.requests, summary.duration,
    latency:percentile(50), latency:percentile(95), e.connect, e.read, e.write, e.status, e.timeout))
end
"""


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of one process (0 once it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += [int(p) for p in (task / "children").read_text().split()]
    return found


def fetch(port: int, path: str, encoding: str) -> tuple[int, dict[str, str], bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        conn.request("GET", path, headers={"Accept-Encoding": encoding})
        response = conn.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        conn.close()


def wait_up(port: int, proc: subprocess.Popen[bytes]) -> None:
    for _ in range(300):
        if proc.poll() is not None:
            sys.exit(f"gunicorn exited with status {proc.returncode}")
        try:
            fetch(port, "/healthz", "identity")
            return
        except OSError:
            time.sleep(0.2)
    sys.exit("gunicorn not up after 60 s")


def with_wrk(url: str, clients: int, seconds: int, encoding: str, close: bool) -> tuple[int, float, float, float, int]:
    """(pages, seconds, p50 ms, p95 ms, errors) from wrk."""
    headers = ["-H", f"Accept-Encoding: {encoding}"] + (["-H", "Connection: close"] if close else [])
    with tempfile.NamedTemporaryFile("w", suffix=".lua") as script:
        script.write(WRK_SCRIPT)
        script.flush()
        out = subprocess.run(
            ["wrk", "-t2", f"-c{clients}", f"-d{seconds}s", "--timeout", "30s", "-s", script.name, *headers, url],
            capture_output=True,
            text=True,
            check=True,
            timeout=seconds + 60,
        ).stdout
    found = re.search(r"^RESULT (.*)$", out, re.M)
    if found is None:
        sys.exit(f"wrk printed no result:\n{out}")
    n, micros, p50, p95, *errors = (int(v) for v in found[1].split())
    return n, micros / 1e6, p50 / 1000, p95 / 1000, sum(errors)


def with_threads(
    port: int, path: str, clients: int, seconds: int, encoding: str
) -> tuple[int, float, float, float, int]:
    """(pages, seconds, p50 ms, p95 ms, errors) from ``clients`` Python threads, one connection per page."""
    lock = threading.Lock()
    times: list[float] = []
    errors = [0]
    deadline = time.perf_counter() + seconds

    def client() -> None:
        while time.perf_counter() < deadline:
            start = time.perf_counter()
            try:
                status, _, _ = fetch(port, path, encoding)
                ok = status == 200
            except Exception:  # a failed page counts as an error, not as a crash of the measurement
                ok = False
            with lock:
                if ok:
                    times.append((time.perf_counter() - start) * 1000)
                else:
                    errors[0] += 1

    took = run_threads(client, clients)
    return len(times) + errors[0], took, statistics.median(times), percentile(times, 95), errors[0]


def build(args: argparse.Namespace, env: dict[str, str]) -> None:
    """The throwaway database, migrated, with the archive imported and refreshed."""
    from django.core.management import call_command
    from django.db import connection

    archive = OUT / f"served-{args.runs}"
    if args.runs == 25_000:
        archive = OUT / "L"  # the L scale's bundles: the same files
    subprocess.run(
        [sys.executable, "bench/generate.py", "--runs", str(args.runs), "--out", str(archive)], cwd=REPO, check=True
    )
    with connection._nodb_cursor() as cursor:
        cursor.execute(f'DROP DATABASE IF EXISTS "{args.database}"')
        cursor.execute(f'CREATE DATABASE "{args.database}"')
    connection.close()
    call_command("migrate", verbosity=0)
    start = time.perf_counter()
    bundles = [str(path) for path in sorted(archive.glob("*.tar.gz"))]
    if args.detect is None:
        # The after-import refresh (summaries, detection) runs in the import's process, as the worker would run it.
        subprocess.run(
            [sys.executable, "manage.py", "import_bundle", *bundles],
            cwd=REPO,
            env={**env, "CELERY_TASK_ALWAYS_EAGER": "true"},
            check=True,
            stdout=subprocess.DEVNULL,
        )
        print(f"imported and refreshed {args.runs:,} runs in {time.perf_counter() - start:.0f} s")
        return
    # A large archive: the refreshes are queued on a queue no worker reads (purged after), then run here:
    # whole (detection too) for the first --detect series, the home-page summary for the others.
    subprocess.run(
        [sys.executable, "manage.py", "import_bundle", *bundles],
        cwd=REPO,
        env={**env, "CELERY_QUEUE": UNREAD_QUEUE},
        check=True,
        stdout=subprocess.DEVNULL,
    )
    imported = time.perf_counter() - start
    subprocess.run(
        [sys.executable, "-m", "celery", "-A", "benchdash", "purge", "-f", "-Q", UNREAD_QUEUE],
        cwd=REPO,
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    from reports.series import refresh_series, summarise_series
    from runs.models import Run

    series = sorted(set(Run.objects.values_list("server_id", "workload_id")))
    for index, (server_id, workload_id) in enumerate(series):
        if index < args.detect:
            refresh_series(server_id, workload_id)
        else:
            summarise_series(server_id, workload_id)
    refreshed = time.perf_counter() - start - imported
    print(f"imported {args.runs:,} runs in {imported:.0f} s; {len(series)} series refreshed in {refreshed:.0f} s")


def list_pages(requests: int) -> list[tuple[str, str, str, str, str]]:
    """(page, wall p50 ms, CPU p50 ms, KB, queries) of each list page rendered from scratch."""
    from django.core.cache import cache
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    client = Client()
    rows = []
    for name, path in LIST_PAGES.items():
        client.get(path)  # first-request work that is not per request (templates, content types)
        wall, cpu = [], []
        size = queries = 0
        for _ in range(requests):
            cache.clear()
            with CaptureQueriesContext(connection) as captured:
                start, start_cpu = time.perf_counter(), time.process_time()
                response = client.get(path)
                wall.append((time.perf_counter() - start) * 1000)
                cpu.append((time.process_time() - start_cpu) * 1000)
            assert response.status_code == 200, (path, response.status_code)
            size, queries = len(response.content), len(captured)
        wall_ms, cpu_ms = f"{statistics.median(wall):.0f}", f"{statistics.median(cpu):.0f}"
        rows.append((name, wall_ms, cpu_ms, f"{size / 1024:.0f}", str(queries)))
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database", default="bd_served_bench", help="dropped and made again; begins with bd_served")
    parser.add_argument("--runs", type=int, default=60, help="runs in the archive (series of 60)")
    parser.add_argument("--reuse", action="store_true", help="keep the database of an earlier run as it is")
    parser.add_argument(
        "--detect", type=int, help="refresh in full (detection too) only this many series, the others' summaries"
    )
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--worker-class", choices=("sync", "gthread"), default="sync")
    parser.add_argument("--threads", type=int, default=4, help="threads per worker with gthread")
    parser.add_argument("--encoding", default="gzip", help="the clients' Accept-Encoding (identity: none)")
    parser.add_argument("--client", choices=("wrk", "threads"), default="wrk" if shutil.which("wrk") else "threads")
    parser.add_argument(
        "--close", action="store_true", help="a new connection per page with wrk too (the threads client always)"
    )
    parser.add_argument("--lists", action="store_true", help="also time the list pages rendered from scratch")
    parser.add_argument("--list-requests", type=int, default=5)
    args = parser.parse_args()
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith("postgres"):
        sys.exit("set DATABASE_URL=postgres://… (its server is used, never the database it names)")
    if not re.fullmatch(r"bd_served[a-z0-9_]*", args.database):
        sys.exit(f"--database {args.database!r}: it is dropped and made again, so its name must begin with bd_served")
    if not os.environ.get("REDIS_URL"):
        sys.exit("set REDIS_URL (e.g. redis://127.0.0.1:6379/15): gunicorn and this script share the page cache")
    os.environ["DATABASE_URL"] = re.sub(r"/[^/]*$", f"/{args.database}", url)
    env = {**os.environ, "DEBUG": "false"}
    env.pop("CELERY_TASK_ALWAYS_EAGER", None)
    os.environ.update({"DJANGO_SETTINGS_MODULE": "benchdash.settings", "DEBUG": "false"})
    import django

    django.setup()
    from django.core.cache import cache

    from runs.models import Run

    if not args.reuse:
        build(args, env)
    cache.clear()
    base = Run.objects.filter(bundle__original_name="series-00000.tar.gz").order_by("build__version__sort_key").first()
    if base is None:
        sys.exit("no series-00000 in the database: run without --reuse")
    path = f"/compare/?base={base.pk}"
    archive = f"{Run.objects.count():,} runs"

    lists = list_pages(args.list_requests) if args.lists else []

    static = tempfile.mkdtemp(prefix="served-static-")
    production = {
        **env,
        "BENCHDASH_MODE": "production",
        "SECRET_KEY": secrets.token_urlsafe(50),
        "ALLOWED_HOSTS": "127.0.0.1",
        "BENCHDASH_PUBLIC_BROWSING": "true",
        "BENCHDASH_STATIC_ROOT": static,
    }
    subprocess.run(
        [sys.executable, "manage.py", "collectstatic", "--noinput", "--verbosity", "0"],
        cwd=REPO,
        env=production,
        check=True,
    )
    port = free_port()
    server_args = ["-w", str(args.workers), "-k", args.worker_class, "--timeout", "120", "-b", f"127.0.0.1:{port}"]
    if args.worker_class == "gthread":
        server_args += ["--threads", str(args.threads)]
    server = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", *server_args, "benchdash.wsgi:application"],
        cwd=REPO,
        env=production,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_up(port, server)
        status, _, html = fetch(port, path, "identity")
        if status != 200:
            sys.exit(f"{path}: HTTP {status}")
        # Warm both workers: each connects to the database and loads its templates once.
        for _ in range(20):
            fetch(port, path, args.encoding)
        tokens = set()
        for _ in range(2):
            _, headers, body = fetch(port, path, "gzip")
            if headers.get("content-encoding") == "gzip":
                body = gzip.decompress(body)
            found = re.search(rb'hx-headers=\'\{"X-CSRFToken": "([^"]+)"\}\'', body)
            if found is None or "content-security-policy" not in headers:
                sys.exit("the page lacks its CSRF token or its CSP header")
            tokens.add(found[1])
        if len(tokens) != 2:
            sys.exit("two responses carried the same CSRF token")
        _, headers, encoded = fetch(port, path, args.encoding)
        sent = f"{len(encoded) / 1024:.0f} KB as sent ({headers.get('content-encoding', 'identity')})"

        workers = children(server.pid)
        redis = cache._cache.get_client(None)  # type: ignore[attr-defined]

        def backends() -> list[int]:
            """The PostgreSQL backends serving the database (gthread workers open one per thread as needed)."""
            from django.db import connection

            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
                )
                found = [pid for (pid,) in cursor.fetchall()]
            connection.close()
            return found

        def usage() -> tuple[float, dict[int, float], float]:
            cpu = redis.info("cpu")
            return (
                sum(cpu_seconds(pid) for pid in [server.pid, *workers]),
                {pid: cpu_seconds(pid) for pid in backends()},
                float(cpu["used_cpu_user"]) + float(cpu["used_cpu_sys"]),
            )

        load_before = os.getloadavg()[0]
        used_before = usage()
        if args.client == "wrk":
            pages, seconds, p50, p95, errors = with_wrk(
                f"http://127.0.0.1:{port}{path}", args.clients, args.seconds, args.encoding, args.close
            )
        else:
            pages, seconds, p50, p95, errors = with_threads(port, path, args.clients, args.seconds, args.encoding)
        used_after = usage()
        load_after = os.getloadavg()[0]
        if children(server.pid) != workers:
            print("note: a gunicorn worker was replaced during the measurement; its CPU time is not counted")
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
        shutil.rmtree(static, ignore_errors=True)

    rate = pages / seconds
    # A backend that appeared during the load started from nothing; one that left took its time with it.
    database = sum(after - used_before[1].get(pid, 0.0) for pid, after in used_after[1].items())
    spent = (used_after[0] - used_before[0], database, used_after[2] - used_before[2])
    per_page = [seconds * 1000 / max(pages, 1) for seconds in spent]
    verdict = "met" if rate >= TARGET_PAGES_PER_SECOND and not errors else "MISSED"
    worker_kind = args.worker_class + (f" ×{args.threads} threads" if args.worker_class == "gthread" else "")
    print(f"\ncomparison page {path} of a {len(html) / 1024:.0f} KB page ({sent}), archive {archive}")
    # gunicorn's sync workers close every connection after its response, whatever the client asks.
    kept = not args.close and args.client == "wrk" and args.worker_class == "gthread"
    connections = "connections kept alive" if kept else "a connection per page"
    print(f"gunicorn {args.workers} {worker_kind} workers; {args.clients} clients ({args.client}, {connections})")
    print(f"for {seconds:.1f} s")
    print(f"load average (1 min) before / after: {load_before:.2f} / {load_after:.2f}; {os.cpu_count()} CPUs")
    print(f"{'pages/s':<34} {rate:>10.1f}  target ≥ {TARGET_PAGES_PER_SECOND:.0f}: {verdict}")
    print(f"{'p50 / p95 ms':<34} {p50:>5.1f} / {p95:<5.1f}")
    print(f"{'errors':<34} {errors:>10}  of {pages} pages")
    print(f"{'CPU ms per page: gunicorn':<34} {per_page[0]:>10.2f}  master and workers, user + system")
    print(f"{'CPU ms per page: PostgreSQL':<34} {per_page[1]:>10.2f}  the backends of the workers' connections")
    print(f"{'CPU ms per page: Redis':<34} {per_page[2]:>10.2f}  the whole server (shared with its other clients)")
    if lists:
        print(f"\nlist pages rendered from scratch, archive {archive}, p50 of {args.list_requests}")
        print(f"{'page':<14} {'wall ms':>8} {'CPU ms':>8} {'KB':>6} {'queries':>8}")
        for row in lists:
            print(f"{row[0]:<14} {row[1]:>8} {row[2]:>8} {row[3]:>6} {row[4]:>8}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
