"""What the worker's refresh of one series stores, as JSON, to check that a change to the refresh changed nothing.

    .venv/bin/python bench/refresh_outputs.py --setup        # (re)create DATABASE_URL's database, import
    .venv/bin/python bench/refresh_outputs.py OUT.json       # refresh the series, write what it stored

The series is ``refresh_bench.py``'s largest (300 runs of 4 DBMSs, server ``refresh-1``), imported through the
command line's path into the database ``DATABASE_URL`` names (``--setup`` drops and creates it: give it a
database of your own). Each run deletes the series' records, shared points, summaries and matrix, clears the
cache and detection's memos, refreshes it as the worker does after an import and writes every regression record,
summary and shared points row with what names other rows replaced by what identifies them (a shared points row by
its digest, a linked story by its subject, kind, metric, arrival and view), without ids and times, and the series'
matrix (the SHA-256 of its arrays for them). Run it with the code before and after a change, against the same
database, and compare the two files (``cmp``): identical files mean identical records, summaries and matrix.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from import_bench import configure_environment  # noqa: E402
from refresh_bench import series_bundles  # noqa: E402

RUNS, DBMS_COUNT, INDEX = 300, 4, 1


def recreate_database(url: str) -> None:
    import psycopg

    server, name = url.rsplit("/", 1)
    with psycopg.connect(f"{server}/postgres", autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}"')
        connection.execute(f'CREATE DATABASE "{name}"')


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", nargs="?", type=Path, help="the JSON file to write")
    parser.add_argument("--setup", action="store_true", help="recreate the database and import the series")
    args = parser.parse_args()
    if not args.setup and args.out is None:
        parser.error("give --setup or a file to write")
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith("postgres"):
        sys.exit("DATABASE_URL must name a PostgreSQL database of your own")

    with tempfile.TemporaryDirectory(prefix="refresh-outputs-") as tmp:
        configure_environment("env", Path(tmp))
        if args.setup:
            recreate_database(url)
        import django

        django.setup()
        from django.core.management import call_command

        from runs.models import Run

        if args.setup:
            call_command("migrate", verbosity=0, interactive=False)
            for n, data in enumerate(series_bundles(RUNS, DBMS_COUNT, INDEX)):
                path = Path(tmp) / f"series-{n}.tar.gz"
                path.write_bytes(data)
                call_command("import_bundle", str(path), stdout=io.StringIO())
            print(f"{Run.objects.count()} runs imported")
        if args.out is not None:
            stored = refreshed()
            args.out.write_text(json.dumps(stored, sort_keys=True, default=str, indent=0))
            print(
                f"{len(stored['regressions'])} records, {len(stored['summaries'])} summaries, "
                f"{len(stored['shared_points'])} shared points rows, {len(stored['matrix'])} matrix: {args.out}"
            )
    return 0


def refreshed() -> dict[str, list[dict[str, Any]]]:
    """Refresh the series from nothing stored and return what was stored, as plain values."""
    from django.core.cache import cache
    from django.forms.models import model_to_dict

    from regressions import changepoints, stories
    from regressions.models import Regression, SharedPoints
    from reports.models import SeriesMatrix, SeriesSummary
    from reports.series import refresh_series
    from runs.models import Run

    run = Run.objects.filter(server__name=f"refresh-{INDEX}").values("server_id", "workload_id").first()
    if run is None:
        sys.exit("no series: run with --setup first")
    where = {"server_id": run["server_id"], "workload_id": run["workload_id"]}
    Regression.objects.filter(**where).delete()
    SharedPoints.objects.filter(**where).delete()
    SeriesSummary.objects.filter(**where).delete()
    SeriesMatrix.objects.filter(**where).delete()
    cache.clear()
    for memo in (getattr(stories, "_levels", None), getattr(changepoints, "_least_squares_breaks", None)):
        getattr(memo, "cache_clear", lambda: None)()
    refresh_series(run["server_id"], run["workload_id"])

    def plain(obj: Any) -> dict[str, Any]:
        return {k: v for k, v in sorted(model_to_dict(obj).items()) if k != "id" and not k.endswith("_at")}

    records = list(Regression.objects.filter(**where))
    identity = {r.pk: [r.subject, r.kind, r.metric, r.arrived_in_id, r.releases] for r in records}
    digest = dict(SharedPoints.objects.filter(**where).values_list("pk", "digest"))
    out = []
    for record in records:
        values = plain(record)
        for link in ("folded_into", "superseded_by"):
            if values.get(link) is not None:
                values[link] = identity.get(values[link], values[link])
        if values.get("shared_points") is not None:
            values["shared_points"] = digest[values["shared_points"]]
        out.append(values)
    return {
        "regressions": sorted(out, key=lambda v: json.dumps(v, sort_keys=True, default=str)),
        "summaries": [plain(s) for s in SeriesSummary.objects.filter(**where).order_by("dbms_id")],
        "shared_points": [plain(p) for p in SharedPoints.objects.filter(**where).order_by("digest")],
        "matrix": [
            {**plain(m), "arrays": hashlib.sha256(bytes(m.arrays)).hexdigest()}
            for m in SeriesMatrix.objects.filter(**where)
        ],
    }


if __name__ == "__main__":
    raise SystemExit(main())
