"""Archive-scale benchmark: one table of figures, on PostgreSQL (issue 9's targets).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/benchdash REDIS_URL=redis://127.0.0.1:6379/8 \\
        .venv/bin/python bench/run.py --scale M [--work DIR]

Creates a fresh database (``--database``, default ``benchdash_perf``) on the server
of DATABASE_URL (never the one the URL names), then:

1. imports the S archive (100 runs) and records the SQL query count of every page;
2. imports up to the chosen scale (M = 2,000 runs, L = 25,000 runs) with
   ``manage.py import_bundle`` in a child process: import throughput (results/s,
   MB/s), its CPU time (the child and its parse workers; the database server's
   process, sampled), the load average, and the peak RSS of its largest process
   and of its process tree (at S, the S import is the one measured);
3. runs the after-import worker job (``reports.series.refresh_series``:
   comparisons, home-page summaries, regression detection) for every series
   the archive holds, so the pages below are measured on a database that has
   them;
4. times the 60-run × 42-test comparison cold (cache cleared) and cached;
5. serves the app with gunicorn on a free loopback port and measures each page
   (home, comparison, heatmap, drill-down, runs, and the regressions list, which
   reads the stories step 3 stored for every series): response time p50/p95 at
   the client and CPU time of gunicorn's process tree per request (after warm-up;
   cold = cache cleared before each request), its HTML raw and as sent; the query
   counts again (they must equal the S counts), the chart payload, gunicorn's
   process-tree RSS, and the comparison page's throughput under 20 concurrent
   clients with ``wrk`` (Debian package ``wrk``) for 10 s;
6. uploads one new series (``--upload-runs`` runs) through the API to that
   gunicorn, with a real Celery worker, and times it from the upload accepted
   (HTTP 202) to shown everywhere: imported, and its refresh (comparisons,
   summary, detection) done.

Generated archives are cached in ``--work`` (default ``bench/out``). The load is
loopback only, bounded in time, and gunicorn and the worker are stopped by their
process ids. Tasks go to two queues named after the database (the archive's
refreshes, queued by the import and done here in process; the upload's), which
are emptied at the end.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))


DB_NAME = "benchdash_perf"
CELERY = (sys.executable, "-m", "celery", "-A", "benchdash")
TARGETS = {
    "import results/s": 10000.0,
    "import peak RSS MB": 400.0,
    "page p95 warm ms": 150.0,
    "page p95 cold ms": 1000.0,
    "comparison req/s (20 clients)": 100.0,
    "chart payload KB": 250.0,
}


def percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(pct / 100 * (len(ordered) - 1))))]


def run_threads(target: Callable[[], None], count: int) -> float:
    """Run ``target`` in ``count`` threads at once until every one returns; the seconds that took."""
    threads = [threading.Thread(target=target) for _ in range(count)]
    start = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return time.perf_counter() - start


def queue_busy(broker: Any, queue: str) -> bool:
    """Whether ``queue`` has a task waiting, or one taken by a worker and not yet acknowledged (tasks are
    acknowledged late: after they ran). The unacknowledged messages of every queue in the Redis database share
    one hash, so only those routed to ``queue`` count: another queue's, or one a killed worker left behind long
    ago, must not keep this one from being quiet."""
    if broker.llen(queue):
        return True
    for _tag, payload in broker.hscan_iter("unacked"):
        try:
            if json.loads(payload)[2] == queue:  # [message, exchange, routing key]
                return True
        except (ValueError, TypeError, IndexError):
            continue
    return False


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def database_url(base: str, name: str) -> str:
    return re.sub(r"/[^/]*$", f"/{name}", base)


def process_cpu(pid: int) -> float | None:
    """User + system CPU seconds of a process on this machine, or None when it cannot be read."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def refresh_one(series: tuple[int, int]) -> float:
    """Seconds of the worker's refresh of one series (in a process of the pool)."""
    from reports.series import refresh_series

    started = time.perf_counter()
    refresh_series(*series)
    return time.perf_counter() - started


def import_child(paths: list[Path], env: dict[str, str], database: str) -> dict[str, float | None]:
    """Import bundles in a child process: its seconds, CPU seconds (its parse workers included), peak RSS MB (of
    its largest process, and of its process tree: sampled every 50 ms), and the CPU seconds of the database
    server's processes serving it (sampled every 0.2 s: the server is on this machine, or the figure is None)."""
    from django.db import connection

    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "manage.py", "import_bundle", *map(str, paths)],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
    )
    backends: dict[int, float] = {}
    readable = True
    from peers import PeakRss

    with PeakRss(proc.pid) as tree_peak:
        while True:
            # wait4 rather than poll: the child's own usage, its parse workers' included.
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT pid FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()", [database]
                )
                for (pid,) in cursor.fetchall():
                    cpu = process_cpu(pid)
                    if cpu is None:
                        readable = False
                    else:
                        backends[pid] = cpu
            time.sleep(0.2)
    seconds = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        sys.exit(f"import failed with status {proc.returncode}")
    return {
        "seconds": seconds,
        "cpu": usage.ru_utime + usage.ru_stime,
        "rss": usage.ru_maxrss / 1024,
        "tree_rss": tree_peak.peak / 2**20,
        "server_cpu": sum(backends.values()) if readable and backends else None,
    }


def timed_get(url: str) -> float:
    start = time.perf_counter()
    with urllib.request.urlopen(url, timeout=60) as response:
        response.read()
        if response.status != 200:
            raise RuntimeError(f"{url}: HTTP {response.status}")
    return (time.perf_counter() - start) * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", choices=("S", "M", "L"), default="M")
    parser.add_argument("--work", type=Path, default=REPO / "bench" / "out")
    parser.add_argument("--requests", type=int, default=100, help="timed requests per page")
    parser.add_argument("--explain", type=Path, help="write EXPLAIN ANALYZE of each page's slowest queries here")
    parser.add_argument(
        "--database",
        default=DB_NAME,
        help="the database to create (dropped first if it exists) on DATABASE_URL's server",
    )
    parser.add_argument("--refresh-jobs", type=int, default=2, help="processes refreshing the archive's series")
    parser.add_argument("--upload-runs", type=int, default=60, help="runs of the series uploaded for the last figure")
    args = parser.parse_args()
    if not os.environ.get("DATABASE_URL", "").startswith("postgres"):
        sys.exit("bench/run.py measures on PostgreSQL: set DATABASE_URL=postgres://…")
    if not os.environ.get("REDIS_URL"):
        sys.exit("set REDIS_URL so gunicorn and this script share the cache (e.g. redis://127.0.0.1:6379/8)")

    db_name = args.database
    if not re.fullmatch(r"[a-z_][a-z0-9_]*", db_name) or os.environ["DATABASE_URL"].rstrip("/").endswith(f"/{db_name}"):
        sys.exit(f"--database {db_name!r}: a plain name, not the database DATABASE_URL names (it is dropped)")
    # The import's refresh tasks go to a queue nobody reads (this script runs the refreshes itself, in step 3);
    # the upload of step 6 to a queue of its own, read by the worker this script starts.
    archive_queue, upload_queue = f"{db_name}-archive", f"{db_name}-upload"
    env = {
        **os.environ,
        "DATABASE_URL": database_url(os.environ["DATABASE_URL"], db_name),
        "DEBUG": "false",
        "CELERY_QUEUE": archive_queue,
    }
    env.pop("CELERY_TASK_ALWAYS_EAGER", None)
    os.environ.update({"DJANGO_SETTINGS_MODULE": "benchdash.settings", "DEBUG": "false"})
    import django

    django.setup()
    from django.conf import settings
    from django.core.cache import cache
    from django.core.management import call_command
    from django.db import connection, connections
    from django.test.utils import CaptureQueriesContext

    with connection._nodb_cursor() as cursor:
        cursor.execute(f"DROP DATABASE IF EXISTS {db_name}")
        cursor.execute(f"CREATE DATABASE {db_name}")
    settings.DATABASES["default"]["NAME"] = db_name
    connection.settings_dict["NAME"] = db_name
    connection.close()
    call_command("migrate", verbosity=0)
    cache.clear()

    from django.test import Client

    from reports.compare import ComparisonSpec, get_comparison
    from runs.models import Result, Run

    figures: list[tuple[str, str, str]] = []

    def pages() -> dict[str, str]:
        base = (
            Run.objects.filter(bundle__original_name="series-00000.tar.gz").order_by("build__version__sort_key").first()
        )
        assert base is not None
        mb = Result.objects.filter(run=base, microbenchmark__test="point-query").values_list(
            "microbenchmark_id", flat=True
        )[0]
        return {
            "home": "/",
            "comparison": f"/compare/?base={base.pk}",
            "heatmap": f"/compare/heatmap?base={base.pk}",
            "drill-down": f"/microbenchmarks/{mb}/?base={base.pk}",
            "runs": "/runs/",
            # Every series was refreshed (step 3): the list reads the stories detection stored for each.
            "regressions": "/regressions/",
        }

    def query_counts() -> dict[str, tuple[int, int]]:
        """(cold, warm) query count of every page: rendered from scratch, then served from the cache."""
        client = Client()
        counts = {}
        for name, path in pages().items():
            client.get(path)  # first-request work that is not per request (template loading, content types)
            cache.clear()
            with CaptureQueriesContext(connection) as cold:
                assert client.get(path).status_code == 200
            with CaptureQueriesContext(connection) as warm:
                assert client.get(path).status_code == 200
            counts[name] = (len(cold), len(warm))
        return counts

    def explain(limit: int = 2) -> list[str]:
        """EXPLAIN ANALYZE of the slowest queries of each page rendered from scratch (markdown)."""
        client = Client()
        out: list[str] = []
        for name, path in pages().items():
            cache.clear()
            with CaptureQueriesContext(connection) as captured:
                client.get(path)
            slowest = sorted(captured.captured_queries, key=lambda q: -float(q["time"]))[:limit]
            for query in slowest:
                with connection.cursor() as cursor:
                    cursor.execute("EXPLAIN (ANALYZE, COSTS OFF, TIMING ON) " + query["sql"])
                    plan = "\n".join(row[0] for row in cursor.fetchall())
                took = float(query["time"]) * 1000
                out.append(f"#### {name}: {took:.1f} ms\n\n```sql\n{query['sql']}\n```\n\n```\n{plan}\n```\n")
        return out

    def refresh_all() -> tuple[list[tuple[int, int]], list[float], float]:
        """Every series refreshed in a pool of processes: the series, each one's seconds, and the wall time."""
        series = list(Run.objects.order_by().values_list("server_id", "workload_id").distinct())
        cache.clear()
        connections.close_all()  # the processes forked below open their own
        started = time.perf_counter()
        with ProcessPoolExecutor(max_workers=args.refresh_jobs, mp_context=multiprocessing.get_context("fork")) as pool:
            seconds = list(pool.map(refresh_one, series))
        return series, seconds, time.perf_counter() - started

    def import_figures(paths: list[Path]) -> None:
        """Import ``paths`` in a child process and record its throughput, CPU and memory."""
        before = Result.objects.count()
        load_before = os.getloadavg()[0]
        took = import_child(paths, env, db_name)
        load_after = os.getloadavg()[0]
        imported = Result.objects.count() - before
        megabytes = sum(p.stat().st_size for p in paths) / 1e6
        seconds, cpu, server_cpu = float(took["seconds"] or 0), float(took["cpu"] or 0), took["server_cpu"]
        load = f"load average {load_before:.1f} before, {load_after:.1f} after, on {os.cpu_count()} CPUs"
        figures.append(
            ("import results/s", f"{imported / seconds:,.0f}", f"{imported:,} results in {seconds:.0f} s; {load}")
        )
        figures.append(
            (
                "import results per CPU second",
                f"{imported / cpu:,.0f}",
                f"import_bundle and its parse workers: {cpu:.0f} s",
            )
        )
        if server_cpu is not None:
            figures.append(
                (
                    "import results per CPU second, all",
                    f"{imported / (cpu + server_cpu):,.0f}",
                    f"the database server's process too: {server_cpu:.0f} s more (sampled)",
                )
            )
        figures.append(("import MB/s", f"{megabytes / seconds:.2f}", f"{megabytes:.0f} MB of bundles"))
        figures.append(("import peak RSS MB", f"{float(took['rss'] or 0):.0f}", "its largest process"))
        figures.append(
            ("import peak tree RSS MB", f"{float(took['tree_rss'] or 0):.0f}", "import_bundle and its parse workers")
        )

    # 1. S, refreshed as after its import, so its pages show what the larger archive's will (summaries, stories)
    s_dir = args.work / "S"
    subprocess.run([sys.executable, "bench/generate.py", "--scale", "S", "--out", str(s_dir)], cwd=REPO, check=True)
    s_paths = sorted(s_dir.glob("*.tar.gz"))
    if args.scale == "S":
        import_figures(s_paths)
    else:
        import_child(s_paths, env, db_name)
    refresh_all()
    counts_s = query_counts()

    # 2. up to the scale
    scale_dir = args.work / args.scale
    if args.scale != "S":
        subprocess.run(
            [sys.executable, "bench/generate.py", "--scale", args.scale, "--out", str(scale_dir)], cwd=REPO, check=True
        )
        # Every bundle of the scale; those the S phase imported already are recognised by content and skipped.
        import_figures(sorted(scale_dir.glob("*.tar.gz")))
    figures.append(("database", f"{Run.objects.count():,} runs", f"{Result.objects.count():,} results"))

    # 3. the after-import worker job, for every series, as the worker's processes would after the imports above
    series, refresh_seconds, refresh_wall = refresh_all()
    figures.append(
        (
            "refresh per series p50/max s",
            f"{statistics.median(refresh_seconds):.2f} / {max(refresh_seconds):.2f}",
            f"{len(series)} series in {refresh_wall:.0f} s, {args.refresh_jobs} processes",
        )
    )

    # 4. comparison computation
    base = Run.objects.filter(bundle__original_name="series-00000.tar.gz").order_by("build__version__sort_key").first()
    assert base is not None
    spec = ComparisonSpec(base_run_id=base.pk)
    cold = []
    for _ in range(10):
        cache.clear()
        start = time.perf_counter()
        comparison = get_comparison(spec)
        cold.append((time.perf_counter() - start) * 1000)
    warm = []
    for _ in range(100):
        start = time.perf_counter()
        get_comparison(spec)
        warm.append((time.perf_counter() - start) * 1000)
    shape = f"{len(comparison.columns)} runs × {len(comparison.labels)} tests"
    figures.append(("comparison cold p50/p95 ms", f"{statistics.median(cold):.0f} / {percentile(cold, 95):.0f}", shape))
    figures.append(("comparison cached p50/p95 ms", f"{statistics.median(warm):.1f} / {percentile(warm, 95):.1f}", ""))

    counts_l = query_counts()
    for name in counts_s:
        same = "equal" if counts_s[name] == counts_l[name] else "DIFFERENT"
        (s_cold, s_warm), (l_cold, l_warm) = counts_s[name], counts_l[name]
        figures.append(
            (
                f"queries {name} (S / {args.scale})",
                f"{s_cold} / {l_cold}",
                f"{same}; served from cache {s_warm} / {l_warm}",
            )
        )
    if args.explain:
        args.explain.write_text("\n".join(explain()))

    # 5. gunicorn
    port = free_port()
    upload_env = {**env, "CELERY_QUEUE": upload_queue}
    server = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "benchdash.wsgi:application", "-b", f"127.0.0.1:{port}", "-w", "2"],
        cwd=REPO,
        env=upload_env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    worker: subprocess.Popen[bytes] | None = None
    try:
        url = f"http://127.0.0.1:{port}"
        for _ in range(100):
            try:
                timed_get(url + "/healthz")
                break
            except OSError:
                time.sleep(0.2)
        worst_warm, worst_cold = measure_pages(url, server.pid, pages(), args.requests, figures)
        figures.append(("page p95 warm ms", f"{worst_warm:.0f}", "worst page"))
        figures.append(("page p95 cold ms", f"{worst_cold:.0f}", "worst page"))
        with urllib.request.urlopen(url + pages()["comparison"]) as response:
            html = response.read().decode()
        payload = sum(
            len(m) for m in re.findall(r'<script id="chart-[^"]*" type="application/json">(.*?)</script>', html)
        )
        with urllib.request.urlopen(url + pages()["heatmap"]) as response:
            payload += len(response.read())
        figures.append(("chart payload KB", f"{payload / 1024:.0f}", "group charts + heatmap page"))
        if shutil.which("wrk"):
            out = subprocess.run(
                ["wrk", "-t2", "-c20", "-d10s", url + pages()["comparison"]], capture_output=True, text=True, check=True
            ).stdout
            rate = float(re.search(r"Requests/sec:\s+([0-9.]+)", out)[1])  # type: ignore[index]
            errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
            figures.append(
                ("comparison req/s (20 clients)", f"{rate:.0f}", f"{errors[1] if errors else 0} errors, wrk 10 s")
            )
        else:
            figures.append(("comparison req/s (20 clients)", "n/a", "install wrk (Debian package)"))

        from peers import tree_rss

        figures.append(("server tree RSS MB", f"{tree_rss(server.pid) / 2**20:.0f}", "gunicorn + 2 workers"))

        # 6. one upload, from accepted to shown everywhere, with a real worker
        worker = subprocess.Popen(
            [
                *CELERY,
                "worker",
                "-c",
                "2",
                "-l",
                "warning",
                "-Q",
                upload_queue,
                "-n",
                f"{upload_queue}-{os.getpid()}@%h",
            ],
            cwd=REPO,
            env=upload_env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        accepted, imported_after, shown_after, results = upload_until_shown(url, upload_queue, args.upload_runs)
        figures.append(
            (
                "upload → shown everywhere s",
                f"{shown_after:.1f}",
                f"{args.upload_runs} runs, {results:,} results: imported after {imported_after:.1f} s, refreshed "
                f"(comparisons, summary, detection) after {shown_after:.1f} s; HTTP upload {accepted:.2f} s before",
            )
        )
    finally:
        for proc in (server, worker):
            if proc is not None:
                proc.send_signal(signal.SIGTERM)
        for proc in (server, worker):
            if proc is not None:
                try:
                    proc.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    proc.kill()
        subprocess.run(
            [*CELERY, "purge", "-f", "-Q", f"{archive_queue},{upload_queue}"],
            cwd=REPO,
            env=env,
            check=False,
            stdout=subprocess.DEVNULL,
        )

    print(f"\nbenchdash archive-scale benchmark, scale {args.scale}, PostgreSQL database {db_name}")
    print(f"{'figure':<40} {'value':>16}  note")
    for name, value, note in figures:
        target = TARGETS.get(name)
        verdict = ""
        if target is not None and value != "n/a":
            number = float(value.replace(",", ""))
            lower_better = "RSS" in name or "ms" in name or "KB" in name
            met = number <= target if lower_better else number >= target
            verdict = f"  target {'≤' if lower_better else '≥'} {target:g}: {'met' if met else 'MISSED'}"
        print(f"{name:<40} {value:>16}  {note}{verdict}")
    return 0


def measure_pages(
    url: str, server_pid: int, pages: dict[str, str], requests: int, figures: list[tuple[str, str, str]]
) -> tuple[float, float]:
    """Each page over HTTP, from the cache (warm) and computed (cold: the cache cleared before each request): wall
    time at the client and CPU time of the server's process tree, and the HTML's bytes raw and as sent. Appends
    the figures; returns the worst warm and cold p95 (ms)."""
    from django.core.cache import cache
    from peers import sent_bytes, tree, tree_cpu_ns

    worst_warm = 0.0
    worst_cold = 0.0
    pids = tree(server_pid)  # gunicorn and its workers, forked by now

    def cpu_timed_get(target: str) -> tuple[float, float]:
        """(wall ms, CPU ms of the server's process tree) of one request."""
        cpu = tree_cpu_ns(pids)
        wall = timed_get(target)
        return wall, (tree_cpu_ns(pids) - cpu) / 1e6

    for name, path in pages.items():
        for _ in range(5):
            timed_get(url + path)
        warm_requests = [cpu_timed_get(url + path) for _ in range(requests)]
        cold_requests: list[tuple[float, float]] = []
        for _ in range(10):
            cache.clear()
            cold_requests.append(cpu_timed_get(url + path))
        warm_ms, cold_ms = [w for w, _ in warm_requests], [w for w, _ in cold_requests]
        worst_warm = max(worst_warm, percentile(warm_ms, 95))
        worst_cold = max(worst_cold, percentile(cold_ms, 95))
        raw, sent = sent_bytes(url + path)
        cold_cpu = statistics.median(c for _, c in cold_requests)
        warm_cpu = statistics.median(c for _, c in warm_requests)
        figures.append(
            (
                f"page {name} p50/p95 ms warm",
                f"{statistics.median(warm_ms):.0f} / {percentile(warm_ms, 95):.0f}",
                f"cold p50/p95 {statistics.median(cold_ms):.0f} / {percentile(cold_ms, 95):.0f}",
            )
        )
        figures.append(
            (
                f"page {name} CPU ms cold / warm",
                f"{cold_cpu:.1f} / {warm_cpu:.1f}",
                f"server process tree, p50; HTML {raw / 1024:.0f} KB raw, {sent / 1024:.0f} KB as sent",
            )
        )
    return worst_warm, worst_cold


TOKEN_USER = "run-bench"


def upload_until_shown(url: str, queue: str, runs: int) -> tuple[float, float, float, int]:
    """Upload a new series through the API; (seconds the upload took to be accepted, then seconds from accepted
    until imported, and until shown everywhere, results). Shown everywhere: imported, and no task left queued or
    running (the refresh the import queued: comparisons, summary, detection), and the series' summary stored."""
    import redis
    from django.contrib.auth.models import Group, User

    from accounts.permissions import UPLOADER, create_token
    from reports.models import SeriesSummary
    from runs import synthetic
    from runs.models import Bundle, Result

    user, _ = User.objects.get_or_create(username=TOKEN_USER)
    user.groups.add(Group.objects.get(name=UPLOADER))
    token = create_token(user, "bench/run.py")[1]
    spec = synthetic.SeriesSpec(versions=tuple(f"9.{i // 100}.{i % 100}" for i in range(runs)), seed=4242)
    bundle = synthetic.bundle_bytes(spec)
    server = "run-bench-upload"
    boundary = "runbench"
    body = (
        (
            f'--{boundary}\r\nContent-Disposition: form-data; name="server"\r\n\r\n{server}\r\n'
            f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="upload.tar.gz"\r\n'
            "Content-Type: application/gzip\r\n\r\n"
        ).encode()
        + bundle
        + f"\r\n--{boundary}--\r\n".encode()
    )
    broker = redis.Redis.from_url(os.environ["REDIS_URL"])
    # The worker is up once it has taken the tasks it sends itself on connecting (requeue checks).
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not broker.exists(f"_kombu.binding.{queue}"):
        time.sleep(0.2)
    idle = 0
    while time.monotonic() < deadline and idle < 10:
        idle = 0 if queue_busy(broker, queue) else idle + 1
        time.sleep(0.1)
    request = urllib.request.Request(
        url + "/api/bundles/",
        data=body,
        headers={"Authorization": f"Bearer {token}", "Content-Type": f"multipart/form-data; boundary={boundary}"},
    )
    start = time.perf_counter()
    with urllib.request.urlopen(request, timeout=120) as response:
        answer = json.loads(response.read())
    accepted = time.perf_counter()
    imported_at = None
    quiet = 0
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        status = Bundle.objects.filter(pk=answer["bundle_id"]).values_list("status", flat=True).first()
        if status == Bundle.Status.FAILED:
            raise RuntimeError(f"the upload failed to import: {answer}")
        if status == Bundle.Status.IMPORTED and imported_at is None:
            imported_at = time.perf_counter()
        # Acknowledged late, a task stays in "unacked" until it has run; three quiet looks in a row close the
        # gap between a message leaving the queue and entering "unacked".
        busy = queue_busy(broker, queue)
        summarised = SeriesSummary.objects.filter(server__name=server).exists()
        quiet = quiet + 1 if imported_at and not busy and summarised else 0
        if quiet >= 3:
            break
        time.sleep(0.05)
    else:
        raise RuntimeError("the upload was not shown everywhere within 10 minutes")
    shown = time.perf_counter() - 0.1  # the two extra looks
    results = Result.objects.filter(run__bundle_id=answer["bundle_id"]).count()
    assert imported_at is not None
    return accepted - start, imported_at - accepted, shown - accepted, results


if __name__ == "__main__":
    sys.exit(main())
