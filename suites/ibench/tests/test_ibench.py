"""Insert Benchmark: every summary layout, merged tables, result directories, and importing them as runs.

The real files are the 2021 step summaries and merged tables of the corpus. The
author never published a result directory with its raw files, so ``o.res.dop<D>``
and ``o.ib.dop<D>.<n>`` are built by hand in this file, line for line as the
benchmark scripts write them (np.sh, ios.sh, iibench.py) and as the domain spec describes
the steps; the tests that use them say so.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from django.test import Client
from django.urls import reverse

import suites
from runs.bundle import read_bundle
from runs.importer import ImportFailed, archive_directory, submit_and_import
from runs.models import Bundle, Microbenchmark, Result, Run, Workload
from runs.tests.hostile import tgz_of_files
from suites.ibench import parse as ibench

IBENCH = "ibench-2021"
STEPS_2021 = [
    "l.i0",
    "l.x",
    "l.i1",
    "q100.1",
    "q100.2",
    "q200.1",
    "q200.2",
    "q400.1",
    "q400.2",
    "q600.1",
    "q600.2",
    "q800.1",
    "q800.2",
    "q1000.1",
    "q1000.2",
]


def _files(directory: Path, under: str) -> list[tuple[str, bytes, float]]:
    return [
        (f"{under}/{p.relative_to(directory)}", p.read_bytes(), 0.0)
        for p in sorted(directory.rglob("*"))
        if p.is_file()
    ]


# --------------------------------------------------------------------------- hand-built raw output (np.sh, iibench.py)

HIST_BUCKETS = (
    "     256us       1ms       4ms      16ms      64ms     256ms        1s        4s       16s        gt         max"
)


def _hist(kind: str, counts: list[int], max_s: float) -> str:
    """iibench.py's rthist_result: a line of bucket names, a line of counts and the max in seconds."""
    label = f"{kind} rt:"
    values = "".join(f"{c:10d}" for c in counts)
    return f"{label:>10s}{HIST_BUCKETS}\n{label:>10s}{values} {max_s:11.6f}\n"


def _client(*, rate: int, table: str, ips: list[int], qps: list[int], ins: list[int], query: list[int]) -> str:
    """o.ib.dop<D>.<n> as np.sh saves it: the command line, then iibench.py's header and one line per second."""
    lines = [
        f"python3 iibench.py --dbms=mysql --db_name=ib --secs_per_report=1 --db_host=127.0.0.1 --max_rows=360000 "
        f"--table_name={table} --num_secondary_indexes=3 --rows_per_commit=50 --inserts_per_second={rate} "
        "--query_threads=1 --seed=1700000001",
        "i_sec\tt_sec\ti_ips\tt_ips\ti_qps\tt_qps\tmax_i\tmax_q\tt_ins\tt_query\tretry_i\tretry_q",
    ]
    inserted = queries = 0
    for second, (i_ips, i_qps) in enumerate(zip(ips, qps, strict=True), start=1):
        inserted += i_ips
        queries += i_qps
        lines.append(
            f"1.0\t{second:.1f}\t{i_ips}\t{inserted / second:.0f}\t{i_qps}\t{queries / second:.0f}"
            f"\t2100\t1800\t{inserted}\t{queries}\t0\t0"
        )
    return "\n".join(lines) + "\n" + _hist("Insert", ins, 0.0151) + _hist("Query", query, 0.0302) + "Done\n"


def _res(*, clients: int, seconds: int, ips: float, qps: float, query: bool) -> str:
    """o.res.dop<D> as np.sh and ios.sh write it (rates line, iostat/vmstat tables, sizes, ps, max, percentiles)."""
    rate = qps if query else ips
    return (
        f"{clients} processes, 180000 rows-per-process, {seconds} seconds, {ips:.1f} rows-per-second, "
        f"{ips / clients:.1f} rows-per-second-per-user, {int(qps * seconds)} queries, {qps:.1f} queries-per-second\n"
        "\niostat, vmstat normalized by insert rate\n"
        "nsamp\tr/s\trMB/s\tw/s\twMB/s\tr/i\trKB/i\tw/i\twKB/i\tips\n"
        f"36\t12.0\t0.2\t300.5\t9.1\t0.060\t1.000\t1.503\t46.500\t{ips:.1f}\n"
        "\nnsamp\tcs/s\tcpu/s\tcs/q\tcpu/q\n"
        f"36\t24033\t27.8\t120.165\t0.139000\n"
        "\niostat, vmstat normalized by query rate\n"
        "nsamp\tr/s\trMB/s\tw/s\twMB/s\tr/q\trKB/q\tw/q\twKB/q\tqps\n"
        f"36\t12.0\t0.2\t300.5\t9.1\t0.002\t0.035\t0.052\t1.603\t{rate:.1f}\n"
        "\nnsamp\tcs/s\tcpu/s\tcs/q\tcpu/q\n"
        "36\t24033\t27.8\t4.144\t0.004793\n"
        "\ndbGB\t22.345\n"
        "dbdirGB\t62.81\t/data/m/my\n"
        "\nmdcallag  4242 99.0 10.0 9000000 11744051 ?  Sl 10:00 50:00 /usr/sbin/mysqld --basedir=/x --datadir=/y\n"
        "\nMax insert\n0.015\n0.012\n0.011\nMax query\n0.030\n0.020\n0.019\n"
        "\ninsert and query rate at nth percentile\n"
        "50th, 2 / 4 = 100 insert, 5800 query\n"
        "99th, 4 / 4 = 50 insert, 3100 query\n"
        "50th, 2 / 4 = 101 insert, 5900 query\n"
        "\nCPU seconds\nclient: 10.0 user, 2.0 system, 12.0 total\ndbms: 300.0\n"
    )


def _step_dir(step_dir: str, *, clients: int, ips: list[int], qps: list[int], query: bool) -> dict[str, str]:
    """One step's files: o.res plus one o.ib per client, each client on its own table."""
    files = {
        f"{step_dir}/o.res.dop{clients}": _res(
            clients=clients, seconds=len(ips), ips=100.0 * clients, qps=5873.0 if query else 0.0, query=query
        )
    }
    for n in range(1, clients + 1):
        files[f"{step_dir}/o.ib.dop{clients}.{n}"] = _client(
            rate=100,
            table=f"pi{n}",
            ips=ips,
            qps=qps,
            ins=[1, 2, 3, 0, 0, 0, 0, 0, 0, 0],
            query=[5, 5, 0, 0, 0, 0, 0, 0, 0, 0],
        )
    return files


# --------------------------------------------------------------------------- summaries


def test_the_corpus_summaries_have_todays_21_column_header_and_fifteen_steps(corpus: Path) -> None:
    for path in sorted((corpus / IBENCH / "100m").glob("o.sum.t.*")):
        table = ibench.parse_table(path.read_text(), name=path.name)

        assert tuple(table.columns) == ibench.CURRENT_COLUMNS
        assert ibench.summary_steps(table) == STEPS_2021
    my8022 = ibench.parse_table((corpus / IBENCH / "100m/o.sum.t.100m.my8022.cx6d").read_text(), name="s")
    l_i1 = my8022.rows[2]
    assert l_i1 is not None and l_i1.values["ips"] == 12970 and l_i1.values["rps"] == 1045.2
    assert l_i1.values["tag"] == "100m.my8022.cx6d" and l_i1.cells["rps"] == "1045.2"
    l_x = my8022.rows[1]
    assert l_x is not None and l_x.values["p50"] is None and l_x.values["p99"] is None  # NA: missing, never 0


@pytest.mark.parametrize("header", ibench.HISTORICAL_HEADERS, ids=lambda h: f"{len(h)}-columns")
def test_every_historical_header_is_read_by_column_name(header: tuple[str, ...]) -> None:
    # Each header as one of the author's etl.sh versions echoed it; the values are put under their names.
    values = {"ips": "86580", "qps": "0", "rps": "0.0", "maxop": "0.117", "p50": "86964", "tag": "100m.my8022.cx6d"}
    row = ",".join(values.get(column, "1.5") for column in header)
    text = ",".join(header) + "\n" + "\n".join([row] * 10) + "\n"

    table = ibench.parse_table(text, name="o.sum.c.100m.my8022.cx6d")

    first = table.rows[0]
    assert first is not None
    assert len(table.columns) == len(header)
    assert first.values["ips"] == 86580 and first.values["maxop"] == 0.117 and first.values["p50"] == 86964
    assert first.values["tag"] == "100m.my8022.cx6d"
    assert ibench.summary_steps(table)[:4] == ["l.i0", "l.x", "l.i1", "l.i2"]


def test_a_summary_whose_row_count_matches_no_layout_is_refused_with_the_known_ones() -> None:
    text = "\t".join(ibench.CURRENT_COLUMNS) + "\n" + "\t".join(["1"] * 20 + ["x.t"]) + "\n"
    with pytest.raises(ibench.ParseError, match=r"1 step rows.*known layouts: 10 .*15 "):
        ibench.summary_steps(ibench.parse_table(text, name="o.sum.t.x"))


def test_a_text_without_the_ips_header_is_not_an_ibench_table() -> None:
    with pytest.raises(ibench.ParseError, match="not an Insert Benchmark header"):
        ibench.parse_table("ops_sec\tmb_sec\ttest\n1\t2\tfillseq\n", name="mrg.l.i0")


# --------------------------------------------------------------------------- steps and names


@pytest.mark.parametrize(
    ("name", "step"),
    [
        ("l.i0", "l.i0"),
        ("l.x", "l.x"),
        ("l.i2", "l.i2"),
        ("qr100.L1", "qr100"),
        ("qp1000.L6", "qp1000"),
        ("q100.2", "q100.2"),
        ("q1000", "q1000"),
        ("l.i0.ips", None),
        ("scan", None),
        ("l", None),
    ],
)
def test_step_names_from_files_and_directories(name: str, step: str | None) -> None:
    assert ibench.step_name(name) == step


def test_the_throughput_of_a_step_is_inserts_indexed_rows_or_queries() -> None:
    assert [ibench.throughput_column(s) for s in ("l.i0", "l.x", "l.i1", "l.i2", "qr100", "qp500", "q100.1")] == [
        "ips",
        "ips",
        "ips",
        "ips",
        "qps",
        "qps",
        "qps",
    ]
    assert ibench.throughput_label("l.x") == "indexed rows/s"
    assert [ibench.target_rate(s) for s in ("qr100", "qp500", "q1000.2", "l.i1")] == [100, 500, 1000, None]
    assert ibench.ordered_steps(["qp100", "l.i1", "qr1000", "qr100", "l.x", "l.i0", "l.i2", "qp1000"]) == [
        "l.i0",
        "l.x",
        "l.i1",
        "l.i2",
        "qr100",
        "qp100",
        "qr1000",
        "qp1000",
    ]


def test_the_sla_is_95_percent_of_clients_times_the_target_rate() -> None:
    assert ibench.sla_threshold(8, 100) == pytest.approx(760)
    assert ibench.meets_sla(760, 8, 100) is True
    assert ibench.meets_sla(759.9, 8, 100) is False
    assert ibench.meets_sla(95, 1, 100) is True and ibench.meets_sla(94, 1, 100) is False
    assert ibench.meets_sla(None, 1, 100) is None


@pytest.mark.parametrize(
    ("tag", "rows", "build", "config"),
    [
        ("100m.my8022.cx6d", "100m", "my8022", "cx6d"),
        ("my5649.cx6d", None, "my5649", "cx6d"),
        ("pg131", None, "pg131", "default"),
    ],
)
def test_a_tag_names_rows_build_and_config(tag: str, rows: str | None, build: str, config: str) -> None:
    parsed = ibench.parse_tag(tag)
    assert (parsed.rows, parsed.build, parsed.config) == (rows, build, config)


# --------------------------------------------------------------------------- a bundle's files


def test_the_corpus_is_four_runs_and_a_run_in_a_summary_and_merged_tables_is_one(corpus: Path) -> None:
    runs, warnings, not_read = ibench.parse_bundle_files(_files(corpus / IBENCH, "ibench-2021"))

    assert [r.name for r in runs] == ["100m.my5649.cx6d", "100m.my5731.cx6d", "100m.my8022.cx6d", "100m.pg131.cx5"]
    # rel.l.i1 and rel.q100.2: the author's outputs, each listed with why.
    assert [path for path, _ in not_read] == ["ibench-2021/100m/res.in/rel.l.i1", "ibench-2021/100m/res.in/rel.q100.2"]
    assert {why for _, why in not_read} == {ibench.NOT_A_STEP_RESULT}
    by_name = {r.name: r for r in runs}
    my8022 = by_name["100m.my8022.cx6d"]
    assert list(my8022.steps) == STEPS_2021 and len(my8022.sources) == 6
    # The summary is more precise than the merged table (which prints rps as an integer): it wins.
    assert my8022.steps["l.i1"].values["rps"] == 1045.2 and my8022.steps["l.i1"].source.endswith(
        "o.sum.t.100m.my8022.cx6d"
    )
    my5649 = by_name["100m.my5649.cx6d"]
    assert ibench.ordered_steps(my5649.steps) == ["l.i0", "l.x", "l.i1", "q100.1", "q100.2"]
    assert my5649.steps["l.i0"].values["ips"] == 140449 and my5649.steps["l.i0"].values["tag"] == "my5649.cx6d"
    # Nothing in the 2021 files says how many clients ran: 1, from q100's 100 inserts/s, and said so.
    assert my5649.clients == 1 and my5649.clients_source == "estimated" and "estimated" in my5649.warnings[0]
    assert warnings == []


def test_a_step_directory_with_o_res_and_client_output_is_read_like_the_summary_would_be() -> None:
    # Hand-built (see the module docstring): 2 clients, each on its own table, 4 seconds of qr100.
    files = _step_dir(
        "2u.1tno/20m.my8032.cx6d/qr100.L1", clients=2, ips=[100, 98, 101, 99], qps=[5800, 5900, 6000, 5700], query=True
    )
    files.update(
        _step_dir("2u.1tno/20m.my8032.cx6d/l.i0", clients=2, ips=[900, 1000, 1100, 1000], qps=[0, 0, 0, 0], query=False)
    )
    runs, _, _ = ibench.parse_bundle_files((path, text.encode(), 0.0) for path, text in files.items())

    (run,) = runs
    assert (run.name, run.clients, run.clients_source, run.table_per_client) == (
        "20m.my8032.cx6d",
        2,
        "directory",
        True,
    )
    assert run.workload_name == "ibench 2 clients, 20m rows, table per client"
    qr100 = run.steps["qr100"]
    assert qr100.values["ips"] == 200 and qr100.values["qps"] == 5873
    # Per op = per query in a query step; writes per insert always (etl.sh's choice of table per column).
    assert qr100.values["rpq"] == 0.002 and qr100.values["rkbpq"] == 0.035 and qr100.values["cspq"] == 4.144
    assert qr100.values["wpi"] == 1.503 and qr100.values["wkbpi"] == 46.5
    assert qr100.values["dbgb1"] == 22.3 and qr100.values["dbgb2"] == 62.8 and qr100.values["rss"] == 11.2
    assert qr100.values["maxop"] == 0.030 and qr100.values["p50"] == 5800 and qr100.values["p99"] == 3100
    assert qr100.values["cpupq"] is None  # needs the server's CPU count, which o.res lacks: missing, not invented
    assert qr100.target_rate == 100
    # The two clients' seconds are added up; the histograms too.
    assert qr100.per_second == {
        "seconds_per_point": 1.0,
        "ips": [200, 196, 202, 198],
        "qps": [11600, 11800, 12000, 11400],
    }
    assert qr100.histograms["insert"].counts[:3] == [2, 4, 6] and qr100.histograms["query"].max_s == 0.0302
    assert run.step_target("qr100") == 100
    assert run.step_target("l.i0") is None  # a load step has no insert target, whatever the command line says
    l_i0 = run.steps["l.i0"]
    assert l_i0.values["rpq"] == 0.060 and l_i0.values["maxop"] == 0.015 and l_i0.values["p50"] == 100
    assert "qps" not in (l_i0.per_second or {})  # no list of zeros for a step without queries


def test_client_output_alone_gives_the_rates_when_o_res_is_missing() -> None:
    # Hand-built: only o.ib files, in the older q.L<loop>.ips<rate> directories (q.L2.ips100 is q100.2).
    text = _client(rate=100, table="pi1", ips=[100, 100], qps=[10, 30], ins=[1] * 10, query=[1] * 10)
    files = [
        ("1u.1tyes/10m.pg131.cx5/q.L1.ips100/o.ib.dop1.1", text.encode(), 0.0),
        ("1u.1tyes/10m.pg131.cx5/q.L2.ips100/o.ib.dop1.1", text.encode(), 0.0),
        ("1u.1tyes/10m.pg131.cx5/q.L3.ips200/o.ib.dop1.1", text.encode(), 0.0),
    ]
    (run,), _, _ = ibench.parse_bundle_files(files)

    assert sorted(run.steps) == ["q100.1", "q100.2", "q200.1"]
    assert run.steps["q100.1"].values["ips"] == 100 and run.steps["q100.1"].values["qps"] == 20
    assert run.table_per_client is False and run.workload_name == "ibench 1 client, 10m rows, one table"


def test_a_long_per_second_series_is_averaged_into_buckets() -> None:
    seconds = 2 * ibench.MAX_SERIES_POINTS + 2
    text = _client(
        rate=1000, table="pi1", ips=[1000, 2000] * (seconds // 2), qps=[5] * seconds, ins=[0] * 10, query=[0] * 10
    )
    series = ibench.per_second_series([ibench.parse_client_output(text, name="o.ib.dop1.1")])

    assert series is not None
    # 7202 seconds do not fit in 3600 points: buckets of 3 seconds, each the mean of its seconds.
    assert series["seconds_per_point"] == 3.0 and len(series["ips"]) == 2401 <= ibench.MAX_SERIES_POINTS
    assert series["ips"][:2] == [1333, 1667] and series["qps"][0] == 5
    assert series["ips"][-1] == 1500  # the last bucket holds the 2 seconds left: their mean


def test_the_bundle_reader_keeps_ibench_files_and_skips_the_authors_outputs(corpus: Path) -> None:
    contents = read_bundle(archive_directory(corpus / IBENCH), name="ibench.tgz")

    names = [f.path.rsplit("/", 1)[-1] for f in contents.files_of("ibench")]
    assert sorted(names) == [
        "mrg.l.i0",
        "mrg.l.i1",
        "mrg.l.x",
        "mrg.q100.1",
        "mrg.q100.2",
        "o.sum.t.100m.my8022.cx6d",
        "o.sum.t.100m.pg131.cx5",
    ]
    assert contents.runs == [] and contents.files_of("db_bench") == []
    assert sorted(p.rsplit("/", 1)[-1] for p in contents.ignored) == ["rel.l.i1", "rel.q100.2"]


# --------------------------------------------------------------------------- importing


@pytest.mark.django_db
def test_the_corpus_imports_as_four_ibench_runs_whose_qps_is_each_steps_throughput(corpus: Path) -> None:
    report = submit_and_import(archive_directory(corpus / IBENCH), name="ibench.tgz", source=Bundle.Source.COMMAND)

    assert [r.name for r in report.runs] == [
        "100m.my5649.cx6d",
        "100m.my5731.cx6d",
        "100m.my8022.cx6d",
        "100m.pg131.cx5",
    ]
    run = Run.objects.select_related("build__version__dbms", "workload", "config", "server").get(
        name="100m.my8022.cx6d"
    )
    assert (run.build.version.dbms.name, run.build.version.text, run.config.name) == ("MySQL", "8.0.22", "cx6d")
    assert run.workload.suite == suites.IBENCH.name and run.workload.name == "ibench 100m rows"
    assert run.workload.params["rows"] == "100m" and run.workload.params["clients_source"] == "estimated"
    assert run.server.name == "ibench-2021"
    results = {r.microbenchmark.test: r for r in Result.objects.filter(run=run).select_related("microbenchmark")}
    assert list(results) == STEPS_2021 or sorted(results) == sorted(STEPS_2021)
    # Q: inserts/s for l.i0 and l.i1, indexed rows/s for l.x, queries/s for the query steps.
    assert results["l.i0"].qps == 86580 and results["l.x"].qps == 108686 and results["l.i1"].qps == 12970
    assert results["q100.1"].qps == 5873 and results["q1000.2"].qps == 6027
    # Every column by name, and the SLA's inputs.
    extra = results["q400.1"].extra
    assert {c for c in ibench.CURRENT_COLUMNS} <= set(extra)
    assert extra["ips"] == 399 and extra["cpupq"] == 189 and extra["rss"] == 11.2 and extra["tag"] == "100m.my8022.cx6d"
    assert extra["target_rate"] == 400 and extra["clients"] == 1 and extra["target_ips"] == 400
    assert extra["printed"]["rps"] == "53.9"
    assert results["l.x"].extra["p50"] is None and "target_ips" not in results["l.x"].extra
    assert results["l.i1"].rps == 1045.2 and results["l.i1"].r_o == 0.081 and results["l.i1"].cpu_o == 89
    assert set(Microbenchmark.objects.filter(suite=suites.IBENCH.name).values_list("test", flat=True)) == set(
        STEPS_2021
    )
    assert not Microbenchmark.objects.filter(suite=suites.IBENCH.name, is_warmup=True).exists()
    assert Workload.objects.filter(suite=suites.IBENCH.name).count() == 1


@pytest.mark.django_db
def test_importing_the_same_results_again_adds_nothing(corpus: Path) -> None:
    data = archive_directory(corpus / IBENCH)
    submit_and_import(data, name="ibench.tgz", source=Bundle.Source.COMMAND)
    again = submit_and_import(data, name="ibench.tgz", source=Bundle.Source.COMMAND)
    # The summaries alone hold the same rows as the two runs they fed: recognised, not stored twice.
    summaries_only = tgz_of_files({p.name: p.read_bytes() for p in (corpus / IBENCH / "100m").glob("o.sum.t.*")})
    summaries = submit_and_import(summaries_only, name="summaries.tgz", source=Bundle.Source.COMMAND)

    assert again.already_imported
    assert [(r.name, r.skipped) for r in summaries.runs] == [("100m.my8022.cx6d", True), ("100m.pg131.cx5", True)]
    assert Run.objects.count() == 4
    assert Result.objects.filter(run__name="100m.pg131.cx5").count() == 15


@pytest.mark.django_db
def test_a_result_directory_bundle_keeps_the_per_second_rates_and_histograms() -> None:
    # Hand-built raw output (see the module docstring).
    files = _step_dir("res/2u.1tno/20m.my8032.cx6d/qr100.L1", clients=2, ips=[100, 98], qps=[5800, 5900], query=True)
    submit_and_import(
        tgz_of_files({k: v.encode() for k, v in files.items()}), name="raw.tgz", source=Bundle.Source.COMMAND
    )

    result = Result.objects.select_related("run__workload").get()
    assert result.dop == 2 and result.qps == 5873 and result.threads == 2
    assert result.run.workload.params == {
        "clients": 2,
        "clients_source": "directory",
        "rows": "20m",
        "table_per_client": True,
        "target_rates": [100],
    }
    assert result.extra["per_second"] == {"seconds_per_point": 1.0, "ips": [200, 196], "qps": [11600, 11800]}
    assert result.extra["rt_hist"]["buckets"][0] == "256us" and result.extra["rt_hist"]["insert"]["counts"][2] == 6
    assert result.extra["target_ips"] == 200 and result.lat_max_ms == pytest.approx(30.0)


@pytest.mark.django_db
def test_a_step_directory_outside_a_result_directory_is_refused_and_nothing_is_written() -> None:
    files = _step_dir("qr100.L1", clients=1, ips=[100], qps=[10], query=True)
    with pytest.raises(ImportFailed, match=r"<rows>\.<build>\.<config>"):
        submit_and_import(
            tgz_of_files({k: v.encode() for k, v in files.items()}), name="bad.tgz", source=Bundle.Source.COMMAND
        )
    assert not Run.objects.exists() and not Bundle.objects.exists()


@pytest.mark.django_db
def test_sysbench_run_directories_and_ibench_summaries_import_together(corpus: Path) -> None:
    run_dir = "x.my8044_rel_o2nofp.z12a_c8r32.pk1"
    small = corpus / "sysbench-mysql-small" / run_dir
    files = {f"{run_dir}/{p.name}": p.read_bytes() for p in small.glob("sb.*.point-query.range100.pk1.dop1")}
    files["ib/o.sum.t.100m.pg131.cx5"] = (corpus / IBENCH / "100m/o.sum.t.100m.pg131.cx5").read_bytes()

    report = submit_and_import(tgz_of_files(files), name="both.tgz", source=Bundle.Source.COMMAND)

    assert sorted(r.name for r in report.runs) == ["100m.pg131.cx5", run_dir]
    assert set(Workload.objects.values_list("suite", flat=True)) == {suites.SYSBENCH.name, suites.IBENCH.name}


@pytest.mark.django_db
def test_a_manifest_names_the_server_and_the_run_page_lists_every_step(corpus: Path, client: Client) -> None:
    files = {p.name: p.read_bytes() for p in (corpus / IBENCH / "100m").glob("o.sum.t.*")}
    files["benchdash.toml"] = b'server = "pn53"\n[runs."100m.pg131.cx5"]\nnotes = "Postgres 13.1, config x5"\n'
    submit_and_import(tgz_of_files(files), name="with-manifest.tgz", source=Bundle.Source.COMMAND)

    run = Run.objects.select_related("server", "build").get(name="100m.pg131.cx5")
    assert run.server.name == "pn53" and run.build.notes == "Postgres 13.1, config x5"
    page = client.get(reverse("runs:run", args=[run.pk]))
    assert page.status_code == 200 and "q1000.2" in page.content.decode() and "l.x" in page.content.decode()
