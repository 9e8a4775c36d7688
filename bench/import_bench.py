"""Import benchmark: how long the real corpus bundles take to import, end to end.

    .venv/bin/python bench/import_bench.py [--db sqlite|env] [--repeat N]

Each real Postgres tarball of the corpus goes through ``submit_and_import`` (the
command line's path: store, parse, write runs and results, one transaction) N
times; the bundle is deleted between repetitions so every repetition imports
for real instead of answering "already imported". The mysql-small directory is
timed too, archived first like ``manage.py import_bundle DIR`` does.

``--db sqlite`` (default) uses a throwaway SQLite file in a temporary directory.
``--db env`` uses the server of ``DATABASE_URL``: it creates a database named
``benchdash_bench`` there, migrates it and drops it at the end; the database the
URL names is never touched. See bench/README.md.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# The corpus sits beside the repository (as for the tests' ``corpus`` fixture).
DEFAULT_CORPUS = REPO.parent / "shared" / "corpus"
BENCH_DB_NAME = "benchdash_bench"
# The target: one real ~4 MB tarball (~40 tests) imports in under this many seconds.
TARGET_SECONDS = 2.0


@dataclass
class Measurement:
    name: str
    size_bytes: int
    members: int
    files_read: int
    runs: int
    results: int
    seconds: list[float] = field(default_factory=list)
    prepare_seconds: float | None = None  # archiving a directory before import, when there is one

    @property
    def best(self) -> float:
        return min(self.seconds)

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--db",
        choices=("sqlite", "env"),
        default="sqlite",
        help="sqlite: a throwaway SQLite file; env: a fresh database on the DATABASE_URL server",
    )
    parser.add_argument("--repeat", type=int, default=3, help="imports per bundle (default 3)")
    parser.add_argument(
        "--corpus", type=Path, default=DEFAULT_CORPUS, help="the shared corpus (default: beside the repository)"
    )
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    return args


def configure_environment(db: str, var_dir: Path) -> None:
    """Environment for benchdash.settings; must run before django.setup()."""
    sys.path.insert(0, str(REPO))
    os.environ["DJANGO_SETTINGS_MODULE"] = "benchdash.settings"
    os.environ["BENCHDASH_VAR_DIR"] = str(var_dir)
    # DEBUG keeps every SQL statement in connection.queries; production does not, so neither do we.
    os.environ.setdefault("DEBUG", "false")
    # Without a broker Celery stays eager; the benchmark never queues anything anyway.
    os.environ.pop("REDIS_URL", None)
    if db == "sqlite":
        # A DATABASE_URL left in the shell would otherwise win over the throwaway SQLite file.
        os.environ.pop("DATABASE_URL", None)
    elif not os.environ.get("DATABASE_URL"):
        sys.exit("--db env needs DATABASE_URL, e.g. postgres://postgres@127.0.0.1:5432/benchdash")


@contextmanager
def bench_database(db: str, name: str = BENCH_DB_NAME) -> Iterator[str]:
    """Point the default connection at a fresh, migrated database (``name`` on a server); yields a description."""
    from django.conf import settings
    from django.core.management import call_command
    from django.db import connection

    if db == "sqlite":
        call_command("migrate", verbosity=0, interactive=False)
        yield "SQLite (throwaway file in a temporary directory)"
        connection.close()
        return

    if connection.vendor == "sqlite":
        sys.exit("--db env expects a server database in DATABASE_URL; for SQLite use --db sqlite")
    quoted = connection.ops.quote_name(name)
    # The no-database cursor is what Django's own test runner uses to create its test database:
    # it connects to the server's maintenance database, not the one DATABASE_URL names.
    with connection._nodb_cursor() as cursor:
        # A run killed before its cleanup leaves the database behind; start from nothing again.
        cursor.execute(f"DROP DATABASE IF EXISTS {quoted}")
        cursor.execute(f"CREATE DATABASE {quoted}")
    settings.DATABASES["default"]["NAME"] = name
    connection.settings_dict["NAME"] = name
    connection.close()
    try:
        call_command("migrate", verbosity=0, interactive=False)
        version = connection.cursor().connection.info.server_version if connection.vendor == "postgresql" else ""
        label = f"PostgreSQL {version // 10000}.{version % 10000}" if version else connection.vendor
        yield f"{label} (database {name}, dropped at the end)"
    finally:
        connection.close()
        with connection._nodb_cursor() as cursor:
            cursor.execute(f"DROP DATABASE IF EXISTS {quoted}")


def archive_facts(data: bytes, name: str) -> tuple[int, int]:
    """(archive members, files the importer reads), outside the timed part."""
    from runs.bundle import read_bundle
    from runs.parse import bundle_limits, wanted

    contents = read_bundle(data, name=name, limits=bundle_limits(), wanted=wanted)
    return contents.members, sum(len(run.files) for run in contents.runs)


def measure(data: bytes, name: str, repeat: int) -> Measurement:
    """Import ``data`` ``repeat`` times, removing what each import created before the next."""
    from runs.importer import submit_and_import
    from runs.models import Bundle

    members, files_read = archive_facts(data, name)
    measurement = Measurement(name, len(data), members, files_read, runs=0, results=0)
    for _ in range(repeat):
        start = time.perf_counter()
        report = submit_and_import(data, name=name, source=Bundle.Source.COMMAND)
        measurement.seconds.append(time.perf_counter() - start)
        # A report of nothing new would time a hash lookup, not an import: refuse to print it.
        if report.already_imported or any(run.skipped for run in report.runs):
            raise SystemExit(f"{name}: the import found existing rows; the measurement would be meaningless")
        measurement.runs = len(report.runs)
        measurement.results = sum(run.results for run in report.runs)
        # Cascades to the stored bytes, the runs, their results and files. Shared rows (DBMS,
        # version, build, server, microbenchmarks) stay, as they would for a second upload.
        Bundle.objects.filter(pk=report.bundle_id).delete()
    return measurement


def peak_rss_mb() -> float:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    # Linux reports KiB, macOS bytes.
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def render_table(rows: list[Measurement]) -> str:
    columns: list[tuple[str, Callable[[Measurement], str]]] = [
        ("bundle", lambda m: m.name),
        ("MB", lambda m: f"{m.size_bytes / 1e6:.2f}"),
        ("members", lambda m: str(m.members)),
        ("files read", lambda m: str(m.files_read)),
        ("runs", lambda m: str(m.runs)),
        ("results", lambda m: str(m.results)),
        ("min s", lambda m: f"{m.best:.3f}"),
        ("median s", lambda m: f"{m.median:.3f}"),
        ("files/s", lambda m: f"{m.files_read / m.median:.0f}"),
        ("results/s", lambda m: f"{m.results / m.median:.0f}"),
        ("MB/s", lambda m: f"{m.size_bytes / 1e6 / m.median:.2f}"),
    ]
    cells = [[title for title, _ in columns]] + [[cell(m) for _, cell in columns] for m in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(columns))]
    lines = []
    for n, row in enumerate(cells):
        # The bundle name reads best left-aligned, numbers right-aligned.
        pairs = enumerate(zip(row, widths, strict=True))
        lines.append("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in pairs))
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    corpus = args.corpus.resolve()
    tarballs = sorted((corpus / "sysbench-pg-tarballs").glob("*.tar.gz"))
    small = corpus / "sysbench-mysql-small"
    if not tarballs or not small.is_dir():
        print(
            f"The corpus is not where expected: need {corpus}/sysbench-pg-tarballs/*.tar.gz and "
            f"{corpus}/sysbench-mysql-small/. Put the shared corpus beside the repository or pass --corpus.",
            file=sys.stderr,
        )
        return 2

    with tempfile.TemporaryDirectory(prefix="benchdash-bench-") as var_dir:
        configure_environment(args.db, Path(var_dir))
        import django

        django.setup()
        from runs.importer import archive_directory

        with bench_database(args.db) as described:
            rows = [measure(path.read_bytes(), path.name, args.repeat) for path in tarballs]
            start = time.perf_counter()
            small_data = archive_directory(small)
            archive_seconds = time.perf_counter() - start
            small_row = measure(small_data, f"{small.name}/ (directory)", args.repeat)
            small_row.prepare_seconds = archive_seconds

    print(f"Import benchmark: {described}; {args.repeat} import(s) per bundle; Python {sys.version.split()[0]}")
    print(render_table([*rows, small_row]))
    print(f"{small_row.name}: archive_directory took {archive_seconds:.3f} s before the import (not in the table)")
    print(f"peak RSS of the process: {peak_rss_mb():.0f} MB")
    slow = [m for m in rows if m.median >= TARGET_SECONDS]
    verdict = "met" if not slow else "MISSED by " + ", ".join(f"{m.name} ({m.median:.2f} s)" for m in slow)
    print(f"target (each ~4 MB Postgres tarball in under {TARGET_SECONDS:g} s, median): {verdict}")
    return 1 if slow else 0


if __name__ == "__main__":
    sys.exit(main())
