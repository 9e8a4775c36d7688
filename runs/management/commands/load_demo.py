"""``manage.py load_demo``: the real corpus when it sits beside the project, else a generated archive."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser

from runs import synthetic
from runs.importer import ImportFailed, archive_directory, submit_and_import
from runs.models import Bundle

# (corpus path, server name, how to read it)
CORPUS_BUNDLES = (
    ("sysbench-mysql-small", "8-core server", "directory"),
    ("sysbench-pg-tarballs/x.pg1023_o2nofp.x10a_wm1_c32r128.pk1.tar.gz", "48-core server", "file"),
    ("sysbench-pg-tarballs/x.pg1122_o2nofp.x10a_wm1_c32r128.pk1.tar.gz", "48-core server", "file"),
    ("sysbench-pg-tarballs/x.pg174_o2nofp.x10a_wm1_c32r128.pk1.tar.gz", "48-core server", "file"),
)


class Command(BaseCommand):
    help = "Load the demo data: the real result corpus if present, otherwise a generated realistic archive."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--corpus", type=Path, default=settings.DEMO_CORPUS_DIR)
        parser.add_argument("--synthetic", action="store_true", help="use the generator even if the corpus exists")

    def handle(self, *args: Any, **options: Any) -> None:
        corpus: Path = options["corpus"]
        if corpus.is_dir() and not options["synthetic"]:
            self.stdout.write(f"loading the real corpus from {corpus}")
            for relative, server, kind in CORPUS_BUNDLES:
                path = corpus / relative
                if not path.exists():
                    self.stdout.write(f"  {relative}: not there, skipped")
                    continue
                data = archive_directory(path) if kind == "directory" else path.read_bytes()
                self._import(data, path.name + (".tar.gz" if kind == "directory" else ""), server)
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

    def _import(self, data: bytes, name: str, server: str) -> None:
        try:
            report = submit_and_import(data, name=name, source=Bundle.Source.COMMAND, overrides={"server": server})
        except ImportFailed as exc:
            self.stderr.write(f"  {name}: {exc}")
            raise
        if report.already_imported:
            self.stdout.write(f"  {name}: already imported")
        else:
            total = sum(r.results for r in report.runs)
            self.stdout.write(f"  {name}: {len(report.runs)} runs, {total} results")
