"""``manage.py load_demo``: the real corpus when it sits beside the project, else a generated archive.

Outside production it also (re)creates the ``demo`` user with the admin role and a
fresh random password, printed on the console: the demo needs no set-up, yet
uploads, triage and runs still go through the same role checks as in production.
"""

from __future__ import annotations

import secrets
from collections import Counter
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand, CommandParser

from accounts.permissions import ADMIN
from runs import synthetic
from runs.importer import ImportFailed, archive_directory, submit_and_import
from runs.models import Bundle
from runs.signals import announce_import

DEMO_USER = "demo"

# (corpus path, server name, the bundle's name: a directory is tarred up under it, a file keeps its own)
CORPUS_BUNDLES = (
    ("sysbench-mysql-small", "8-core server", "sysbench-mysql-5.6-to-9.5.tar.gz"),
    ("sysbench-pg-tarballs/x.pg1023_o2nofp.x10a_wm1_c32r128.pk1.tar.gz", "48-core server", ""),
    ("sysbench-pg-tarballs/x.pg1122_o2nofp.x10a_wm1_c32r128.pk1.tar.gz", "48-core server", ""),
    ("sysbench-pg-tarballs/x.pg174_o2nofp.x10a_wm1_c32r128.pk1.tar.gz", "48-core server", ""),
    # The Insert Benchmark (2021, MySQL and Postgres) and RocksDB db_bench (Dec 2025, 8-core, three workloads).
    ("ibench-2021", "ibench 2021 server", "insert-benchmark-2021.tar.gz"),
    ("dbbench/arc/dec25.dbb.clang/8core", "8-core RocksDB server", "rocksdb-db_bench-dec2025-8core.tar.gz"),
)


def counted(n: int, noun: str) -> str:
    """A count with its noun: 1 run, 2 runs, 1,234 results."""
    return f"{n:,} {noun}" + ("" if n == 1 else "s")


class Command(BaseCommand):
    help = "Load the demo data: the real result corpus if present, otherwise a generated realistic archive."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--corpus", type=Path, default=settings.DEMO_CORPUS_DIR)
        parser.add_argument("--synthetic", action="store_true", help="use the generator even if the corpus exists")
        parser.add_argument("--no-demo-user", action="store_true", help="do not create or reset the demo user")

    def handle(self, *args: Any, **options: Any) -> None:
        corpus: Path = options["corpus"]
        self.loaded: Counter[str] = Counter()
        if corpus.is_dir() and not options["synthetic"]:
            self.stdout.write(f"loading the real corpus from {corpus}")
            for relative, server, name in CORPUS_BUNDLES:
                path = corpus / relative
                if not path.exists():
                    self.stdout.write(f"  {relative}: not there, skipped")
                    continue
                data = archive_directory(path) if path.is_dir() else path.read_bytes()
                self._import(data, name or path.name, server)
        else:
            self.stdout.write("no corpus beside the project: generating a realistic demo archive")
            mysql = synthetic.SeriesSpec()
            self._import(synthetic.bundle_bytes(mysql), "generated-mysql-series.tar.gz", "generated 8-core server")
            maria = synthetic.SeriesSpec(
                dbms_code="ma",
                versions=("10.2.44", "10.3.39", "10.4.34", "10.5.27", "10.6.20", "10.11.10", "11.4.4"),
                config="cz11b_c24r64",
                cpus=24,
                dops=(1, 16),
                seed=7,
            )
            self._import(synthetic.bundle_bytes(maria), "generated-mariadb-series.tar.gz", "generated 24-core server")
        self.stdout.write(
            f"loaded {counted(self.loaded['runs'], 'run')} and {counted(self.loaded['results'], 'result')} "
            f"({counted(self.loaded['bundles'], 'new bundle')}, {self.loaded['known']:,} already there)"
        )
        # Last, so the login is the final line before the server starts.
        if not options["no_demo_user"]:
            self._demo_user()

    def _demo_user(self) -> None:
        if settings.PRODUCTION:
            # A known account with a password on the console has no place on a real site.
            self.stdout.write("production: no demo user created (use `manage.py create_admin`)")
            return
        password = secrets.token_urlsafe(12)
        user, created = get_user_model().objects.get_or_create(username=DEMO_USER, defaults={"is_staff": True})
        user.is_staff = user.is_active = True
        user.set_password(password)
        user.save()
        user.groups.add(Group.objects.get(name=ADMIN))
        what = "created" if created else "password reset"
        # Set apart by a blank line: it is the one line of the output a first-time user must find.
        self.stdout.write(f"\ndemo login ({what}): user {DEMO_USER!r}, password {password!r} (admin role)\n")

    def _import(self, data: bytes, name: str, server: str) -> None:
        try:
            report = submit_and_import(data, name=name, source=Bundle.Source.COMMAND, overrides={"server": server})
        except ImportFailed as exc:
            self.stderr.write(f"  {name}: {exc}")
            raise
        if report.already_imported:
            self.loaded["known"] += 1
            self.stdout.write(f"  {name}: already imported")
            return
        announce_import(report.bundle_id)
        total = sum(r.results for r in report.runs)
        self.loaded.update(bundles=1, runs=len(report.runs), results=total)
        self.stdout.write(f"  {name}: {counted(len(report.runs), 'run')}, {counted(total, 'result')}")
