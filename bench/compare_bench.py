"""Comparison benchmark: a 60-run × 42-test comparison, cold and cached, in Python and through the page.

    .venv/bin/python bench/compare_bench.py [--db sqlite|env] [--runs 60] [--requests 200]

Generates a series of ``--runs`` versions of the classic 42-microbenchmark list
with the project's generator, imports it through the normal path, then measures:
the comparison computed from raw results (cold: cache cleared each time), served
from the cache (warm), the comparison page and its CSV export rendered through
Django's test client (server side, cold and warm, p50/p95), and the SQL query
count of the page with 2 runs and with all runs (they must be equal), and
``/api/compare``'s JSON (cache cleared, cached, revalidated with its ETag: a
304) with its size. Targets:
page p95 < 150 ms warm and < 1 s cold.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from import_bench import bench_database, configure_environment

TARGET_WARM_P95_MS = 150.0
TARGET_COLD_P95_MS = 1000.0


def percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(pct / 100 * (len(ordered) - 1))))
    return ordered[index]


def timed(fn, repeat: int) -> list[float]:  # type: ignore[no-untyped-def]
    out = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        out.append((time.perf_counter() - start) * 1000)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", choices=("sqlite", "env"), default="sqlite")
    parser.add_argument("--runs", type=int, default=60)
    parser.add_argument("--requests", type=int, default=200)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="benchdash-bench-") as var_dir:
        configure_environment(args.db, Path(var_dir))
        import django

        django.setup()
        from django.core.cache import cache
        from django.db import connection
        from django.test import Client
        from django.test.utils import CaptureQueriesContext

        from reports.compare import ComparisonSpec, compute_comparison, get_comparison
        from runs import synthetic
        from runs.importer import submit_and_import
        from runs.models import Result, Run

        with bench_database(args.db) as described:
            versions = tuple(f"8.{i // 100}.{i % 100}" for i in range(args.runs))
            spec = synthetic.SeriesSpec(versions=versions, seed=1)
            start = time.perf_counter()
            submit_and_import(synthetic.bundle_bytes(spec), name="series.tgz", source="command")
            import_s = time.perf_counter() - start
            runs = Run.objects.count()
            results = Result.objects.count()
            base = Run.objects.order_by("build__version__sort_key").first()
            assert base is not None
            cspec = ComparisonSpec(base_run_id=base.pk)

            cold = []
            for _ in range(10):
                cache.clear()
                start = time.perf_counter()
                get_comparison(cspec)
                cold.append((time.perf_counter() - start) * 1000)
            warm = timed(lambda: get_comparison(cspec), 200)
            compute = timed(lambda: compute_comparison(cspec), 10)

            client = Client()
            url = f"/compare/?base={base.pk}"
            page_cold = []
            # CPU time of this process as well: on a shared machine wall time mostly measures the neighbours.
            page_cold_cpu = []
            for _ in range(10):
                cache.clear()
                start, start_cpu = time.perf_counter(), time.process_time()
                assert client.get(url).status_code == 200
                page_cold.append((time.perf_counter() - start) * 1000)
                page_cold_cpu.append((time.process_time() - start_cpu) * 1000)
            client.get(url)
            page_warm = timed(lambda: client.get(url), args.requests)
            size = len(client.get(url).content)
            export_warm = timed(lambda: client.get(f"/compare/export?base={base.pk}&format=csv"), 50)

            api = f"/api/compare?base={base.pk}"
            api_cold = []
            api_cold_cpu = []
            for _ in range(5):
                cache.clear()
                start, start_cpu = time.perf_counter(), time.process_time()
                assert client.get(api).status_code == 200
                api_cold.append((time.perf_counter() - start) * 1000)
                api_cold_cpu.append((time.process_time() - start_cpu) * 1000)
            api_warm = timed(lambda: client.get(api), 50)
            answer = client.get(api)
            api_size = len(answer.content)
            etag = answer.get("ETag")
            api_304: list[float] = []
            if etag:
                api_304 = timed(lambda: client.get(api, HTTP_IF_NONE_MATCH=etag), 50)
                assert client.get(api, HTTP_IF_NONE_MATCH=etag).status_code == 304

            other = Run.objects.exclude(pk=base.pk).values_list("pk", flat=True).first()
            cache.clear()
            with CaptureQueriesContext(connection) as two:
                client.get(f"/compare/?base={base.pk}&runs={other}")
            cache.clear()
            with CaptureQueriesContext(connection) as everything:
                client.get(url)

    print(f"Comparison benchmark: {described}; Python {sys.version.split()[0]}")
    print(f"series: {runs} runs, {results} results (imported in {import_s:.2f} s, {results / import_s:.0f} results/s)")
    rows = [
        ("comparison from raw results (compute_comparison)", compute),
        ("comparison, cache cleared (get_comparison)", cold),
        ("comparison, cached (get_comparison)", warm),
        ("comparison page, cache cleared", page_cold),
        ("comparison page, cache cleared: CPU time", page_cold_cpu),
        ("comparison page, cached", page_warm),
        ("CSV export, cached", export_warm),
        ("/api/compare JSON, cache cleared", api_cold),
        ("/api/compare JSON, cache cleared: CPU time", api_cold_cpu),
        ("/api/compare JSON, cached", api_warm),
        ("/api/compare JSON, If-None-Match: 304", api_304),
    ]
    print(f"{'what':<50} {'n':>5} {'p50 ms':>9} {'p95 ms':>9} {'max ms':>9}")
    for name, values in rows:
        if not values:
            print(f"{name:<50} (not answered: no ETag)")
            continue
        print(
            f"{name:<50} {len(values):>5} {statistics.median(values):>9.1f} "
            f"{percentile(values, 95):>9.1f} {max(values):>9.1f}"
        )
    # The process's first page also pays whatever is done once per process (imports, schema decoding).
    print(f"first page of the process: {page_cold[0]:.0f} ms, {page_cold_cpu[0]:.0f} ms of CPU")
    print(f"page size: {size / 1024:.0f} KB; /api/compare JSON: {api_size / 1024:.0f} KB")
    print(f"SQL queries of the page: {len(two)} with 2 runs, {len(everything)} with {runs} runs")
    warm_ok = percentile(page_warm, 95) < TARGET_WARM_P95_MS
    cold_ok = percentile(page_cold, 95) < TARGET_COLD_P95_MS
    same = len(two) == len(everything)
    print(f"target page p95 < {TARGET_WARM_P95_MS:g} ms cached: {'met' if warm_ok else 'MISSED'}")
    print(f"target page p95 < {TARGET_COLD_P95_MS:g} ms cold: {'met' if cold_ok else 'MISSED'}")
    print(f"target equal query counts: {'met' if same else 'MISSED'}")
    return 0 if warm_ok and cold_ok and same else 1


if __name__ == "__main__":
    sys.exit(main())
