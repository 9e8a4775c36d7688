"""The drill-down of one microbenchmark over a long series, from scratch: read as its series' refresh stored it
against computed in the request, interleaved in one process, CPU time per request.

Both are "from scratch" as the peer benches mean it: the cache keeps nothing (``computing_settings``). One side
reads what the refresh computed ahead (``reports.drilldowns``), the other is made to compute the comparison, its
table rows and its charts in the request, as the page did before they were computed ahead. The page must be
the same on both sides (the CSRF token aside): the bench stops if it is not.

    export DATABASE_URL=postgres://postgres@127.0.0.1:5432/bd_drilldown REDIS_URL=redis://127.0.0.1:6379/8
    .venv/bin/python bench/drilldown_bench.py --versions 200 --requests 30

The database DATABASE_URL names is used as it is when it holds the bench's series (server ``dd<versions>``),
else the series is generated (42 microbenchmarks, unambiguous version names), imported and refreshed first.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bench.computing_settings")
os.environ.setdefault("BENCHDASH_PUBLIC_BROWSING", "true")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--versions", type=int, default=200)
    parser.add_argument("--requests", type=int, default=30, help="per side, after 3 warm-up requests each")
    args = parser.parse_args()

    import django

    django.setup()
    from django.core.management import call_command
    from django.test import Client

    from reports import drilldowns
    from reports.series import refresh_series
    from runs import synthetic
    from runs.importer import submit_and_import
    from runs.models import Result, Run

    call_command("migrate", verbosity=0)
    server = f"dd{args.versions}"
    if not Run.objects.filter(server__name=server).exists():
        versions = tuple(f"9.{i // 100}.{i % 100}" for i in range(args.versions))
        data = synthetic.bundle_bytes(
            synthetic.SeriesSpec(versions=versions, seed=args.versions + 7),
            extra_files={"benchdash.toml": f'server = "{server}"\n'.encode()},
        )
        submit_and_import(data, name=f"{server}.tar.gz", source="command")
        run = Run.objects.filter(server__name=server).first()
        if run is None:
            sys.exit(f"the generated series imported no run (runs of the same results are imported once): {server}")
        refresh_series(run.server_id, run.workload_id)
    base = Run.objects.filter(server__name=server).order_by("build__version__sort_key").first()
    assert base is not None
    mb = Result.objects.filter(run=base, microbenchmark__test="point-query").values_list("microbenchmark_id")[0][0]
    url = f"/microbenchmarks/{mb}/?base={base.pk}"
    stored = drilldowns.stored

    def computed(*_args: object, **_kwargs: object) -> None:
        return None

    def page(read_stored: bool) -> tuple[float, str]:
        drilldowns.stored = stored if read_stored else computed  # type: ignore[assignment]
        client = Client()
        started = time.thread_time()
        response = client.get(url)
        spent = time.thread_time() - started
        assert response.status_code == 200, response.status_code
        return spent * 1000, re.sub(r'"X-CSRFToken": "[^"]*"', "", response.content.decode())

    sides = {True: [], False: []}  # type: dict[bool, list[float]]
    pages = {}
    for side in (True, False) * 3:
        pages[side] = page(side)[1]
    if pages[True] != pages[False]:
        sys.exit("the page read stored differs from the page computed in the request")
    for _ in range(args.requests):
        for side in (True, False):
            sides[side].append(page(side)[0])
    load = "load {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())
    size = len(pages[True].encode())
    for side, name in ((False, "computed in the request"), (True, "read as the refresh stored it")):
        found = sides[side]
        print(
            f"{name}: CPU ms p50 {statistics.median(found):.1f}, min {min(found):.1f} "
            f"({args.requests} requests, {args.versions} versions, HTML {size / 1024:.0f} KB; {load})"
        )
    print(f"ratio stored / computed: {statistics.median(sides[True]) / statistics.median(sides[False]):.2f}")


if __name__ == "__main__":
    main()
