"""Archive-scale benchmark: one table of figures, on PostgreSQL (issue 9's targets).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/benchdash REDIS_URL=redis://127.0.0.1:6379/8 \\
        .venv/bin/python bench/run.py --scale M [--work DIR]

Creates a fresh database ``benchdash_perf`` on the server of DATABASE_URL (never
the one the URL names), then:

1. imports the S archive (100 runs) and records the SQL query count of every page;
2. imports up to the chosen scale (M = 2,000 runs, L = 25,000 runs) with
   ``manage.py import_bundle`` in a child process: import throughput (results/s,
   MB/s) and the child's peak RSS;
3. times the 60-run × 42-test comparison cold (cache cleared) and cached;
4. serves the app with gunicorn on a free loopback port and measures each page's
   server response time p50/p95 (after warm-up; cold = cache cleared before each
   request), the query counts again (they must equal the S counts), the chart
   payload, and the comparison page's throughput under 20 concurrent clients
   with ``wrk`` (Debian package ``wrk``) for 10 s.

Generated archives are cached in ``--work`` (default ``bench/out``). The load is
loopback only, bounded in time, and gunicorn is stopped by its process id.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))


DB_NAME = "benchdash_perf"
TARGETS = {
    "import results/s": 5000.0,
    "import peak RSS MB": 400.0,
    "page p95 warm ms": 150.0,
    "page p95 cold ms": 1000.0,
    "comparison req/s (20 clients)": 100.0,
    "chart payload KB": 250.0,
}


def percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(pct / 100 * (len(ordered) - 1))))]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def database_url(base: str) -> str:
    return re.sub(r"/[^/]*$", f"/{DB_NAME}", base)


def import_child(paths: list[Path], env: dict[str, str]) -> tuple[float, float]:
    """Import bundles in a child process; (seconds, peak RSS MB of the child)."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "manage.py", "import_bundle", *map(str, paths)],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
    )
    _, status, usage = os.wait4(proc.pid, 0)
    if status != 0:
        sys.exit(f"import failed with status {status}")
    return time.perf_counter() - start, usage.ru_maxrss / 1024


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
    args = parser.parse_args()
    if not os.environ.get("DATABASE_URL", "").startswith("postgres"):
        sys.exit("bench/run.py measures on PostgreSQL: set DATABASE_URL=postgres://…")
    if not os.environ.get("REDIS_URL"):
        sys.exit("set REDIS_URL so gunicorn and this script share the cache (e.g. redis://127.0.0.1:6379/8)")

    env = {**os.environ, "DATABASE_URL": database_url(os.environ["DATABASE_URL"]), "DEBUG": "false"}
    env.pop("CELERY_TASK_ALWAYS_EAGER", None)
    os.environ.update({"DJANGO_SETTINGS_MODULE": "benchdash.settings", "DEBUG": "false"})
    import django

    django.setup()
    from django.conf import settings
    from django.core.cache import cache
    from django.core.management import call_command
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with connection._nodb_cursor() as cursor:
        cursor.execute(f"DROP DATABASE IF EXISTS {DB_NAME}")
        cursor.execute(f"CREATE DATABASE {DB_NAME}")
    settings.DATABASES["default"]["NAME"] = DB_NAME
    connection.settings_dict["NAME"] = DB_NAME
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

    # 1. S
    s_dir = args.work / "S"
    subprocess.run([sys.executable, "bench/generate.py", "--scale", "S", "--out", str(s_dir)], cwd=REPO, check=True)
    s_paths = sorted(s_dir.glob("*.tar.gz"))
    import_child(s_paths, env)
    counts_s = query_counts()

    # 2. up to the scale
    scale_dir = args.work / args.scale
    if args.scale != "S":
        subprocess.run(
            [sys.executable, "bench/generate.py", "--scale", args.scale, "--out", str(scale_dir)], cwd=REPO, check=True
        )
        # Every bundle of the scale; those the S phase imported already are recognised by content and skipped.
        paths = sorted(scale_dir.glob("*.tar.gz"))
        before = Result.objects.count()
        seconds, rss = import_child(paths, env)
        imported = Result.objects.count() - before
        megabytes = sum(p.stat().st_size for p in paths) / 1e6
        figures.append(("import results/s", f"{imported / seconds:,.0f}", f"{imported:,} results in {seconds:.0f} s"))
        figures.append(("import MB/s", f"{megabytes / seconds:.2f}", f"{megabytes:.0f} MB of bundles"))
        figures.append(("import peak RSS MB", f"{rss:.0f}", "child process running import_bundle"))
    figures.append(("database", f"{Run.objects.count():,} runs", f"{Result.objects.count():,} results"))

    # 3. comparison computation
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

    # 4. gunicorn
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "benchdash.wsgi:application", "-b", f"127.0.0.1:{port}", "-w", "2"],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        url = f"http://127.0.0.1:{port}"
        for _ in range(100):
            try:
                timed_get(url + "/healthz")
                break
            except OSError:
                time.sleep(0.2)
        worst_warm = 0.0
        worst_cold = 0.0
        for name, path in pages().items():
            for _ in range(5):
                timed_get(url + path)
            warm_ms = [timed_get(url + path) for _ in range(args.requests)]
            cold_ms = []
            for _ in range(10):
                cache.clear()
                cold_ms.append(timed_get(url + path))
            worst_warm = max(worst_warm, percentile(warm_ms, 95))
            worst_cold = max(worst_cold, percentile(cold_ms, 95))
            figures.append(
                (
                    f"page {name} p50/p95 ms warm",
                    f"{statistics.median(warm_ms):.0f} / {percentile(warm_ms, 95):.0f}",
                    f"cold p50/p95 {statistics.median(cold_ms):.0f} / {percentile(cold_ms, 95):.0f}",
                )
            )
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
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)

    print(f"\nbenchdash archive-scale benchmark, scale {args.scale}, PostgreSQL database {DB_NAME}")
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


if __name__ == "__main__":
    sys.exit(main())
