"""Comparison benchmark: a 60-run × 42-test comparison, cold and cached, in Python and through the page; and the
200-run page with a base never asked before.

    .venv/bin/python bench/compare_bench.py [--db sqlite|env] [--database NAME] [--runs 60] [--requests 200]
        [--long-runs 200] [--never-asked 5]

Generates a series of ``--runs`` versions of the classic 42-microbenchmark list
with the project's generator, imports it through the normal path, then measures:
the comparison computed from raw results (cold: cache cleared each time), served
from the cache (warm), the comparison page and its CSV export rendered through
Django's test client (server side, cold and warm, p50/p95), and the SQL query
count of the page with 2 runs and with all runs (they must be equal), and
``/api/compare``'s JSON (cache cleared, cached, revalidated with its ETag: a
304) with its size.

Then a second series of ``--long-runs`` versions (names that cannot collide:
9.0.0 … 9.1.99) on a server of its own, imported and refreshed as the worker
does after an import, and its comparison page (every run of the series × 42
microbenchmarks) asked ``--never-asked`` times, each time with another base that
no request and no refresh asked for before (the cache cleared too): the CPU time
of this process per page (the test client renders it here, ``DEBUG`` off), its
SQL queries and its HTML bytes, raw and gzipped; then, apart, the parts the page
defers until they are scrolled into view (its tables), asked for after it as
htmx would. Targets: page p95 < 150 ms warm
and < 1 s cold; the long page with a never-asked base < 80 ms of CPU and
< 400 KB of HTML (medians).
"""

from __future__ import annotations

import argparse
import gzip
import html
import os
import re
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from import_bench import BENCH_DB_NAME, bench_database, configure_environment

TARGET_WARM_P95_MS = 150.0
TARGET_COLD_P95_MS = 1000.0
TARGET_LONG_CPU_MS = 80.0
TARGET_LONG_HTML_KB = 400.0


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
    parser.add_argument("--database", default=BENCH_DB_NAME, help="with --db env: the database to create and drop")
    parser.add_argument("--long-runs", type=int, default=200, help="runs of the long series (at most 200)")
    parser.add_argument("--never-asked", type=int, default=5, help="pages of the long series, each a new base")
    args = parser.parse_args()
    if not 2 <= args.long_runs <= 200 or not 1 <= args.never_asked <= args.long_runs - 2:
        sys.exit("--long-runs must be 2-200, --never-asked 1 to --long-runs minus 2")

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

        with bench_database(args.db, args.database) as described:
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
                assert client.get(f"/compare/?base={base.pk}&runs={other}").status_code == 200
            cache.clear()
            with CaptureQueriesContext(connection) as everything:
                assert client.get(url).status_code == 200

            long = long_series_pages(client, args.long_runs, args.never_asked)

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
    long_cpu = statistics.median(long.cpu_ms)
    long_kb = statistics.median(long.html) / 1024
    print(
        f"comparison page {long.runs} runs × {long.microbenchmarks}, a base never asked before "
        f"({len(long.cpu_ms)} bases, cache cleared): CPU p50 {long_cpu:.1f} ms (max {max(long.cpu_ms):.1f}), "
        f"wall p50 {statistics.median(long.wall_ms):.1f} ms, {statistics.median(long.queries):.0f} queries, "
        f"HTML {long_kb:.0f} KB raw, {statistics.median(long.gzipped) / 1024:.0f} KB gzipped; "
        f"load average {long.load:.1f}"
    )
    print(
        f"  and the {long.deferred_requests} parts it defers until scrolled into view, asked for after it: "
        f"CPU p50 {statistics.median(long.deferred_cpu_ms):.1f} ms, "
        f"HTML {statistics.median(long.deferred_html) / 1024:.0f} KB raw"
    )
    for part, (cpu, size) in long.parts.items():
        print(f"    {part}: {cpu:.1f} ms CPU, {size / 1024:.0f} KB (the last base's)")
    long_ok = long_cpu < TARGET_LONG_CPU_MS and long_kb < TARGET_LONG_HTML_KB
    print(
        f"target {long.runs}-run page, never-asked base, < {TARGET_LONG_CPU_MS:g} ms CPU and "
        f"< {TARGET_LONG_HTML_KB:g} KB HTML: {'met' if long_ok else 'MISSED'}"
    )
    warm_ok = percentile(page_warm, 95) < TARGET_WARM_P95_MS
    cold_ok = percentile(page_cold, 95) < TARGET_COLD_P95_MS
    same = len(two) == len(everything)
    print(f"target page p95 < {TARGET_WARM_P95_MS:g} ms cached: {'met' if warm_ok else 'MISSED'}")
    print(f"target page p95 < {TARGET_COLD_P95_MS:g} ms cold: {'met' if cold_ok else 'MISSED'}")
    print(f"target equal query counts: {'met' if same else 'MISSED'}")
    return 0 if warm_ok and cold_ok and same and long_ok else 1


# A part of a page htmx asks for once it is scrolled into view (the comparison's tables, say): an element whose
# hx-trigger names "revealed", and its hx-get, in whatever order the attributes come.
REVEALED = re.compile(r"<[^>]*\shx-trigger=\"[^\"]*\brevealed\b[^\"]*\"[^>]*>")
HX_GET = re.compile(r'\shx-get="([^"]+)"')


def deferred_parts(page: str) -> list[str]:
    """The URLs of what ``page`` asks for once scrolled into view; refuses a revealed element without one."""
    urls = []
    for element in REVEALED.findall(page):
        found = HX_GET.search(element)
        if found is None:
            raise RuntimeError(f"a part deferred until revealed that this bench cannot ask for: {element[:200]}")
        urls.append(html.unescape(found[1]))
    if len(urls) != page.count("revealed"):
        raise RuntimeError("the page defers parts this bench does not find: it would leave them out of the figure")
    return urls


@dataclass
class LongPages:
    runs: int
    microbenchmarks: int
    cpu_ms: list[float] = field(default_factory=list)
    wall_ms: list[float] = field(default_factory=list)
    queries: list[int] = field(default_factory=list)
    html: list[int] = field(default_factory=list)
    gzipped: list[int] = field(default_factory=list)
    # What the page defers (its tables, asked for when scrolled into view), asked for right after it.
    deferred_cpu_ms: list[float] = field(default_factory=list)
    deferred_html: list[int] = field(default_factory=list)
    deferred_requests: int = 0
    parts: dict[str, tuple[float, int]] = field(default_factory=dict)  # the last page's parts: (CPU ms, bytes)
    load: float = 0.0


def long_series_pages(client: Any, runs: int, never_asked: int) -> LongPages:
    """A series of ``runs`` versions, imported and refreshed as the worker does; its comparison page asked
    ``never_asked`` times, each with a base no request and no refresh asked for before, the cache cleared."""
    from django.core.cache import cache
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from reports.models import SeriesSummary
    from reports.series import refresh_series
    from runs import synthetic
    from runs.importer import submit_and_import
    from runs.models import Result, Run

    server = "long-series"
    versions = tuple(f"9.{i // 100}.{i % 100}" for i in range(runs))
    spec = synthetic.SeriesSpec(versions=versions, seed=2)
    manifest = {"benchdash.toml": f'server = "{server}"\n'.encode()}
    submit_and_import(synthetic.bundle_bytes(spec, extra_files=manifest), name="long.tgz", source="command")
    in_series = Run.objects.filter(server__name=server).order_by("build__version__sort_key")
    found = list(in_series.values_list("pk", "build__version__text"))
    if [version for _, version in found] != list(versions):
        raise RuntimeError(f"the long series holds {len(found)} runs, not the {runs} versions generated")
    first = in_series.first()
    assert first is not None
    if not SeriesSummary.objects.filter(server__name=server).exists():
        # Without a broker the import refreshes the series at once; refresh it here if it did not.
        refresh_series(first.server_id, first.workload_id)
    microbenchmarks = (
        Result.objects.filter(run=first, microbenchmark__is_warmup=False).values("microbenchmark").distinct().count()
    )
    # Bases spread over the series, never its first or latest run (what a refresh computes ahead), each asked once.
    step = (len(found) - 2) / never_asked
    bases = [found[1 + int(step * index)][0] for index in range(never_asked)]
    assert len(set(bases)) == len(bases)
    pages = LongPages(runs=len(found), microbenchmarks=microbenchmarks)
    for base in bases:
        cache.clear()
        with CaptureQueriesContext(connection) as queries:
            start, start_cpu = time.perf_counter(), time.process_time()
            response = client.get(f"/compare/?base={base}")
            cpu = time.process_time() - start_cpu
            wall = time.perf_counter() - start
        assert response.status_code == 200, response.status_code
        pages.cpu_ms.append(cpu * 1000)
        pages.wall_ms.append(wall * 1000)
        pages.queries.append(len(queries))
        pages.html.append(len(response.content))
        pages.gzipped.append(len(gzip.compress(response.content, compresslevel=6)))
        deferred = deferred_parts(response.content.decode())
        pages.parts = {}
        for url in deferred:
            part_cpu = time.process_time()
            part = client.get(url, HTTP_HX_REQUEST="true")
            assert part.status_code == 200, (url, part.status_code)
            # The part's path and what it shows (its group), without the base, which changes with every page.
            shown = re.sub(r"(^|&)(base|dop)=[^&]*", "", url.split("?", 1)[-1]).strip("&")
            pages.parts[f"{url.split('?')[0]}?{shown}"] = ((time.process_time() - part_cpu) * 1000, len(part.content))
        pages.deferred_cpu_ms.append(sum(cpu for cpu, _ in pages.parts.values()))
        pages.deferred_html.append(sum(size for _, size in pages.parts.values()))
        pages.deferred_requests = len(deferred)
    pages.load = os.getloadavg()[0]
    return pages


if __name__ == "__main__":
    sys.exit(main())
