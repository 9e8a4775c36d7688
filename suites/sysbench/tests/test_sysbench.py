"""Parsing sysbench result files against every real file in the corpus."""

from __future__ import annotations

import tarfile
from pathlib import Path

import pytest

from suites.sysbench import parse as sysbench


def _corpus_outputs(corpus: Path) -> list[tuple[str, str]]:
    found = []
    for path in sorted(corpus.rglob("sb.o.*")):
        fn = sysbench.parse_file_name(path.name)
        if fn is not None and fn.kind == "o":
            found.append((str(path), path.read_text(errors="replace")))
    for tarball in sorted((corpus / "sysbench-pg-tarballs").glob("*.tar.gz")):
        with tarfile.open(tarball) as tar:
            for member in tar:
                name = member.name.rsplit("/", 1)[-1]
                fn = sysbench.parse_file_name(name)
                if fn is not None and fn.kind == "o":
                    fh = tar.extractfile(member)
                    assert fh is not None
                    found.append((f"{tarball.name}:{member.name}", fh.read().decode(errors="replace")))
    return found


def test_every_sb_o_file_in_the_corpus_parses_with_a_positive_qps(corpus: Path) -> None:
    outputs = _corpus_outputs(corpus)
    assert len(outputs) > 300
    for where, text in outputs:
        fn = sysbench.parse_file_name(where.rsplit("/", 1)[-1])
        assert fn is not None
        out = sysbench.parse_output(text, test=fn.test, file_name=where)
        assert out.qps > 0, where
        assert out.lat_avg_ms is not None, where
        assert out.elapsed_s is not None and out.elapsed_s > 0, where


def test_qps_of_every_mysql_test_equals_the_authors_absolute_table(corpus: Path) -> None:
    small = corpus / "sysbench-mysql-small"
    lines = (small / "qps.abs.all.tsv").read_text().splitlines()
    columns = [line.split(" : ")[1] for line in lines if line.startswith("col-") and " : " in line]
    rows = [line.split("\t") for line in lines if "\t" in line and not line.startswith("col-1\t")]
    checked = 0
    for row in rows:
        label = row[-1]
        test, _, range_size = label.rpartition("_range=")
        for run, expected in zip(columns, row[:-1], strict=True):
            path = small / run / f"sb.o.{test}.range{range_size}.pk1.dop1"
            out = sysbench.parse_output(path.read_text(), test=test, file_name=str(path))
            assert round(out.qps) == int(expected), f"{run} {label}: {out.qps} != {expected}"
            checked += 1
    assert checked == 33 * 8


def test_it_reads_the_sysbench_1_0_layout_without_command_line(corpus: Path) -> None:
    text = (corpus / "sysbench-stock" / "sb.o.read-write.range100.pk1.dop2").read_text()
    out = sysbench.parse_output(text, test="read-write")
    assert out.qps == pytest.approx(16085.81)
    assert out.tps == pytest.approx(804.29)
    assert out.elapsed_s == pytest.approx(10.0022)
    assert out.threads == 2
    assert out.command == "" and out.cpus is None
    assert (out.lat_min_ms, out.lat_avg_ms, out.lat_max_ms, out.lat_pct_ms) == (1.58, 2.48, 10.52, 3.30)
    assert out.lat_pct == 95


def test_it_reads_any_percentile_label(corpus: Path) -> None:
    text = (corpus / "sysbench-stock" / "update_index.histogram_p99.txt").read_text()
    out = sysbench.parse_output(text, test="update-index")
    assert out.lat_pct == 99
    assert out.lat_pct_ms == pytest.approx(0.37)
    assert out.qps == pytest.approx(4516.45)


def test_it_reads_the_sysbench_1_1_layout_with_command_and_cpus(corpus: Path) -> None:
    path = corpus / "sysbench-mysql-small/x.my9500_rel_o2nofp.z12a_c8r32.pk1/sb.o.point-query.range100.pk1.dop1"
    out = sysbench.parse_output(path.read_text(), test="point-query")
    assert out.qps == pytest.approx(16015.82)
    assert out.cpus == 8
    assert out.table_size == 50_000_000 and out.tables == 1
    assert out.sysbench_version.startswith("1.1.0")
    assert out.elapsed_s == pytest.approx(600.0003)
    assert "--mysql-password=***" in out.command and "pw " not in out.command


def test_scan_qps_is_thousands_of_rows_per_second_from_table_size_and_latency(corpus: Path) -> None:
    path = corpus / "sysbench-mysql-small/x.my9500_rel_o2nofp.z12a_c8r32.pk1/sb.o.scan.range100.pk1.dop1"
    out = sysbench.parse_output(path.read_text(), test="scan")
    assert out.queries_per_s == pytest.approx(0.09)
    assert out.qps == pytest.approx((50_000_000 / 1000) / (11108.39 / 1000))


def test_scan_without_a_table_size_is_a_clear_error(corpus: Path) -> None:
    text = (corpus / "sysbench-stock" / "sb.o.point-query.range100.pk1.dop1").read_text()
    with pytest.raises(sysbench.ParseError, match="table-size"):
        sysbench.parse_output(text, test="scan", file_name="sb.o.scan.range100.pk1.dop1")


def test_an_output_without_a_queries_line_is_an_error_naming_the_file() -> None:
    with pytest.raises(sysbench.ParseError, match=r"sb\.o\.insert.*queries"):
        sysbench.parse_output("sysbench 1.0.20\nFATAL: error 2013\n", file_name="sb.o.insert.range100.pk1.dop1")


def test_met_file_with_all_columns(corpus: Path) -> None:
    path = corpus / "sysbench-mysql-small/x.my9500_rel_o2nofp.z12a_c8r32.pk1/sb.met.point-query.range100.pk1.dop1"
    met = sysbench.parse_met(path.read_text())
    assert met == {
        "rps": 0.0,
        "rmbps": 0.0,
        "wps": 0.1,
        "wmbps": 0.0,
        "r_o": 0.0,
        "rkb_o": 0.0,
        "wkb_o": 0.0,
        "o_s": 16015.82,
        "cs_s": 61370.0,
        "cpu_s": 11.3,
        "cs_o": 3.832,
        "cpu_o": 0.000704,
    }


def test_older_met_layouts_without_cs_per_op_or_reads_per_op_parse() -> None:
    oldest = (
        "iostat, vmstat normalized by operation rate\n"
        "samp\tr/s\trMB/s\tw/s\twMB/s\trKB/o\twKB/o\to/s\n"
        "300\t1.5\t0.1\t20.0\t3.0\t0.010\t0.500\t9000\n\n"
        "samp\tcs/s\tcpu/s\tcpu/o\n"
        "330\t40000\t12.5\t0.001389\n"
    )
    met = sysbench.parse_met(oldest)
    assert "cs_o" not in met and "r_o" not in met
    assert met["rkb_o"] == 0.01 and met["cpu_o"] == 0.001389 and met["o_s"] == 9000
    middle = oldest.replace(
        "samp\tcs/s\tcpu/s\tcpu/o\n330\t40000\t12.5\t0.001389",
        "samp\tcs/s\tcpu/s\tcs/o\tcpu/o\n330\t40000\t12.5\t4.444\t0.001389",
    )
    assert sysbench.parse_met(middle)["cs_o"] == 4.444


def test_met_values_that_do_not_match_the_header_are_an_error() -> None:
    with pytest.raises(sysbench.ParseError, match="values"):
        sysbench.parse_met("x\nsamp\tr/s\tw/s\n1\t2\n")


def test_summary_lines_hold_one_value_per_concurrency() -> None:
    assert sysbench.parse_summary("1028663\tpgsql point-query range=100\n") == [1028663.0]
    assert sysbench.parse_summary("100.5\t200\t390.25\tinnodb read-only range=10\n") == [100.5, 200.0, 390.25]


def test_prepare_output_gives_the_load_rate(corpus: Path) -> None:
    tarball = corpus / "sysbench-pg-tarballs" / "x.pg174_o2nofp.x10a_wm1_c32r128.pk1.tar.gz"
    with tarfile.open(tarball) as tar:
        member = next(m for m in tar if m.name.endswith("sb.prepare.o.point-query.warm.range100.pk1"))
        fh = tar.extractfile(member)
        assert fh is not None
        load = sysbench.parse_prepare(fh.read().decode())
    assert (load.seconds, load.tables, load.inserts_per_s) == (596.0, 8, 134228.0)
    # No --threads on the prepare command line: sysbench loads with one client.
    assert load.threads == 1
    assert " prepare " in load.command and "--pgsql-password=***" in load.command


def test_a_prepare_command_with_threads_gives_the_load_its_concurrency() -> None:
    text = (
        "Setup for 2 tables\n"
        "/usr/bin/sysbench --db-driver=mysql --tables=2 --threads=4 oltp_point_select.lua prepare --mysql-db=ib\n"
        "Load seconds is 10 for 2 tables, .2 Mips, 200000 ips\n"
    )
    load = sysbench.parse_prepare(text)
    assert load is not None and load.threads == 4 and load.inserts_per_s == 200000


def test_a_load_that_did_not_finish_gives_no_rate() -> None:
    assert sysbench.parse_prepare("Setup for 8 tables\nInserting 10000000 records into 'sbtest1'\n") is None


@pytest.mark.parametrize(
    ("name", "kind", "test", "range_size", "dop"),
    [
        ("sb.o.point-query.pre.range100.pk1.dop40", "o", "point-query.pre", 100, 40),
        ("sb.o.scan.warmpre.range100.pk1.dop1", "o", "scan.warmpre", 100, 1),
        ("sb.met.read-only.range32000.pk1.dop40", "met", "read-only", 32000, 40),
        ("sb.r.qps.update-inlist.range100.pk1", "r.qps", "update-inlist", 100, None),
        ("sb.prepare.o.point-query.warm.range100.pk1", "prepare.o", "point-query.warm", 100, None),
    ],
)
def test_file_names_drive_the_parse(name: str, kind: str, test: str, range_size: int, dop: int | None) -> None:
    fn = sysbench.parse_file_name(name)
    assert fn is not None
    assert (fn.kind, fn.test, fn.range_size, fn.dop) == (kind, test, range_size, dop)


@pytest.mark.parametrize("name", ["sb.o.myvac", "sb.o.pgvac.sbtest1", "sb.vm.scan.range100.pk1.dop1", "conf.diff"])
def test_other_files_are_not_results(name: str) -> None:
    assert sysbench.parse_file_name(name) is None
