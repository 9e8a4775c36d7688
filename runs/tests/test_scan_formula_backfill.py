"""Runs imported before benchdash recorded the scan formula: migration 0015 decides what their stored results
decide and marks the rest "unknown", which the run page says; ``fill_scan_formula`` reads their stored archives
again to decide those (and the start their samples record)."""

from __future__ import annotations

import importlib
import io
from datetime import timedelta
from pathlib import Path
from types import SimpleNamespace

import pytest
from django.apps import apps
from django.core.management import call_command
from django.db import connection
from django.db.migrations.recorder import MigrationRecorder
from django.test import Client

from reports.compare import ComparisonSpec, compute_comparison
from runs.importer import archive_directory, submit_and_import
from runs.models import Bundle, BundleChunk, Run
from suites.sysbench import parse as sysbench

pytestmark = pytest.mark.django_db

PG1122 = "x.pg1122_o2nofp.x10a_wm1_c32r128.pk1"
PG174 = "x.pg174_o2nofp.x10a_wm1_c32r128.pk1"
MY5651 = "x.my5651_rel_o2nofp.z12a_c8r32.pk1"

backfill = importlib.import_module("runs.migrations.0015_run_scan_formula_of_runs_imported_before_it")


def _import_pg(corpus: Path, run: str) -> Run:
    data = (corpus / "sysbench-pg-tarballs" / f"{run}.tar.gz").read_bytes()
    submit_and_import(data, name=f"{run}.tar.gz", source=Bundle.Source.COMMAND, overrides={"server": "pg-48"})
    return Run.objects.get(name=run)


def _as_imported_before_the_formula_was_recorded(*runs: Run) -> None:
    """What an import before 0011 left: no formula, a start from the oldest file's time, created back then."""
    applied = MigrationRecorder.Migration.objects.get(app="runs", name="0011_run_scan_formula").applied
    Run.objects.filter(pk__in=[r.pk for r in runs]).update(
        scan_formula="", started_from=Run.StartedFrom.FILE_TIME, created_at=applied - timedelta(days=30)
    )


def _migrate_forward() -> None:
    backfill.decide_or_mark_unknown(apps, SimpleNamespace(connection=connection))


def test_the_migration_decides_one_client_scans_and_marks_several_client_scans_unknown(corpus: Path) -> None:
    pg = _import_pg(corpus, PG1122)
    assert pg.scan_formula == sysbench.SCAN_TPS_ROWS  # as an import decides it today
    submit_and_import(
        archive_directory(corpus / "sysbench-mysql-small" / MY5651), name="my.tgz", source=Bundle.Source.COMMAND
    )
    mysql = Run.objects.get(name=MY5651)
    _as_imported_before_the_formula_was_recorded(pg, mysql)
    recent = _import_pg(corpus, PG174)  # imported after: what its import decided stays

    _migrate_forward()
    pg.refresh_from_db()
    mysql.refresh_from_db()
    recent.refresh_from_db()
    # Scan at 40 clients: the two formulas differ and only the archive's sb.r.qps.scan says which was used.
    assert pg.scan_formula == sysbench.SCAN_UNKNOWN
    # Scan at one client only: both formulas give the same number, the spec's.
    assert mysql.scan_formula == sysbench.SCAN_SPEC
    assert recent.scan_formula == sysbench.SCAN_TPS_ROWS


def test_the_run_page_says_unknown_and_how_to_decide_it(corpus: Path, client: Client) -> None:
    pg = _import_pg(corpus, PG1122)
    _as_imported_before_the_formula_was_recorded(pg)
    _migrate_forward()
    page = client.get(pg.get_absolute_url()).content.decode()
    said = page[page.index('id="scan-formula"') :].split("</dd>", 1)[0]
    assert "unknown: imported before benchdash recorded it" in said and "fill_scan_formula" in said


def test_the_command_reads_the_stored_archive_and_decides_formula_and_start(corpus: Path, client: Client) -> None:
    pg = _import_pg(corpus, PG1122)
    decided_start = pg.started_at
    assert pg.started_from == Run.StartedFrom.CONTENT  # its sb.ps samples record the clock
    _as_imported_before_the_formula_was_recorded(pg)
    _migrate_forward()

    dry = io.StringIO()
    call_command("fill_scan_formula", "--dry-run", stdout=dry)
    assert "1 runs would be decided, 0 left undecided" in dry.getvalue()
    assert Run.objects.get(pk=pg.pk).scan_formula == sysbench.SCAN_UNKNOWN

    out = io.StringIO()
    call_command("fill_scan_formula", stdout=out)
    pg.refresh_from_db()
    assert pg.scan_formula == sysbench.SCAN_TPS_ROWS
    assert (pg.started_from, pg.started_at) == (Run.StartedFrom.CONTENT, decided_start)
    assert f"run {pg.pk} {PG1122}: scan_formula {sysbench.SCAN_TPS_ROWS}" in out.getvalue()
    page = client.get(pg.get_absolute_url()).content.decode()
    assert "the scripts&#x27; formula of mid-March to mid-April 2025" in page

    # Decided runs are not read again.
    again = io.StringIO()
    call_command("fill_scan_formula", stdout=again)
    assert "0 runs decided, 0 left undecided" in again.getvalue()


def test_a_run_whose_archive_cannot_be_read_again_stays_unknown(corpus: Path) -> None:
    pg = _import_pg(corpus, PG1122)
    _as_imported_before_the_formula_was_recorded(pg)
    _migrate_forward()
    BundleChunk.objects.filter(bundle_id=pg.bundle_id).update(data=b"not a tarball any more")
    out = io.StringIO()
    call_command("fill_scan_formula", stdout=out)
    assert Run.objects.get(pk=pg.pk).scan_formula == sysbench.SCAN_UNKNOWN
    assert "not readable again" in out.getvalue() and "0 runs decided, 1 left undecided" in out.getvalue()


def test_a_comparison_names_unknown_runs_apart_when_a_series_mixes_eras(corpus: Path) -> None:
    older = _import_pg(corpus, PG1122)  # tps×rows/1000
    unknown = _import_pg(corpus, PG174)
    _as_imported_before_the_formula_was_recorded(unknown)
    _migrate_forward()
    comparison = compute_comparison(ComparisonSpec(base_run_id=older.pk, scan_formula="era"))
    assert comparison.scan_eras == {sysbench.SCAN_TPS_ROWS: [PG1122], sysbench.SCAN_UNKNOWN: [PG174]}
