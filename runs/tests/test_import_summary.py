"""Importing the summary tables the scripts print (qps.abs.*, o.met.*) as runs, alone or beside run directories."""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import pytest
from django.core.management import call_command
from django.test import Client

from runs.importer import ImportFailed, archive_directory, submit_and_import
from runs.models import Bundle, Result, Run
from runs.parse import parse_bundle

pytestmark = pytest.mark.django_db

BASE = "x.my5651_rel_o2nofp.z12a_c8r32.pk1"
SUMMARY_FILES = ("qps.abs.all.tsv", "qps.abs.all.csv", "o.met.all")
MANIFEST = 'server = "c8r32 test server"\nworkload = "sysbench 8 tables × 10M rows"\n'


def _summaries_only(corpus: Path, into: Path, *, files: tuple[str, ...] = SUMMARY_FILES, manifest: bool = True) -> Path:
    """A bundle folder holding only the author's summary tables of sysbench-mysql-small (copied into a tmp dir)."""
    into.mkdir()
    for name in files:
        shutil.copyfile(corpus / "sysbench-mysql-small" / name, into / name)
    if manifest:
        (into / "benchdash.toml").write_text(MANIFEST)
    return into


def _run_dirs(corpus: Path, into: Path, names: list[str]) -> Path:
    into.mkdir()
    for name in names:
        shutil.copytree(corpus / "sysbench-mysql-small" / name, into / name)
    (into / "benchdash.toml").write_text(MANIFEST)
    return into


def _import(folder: Path, name: str) -> object:
    return submit_and_import(archive_directory(folder), name=name, source=Bundle.Source.COMMAND)


def _compare(*args: str) -> str:
    out = io.StringIO()
    call_command("compare", *args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def _rows(text: str) -> list[list[str]]:
    lines = text.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("col-1\t"))
    return [line.split("\t") for line in lines[header + 1 :] if line]


def test_each_column_of_the_summary_becomes_a_run_marked_from_a_summary(corpus: Path, tmp_path: Path) -> None:
    report = _import(_summaries_only(corpus, tmp_path / "b"), "summaries.tar.gz")
    runs = Run.objects.order_by("build__version__sort_key")
    assert runs.count() == 8
    assert all(run.from_summary for run in runs)
    base = runs.get(name=BASE)
    assert (base.build.version.dbms.name, base.build.version.text, base.config.name) == (
        "MySQL",
        "5.6.51",
        "z12a_c8r32",
    )
    assert base.server.name == "c8r32 test server" and base.workload.name == "sysbench 8 tables × 10M rows"
    assert base.workload.suite == "sysbench" and base.path == "b/qps.abs.all.tsv"
    # 33 rows of the QPS table, and 5 o.met blocks of tests the table leaves out (the load, two .pre tests, a point
    # warm-up, scan.warmpre), kept with their o/s as QPS.
    from_table = base.results.exclude(extra__has_key="qps_from")
    assert from_table.count() == 33
    kept = base.results.filter(extra__has_key="qps_from").values_list("microbenchmark__test", flat=True)
    assert sorted(kept) == [
        "load",
        "point-query.pre",
        "points-covered-si.warm",
        "range-notcovered-si.pre",
        "scan.warmpre",
    ]
    point = Result.objects.get(run=base, microbenchmark__test="point-query", microbenchmark__range_size=100)
    # QPS from the table, HW metrics from the o.met block of sb.met.point-query.range100.pk1.dop1.
    assert (point.qps, point.dop, point.cpu_o, point.cs_o, point.o_s) == (24515, 1, 0.000516, 3.825, 24515)
    assert not any("not a result" in w for w in report.warnings)


def test_importing_only_the_summaries_reproduces_the_authors_relative_table_cell_for_cell(
    corpus: Path, tmp_path: Path
) -> None:
    _import(_summaries_only(corpus, tmp_path / "b"), "summaries.tar.gz")
    ours = _compare("--base", BASE, "--format", "tsv")
    theirs = (corpus / "sysbench-mysql-small" / "qps.rel.all.tsv").read_text()
    assert _rows(ours) == _rows(theirs)
    assert len(_rows(theirs)) == 33
    assert ours == theirs  # byte for byte, the col-<n> lines too


def test_a_csv_table_takes_its_run_names_from_the_o_met_beside_it(corpus: Path, tmp_path: Path) -> None:
    _import(_summaries_only(corpus, tmp_path / "b", files=("qps.abs.all.csv", "o.met.all")), "csv.tar.gz")
    assert Run.objects.filter(from_summary=True).count() == 8
    assert (
        _compare("--base", BASE, "--format", "tsv") == (corpus / "sysbench-mysql-small" / "qps.rel.all.tsv").read_text()
    )


def test_a_csv_table_without_run_names_beside_it_is_refused_naming_the_file(corpus: Path, tmp_path: Path) -> None:
    folder = _summaries_only(corpus, tmp_path / "b", files=("qps.abs.all.csv",))
    with pytest.raises(ImportFailed, match=r"qps\.abs\.all\.csv: line 1: a csv table does not name its runs"):
        _import(folder, "csv-alone.tar.gz")
    assert not Run.objects.exists() and not Bundle.objects.exists()


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (
            lambda text: text.replace("16798", "16,798"),
            r"qps\.abs\.all\.tsv: line 12: the QPS of x\.my8044\S* is '16,798'",
        ),
        (
            lambda text: text.replace("\t2999\thot-points", "\thot-points"),
            r"qps\.abs\.all\.tsv: line 11: 7 values for 8 runs",
        ),
        (lambda text: text.replace("hot-points_range=100", "hot-points"), r"line 11: 'hot-points' is not a test label"),
        (lambda text: text.replace("col-3 : x.my8043", "col-3 : mysql8043"), r"line 3: 'mysql8043\S*' is not a run"),
    ],
)
def test_a_bad_summary_is_refused_with_its_file_and_line_and_nothing_is_stored(
    corpus: Path, tmp_path: Path, damage, message: str
) -> None:
    folder = _summaries_only(corpus, tmp_path / "b", files=("qps.abs.all.tsv",))
    table = folder / "qps.abs.all.tsv"
    table.write_text(damage(table.read_text()))
    with pytest.raises(ImportFailed, match=message):
        _import(folder, "bad.tar.gz")
    assert not Run.objects.exists() and not Result.objects.exists() and not Bundle.objects.exists()


def test_a_damaged_o_met_block_is_refused_with_its_line(corpus: Path, tmp_path: Path) -> None:
    folder = _summaries_only(corpus, tmp_path / "b", files=("qps.abs.all.tsv", "o.met.all"))
    met = folder / "o.met.all"
    met.write_text(met.read_text().replace("0.000510\t3.825", "0.000510\tlots", 1))
    with pytest.raises(ImportFailed, match=r"o\.met\.all: line 24: cs/o of x\.my5651\S* is 'lots'"):
        _import(folder, "bad-met.tar.gz")
    assert not Run.objects.exists()


def test_summary_copies_of_the_run_directories_in_the_same_bundle_are_skipped_and_said(
    corpus: Path, tmp_path: Path
) -> None:
    folder = _run_dirs(corpus, tmp_path / "b", [BASE, "x.my9500_rel_o2nofp.z12a_c8r32.pk1"])
    for name in SUMMARY_FILES:
        shutil.copyfile(corpus / "sysbench-mysql-small" / name, folder / name)
    report = _import(folder, "both.tar.gz")
    assert Run.objects.filter(from_summary=False).count() == 2
    summary_runs = Run.objects.filter(from_summary=True)
    assert summary_runs.count() == 6  # the other six columns
    # The tables were printed from these directories: their summary runs take the directories' workload.
    assert {run.workload.name for run in Run.objects.all()} == {"sysbench 8 tables × 10M rows"}
    skipped = [w for w in report.warnings if "the summary's copy skipped" in w]
    assert len(skipped) == 2 and any(w.startswith(BASE) for w in skipped)
    assert Run.objects.get(name=BASE).results.filter(lat_avg_ms__isnull=False).exists()


def test_a_summary_arriving_after_the_run_directory_is_skipped_and_listed(corpus: Path, tmp_path: Path) -> None:
    _import(_run_dirs(corpus, tmp_path / "raw", [BASE]), "raw.tar.gz")
    raw = Run.objects.get(name=BASE)
    report = _import(_summaries_only(corpus, tmp_path / "sum"), "summaries.tar.gz")
    assert Run.objects.filter(name=BASE).get() == raw and not raw.from_summary
    assert Run.objects.filter(from_summary=True).count() == 7
    assert f"{BASE}: already imported from its run directory as run {raw.pk}" in " ".join(report.warnings)
    bundle = Bundle.objects.get(original_name="summaries.tar.gz")
    assert bundle.stats["skipped_runs"][0]["id"] == raw.pk


def test_a_run_directory_arriving_after_its_summary_replaces_the_summary_run(corpus: Path, tmp_path: Path) -> None:
    from reports.models import Report

    _import(_summaries_only(corpus, tmp_path / "sum"), "summaries.tar.gz")
    copy = Run.objects.get(name=BASE)
    saved = Report.objects.create(name="from the tables", slug="from-the-tables", base_run=copy)
    saved.runs.set(Run.objects.filter(name__in=[BASE, "x.my9500_rel_o2nofp.z12a_c8r32.pk1"]))

    report = _import(_run_dirs(corpus, tmp_path / "raw", [BASE]), "raw.tar.gz")
    raw = Run.objects.get(name=BASE)
    assert not raw.from_summary and raw.pk != copy.pk
    assert not Run.objects.filter(pk=copy.pk).exists()
    assert not Result.objects.filter(run_id=copy.pk).exists()
    saved.refresh_from_db()
    assert saved.base_run_id == raw.pk  # what pointed at the copy now points at the directory's run
    assert set(saved.runs.values_list("name", "from_summary")) == {
        (BASE, False),
        ("x.my9500_rel_o2nofp.z12a_c8r32.pk1", True),
    }
    assert f"{BASE}: replaces run {copy.pk} imported from a summary" in " ".join(report.warnings)
    # The series still compares: seven summary runs against the directory's base, the author's numbers.
    ours = _rows(_compare("--base", BASE, "--format", "tsv"))
    theirs = _rows((corpus / "sysbench-mysql-small" / "qps.rel.all.tsv").read_text())
    assert sum(a == b for a, b in zip(ours, theirs, strict=True)) >= 30


def test_the_same_summary_twice_is_one_set_of_runs(corpus: Path, tmp_path: Path) -> None:
    _import(_summaries_only(corpus, tmp_path / "a"), "a.tar.gz")
    folder = _summaries_only(corpus, tmp_path / "b", files=("qps.abs.all.tsv",))
    report = _import(folder, "b.tar.gz")
    assert Run.objects.count() == 8
    assert report.nothing_new


def test_run_and_bundle_pages_say_from_a_summary(corpus: Path, tmp_path: Path, client: Client) -> None:
    _import(_summaries_only(corpus, tmp_path / "b"), "summaries.tar.gz")
    run = Run.objects.get(name=BASE)
    page = client.get(run.get_absolute_url()).content.decode()
    assert "From a summary" in page and "qps.abs.all.tsv" in page
    bundle = client.get(run.bundle.get_absolute_url()).content.decode()
    assert bundle.count("from a summary") >= 8


def test_parsing_a_summary_needs_no_database(corpus: Path, tmp_path: Path) -> None:
    parsed = parse_bundle(archive_directory(_summaries_only(corpus, tmp_path / "b")), name="s.tar.gz")
    assert [run.from_summary for run in parsed.runs] == [True] * 8
    assert {run.suite for run in parsed.runs} == {"sysbench"}


def test_the_whole_corpus_folder_keeps_its_nine_directories_and_skips_the_eight_summary_copies(corpus: Path) -> None:
    report = _import(corpus / "sysbench-mysql-small", "small.tar.gz")
    assert Run.objects.count() == 9 and not Run.objects.filter(from_summary=True).exists()
    skipped = [w for w in report.warnings if "the summary's copy skipped" in w]
    assert len(skipped) == 8
    # The tables' runs took the directories' server: nothing says a summary run has no server.
    assert not any("unknown server" in w for w in report.warnings)


@pytest.mark.django_db(transaction=True)
def test_the_upload_api_imports_summaries_and_refuses_a_bad_one_with_its_line(
    corpus: Path, tmp_path: Path, client: Client, user_with_role
) -> None:
    from django.core.files.uploadedfile import SimpleUploadedFile

    client.force_login(user_with_role("uploader"))
    folder = _summaries_only(corpus, tmp_path / "b", files=("qps.abs.all.tsv", "o.met.all"), manifest=False)
    fields = {"server": "api server", "workload": "sysbench 8 tables × 10M rows"}
    response = client.post(
        "/api/bundles/", {"file": SimpleUploadedFile("t.tar.gz", archive_directory(folder)), **fields}
    )
    assert response.status_code == 201, response.content
    assert len(response.json()["runs"]) == 8 and response.json()["runs"][0]["name"] == BASE
    assert Run.objects.filter(from_summary=True, server__name="api server").count() == 8

    table = folder / "qps.abs.all.tsv"
    table.write_text(table.read_text().replace("\t2999\thot-points", "\thot-points"))
    bad = client.post("/api/bundles/", {"file": SimpleUploadedFile("bad.tar.gz", archive_directory(folder))})
    assert bad.status_code == 422, bad.content
    assert "b/qps.abs.all.tsv: line 11: 7 values for 8 runs" in bad.json()["error"]
    assert Run.objects.count() == 8


def test_a_missing_cell_is_a_missing_result_never_a_zero(corpus: Path, tmp_path: Path) -> None:
    folder = _summaries_only(corpus, tmp_path / "b", files=("qps.abs.all.tsv",))
    table = folder / "qps.abs.all.tsv"
    table.write_text(table.read_text().replace("\t16798\t", "\tNA\t", 1))
    _import(folder, "na.tar.gz")
    run = Run.objects.get(name="x.my8044_rel_o2nofp.z12a_c8r32.pk1")
    assert run.results.count() == 32
    assert not run.results.filter(microbenchmark__test="point-query").exists()
    assert not Result.objects.filter(qps=0).exists()


def test_a_csv_that_disagrees_with_its_tsv_is_refused(corpus: Path, tmp_path: Path) -> None:
    folder = _summaries_only(corpus, tmp_path / "b", files=("qps.abs.all.tsv", "qps.abs.all.csv"))
    csv = folder / "qps.abs.all.csv"
    csv.write_text(csv.read_text().replace(",16798,", ",16799,", 1))
    with pytest.raises(ImportFailed, match=r"b/qps\.abs\.all\.csv: its QPS differ from b/qps\.abs\.all\.tsv's"):
        _import(folder, "disagree.tar.gz")
    assert not Run.objects.exists()


def test_a_summary_of_another_server_is_not_a_copy_of_the_run_directory(corpus: Path, tmp_path: Path) -> None:
    _import(_run_dirs(corpus, tmp_path / "raw", [BASE]), "raw.tar.gz")
    folder = _summaries_only(corpus, tmp_path / "sum", manifest=False)
    (folder / "benchdash.toml").write_text('server = "another server"\nworkload = "sysbench 8 tables × 10M rows"\n')
    _import(folder, "other.tar.gz")
    assert Run.objects.filter(name=BASE).count() == 2
    assert Run.objects.get(name=BASE, from_summary=True).server.name == "another server"


def test_a_copy_of_unknown_workload_replaced_leaves_its_series_refreshed_without_it(
    corpus: Path, tmp_path: Path, django_capture_on_commit_callbacks
) -> None:
    from reports.models import SeriesSummary
    from runs.signals import announce_import

    folder = _summaries_only(corpus, tmp_path / "sum", manifest=False)
    (folder / "benchdash.toml").write_text('server = "c8r32 test server"\n')  # and no workload
    with django_capture_on_commit_callbacks(execute=True):
        announce_import(_import(folder, "sum.tar.gz").bundle_id)
    copy = Run.objects.get(name=BASE)
    assert copy.workload.name == "sysbench (parameters unknown)"
    assert SeriesSummary.objects.get(workload=copy.workload).base_run_id == copy.pk

    with django_capture_on_commit_callbacks(execute=True):
        report = _import(_run_dirs(corpus, tmp_path / "raw", [BASE]), "raw.tar.gz")
    raw = Run.objects.get(name=BASE)
    assert not raw.from_summary and raw.workload.name == "sysbench 8 tables × 10M rows"
    assert "replaces run" in " ".join(report.warnings)
    # The tables' series now starts at MySQL 5.7.44, its oldest remaining run.
    left = SeriesSummary.objects.get(workload=copy.workload)
    assert left.base_run.name == "x.my5744_rel_o2nofp.z12a_c8r32.pk1" and left.runs == 7
