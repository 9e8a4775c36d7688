"""``manage.py import_bundle PATH [PATH ...]``: archives or result directories."""

from __future__ import annotations

import contextlib
import io
import os
from collections import Counter, deque
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import DatabaseError, InterfaceError, OperationalError

from runs.attach import attach_run, attachable
from runs.models import Build, Bundle, Config, Result, Run, Version
from runs.signals import announce_import

# Up to this many files read and not read, the command lists each on a line at the default verbosity.
FILES_LISTED = 40

# The importer (with the archive readers, the parsers and psycopg) is imported when a bundle is read, not
# when the command starts: ``--help`` and a mistyped option answer without it.
# So are the worker processes' pool and its pipes (several bundles only).
if TYPE_CHECKING:
    from concurrent.futures import Future

    from runs.importer import ImportFailed, ImportReport, PreParsed

    _Read = tuple[bytes | IO[bytes], str, PreParsed | None] | ImportFailed
    # What a worker sends back: the bytes of an archived directory (None for a file, which this process reads
    # again: cheaper than the bytes through a pipe), the bundle's name, and the parse (None if it does not parse).
    _Parsed = tuple[bytes | None, str, PreParsed | None] | ImportFailed


class Command(BaseCommand):
    # No system checks: they load the URL configuration and with it every view module, which costs an
    # import (run by scripts, often many at once) time and ~100 MB, and checks nothing the import needs.
    requires_system_checks: list[str] = []
    help = (
        "Import sysbench result bundles (.tar, .tar.gz/.tgz, .tar.zst, .tar.bz2, .tar.xz, .zip) or result "
        "directories. Prints one line per run; exits non-zero, writing nothing, when a bundle is bad."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("paths", nargs="+", type=Path, help="bundle archives or directories")
        parser.add_argument("--server", help="server name for every run (else the manifest's, else derived)")
        parser.add_argument("--workload", help="workload label for every run (else derived from the commands)")
        parser.add_argument(
            "--attach-existing",
            action="store_true",
            help="runs whose results were already imported for another server or workload are added to this "
            "series too (as attach_existing = true in the manifest does), instead of being skipped",
        )
        parser.add_argument(
            "--jobs",
            type=int,
            default=min(os.cpu_count() or 1, 4),
            help="processes that read and parse the next bundles while one is written to the database "
            "(default: one per CPU, at most 4; 1 reads each bundle when its turn comes)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        from runs.archive_store import give_back_space
        from runs.bulk import analyze_if_grown
        from runs.importer import ImportFailed, StorageFull, submit_and_import

        # A false attach_existing is left out, so a manifest's own attach_existing = true still applies.
        overrides = {
            "server": options["server"],
            "workload": options["workload"],
            "attach_existing": options["attach_existing"] or None,
        }
        failures = added_runs = added_results = 0
        for path, read in _read_ahead(options["paths"], overrides, max(1, options["jobs"])):
            try:
                if isinstance(read, ImportFailed):
                    raise read
                data, name, pre_parsed = read
                # An archive file stays on disk: it is hashed and stored a chunk at a time, never read whole.
                with data if isinstance(data, io.IOBase) else contextlib.nullcontext():
                    report = submit_and_import(
                        data, name=name, source=Bundle.Source.COMMAND, overrides=overrides, pre_parsed=pre_parsed
                    )
            except StorageFull as exc:
                # Rolled back; its chunks' pages are handed back now that no transaction is open. The next
                # bundles would find the disk as full: they are not tried.
                give_back_space()
                self.stderr.write(f"error: {exc}")
                raise CommandError(
                    f"the server's bundle storage is full: {path.name} and the bundles after it were not imported"
                ) from exc
            except ImportFailed as exc:
                failures += 1
                self.stderr.write(f"error: {exc}")
                continue
            except (OperationalError, InterfaceError):
                raise  # the database is unreachable: no use trying the other bundles
            except DatabaseError as exc:
                # A value the database refuses (too long, a NUL byte on PostgreSQL): the transaction rolled back.
                failures += 1
                detail = (str(exc).strip().splitlines() or [""])[0]
                self.stderr.write(f"error: {path.name}: the database refused a value ({detail}); nothing was written")
                continue
            if report.already_imported:
                when = f" on {report.imported_at:%Y-%m-%d %H:%M} UTC" if report.imported_at else ""
                self.stdout.write(f"{name}: already imported{when} as bundle {report.bundle_id}, nothing new")
                if options["attach_existing"]:
                    self._attach_skipped(report.bundle_id)
                continue
            if report.nothing_new:
                self.stdout.write(
                    f"{name}: bundle {report.bundle_id}: all {len(report.runs)} runs were imported before, "
                    "from other bundles; nothing new"
                )
                self._write_runs(report)
                continue
            # Comparisons, home-page summaries and regressions of the touched series: a worker's job.
            announce_import(report.bundle_id)
            added_runs += sum(1 for run in report.runs if not run.skipped)
            added_results += sum(run.results for run in report.runs)
            self.stdout.write(f"{name}: bundle {report.bundle_id}, {len(report.runs)} runs")
            self._write_runs(report)
            self._write_files(report, options["verbosity"])
        # Planner statistics of the tables a big import grew, so pages plan their queries for the new size. A run
        # adds at most one build, version and config, and a series' pages join them to its runs: without their
        # statistics the planner takes each for one row and picks a nested loop per version.
        grown = {Build: added_runs, Version: added_runs, Config: added_runs}
        analyze_if_grown({Run: added_runs, Result: added_results, **grown})
        if failures:
            raise CommandError(f"{failures} of {len(options['paths'])} bundles failed; nothing was written for them")

    def _write_runs(self, report: ImportReport) -> None:
        """Each run of an imported bundle on a line, then the import's warnings."""
        for run in report.runs:
            self.stdout.write(f"  {run.line()}")
        for warning in report.warnings:
            self.stdout.write(f"  warning: {warning}")

    def _write_files(self, report: ImportReport, verbosity: int) -> None:
        """What the import read of each file, and the files it did not read and why: each file on a line when the
        lists are short or with ``--verbosity 2``; otherwise the counts, and the files not read counted by reason
        (a run-directory archive has a thousand of them; the bundle's page lists every one)."""
        listed = len(report.read) + len(report.ignored)
        if verbosity >= 2 or listed <= FILES_LISTED:
            self._list_files(report)
            return
        if report.read:
            self.stdout.write(f"  {len(report.read)} files read (--verbosity 2 lists each with what it became)")
        if report.ignored_files:
            self.stdout.write(f"  {report.ignored_files} files not read, by reason (--verbosity 2 lists each):")
            for reason, count in Counter(item["reason"] for item in report.ignored).most_common():
                self.stdout.write(f"    {count} × {reason}")
            if report.ignored_files > len(report.ignored):
                self.stdout.write(f"    {report.ignored_files - len(report.ignored)} more, beyond the list kept")

    def _list_files(self, report: ImportReport) -> None:
        if report.read:
            self.stdout.write(f"  {len(report.read)} files read:")
            for item in report.read:
                self.stdout.write(f"    {item['path']}: {item['what']}")
        if report.ignored_files:
            self.stdout.write(f"  {report.ignored_files} files not read:")
            for item in report.ignored:
                self.stdout.write(f"    {item['path']}: {item['reason']}")
            if report.ignored_files > len(report.ignored):
                self.stdout.write(f"    … and {report.ignored_files - len(report.ignored)} more")

    def _attach_skipped(self, bundle_id: int) -> None:
        """These bytes were imported before without attaching: their runs held under another series are
        attached now, as the bundle's page would."""
        bundle = Bundle.objects.get(pk=bundle_id)
        for holder_id, entry in attachable(bundle).items():
            run, created = attach_run(bundle, holder_id)
            where = f"server {run.server.name}, workload {run.workload.name}"
            done = "attached" if created else "was attached before"
            self.stdout.write(f"  {entry.name}: {done} to the series {where} as run {run.pk}")


def _read_and_parse(path: Path, overrides: Mapping[str, Any]) -> _Parsed:
    """Runs in a worker process: read and parse a bundle; no database."""
    from runs.importer import ImportFailed, pre_parse

    try:
        data, name = read_source(path)
    except ImportFailed as exc:
        return exc
    # A directory's archive comes back whole: archiving it again here would cost about as much as the parse.
    if isinstance(data, bytes):
        return data, name, pre_parse(data, name=name, overrides=overrides)
    with data:
        return None, name, pre_parse(data, name=name, overrides=overrides)


def _read_ahead(paths: list[Path], overrides: Mapping[str, Any], jobs: int) -> Iterator[tuple[Path, _Read]]:
    """Each path with its bytes and parse, in order; with several bundles, parsed by ``jobs`` processes ahead.

    The database work stays in this process, one bundle at a time; the workers
    only read and parse (pure code), at most ``jobs`` + 1 bundles ahead, so
    memory stays bounded however many bundles are given.
    """
    if jobs == 1 or len(paths) == 1:
        for path in paths:
            yield path, _read(path, None)
        return
    # Forked workers inherit this process's database connection but never use it: they run only the pure
    # parse, and multiprocessing ends them with os._exit, so it is not even closed (which would end the
    # session for this process too). Closing it here instead would break a caller's open transaction.
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("fork")) as pool:
        pending: deque[tuple[Path, Future[_Parsed]]] = deque()
        todo = iter(paths)
        for path in todo:
            pending.append((path, pool.submit(_read_and_parse, path, overrides)))
            if len(pending) > jobs:
                break
        while pending:
            path, future = pending.popleft()
            for more in todo:
                pending.append((more, pool.submit(_read_and_parse, more, overrides)))
                break
            yield path, _read(path, future.result())


def _read(path: Path, parsed: _Parsed | None) -> _Read:
    """The bundle (a directory's archive as bytes, or the open file) and its name, with the worker's parse when
    there is one.

    A file is opened here: its bytes are what import_bundle checks the parse
    against (by their hash), so a file changed in between is simply parsed again.
    """
    from runs.importer import ImportFailed

    if isinstance(parsed, ImportFailed):
        return parsed
    archived, name, pre_parsed = parsed if parsed is not None else (None, "", None)
    if archived is not None:
        return archived, name, pre_parsed
    try:
        data, name = read_source(path)
    except ImportFailed as exc:
        return exc
    return data, name, pre_parsed


def read_source(path: Path) -> tuple[bytes | IO[bytes], str]:
    """The archive (an open file, or a directory's archive as bytes) and its display name, of a path given on
    the command line; the caller closes the file."""
    from runs.bundle import archive_directory
    from runs.importer import ImportFailed

    if path.is_dir():
        return archive_directory(path), path.resolve().name + ".tar.gz"
    if not path.exists():
        raise ImportFailed(f"{path}: no such file or directory")
    size = path.stat().st_size
    if size > settings.BUNDLE_MAX_BYTES:
        raise ImportFailed(f"{path.name}: {size} bytes is over the bundle limit of {settings.BUNDLE_MAX_BYTES}")
    return path.open("rb"), path.name
