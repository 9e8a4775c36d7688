"""Refresh benchmark: how long the worker's refresh of one series takes after an import, and its query count.

    .venv/bin/python bench/refresh_bench.py [--db sqlite|env] [--runs 60,150,300] [--repeat 3]

For each size, one synthetic MySQL series of that many versions (``runs.synthetic``,
42 microbenchmarks, planted steps) is imported through the command line's path,
then ``reports.series.refresh_series`` (comparisons, home-page summary, then
regression detection through ``series_refreshed``) is timed with the cache
cleared before each repetition, and its SQL queries are counted. The query count
must not grow with the series; the time target is under a second at 300 runs.

``--db`` is as in ``import_bench.py``: a throwaway SQLite file, or a fresh database
on the ``DATABASE_URL`` server (dropped at the end).
"""

from __future__ import annotations

import argparse
import io
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from import_bench import bench_database, configure_environment  # noqa: E402

TARGET_SECONDS = 1.0
TARGET_RUNS = 300


def series_bundle(runs: int, index: int) -> bytes:
    from runs import synthetic

    spec = synthetic.SeriesSpec(
        dbms_code="my",
        versions=tuple(f"8.{i // 10}.{i % 10}" for i in range(runs)),
        flavour="rel_o2nofp",
        config="z12a_c8r32",
        seed=2000 + index,
        steps=(
            synthetic.Step(runs // 3, "", 0.9),
            synthetic.Step(runs // 2, "update-index", 0.8),
            synthetic.Step(2 * runs // 3, "point", 0.94),
        ),
    )
    manifest = f'server = "refresh-{index}"\n'.encode()
    return synthetic.bundle_bytes(spec, extra_files={"benchdash.toml": manifest})


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", choices=("sqlite", "env"), default="sqlite")
    parser.add_argument("--runs", default="60,150,300", help="series sizes, comma-separated")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    sizes = [int(n) for n in args.runs.split(",")]

    with tempfile.TemporaryDirectory(prefix="refresh-bench-") as tmp:
        configure_environment(args.db, Path(tmp))
        import django

        django.setup()
        from django.core.cache import cache
        from django.core.management import call_command
        from django.db import connection
        from django.test.utils import CaptureQueriesContext

        from reports.series import refresh_series
        from runs.models import Run

        with bench_database(args.db) as description:
            print(f"database: {description}")
            print("| runs | refresh p50 s | best s | queries | target |")
            print("|---:|---:|---:|---:|---|")
            counts = []
            for index, runs in enumerate(sizes):
                path = Path(tmp) / f"series-{runs}.tar.gz"
                path.write_bytes(series_bundle(runs, index))
                call_command("import_bundle", str(path), stdout=io.StringIO())
                run = Run.objects.filter(server__name=f"refresh-{index}").values("server_id", "workload_id").first()
                assert run is not None, "the series did not import"
                seconds = []
                queries = 0
                for _ in range(args.repeat):
                    cache.clear()
                    started = time.perf_counter()
                    with CaptureQueriesContext(connection) as captured:
                        refresh_series(run["server_id"], run["workload_id"])
                    seconds.append(time.perf_counter() - started)
                    queries = len(captured.captured_queries)
                counts.append(queries)
                p50 = statistics.median(seconds)
                verdict = ""
                if runs >= TARGET_RUNS:
                    verdict = f"< {TARGET_SECONDS} s: " + ("met" if p50 < TARGET_SECONDS else "MISSED")
                print(f"| {runs} | {p50:.2f} | {min(seconds):.2f} | {queries} | {verdict} |")
            # Detection writes a story or two more or fewer per series: the count may move by that, never grow.
            constant = max(counts) <= counts[0]
            print(f"query count does not grow with the series: {'yes' if constant else 'NO (MISSED)'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
