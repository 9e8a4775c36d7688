"""Importing real bundles end to end: the command, idempotency, atomicity, bad input."""

from __future__ import annotations

import tarfile
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from runs import importer, submit
from runs.importer import ImportFailed, archive_directory, submit_and_import
from runs.models import Bundle, Microbenchmark, Result, Run, RunFile, Server, Version
from runs.tests.hostile import tgz_of_files

pytestmark = pytest.mark.django_db

PG_TARBALLS = "sysbench-pg-tarballs"


def _small_run(corpus: Path, run: str, tests: tuple[str, ...] = ("point-query", "insert")) -> dict[str, bytes]:
    """A few real files of one mysql-small run, as archive members."""
    files = {}
    for test in tests:
        for kind in ("o", "met"):
            path = corpus / "sysbench-mysql-small" / run / f"sb.{kind}.{test}.range100.pk1.dop1"
            files[f"{run}/{path.name}"] = path.read_bytes()
    return files


def test_a_real_postgres_tarball_imports_with_all_its_tests(corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tarball = corpus / PG_TARBALLS / "x.pg174_o2nofp.x10a_wm1_c32r128.pk1.tar.gz"
    with tarfile.open(tarball) as tar:
        expected_tests = {
            m.name.rsplit("/", 1)[-1].split(".pk1.dop")[0]
            for m in tar
            if m.name.rsplit("/", 1)[-1].startswith("sb.o.") and ".dop" in m.name
        }
    call_command("import_bundle", str(tarball), "--server", "pg-48")
    out = capsys.readouterr().out
    assert "x.pg174_o2nofp.x10a_wm1_c32r128.pk1: Postgres 17.4 on pg-48" in out

    run = Run.objects.select_related("build__version__dbms", "server", "workload", "config").get()
    assert run.build.version.dbms.name == "Postgres" and run.build.version.text == "17.4"
    assert run.build.flavour == "o2nofp" and run.config.name == "x10a_wm1_c32r128"
    assert run.cpus == 48 and run.server.name == "pg-48"
    assert run.workload.params["tables"] == 8 and run.workload.params["table_size"] == 10_000_000
    assert run.load_inserts_per_s == 134228
    assert "shared_buffers = 96GB" in run.config.text
    # One result per sb.o file, plus the load step.
    assert Result.objects.filter(run=run).exclude(microbenchmark__test="load").count() == len(expected_tests) == 39
    point = Result.objects.get(run=run, microbenchmark__test="point-query", microbenchmark__range_size=100)
    assert point.dop == 40 and point.qps == pytest.approx(1028663.08) and point.cpu_o == pytest.approx(0.000079)
    assert point.cs_o == pytest.approx(2.431) and point.lat_pct_ms == pytest.approx(0.05)
    warm = Result.objects.get(run=run, microbenchmark__test="point-query.warm")
    assert warm.dop == 8 and warm.microbenchmark.is_warmup
    kinds = set(RunFile.objects.filter(run=run).values_list("kind", flat=True))
    assert {"config", "pg_settings", "hugepages"} <= kinds
    assert "--pgsql-password=***" in run.commands["point-query_range=100"]


def test_the_mysql_directories_import_and_match_the_reference_qps(corpus: Path) -> None:
    small = corpus / "sysbench-mysql-small"
    report = submit_and_import(archive_directory(small), name="small.tar.gz", source=Bundle.Source.COMMAND)
    assert len(report.runs) == 9
    lines = (small / "qps.abs.all.tsv").read_text().splitlines()
    columns = [line.split(" : ")[1] for line in lines if line.startswith("col-") and " : " in line]
    qps = {
        (run, m.label): q
        for run, m, q in (
            (r.run.name, r.microbenchmark, r.qps) for r in Result.objects.select_related("run", "microbenchmark")
        )
    }
    for line in lines:
        if "\t" not in line or line.startswith("col-1\t"):
            continue
        *values, label = line.split("\t")
        for run, expected in zip(columns, values, strict=True):
            assert round(qps[(run, label)]) == int(expected), (run, label)


def test_metrics_equal_the_absolute_blocks_of_the_reference_o_met_all(corpus: Path) -> None:
    small = corpus / "sysbench-mysql-small"
    submit_and_import(archive_directory(small), name="small.tar.gz", source=Bundle.Source.COMMAND)
    results = {
        (r.run.name, f"sb.met.{r.microbenchmark.test}.range{r.microbenchmark.range_size}.pk1.dop{r.dop}"): r
        for r in Result.objects.select_related("run", "microbenchmark")
    }
    block = None
    checked = 0
    for line in (small / "o.met.all").read_text().splitlines():
        if line.startswith("sb."):
            block, mode = line, None
        elif line.startswith("--- "):
            mode = line
        elif mode == "--- absolute" and line and not line.startswith("cpu/o"):
            fields = line.split("\t")
            if block is None or block.startswith("sb.prepare"):
                continue  # the load's metrics: not in this directory (checked on the pg tarballs: test_load_step.py)
            result = results[(fields[-1], block)]
            cpu_o, cs_o, r_o, rkb_o, wkb_o, o_s = (float(v) for v in fields[:6])
            assert result.cpu_o == pytest.approx(cpu_o, abs=5e-7)
            assert result.cs_o == pytest.approx(cs_o, abs=5e-4)
            assert result.r_o == pytest.approx(r_o, abs=5e-4)
            assert result.rkb_o == pytest.approx(rkb_o, abs=5e-4)
            assert result.wkb_o == pytest.approx(wkb_o, abs=5e-4)
            assert result.o_s == pytest.approx(o_s, abs=0.5)
            checked += 1
    assert checked == 37 * 8


def test_importing_the_same_bundle_twice_creates_nothing_new(corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tarball = corpus / PG_TARBALLS / "x.pg1023_o2nofp.x10a_wm1_c32r128.pk1.tar.gz"
    call_command("import_bundle", str(tarball))
    counts = (Bundle.objects.count(), Run.objects.count(), Result.objects.count(), Microbenchmark.objects.count())
    capsys.readouterr()
    call_command("import_bundle", str(tarball))
    assert "already imported" in capsys.readouterr().out
    assert (
        Bundle.objects.count(),
        Run.objects.count(),
        Result.objects.count(),
        Microbenchmark.objects.count(),
    ) == counts


def test_a_run_already_imported_from_another_bundle_is_skipped(corpus: Path) -> None:
    run = "x.my8044_rel_o2nofp.z12a_c8r32.pk1"
    files = _small_run(corpus, run)
    first = submit_and_import(tgz_of_files(files), name="a.tgz", source=Bundle.Source.COMMAND)
    again = submit_and_import(
        tgz_of_files({f"nested/{k}": v for k, v in files.items()}), name="b.tgz", source="command"
    )
    assert not first.runs[0].skipped
    assert again.runs[0].skipped and "already imported" in again.runs[0].line()
    assert Run.objects.count() == 1 and Result.objects.count() == 2


def test_a_failure_part_way_leaves_no_rows(corpus: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    files = {
        **_small_run(corpus, "x.my5651_rel_o2nofp.z12a_c8r32.pk1"),
        **_small_run(corpus, "x.my5744_rel_o2nofp.z12a_c8r32.pk1"),
    }
    real_insert_rows = importer.insert_rows
    calls = []

    def failing_insert_rows(model: type, fields: Any, rows: Any) -> int:
        # Runs, servers and builds are written by now, and the first insert (the results) too.
        calls.append(model)
        if len(calls) == 2:
            raise ImportFailed("injected failure while storing the run files")
        return real_insert_rows(model, fields, rows)

    monkeypatch.setattr(importer, "insert_rows", failing_insert_rows)
    with pytest.raises(ImportFailed, match="injected"):
        submit_and_import(tgz_of_files(files), name="two-runs.tgz", source=Bundle.Source.COMMAND)
    assert calls == [Result, RunFile]
    assert (Bundle.objects.count(), Run.objects.count(), Result.objects.count(), Server.objects.count()) == (0, 0, 0, 0)


def test_an_upload_that_fails_is_kept_as_failed_with_its_error_and_no_runs(
    corpus: Path, django_capture_on_commit_callbacks: Any
) -> None:
    files = _small_run(corpus, "x.my5651_rel_o2nofp.z12a_c8r32.pk1")
    files["x.my5651_rel_o2nofp.z12a_c8r32.pk1/sb.o.update-one.range100.pk1.dop1"] = b"sysbench 1.1\nKilled\n"
    with django_capture_on_commit_callbacks(execute=True):
        bundle = submit.submit_bundle(tgz_of_files(files), name="broken.tgz", source=Bundle.Source.UPLOAD).bundle
    bundle.refresh_from_db()
    assert bundle.status == Bundle.Status.FAILED
    assert "sb.o.update-one.range100.pk1.dop1" in bundle.error and "queries" in bundle.error
    assert Run.objects.count() == 0 and Result.objects.count() == 0


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"just some text, not an archive\n" * 10, "not a"),
        (b"", "not a"),
        (tgz_of_files({}), "no run directories"),
        (tgz_of_files({"notes/readme.txt": b"hello"}), "no run directories"),
    ],
    ids=["text", "empty-file", "empty-archive", "no-run-dir"],
)
def test_bad_archives_are_refused_by_the_command_and_nothing_is_written(
    tmp_path: Path, content: bytes, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "bundle.tar.gz"
    path.write_bytes(content)
    with pytest.raises(CommandError, match="nothing was written"):
        call_command("import_bundle", str(path))
    assert message in capsys.readouterr().err
    assert Bundle.objects.count() == 0


def test_a_truncated_gzip_is_refused(corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = (corpus / PG_TARBALLS / "x.pg174_o2nofp.x10a_wm1_c32r128.pk1.tar.gz").read_bytes()
    path = tmp_path / "cut.tar.gz"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(CommandError):
        call_command("import_bundle", str(path))
    err = capsys.readouterr().err
    assert "truncated" in err or "corrupt" in err
    assert Bundle.objects.count() == 0 and Run.objects.count() == 0


def test_an_output_without_queries_line_names_the_file(corpus: Path, tmp_path: Path) -> None:
    files = _small_run(corpus, "x.my5651_rel_o2nofp.z12a_c8r32.pk1")
    files["x.my5651_rel_o2nofp.z12a_c8r32.pk1/sb.o.delete.range100.pk1.dop1"] = b"cmd\n8 CPUs\nFATAL: oops\n"
    with pytest.raises(ImportFailed, match=r"sb\.o\.delete\.range100\.pk1\.dop1.*queries"):
        submit_and_import(tgz_of_files(files), name="x.tgz", source=Bundle.Source.COMMAND)
    assert Run.objects.count() == 0


def test_a_run_dir_with_no_result_file_is_an_error_naming_it() -> None:
    data = tgz_of_files({"x.my8044_rel.z12a_c8r32.pk1/sb.vm.point-query.range100.pk1.dop1": b"procs\n"})
    with pytest.raises(ImportFailed, match=r"x\.my8044_rel\.z12a_c8r32\.pk1.*no result files"):
        submit_and_import(data, name="x.tgz", source=Bundle.Source.COMMAND)


def test_an_unknown_dbms_imports_as_unknown_with_a_warning(corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    files = _small_run(corpus, "x.my8044_rel_o2nofp.z12a_c8r32.pk1")
    renamed = {k.replace("x.my8044_rel_o2nofp", "x.ps8044_rel"): v for k, v in files.items()}
    report = submit_and_import(tgz_of_files(renamed), name="ps.tgz", source=Bundle.Source.COMMAND)
    assert report.runs[0].dbms == "Unknown"
    assert any("unknown DBMS code 'ps'" in w for w in report.warnings)


def test_a_manifest_corrects_the_metadata(corpus: Path) -> None:
    files = _small_run(corpus, "x.my8044_rel_o2nofp.z12a_c8r32.pk1")
    files["benchdash.toml"] = b"""
server = "pn53"
[server_info]
cpus = 8
ram_gb = 32
[runs."x.my8044_rel_o2nofp.z12a_c8r32.pk1"]
version = "8.0.44"
notes = "LTO build"
flavour = "rel_lto"
"""
    submit_and_import(tgz_of_files(files), name="m.tgz", source=Bundle.Source.COMMAND)
    run = Run.objects.select_related("server", "build").get()
    assert run.server.name == "pn53" and run.server.ram_gb == 32
    assert run.build.flavour == "rel_lto" and run.build.notes == "LTO build"


def test_a_manifest_with_an_unknown_key_is_refused(corpus: Path) -> None:
    files = _small_run(corpus, "x.my8044_rel_o2nofp.z12a_c8r32.pk1")
    files["benchdash.toml"] = b'sever = "typo"\n'
    with pytest.raises(ImportFailed, match="sever"):
        submit_and_import(tgz_of_files(files), name="m.tgz", source=Bundle.Source.COMMAND)
    assert Run.objects.count() == 0


def test_summary_only_tests_take_the_runs_concurrencies(corpus: Path) -> None:
    files = _small_run(corpus, "x.my8044_rel_o2nofp.z12a_c8r32.pk1")
    files["x.my8044_rel_o2nofp.z12a_c8r32.pk1/sb.r.qps.hot-points.range100.pk1"] = (
        b"3013\tinnodb hot-points range=100\n"
    )
    submit_and_import(tgz_of_files(files), name="r.tgz", source=Bundle.Source.COMMAND)
    hot = Result.objects.get(microbenchmark__test="hot-points")
    assert hot.qps == 3013 and hot.dop == 1


@pytest.mark.parametrize("jobs", [1, 2])
def test_many_bundles_import_the_same_with_parse_workers_and_a_bad_one_is_only_reported(
    corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, jobs: int
) -> None:
    runs = (
        "x.my5651_rel_o2nofp.z12a_c8r32.pk1",
        "x.my5744_rel_o2nofp.z12a_c8r32.pk1",
        "x.my8044_rel_o2nofp.z12a_c8r32.pk1",
    )
    paths = []
    for i, run in enumerate(runs[:2]):
        path = tmp_path / f"{i}.tar.gz"
        path.write_bytes(tgz_of_files(_small_run(corpus, run)))
        paths.append(path)
    # The last one a result directory: the command archives it (in a worker, when there are workers).
    folder = tmp_path / "folder"
    for name, data in _small_run(corpus, runs[2]).items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)
    paths.append(folder)
    bad = tmp_path / "bad.tar.gz"
    bad.write_bytes(tgz_of_files({f"{runs[0]}/sb.o.update-one.range100.pk1.dop1": b"sysbench 1.1\nKilled\n"}))
    paths.insert(1, bad)
    parses_here = []
    real_parse = importer.parse_bundle
    monkeypatch.setattr(importer, "parse_bundle", lambda *a, **k: parses_here.append(1) or real_parse(*a, **k))

    with pytest.raises(CommandError, match="1 of 4 bundles failed"):
        call_command("import_bundle", *map(str, paths), "--jobs", str(jobs))

    out, err = capsys.readouterr()
    assert "bad.tar.gz" in err and "queries" in err
    assert [line.split(":")[0].strip() for line in out.splitlines() if line.startswith("  x.")] == list(runs)
    # With workers this process parses nothing, the bad bundle included: its reason comes back with its parse.
    assert len(parses_here) == (0 if jobs > 1 else 4)
    assert (
        Bundle.objects.filter(status=Bundle.Status.IMPORTED).count() == 3
        and not Bundle.objects.exclude(status=Bundle.Status.IMPORTED).exists()
    )
    got = sorted(Result.objects.values_list("run__name", "microbenchmark__test", "qps", "cpu_o"))
    Bundle.objects.all().delete()
    for path in paths[:1] + paths[2:]:
        data = archive_directory(path) if path.is_dir() else path.read_bytes()
        submit_and_import(data, name=path.name, source=Bundle.Source.COMMAND)
    assert got == sorted(Result.objects.values_list("run__name", "microbenchmark__test", "qps", "cpu_o"))
    assert len(got) == 6


def test_a_big_import_leaves_the_planner_statistics_of_the_grown_tables_fresh(corpus: Path) -> None:
    from django.db import connection

    from runs.bulk import analyze_if_grown

    if connection.vendor != "postgresql":
        assert analyze_if_grown({Result: 10**6}) == []  # nothing to do elsewhere
        return

    def known_rows(table: str) -> float:
        with connection.cursor() as cursor:
            cursor.execute("SELECT reltuples FROM pg_class WHERE relname = %s", [table])
            return float(cursor.fetchone()[0])

    with connection.cursor() as cursor:
        cursor.execute("ANALYZE runs_result")  # statistics of the empty table: 0 rows known
    call_command("import_bundle", str(corpus / "sysbench-mysql-small"))
    # The import grew the table from nothing: the command analyzed it, so the planner knows its real size.
    assert known_rows("runs_result") == Result.objects.count() > 300
    # And the versions its runs brought, which a series' pages join to its runs.
    assert known_rows("runs_version") == Version.objects.count() > 1
    # A small import into a table the statistics know well is left to autovacuum.
    assert analyze_if_grown({Result: 1}) == []


def test_a_tarball_of_the_generators_tarballs_applies_each_inner_manifest_to_its_own_runs(tmp_path: Path) -> None:
    """bench/generate.py writes one tarball per series, each with a root manifest naming its server; tarred up
    together in one folder, each manifest still names only its own runs' server."""
    from bench.generate import Series, series_bundle

    inner = {
        "M/first.tar.gz": series_bundle(Series(index=0, server="server-a", dbms=0, versions=3, table_size=10_000_000)),
        "M/second.tar.gz": series_bundle(Series(index=9, server="server-b", dbms=2, versions=2, table_size=10_000_000)),
    }
    report = submit_and_import(tgz_of_files(inner), name="generated.tgz", source=Bundle.Source.COMMAND)

    assert len(report.runs) == 5
    servers = {run.name: run.server.name for run in Run.objects.select_related("server")}
    assert len(servers) == 5
    assert {name.split(".")[1][:2] for name, server in servers.items() if server == "server-a"} == {"my"}
    assert {name.split(".")[1][:2] for name, server in servers.items() if server == "server-b"} == {"pg"}
    assert sorted(servers.values()).count("server-a") == 3


def test_two_manifests_for_one_folder_of_one_nested_archive_are_still_refused() -> None:
    from runs.tests import hostile

    inner = hostile.tgz(
        [*hostile.good_run(), hostile.member("benchdash.toml", b'server = "a"\n'), hostile.member("benchdash.toml")]
    )
    outer = tgz_of_files({"M/a.tar.gz": inner, "M/benchdash.toml": b'workload = "w"\n'})
    with pytest.raises(ImportFailed, match=r"second benchdash\.toml for folder 'M/a\.tar\.gz'"):
        submit_and_import(outer, name="two.tgz", source=Bundle.Source.COMMAND)
    assert Run.objects.count() == 0
