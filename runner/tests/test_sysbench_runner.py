"""The runner alone (no Django): the files it writes, host metrics, naming, and every microbenchmark on real servers."""

from __future__ import annotations

import os
import stat
import threading
import time
from pathlib import Path

import pytest

from runner import sysbench_runner as sr
from runner.server_version import VersionError, propose_build_label
from runner.tests.services import Server
from runs.importer import archive_directory, parse_bundle
from suites.naming import parse_build
from suites.sysbench import parse as sb
from suites.sysbench import parse as sysbench

VMSTAT = """\
procs -----------memory---------- ---swap-- -----io---- -system-- -------cpu-------
 r  b   swpd   free   buff  cache   si   so    bi    bo   in   cs us sy id wa st gu
 1  0      0 100000   2000  30000    0    0    50    60  100  900 30 10 60  0  0  0
 2  0      0 100000   2000  30000    0    0     0    40  300 2000 40 10 50  0  0  0
 1  0      0 100000   2000  30000    0    0     0    80  300 4000 60 20 20  0  0  0
"""

IOSTAT = """\
Linux 6.1.0 (host) \t01/02/2026 \t_x86_64_\t(2 CPU)

avg-cpu:  %user   %nice %system %iowait  %steal   %idle
           1.00    0.00    1.00    0.00    0.00   98.00

Device            r/s     rkB/s   rrqm/s  %rrqm r_await rareq-sz     w/s     wkB/s   wrqm/s  %util
loop0            9.00     90.00     0.00   0.00    0.00     0.00    9.00     90.00     0.00   0.00
nvme0n1        100.00   1000.00     0.00   0.00    0.10     4.00  100.00   1000.00     0.00   1.00

avg-cpu:  %user   %nice %system %iowait  %steal   %idle
          50.00    0.00   10.00    0.00    0.00   40.00

Device            r/s     rkB/s   rrqm/s  %rrqm r_await rareq-sz     w/s     wkB/s   wrqm/s  %util
loop0            9.00     90.00     0.00   0.00    0.00     0.00    9.00     90.00     0.00   0.00
md0             50.00    500.00     0.00   0.00    0.10     4.00   50.00    500.00     0.00   1.00
nvme0n1         10.00    200.00     0.00   0.00    0.10     4.00   20.00    400.00     0.00   1.00
nvme1n1         30.00    600.00     0.00   0.00    0.10     4.00   40.00    800.00     0.00   1.00
"""


# --------------------------------------------------------------------------- host metrics


def test_vmstat_drops_the_since_boot_line_and_averages_the_rest() -> None:
    cpu = sr.summarize_vmstat(VMSTAT)
    assert cpu == sr.CpuSample(samples=2, cs_per_s=3000.0, cpu_per_s=65.0)


def test_vmstat_skips_warm_up_samples_too() -> None:
    assert sr.summarize_vmstat(VMSTAT, skip=1) == sr.CpuSample(samples=1, cs_per_s=4000.0, cpu_per_s=80.0)
    assert sr.summarize_vmstat(VMSTAT, skip=2) is None


def test_iostat_sums_physical_disks_of_each_report_after_the_first() -> None:
    io = sr.summarize_iostat(IOSTAT)
    # md0 and loop0 are virtual: counting them would count the same IO twice.
    assert io == sr.IoSample(samples=1, r_per_s=40.0, rkb_per_s=800.0, w_per_s=60.0, wkb_per_s=1200.0)


def test_iostat_can_be_limited_to_named_devices() -> None:
    io = sr.summarize_iostat(IOSTAT, devices={"md0"})
    assert io is not None and (io.r_per_s, io.wkb_per_s) == (50.0, 500.0)


def test_the_met_file_parses_back_through_the_importer() -> None:
    cpu = sr.CpuSample(samples=2, cs_per_s=3000.0, cpu_per_s=65.0)
    io = sr.IoSample(samples=2, r_per_s=40.0, rkb_per_s=800.0, w_per_s=60.0, wkb_per_s=1200.0)
    text = sr.format_met(1000.0, cpu, io)
    assert text is not None
    lines = text.splitlines()
    assert lines[1].split("\t") == ["samp", "r/s", "rMB/s", "w/s", "wMB/s", "r/o", "rKB/o", "wKB/o", "o/s"]
    assert lines[4].split("\t") == ["samp", "cs/s", "cpu/s", "cs/o", "cpu/o"]
    met = sb.parse_met(text)
    assert met["cs_o"] == pytest.approx(3.0) and met["cpu_o"] == pytest.approx(0.065)
    assert met["rkb_o"] == pytest.approx(0.8) and met["wkb_o"] == pytest.approx(1.2) and met["o_s"] == 1000.0


def test_without_iostat_the_met_file_keeps_cpu_on_its_usual_lines() -> None:
    text = sr.format_met(500.0, sr.CpuSample(samples=3, cs_per_s=1000.0, cpu_per_s=50.0), None)
    assert text is not None
    assert text.splitlines()[4].startswith("samp\tcs/s")
    assert sb.parse_met(text) == {"o_s": 500.0, "cs_s": 1000.0, "cpu_s": 50.0, "cs_o": 2.0, "cpu_o": 0.1}


def test_without_either_tool_there_is_no_met_file() -> None:
    assert sr.format_met(500.0, None, None) is None


def test_a_summary_line_holds_one_value_per_concurrency_then_engine_test_and_range() -> None:
    mb = sr.CATALOGUE["point-query_range=100"]
    line = sr.format_summary([1500.5, 2900.0], "innodb", mb)
    assert line == "1500.5\t2900\tinnodb point-query range=100\n"
    assert sb.parse_summary(line) == [1500.5, 2900.0]


# --------------------------------------------------------------------------- lists, parameters, naming


def test_the_full_list_is_the_current_32_and_quick_is_a_subset_of_it() -> None:
    assert len(sr.CATALOGUE) == 32
    assert set(sr.QUICK) < set(sr.CATALOGUE)
    assert {"point-query_range=100", "read-only_range=10", "update-index_range=100", "scan_range=100"} <= set(sr.QUICK)


def test_microbenchmarks_run_reads_first_whatever_order_they_were_chosen_in() -> None:
    order = [m.label for m in sr.in_run_order(["insert_range=100", "scan_range=100", "point-query_range=100"])]
    assert order == ["point-query_range=100", "scan_range=100", "insert_range=100"]


def test_an_unknown_microbenchmark_is_refused_by_name() -> None:
    with pytest.raises(sr.RunnerError, match="no-such-test_range=1"):
        sr.in_run_order(["no-such-test_range=1"])


def test_every_custom_script_exists_in_the_lua_directory() -> None:
    custom = {m.script for m in sr.FULL if m.script.startswith("bd_")}
    assert custom == {"bd_points", "bd_ranges", "bd_scan", "bd_update_inlist", "bd_update_one", "bd_update_zipf"}
    for script in [*custom, "bd_lib", "bd_server"]:
        assert (sr.LUA_DIR / f"{script}.lua").is_file(), script


def test_the_recorded_connection_shows_the_password_only_as_stars() -> None:
    conn = sr.Connection("mysql", "db1", 3306, "bench", "sbtest", password="Secret-1")
    assert conn.options(redacted=True) == [
        "--mysql-host=db1",
        "--mysql-port=3306",
        "--mysql-user=bench",
        "--mysql-password=***",
        "--mysql-db=sbtest",
    ]
    # For sysbench itself it goes in the 0600 config file, not on the command line ps shows.
    assert "Secret-1" not in " ".join(conn.options(redacted=False))
    assert conn.config_file_text() == "mysql-password='Secret-1'\n"
    assert "Secret-1" not in repr(conn)


@pytest.mark.parametrize(
    ("password", "line"),
    [
        ("two words, #1", "pgsql-password='two words, #1'\n"),
        ("it's", 'pgsql-password="it\'s"\n'),
        ('say "hi"', "pgsql-password='say \"hi\"'\n"),
    ],
)
def test_spaces_commas_hashes_and_one_kind_of_quote_go_quoted_in_the_config_file_never_on_the_command_line(
    password: str, line: str
) -> None:
    conn = sr.Connection("postgres", "db1", 5432, "bench", "sbtest", password=password)
    assert conn.config_file_text() == line
    assert password not in " ".join(conn.options(redacted=False))
    assert "--pgsql-password=***" in conn.options(redacted=True)


@pytest.mark.parametrize("password", ["both ' and \"", "line\nbreak", "x" * 201])
def test_a_password_the_config_file_cannot_carry_is_refused_not_put_on_the_command_line(
    password: str, tmp_path: Path
) -> None:
    conn = sr.Connection("mysql", "127.0.0.1", 3306, "bench", "sbtest", password=password)
    assert sr.password_problem(password) is not None
    with pytest.raises(sr.RunnerError, match="cannot be passed to sysbench"):
        conn.config_file_text()
    params = sr.Parameters(microbenchmarks=("scan_range=100",), tables=1, table_size=10, threads=(1,), seconds=1)
    with pytest.raises(sr.RunnerError, match="cannot be passed to sysbench"):
        sr.run(conn, params, build="ma101119_rel", config="tiny", workdir=tmp_path)
    assert list(tmp_path.iterdir()) == []  # refused before anything was written


def test_parameters_refuse_a_run_that_measures_nothing() -> None:
    with pytest.raises(sr.RunnerError):
        sr.Parameters(microbenchmarks=(), tables=1, table_size=10, threads=(1,), seconds=1)
    with pytest.raises(sr.RunnerError):
        sr.Parameters(microbenchmarks=("scan_range=100",), tables=1, table_size=10, threads=(), seconds=1)


def test_the_estimate_grows_with_tests_concurrencies_and_seconds() -> None:
    small = sr.Parameters(microbenchmarks=sr.QUICK, tables=1, table_size=10_000, threads=(1,), seconds=60)
    large = sr.Parameters(microbenchmarks=tuple(sr.CATALOGUE), tables=8, table_size=10**7, threads=(1, 8), seconds=300)
    assert small.seconds * len(sr.QUICK) < sr.estimate_seconds(small) < sr.estimate_seconds(large)


@pytest.mark.parametrize(
    ("kind", "reported", "label"),
    [
        ("mariadb", "10.11.19-MariaDB-0+deb12u1", "ma101119_rel"),
        ("mariadb", "11.4.2-MariaDB", "ma110402_rel"),
        ("mysql", "8.4.6", "my8406_rel"),
        ("mysql", "8.0.44-log", "my8044_rel"),
        ("mysql", "5.6.51", "my5651_rel"),
        ("mysql", "10.6.21-MariaDB", "ma100621_rel"),
        ("postgres", "15.20 (Debian 15.20-0+deb12u1)", "pg1520_rel"),
        ("postgres", "17.4", "pg174_rel"),
        ("postgres", "9.6.24", "pg9624_rel"),
        ("postgres", "18beta1", "pg18beta1_rel"),
    ],
)
def test_the_proposed_build_label_names_the_version_the_server_reported(kind: str, reported: str, label: str) -> None:
    assert propose_build_label(kind, reported) == label
    _dbms, version, flavour, warnings = parse_build(label)
    assert warnings == [] and flavour == "rel" and reported.startswith(version)


def test_a_version_without_digits_is_not_guessed() -> None:
    with pytest.raises(VersionError):
        propose_build_label("postgres", "devel")


# --------------------------------------------------------------------------- real servers


@pytest.mark.services
def test_every_microbenchmark_of_the_full_list_runs_and_the_directory_parses(server: Server, tmp_path: Path) -> None:
    """A few events of each test: every Lua script works on this DBMS, and the importer reads all of it."""
    conn = sr.Connection(server.kind, server.host, server.port, server.user, server.database, server.password)
    params = sr.Parameters(
        microbenchmarks=tuple(sr.CATALOGUE), tables=1, table_size=2_000, threads=(1,), seconds=1, events=20
    )
    build = "ma101119_smoke" if server.kind == "mariadb" else "pg1520_smoke"
    outcome = sr.run(conn, params, build=build, config="tiny", workdir=tmp_path)

    assert outcome.state == "complete", outcome.error
    parsed = parse_bundle(archive_directory(outcome.run_dir), name="smoke.tar.gz")
    (run,) = parsed.runs
    tests = {f"{r['test']}_range={r['range_size']}" for r in run.results if r["test"] != sysbench.LOAD_TEST}
    assert tests == set(sr.CATALOGUE)
    # The load step (sysbench prepare) is a result of its own beside the microbenchmarks.
    assert [r["test"] for r in run.results].count(sysbench.LOAD_TEST) == 1
    assert all(r["qps"] > 0 for r in run.results)
    assert run.sysbench is not None and run.sysbench.load_seconds is not None and run.sysbench.load_seconds > 0
    assert not list(tmp_path.glob("*.cfg")), "the password file outlives the run"
    for path in outcome.run_dir.iterdir():
        assert server.password not in path.read_text(errors="replace"), path.name


@pytest.mark.services
def test_stopping_the_runner_terminates_sysbench_and_keeps_what_it_wrote(mariadb: Server, tmp_path: Path) -> None:
    conn = sr.Connection("mariadb", mariadb.host, mariadb.port, mariadb.user, mariadb.database, mariadb.password)
    params = sr.Parameters(
        microbenchmarks=("point-query_range=100", "scan_range=100"),
        tables=1,
        table_size=2_000,
        threads=(1,),
        seconds=60,
    )
    stop = threading.Event()
    armed = threading.Event()

    def stop_once_running(progress: sr.Progress) -> None:
        if progress.steps[0].state == "running" and not armed.is_set():
            armed.set()
            threading.Timer(1.0, stop.set).start()

    outcome = sr.run(
        conn, params, build="ma101119_rel", config="tiny", workdir=tmp_path, stop=stop, on_progress=stop_once_running
    )

    assert outcome.state == "cancelled"
    assert [s.state for s in outcome.progress.steps] == ["cancelled", "skipped"]
    partial = outcome.run_dir / "sb.o.point-query.range100.pk1.dop1"
    assert partial.read_text().startswith("sysbench ")  # line 1, the command, is there; the totals are not
    assert "queries:" not in partial.read_text()


def _sysbench_children() -> list[int]:
    """The sysbench processes this test process started (the runner starts them directly)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue  # gone already
        comm, rest = stat[stat.index("(") + 1 : stat.rindex(")")], stat[stat.rindex(")") + 2 :].split()
        if comm == "sysbench" and int(rest[1]) == os.getpid():
            found.append(int(entry.name))
    return found


@pytest.mark.services
def test_a_running_sysbench_has_no_password_in_its_command_line_or_environment(mariadb: Server, tmp_path: Path) -> None:
    """MariaDB refuses the user without its password, so a complete run proves the file delivered it."""
    import pymysql

    password = 'Rs pw, #1 "q"'  # spaces, a comma, a hash and quotes: all must survive the config file
    user = f"benchdash_rs_{os.getpid()}"
    admin = pymysql.connect(host=mariadb.host, port=mariadb.port, user="root", autocommit=True)
    with admin.cursor() as cursor:
        for host in ("%", "localhost"):
            cursor.execute(f"DROP USER IF EXISTS '{user}'@'{host}'")
            cursor.execute(f"CREATE USER '{user}'@'{host}' IDENTIFIED BY {admin.escape(password)}")
            cursor.execute(f"GRANT ALL ON `{mariadb.database}`.* TO '{user}'@'{host}'")
    conn = sr.Connection("mariadb", mariadb.host, mariadb.port, user, mariadb.database, password)
    params = sr.Parameters(
        microbenchmarks=("point-query_range=100",), tables=1, table_size=2_000, threads=(1,), seconds=3
    )
    outcomes: list[sr.Outcome] = []
    seen: dict[int, tuple[bytes, bytes]] = {}
    modes: set[int] = set()
    thread = threading.Thread(
        target=lambda: outcomes.append(sr.run(conn, params, build="ma101119_rel", config="tiny", workdir=tmp_path))
    )
    try:
        thread.start()
        while thread.is_alive():
            for pid in _sysbench_children():
                try:
                    seen[pid] = (Path(f"/proc/{pid}/cmdline").read_bytes(), Path(f"/proc/{pid}/environ").read_bytes())
                    modes.add(stat.S_IMODE((tmp_path / "sysbench-connection.cfg").stat().st_mode))
                except OSError:
                    pass  # it ended between the listing and the read
            time.sleep(0.02)
        thread.join()
    finally:
        with admin.cursor() as cursor:
            for host in ("%", "localhost"):
                cursor.execute(f"DROP USER IF EXISTS '{user}'@'{host}'")
        admin.close()

    (outcome,) = outcomes
    assert outcome.state == "complete", outcome.error
    # The measured step lasts seconds, so the poll always sees it; the short prepare and cleanup steps (the same
    # option file) are checked whenever a busy machine lets the poll catch them.
    assert any(b"\0run\0" in cmdline + b"\0" for cmdline, _ in seen.values()), "the poll never saw sysbench run"
    for cmdline, environ in seen.values():
        if cmdline.split(b"\0")[1:] in ([b"--help"], [b"--help", b""]):
            continue  # the runner's once-per-process look at which options this sysbench has: no connection
        assert cmdline.split(b"\0")[0].endswith(b"sysbench") and b"--config-file=" in cmdline
        assert password.encode() not in cmdline and b"Rs pw" not in cmdline
        assert password.encode() not in environ
    assert modes == {0o600}
    assert not (tmp_path / "sysbench-connection.cfg").exists()
    recorded = (outcome.run_dir / "sb.o.point-query.range100.pk1.dop1").read_text()
    assert "--mysql-password=*** " in recorded.splitlines()[0] and "Rs pw" not in recorded
