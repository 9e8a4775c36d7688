"""RocksDB db_bench: parsing every report layout, reading bundles that hold them, importing them as runs."""

from __future__ import annotations

from pathlib import Path

import pytest

import suites
from runs.bundle import BundleError, read_bundle
from runs.importer import ImportFailed, archive_directory, submit_and_import
from runs.models import Bundle, Microbenchmark, Result, Run, Workload
from runs.tests.hostile import tgz_of_files
from suites.dbbench import parse as dbbench

DBBENCH = "dbbench"
DEC25 = "dbbench/arc/dec25.dbb.clang/8core"
# Report headers as the benchmark scripts wrote them over the years (tab-separated).
HEADER_28 = (
    "ops_sec\tmb_sec\tlsm_sz\tblob_sz\tc_wgb\tw_amp\tc_mbps\tc_wsecs\tc_csecs\tb_rgb\tb_wgb\tusec_op\tp50\tp99"
    "\tp99.9\tp99.99\tpmax\tuptime\tstall%\tNstall\tu_cpu\ts_cpu\trss\ttest\tdate\tversion\tjob_id\tgithash"
)
HEADER_27 = HEADER_28.removesuffix("\tgithash")
HEADER_20 = (
    "ops_sec\tmb_sec\ttotal_size_gb\tlevel0_size_gb\tsum_gb\twrite_amplification\twrite_mbps\tusec_op"
    "\tpercentile_50\tpercentile_75\tpercentile_99\tpercentile_99.9\tpercentile_99.99\tuptime\tstall_time"
    "\tstall_percent\ttest_name\ttest_date\trocksdb_version\tjob_id"
)
HEADER_20_CAPITALS = (
    "ops/sec\tmb/sec\tSize-GB\tL0_GB\tSum_GB\tW-Amp\tW-MB/s\tusec/op\tp50\tp75\tp99\tp99.9\tp99.99\tUptime"
    "\tStall-time\tStall%\tTest\tDate\tVersion\tJob-ID"
)
HEADER_17 = HEADER_20_CAPITALS.removesuffix("\tDate\tVersion\tJob-ID")
COLUMNS_28 = HEADER_28.split("\t")


def _line(header: str, values: dict[str, str]) -> str:
    """A row for ``header``: each value under its (today's) column name, whatever the column's position."""
    return "\t".join(values.get(dbbench.normalize_column(column), "") for column in header.split("\t"))


def _report(header: str, rows: list[dict[str, str]], comments: int = 25) -> str:
    lines = [f"# column {i} - what it means" for i in range(comments)]
    lines.append(header)
    lines.extend(_line(header, row) for row in rows)
    return "\n".join(lines) + "\n"


ROW = {
    "ops_sec": "1112938",
    "mb_sec": "445.8",
    "usec_op": "0.9",
    "p50": "0.5",
    "p99": "12",
    "pmax": "5789",
    "uptime": "36",
    "w_amp": "NA",
    "test": "fillseq.wal_disabled.v400",
    "date": "2025-12-22T22:23:46",
    "version": "9.8.4",
    "githash": "44e95d8af5",
}


# --------------------------------------------------------------------------- parsing


@pytest.mark.parametrize(
    "header",
    [HEADER_28, HEADER_27, HEADER_20, HEADER_20_CAPITALS],
    ids=["28-columns", "27-columns", "20-columns", "20-columns-capitals"],
)
def test_every_historical_header_is_read_by_column_name(header: str) -> None:
    file = dbbench.parse_file(_report(header, [ROW]), name="report.tsv")

    (row,) = file.rows
    assert len(file.blocks[0].columns) == header.count("\t") + 1
    assert row.ops_sec == 1112938 and row.test == "fillseq.wal_disabled.v400" and row.version == "9.8.4"
    assert row.values["usec_op"] == 0.9 and row.values["p99"] == 12 and row.values["p50"] == 0.5
    assert row.started_at is not None and row.started_at.isoformat() == "2025-12-22T22:23:46+00:00"


def test_the_17_column_header_has_no_version_so_the_build_directory_gives_it() -> None:
    text = _report(HEADER_17, [{**ROW, "test": "readrandom.t4"}], comments=0)
    runs, _ = dbbench.parse_result_file(text.encode(), path="res.iobuf/bm.lc.nt4.d0/6.1.gcc/report.tsv", name="r")

    (run,) = runs
    assert run.version == "6.1" and run.build == "6.1.gcc" and run.rows[0].values.get("version") is None
    assert run.rows[0].ops_sec == 1112938 and run.rows[0].values["p75"] is None and run.threads == 4


def test_na_and_empty_fields_are_missing_never_zero() -> None:
    row = dbbench.parse_file(_report(HEADER_28, [{**ROW, "p99": "", "rss": "NA"}]), name="r").rows[0]

    assert row.values["w_amp"] is None and row.values["p99"] is None and row.values["rss"] is None
    assert row.values["Nstall"] is None


def test_a_report_tsv_is_one_run_of_its_build_directory_and_workload() -> None:
    rows = [ROW, {**ROW, "test": "revrange.t8"}, {**ROW, "test": "readrandom.t8", "ops_sec": "NA"}]
    text = _report(HEADER_28, rows)
    runs, warnings = dbbench.parse_result_file(
        text.encode(), path="ser7/res.iodir/bm.lc.nt8.d1/9.8.clang.lto/report.tsv", name="r"
    )

    (run,) = runs
    assert (run.name, run.build, run.version, run.flavour) == ("9.8.clang.lto", "9.8.4.clang.lto", "9.8.4", "clang.lto")
    assert run.workload_name == "db_bench iodir nt8 d1" and run.config == "lc"
    assert run.workload_params == {
        "workload": "iodir",
        "threads": 8,
        "o_direct": True,
        "cached": False,
        "bench_dir": "bm.lc.nt8.d1",
    }
    assert dbbench.server_from_path(run.source) == "ser7"
    # The row without ops_sec is kept (its other columns are real) but gives no result, and says so.
    assert [r["test"] for r in run.result_rows()] == ["fillseq.wal_disabled.v400", "revrange.t8"]
    assert any("readrandom.t8 has no ops_sec" in w for w in warnings)


def test_a_result_keeps_every_column_by_name_and_fills_the_common_fields() -> None:
    file = dbbench.parse_file(_report(HEADER_28, [{**ROW, "test": "readrandom.t8"}]), name="r")
    (run,) = dbbench.runs_from_file(file, path="x/res.byrx/bm.lc.nt8.d0/9.8.clang/report.tsv")

    (result,) = run.result_rows()
    assert set(result["extra"]) == {dbbench.normalize_column(c) for c in COLUMNS_28}
    assert result["qps"] == 1112938 and result["dop"] == 8 and result["threads"] == 8
    assert result["lat_avg_ms"] == pytest.approx(0.0009) and result["lat_pct"] == 99.0
    assert result["lat_pct_ms"] == pytest.approx(0.012) and result["lat_max_ms"] == pytest.approx(5.789)
    assert result["range_size"] is None and result["extra"]["lsm_sz"] is None


def test_a_row_with_more_fields_than_the_header_is_refused_with_its_line() -> None:
    text = HEADER_28 + "\n" + _line(HEADER_28, ROW) + "\textra\n"

    with pytest.raises(dbbench.ParseError, match=r"^s:2: 29 fields but the header names 28"):
        dbbench.parse_file(text, name="s")


def test_text_without_a_db_bench_header_is_not_db_bench() -> None:
    with pytest.raises(dbbench.NotDbBench, match="no db_bench header"):
        dbbench.parse_file("9.8.4\t9.9.3\ttest\n1.00\t1.07\tfillseq\n", name="notes")


def test_the_warm_up_and_overwritesome_are_excluded_and_the_rest_ordered_as_the_scripts_run_them() -> None:
    tests = ["overwriteandwait.t1.s0", "readwhilewriting.t1", "revrange.t1", "overwritesome.t1.s0", "fillseq.v400"]

    assert dbbench.is_warmup("revrange.t1") and not dbbench.is_warmup("revrangewhilewriting.t1")
    assert dbbench.is_excluded("overwritesome.t8.s0") and not dbbench.is_excluded("overwriteandwait.t8.s0")
    assert dbbench.table_tests(tests) == ["fillseq.v400", "readwhilewriting.t1", "overwriteandwait.t1.s0"]


def test_the_dec25_summaries_hold_fifteen_clang_builds_per_workload(corpus: Path) -> None:
    for workload, o_direct in (("byrx", False), ("iobuf", False), ("iodir", True)):
        path = f"8core/sum.{workload}.txt"
        data = (corpus / DEC25 / f"sum.{workload}.txt").read_bytes()
        runs, warnings = dbbench.parse_result_file(data, path=path, name=path)

        assert warnings == []
        assert [run.name for run in runs][:3] == ["9.8.clang", "9.9.clang", "9.10.clang"]
        assert [run.version for run in runs][-1] == "10.10.0" and len(runs) == 15
        assert {run.workload_name for run in runs} == {f"db_bench {workload} nt1 d{int(o_direct)}"}
        assert all(len(run.rows) == 7 and all(r.version == run.version for r in run.rows) for run in runs)
        assert len({run.content_sha256 for run in runs}) == 15


def test_a_rerun_of_a_version_stays_a_separate_run_and_gets_its_own_rows(corpus: Path) -> None:
    # dell32: fifteen builds ran ten tests, then five were rerun with seven; the summary's blocks mix tests.
    path = "may25.db_bench/dell32/byrx/sum.txt"
    runs, warnings = dbbench.parse_result_file((corpus / DBBENCH / "arc" / path).read_bytes(), path=path, name=path)
    by_name = {run.name: run for run in runs}

    assert len(runs) == 20 and sorted(n for n in by_name if "#" in n) == [
        "10.0.1#1",
        "10.0.1#2",
        "10.1.3#1",
        "10.1.3#2",
        "9.9.3#1",
        "9.9.3#2",
    ]
    first, rerun = by_name["9.9.3#1"], by_name["9.9.3#2"]
    assert len(first.rows) == 10 and len(rerun.rows) == 7
    assert "readrandom.t24" in {r.test for r in first.rows} and "readrandom.t24" not in {r.test for r in rerun.rows}
    assert first.started_at is not None and rerun.started_at is not None
    assert max(r.started_at for r in first.rows if r.started_at) < rerun.started_at
    assert all(len({r.test for r in run.rows}) == len(run.rows) for run in runs)
    assert {run.workload_name for run in runs} == {"db_bench byrx nt24 d0"}
    assert any("9.9.3 appears 2 times" in w for w in warnings)


def test_the_variance_study_is_three_repeats_of_one_build_with_the_spread_it_reports(corpus: Path) -> None:
    path = "c6i.4xlarge.ht0.nt4/sum.byrx.txt.sdev"
    data = (corpus / DBBENCH / "results/aws_variance_rocksdb" / path).read_bytes()
    runs, warnings = dbbench.parse_result_file(data, path=path, name=path)

    assert warnings == []
    assert [run.name for run in runs] == ["7.9.0#1", "7.9.0#2", "7.9.0#3"]
    assert {run.build for run in runs} == {"7.9.0"}
    assert runs[0].stats["readrandom.t4"] == {"mean": 804699.0, "stddev": 17270.0, "sdev/mean": 0.021}
    result = next(r for r in runs[2].result_rows() if r["test"] == "readrandom.t4")
    assert result["qps"] == 780522 and result["extra"]["ops_sec_stddev"] == 17270.0


def test_the_variance_summary_without_its_spread_lines_gives_three_separate_builds(corpus: Path) -> None:
    path = "c6i.4xlarge.ht0.nt4/sum.byrx.txt"
    data = (corpus / DBBENCH / "results/aws_variance_rocksdb" / path).read_bytes()
    runs, warnings = dbbench.parse_result_file(data, path=path, name=path)

    assert [run.build for run in runs] == ["7.9.0#1", "7.9.0#2", "7.9.0#3"]
    assert any("7.9.0 appears 3 times" in w for w in warnings)


def test_the_ratio_lines_between_blocks_are_skipped(corpus: Path) -> None:
    path = "aug23.c2.db_bench.nt10_to_nt50/sum.nt10.txt"
    runs, warnings = dbbench.parse_result_file((corpus / DBBENCH / "arc" / path).read_bytes(), path=path, name=path)

    assert len(runs) == 2 and all(len(run.rows) == 10 for run in runs)
    assert runs[0].workload_name == "db_bench (workload unknown) nt10"
    assert not any("unexpected line" in w for w in warnings)


# --------------------------------------------------------------------------- reading bundles


def test_the_bundle_reader_returns_db_bench_files_and_skips_the_authors_tables(corpus: Path) -> None:
    report = _report(HEADER_28, [ROW]).encode()
    files = {
        "8core/sum.byrx.txt": (corpus / DEC25 / "sum.byrx.txt").read_bytes(),
        "8core/sum.abs0.byrx.tsv": (corpus / DEC25 / "sum.abs0.byrx.tsv").read_bytes(),
        "8core/res.byrx/bm.lc.nt1.d0/9.8.clang/report.tsv": report,
        "8core/notes/report.tsv": report,
    }
    bundle = read_bundle(tgz_of_files(files), name="b.tgz")

    assert bundle.runs == []
    report_path = "8core/res.byrx/bm.lc.nt1.d0/9.8.clang/report.tsv"
    assert [f.path for f in bundle.files_of("db_bench")] == [report_path, "8core/sum.byrx.txt"]
    assert bundle.files_of("db_bench")[1].data == files["8core/sum.byrx.txt"]
    assert sorted(bundle.ignored) == ["8core/notes/report.tsv", "8core/sum.abs0.byrx.tsv"]


def test_a_bundle_with_nothing_to_import_says_what_is_supported() -> None:
    with pytest.raises(BundleError, match=r"x\.<build>\.<config>\.pk<0\|1>.*RocksDB db_bench results.*sum\*\.txt"):
        read_bundle(tgz_of_files({"notes/readme.txt": b"hello"}), name="b.tgz")


# --------------------------------------------------------------------------- importing


@pytest.mark.django_db
def test_the_dec25_summaries_import_as_45_runs_with_every_column(corpus: Path) -> None:
    report = submit_and_import(archive_directory(corpus / DEC25), name="8core.tgz", source=Bundle.Source.COMMAND)

    assert len(report.runs) == 45 and report.warnings == []
    assert report.runs[0].line() == "9.8.clang: RocksDB 9.8.4 on 8core, 7 tests, 7 results"
    assert set(Workload.objects.filter(suite=suites.DBBENCH.name).values_list("name", flat=True)) == {
        "db_bench byrx nt1 d0",
        "db_bench iobuf nt1 d0",
        "db_bench iodir nt1 d1",
    }
    run = Run.objects.select_related("build__version__dbms", "server", "config").get(
        name="10.2.clang", workload__name="db_bench iodir nt1 d1"
    )
    assert run.build.name == "10.2.3.clang" and run.build.flavour == "clang" and run.config.name == "lc"
    assert run.build.version.dbms.name == "RocksDB" and run.server.name == "8core"
    assert run.started_at is not None and run.started_at.year == 2025
    result = Result.objects.get(run=run, microbenchmark__test="readwhilewriting.t1")
    assert result.qps == result.extra["ops_sec"] and result.dop == 1 and result.microbenchmark.range_size is None
    assert set(result.extra) == {dbbench.normalize_column(c) for c in COLUMNS_28}
    assert result.lat_avg_ms == pytest.approx(result.extra["usec_op"] / 1000)
    excluded = dict(Microbenchmark.objects.filter(suite=suites.DBBENCH.name).values_list("test", "is_warmup"))
    assert excluded["revrange.t1"] and excluded["overwritesome.t1.s0"] and not excluded["readwhilewriting.t1"]
    assert Result.objects.count() == 45 * 7


@pytest.mark.django_db
def test_the_same_run_from_a_report_tsv_and_from_a_summary_is_stored_once(corpus: Path) -> None:
    summary = (corpus / DEC25 / "sum.byrx.txt").read_text()
    header = next(line for line in summary.splitlines() if line.startswith("ops_sec"))
    rows = [line for line in summary.splitlines() if line.endswith("\t44e95d8af5")]  # the 9.8.4 build's rows
    report = "\n".join(["# written by the benchmark scripts", header, *rows]) + "\n"
    submit_and_import(
        tgz_of_files({"8core/sum.byrx.txt": summary.encode()}), name="a.tgz", source=Bundle.Source.COMMAND
    )
    microbenchmarks = Microbenchmark.objects.count()

    second = submit_and_import(
        tgz_of_files({"8core/res.byrx/bm.lc.nt1.d0/9.8.clang/report.tsv": report.encode()}),
        name="b.tgz",
        source=Bundle.Source.COMMAND,
    )

    assert len(rows) == 7 and [r.skipped for r in second.runs] == [True]
    assert Run.objects.count() == 15 and microbenchmarks == 7 and Microbenchmark.objects.count() == 7


@pytest.mark.django_db
def test_a_manifest_names_the_server_and_a_duplicate_build(corpus: Path) -> None:
    manifest = b'server = "ser7"\n[runs."10.2.1#2"]\nbuild = "10.2.1.hcc"\nflavour = "hcc"\n'
    data = (corpus / DBBENCH / "arc/may25.db_bench/ser7/byrx/sum.byrx.both.txt").read_bytes()
    bundle = tgz_of_files({"benchdash.toml": manifest, "byrx/sum.byrx.both.txt": data})
    submit_and_import(bundle, name="m.tgz", source=Bundle.Source.COMMAND)

    assert sorted(Run.objects.values_list("name", "build__name", "server__name")) == [
        ("10.2.1#1", "10.2.1#1", "ser7"),
        ("10.2.1#2", "10.2.1.hcc", "ser7"),
    ]


@pytest.mark.django_db
def test_a_bundle_of_notes_named_like_summaries_is_refused_and_nothing_is_written() -> None:
    with pytest.raises(ImportFailed, match="no db_bench results"):
        submit_and_import(
            tgz_of_files({"notes/sum.txt": b"ran it twice\n"}), name="n.tgz", source=Bundle.Source.COMMAND
        )

    assert Bundle.objects.count() == 0 and Run.objects.count() == 0


@pytest.mark.django_db
def test_sysbench_run_directories_and_db_bench_summaries_import_together(corpus: Path) -> None:
    run = "x.my5651_rel_o2nofp.z12a_c8r32.pk1"
    files = {
        f"{run}/{name}": (corpus / "sysbench-mysql-small" / run / name).read_bytes()
        for name in ("sb.o.point-query.range100.pk1.dop1", "sb.met.point-query.range100.pk1.dop1")
    }
    files["8core/sum.iodir.txt"] = (corpus / DEC25 / "sum.iodir.txt").read_bytes()
    overrides = {"server": "pn53"}
    report = submit_and_import(tgz_of_files(files), name="mixed.tgz", source=Bundle.Source.COMMAND, overrides=overrides)

    assert len(report.runs) == 16
    assert set(Run.objects.values_list("workload__suite", flat=True)) == {"db_bench", "sysbench"}
    assert Microbenchmark.objects.get(suite=suites.SYSBENCH.name).label == "point-query_range=100"
    assert set(Run.objects.values_list("server__name", flat=True)) == {"pn53"}
