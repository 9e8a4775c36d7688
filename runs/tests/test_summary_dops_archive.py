"""An archive of summary tables only, one folder per client count, imported as published and reproduced.

``sysbench-summary-dops`` holds seven folders (``dop1`` … ``dop40``), each with
the author's ``qps.abs.in`` and ``qps.rel.in`` tables (tsv and csv) and a bare
``o.met``; the same six run names appear in every folder. Imported through the
command, the upload page or the API, every one of its 35 tables comes back byte
for byte, each run carries its table, and a name that means seven runs is
resolved by ``--dop`` or refused with its candidates — never a silent pick.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.test import Client

from reports.compare import ComparisonSpec, compute_comparison
from runs.importer import archive_directory, submit_and_import
from runs.models import Bundle, Result, Run

pytestmark = pytest.mark.django_db

BASE = "x.my5651_rel_o2nofp.z11a_c32r128.pk1"
DOPS = (1, 4, 6, 8, 10, 20, 40)
TABLES = [(dop, kind, ext) for dop in DOPS for kind in ("abs", "rel") for ext in ("tsv", "csv")]


def _archive(corpus: Path) -> Path:
    return corpus / "sysbench-summary-dops"


def _import(corpus: Path) -> Any:
    return submit_and_import(
        archive_directory(_archive(corpus)), name="sysbench-summary-dops.tar.gz", source=Bundle.Source.COMMAND
    )


def _compare(*args: str) -> str:
    out = io.StringIO()
    call_command("compare", *args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def _export(dop: int, kind: str, ext: str) -> str:
    return _compare("--base", BASE, "--dop", str(dop), "--format", ext, *(["--absolute"] if kind == "abs" else []))


def _cells(text: str) -> int:
    """Numeric cells of a table (what "cells reproduced" counts): QPS, ratios, metrics."""
    count = 0
    for line in text.splitlines():
        for cell in line.replace(",", "\t").split("\t"):
            try:
                float(cell)
            except ValueError:
                continue
            count += 1
    return count


def _assert_every_table_reproduced(corpus: Path) -> int:
    cells = 0
    for dop, kind, ext in TABLES:
        theirs = (_archive(corpus) / f"dop{dop}" / f"qps.{kind}.in.{ext}").read_text()
        assert _export(dop, kind, ext) == theirs, f"dop{dop}/qps.{kind}.in.{ext}"
        cells += _cells(theirs)
    for dop in DOPS:
        theirs = (_archive(corpus) / f"dop{dop}" / "o.met").read_text()
        assert _compare("--base", BASE, "--dop", str(dop), "--metrics") == theirs, f"dop{dop}/o.met"
        cells += _cells(theirs)
    return cells


def test_the_command_import_reproduces_all_35_tables_byte_for_byte(corpus: Path) -> None:
    _import(corpus)
    assert Run.objects.count() == 42 and Run.objects.filter(from_summary=True).count() == 42
    cells = _assert_every_table_reproduced(corpus)
    # Every number of the 35 tables: 4,158 QPS and relative QPS cells (7 × (2 × 162 + 2 × 135)), 12,012 o.met cells.
    assert cells == 16170


def test_each_run_carries_its_tables_identity_and_concurrency(corpus: Path) -> None:
    _import(corpus)
    runs = Run.objects.filter(name=BASE)
    assert sorted(runs.values_list("summary_table", flat=True)) == sorted(f"in.dop{dop}" for dop in DOPS)
    for run in runs:
        dops = set(run.results.exclude(extra__has_key="qps_from").values_list("dop", flat=True))
        assert {f"in.dop{dop}" for dop in dops} == {run.summary_table}
        assert run.summary_sources["concurrency"].startswith("from the o.met blocks whose o/s is the table's QPS")


def test_a_name_of_seven_runs_is_refused_with_the_candidates_unless_the_dop_names_one(corpus: Path) -> None:
    _import(corpus)
    with pytest.raises(CommandError) as refused:
        _compare("--base", BASE)
    message = str(refused.value)
    assert "names runs of 7 summary tables" in message
    assert all(f"in.dop{dop} (run " in message for dop in DOPS)
    assert "--dop N" in message
    with pytest.raises(CommandError, match=r"no run named .* in a table of --dop 2"):
        _compare("--base", BASE, "--dop", "2")
    # The variant names the table too (its whole identity, or one of its words).
    assert _compare("--base", BASE, "--variant", "in.dop8") == _export(8, "rel", "tsv")


def test_runs_of_different_tables_are_never_averaged_as_repeats(corpus: Path) -> None:
    _import(corpus)
    base = Run.objects.get(name=BASE, summary_table="in.dop8")
    comparison = compute_comparison(ComparisonSpec(base_run_id=base.pk))
    # The default series of a summary run is its table: six columns of one run each, at the table's concurrency.
    assert [c.repeats for c in comparison.columns] == [1] * 6
    assert {c.summary_table for c in comparison.columns} == {"in.dop8"}
    assert comparison.dop == 8
    assert comparison.qps[comparison.base]["point-query_range=100"] == 225420


def test_runs_named_beside_the_base_come_from_the_bases_table(corpus: Path) -> None:
    _import(corpus)
    out = _compare("--base", BASE, "--dop", "20", "--runs", "x.my8041_rel_o2nofp.z11a_c32r128.pk1")
    theirs = (_archive(corpus) / "dop20" / "qps.rel.in.tsv").read_text().splitlines()
    ours = out.splitlines()
    assert ours[1] == "col-1 : x.my8041_rel_o2nofp.z11a_c32r128.pk1"
    # The last column of the author's table is 8.0.41's.
    assert [line.split("\t")[0] for line in ours[4:]] == [line.split("\t")[4] for line in theirs[8:]]


def test_the_import_report_lists_what_it_read_of_each_file_and_what_not(corpus: Path) -> None:
    report = _import(corpus)
    read = {item["path"].partition("/")[2]: item["what"] for item in report.read}
    assert read["dop8/qps.abs.in.tsv"] == "QPS of 6 runs × 27 microbenchmarks at concurrency 8"
    assert read["dop8/qps.abs.in.csv"].startswith("the same QPS as sysbench-summary-dops/dop8/qps.abs.in.tsv")
    assert read["dop8/o.met"].startswith("HW metrics: 30 blocks, 27 of the QPS table's results, 3 of tests")
    # The truncated o.met of dop4: the load and scan, nothing dropped silently.
    assert read["dop4/o.met"].startswith("HW metrics: 2 blocks, 1 of the QPS table's results, 1 of tests")
    not_read = {item["path"].partition("/")[2]: item["reason"] for item in report.ignored}
    assert set(not_read) == {f"dop{dop}/qps.rel.in.{ext}" for dop in DOPS for ext in ("tsv", "csv")}
    assert all(reason.startswith("the author's relative table: derived") for reason in not_read.values())
    out = io.StringIO()
    call_command("import_bundle", str(_archive(corpus)), stdout=out, stderr=io.StringIO())
    assert "already imported" in out.getvalue()


def test_the_o_met_load_and_pre_blocks_are_kept_as_results(corpus: Path) -> None:
    _import(corpus)
    base = Run.objects.get(name=BASE, summary_table="in.dop1")
    kept = {
        (r.microbenchmark.test, r.dop): (r.qps, r.cpu_o)
        for r in Result.objects.filter(run=base, extra__has_key="qps_from").select_related("microbenchmark")
    }
    assert kept == {
        ("load", 1): (121951, 0.00002),
        ("point-query.pre", 1): (32679, 0.000069),
        ("range-notcovered-si.pre", 1): (3173, 0.000615),
    }


@pytest.mark.django_db(transaction=True)
def test_the_upload_page_and_the_api_import_the_archive_as_published_and_reproduce_it(
    corpus: Path, client: Client, user_with_role: Callable[..., Any], django_capture_on_commit_callbacks: Any
) -> None:
    client.force_login(user_with_role("uploader"))
    data = archive_directory(_archive(corpus))
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/upload/", {"bundle": SimpleUploadedFile("dops.tar.gz", data)})
    assert response.status_code == 302, response.content
    page = client.get(response["Location"]).content.decode()
    assert "35 files read" not in page and "21 files read, and what of each" in page
    assert Run.objects.count() == 42
    _assert_every_table_reproduced(corpus)
    Bundle.objects.all().delete()
    api = client.post("/api/bundles/", {"file": SimpleUploadedFile("dops-api.tar.gz", data)})
    assert api.status_code == 201, api.content
    assert len(api.json()["runs"]) == 42 and len(api.json()["read"]) == 21
    _assert_every_table_reproduced(corpus)
    rel = client.get("/api/compare", {"base": BASE, "dop": 10, "format": "tsv"})
    assert rel.status_code == 200 and rel.content.decode() == (_archive(corpus) / "dop10/qps.rel.in.tsv").read_text()
    refused = client.get("/api/compare", {"base": BASE})
    assert refused.status_code == 400 and "names runs of 7 summary tables" in refused.json()["detail"]
