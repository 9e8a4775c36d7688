"""``manage.py import_bundle PATH [PATH ...]``: archives or result directories."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import DatabaseError, InterfaceError, OperationalError

from runs.importer import ImportFailed, read_source, submit_and_import
from runs.models import Bundle
from runs.tasks import refresh_after_import


class Command(BaseCommand):
    # No system checks: they load the URL configuration and with it every view and plotly, which costs an
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

    def handle(self, *args: Any, **options: Any) -> None:
        overrides = {"server": options["server"], "workload": options["workload"]}
        failures = 0
        for path in options["paths"]:
            try:
                data, name = read_source(path)
                report = submit_and_import(data, name=name, source=Bundle.Source.COMMAND, overrides=overrides)
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
                self.stdout.write(f"{name}: already imported (bundle {report.bundle_id}), nothing new")
                continue
            # Comparisons, home-page summaries and regressions of the touched series: a worker's job.
            refresh_after_import(report.bundle_id)
            self.stdout.write(f"{name}: bundle {report.bundle_id}, {len(report.runs)} runs")
            for run in report.runs:
                self.stdout.write(f"  {run.line()}")
            for warning in report.warnings:
                self.stdout.write(f"  warning: {warning}")
            if report.ignored_files:
                self.stdout.write(f"  {report.ignored_files} files not read (raw samples, logs, unknown files)")
        if failures:
            raise CommandError(f"{failures} of {len(options['paths'])} bundles failed; nothing was written for them")
