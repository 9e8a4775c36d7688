"""Parsing the settings a bundle stores: my.cnf, conf.diff, SHOW GLOBAL VARIABLES, psql show all, meminfo, sysbench."""

from __future__ import annotations

import re
import tarfile
from pathlib import Path

import pytest

from runs import configs

MYSQL_SMALL = "sysbench-mysql-small"
PG_TARBALLS = "sysbench-pg-tarballs"


def _member(tarball: Path, suffix: str) -> str:
    """Text of the first member of a real tarball whose name ends with ``suffix`` (read in place, never copied)."""
    with tarfile.open(tarball) as tar:
        for member in sorted(tar.getmembers(), key=lambda m: m.name):
            if member.isfile() and member.name.endswith(suffix):
                handle = tar.extractfile(member)
                assert handle is not None
                return handle.read().decode()
    raise AssertionError(f"{tarball.name} has no member ending in {suffix}")


def _pg(corpus: Path, version: str) -> Path:
    return next((corpus / PG_TARBALLS).glob(f"x.pg{version}_*.tar.gz"))


def _show_variables(corpus: Path, build: str) -> str:
    return next((corpus / MYSQL_SMALL).glob(f"x.{build}_*/sb.o.myvac.show.1")).read_text()


# --------------------------------------------------------------------------- my.cnf

MY_CNF = """\
# written by hand from the MySQL option-file rules
[client]
port = 3306
socket=/tmp/mysql.sock

[mysqld]
innodb-buffer-pool-size = 24G   # sized for 32G of RAM
loose-innodb_numa_interleave=1
skip-log-bin
skip-name-resolve
performance_schema
innodb_flush_method = "O_DIRECT_NO_FSYNC"
disable-log-slave-updates
enable-event-scheduler
sql_mode='STRICT_TRANS_TABLES # inside quotes'
; an old-style comment
max_connections=100
max_connections=500
!includedir /etc/mysql/conf.d/

[mysqld-8.0]
innodb_redo_log_capacity=8G
"""


def test_a_my_cnf_gives_server_variable_names_for_dashes_loose_prefixes_and_flags() -> None:
    settings = configs.parse_mycnf(MY_CNF)
    assert settings["innodb_buffer_pool_size"] == "24G"
    assert settings["innodb_numa_interleave"] == "1"
    assert settings["log_bin"] == "OFF"
    assert settings["skip_name_resolve"] == "ON"  # a real variable named skip_…, not a negation
    assert settings["performance_schema"] == "ON"
    assert settings["innodb_flush_method"] == "O_DIRECT_NO_FSYNC"
    assert settings["log_slave_updates"] == "OFF"
    assert settings["event_scheduler"] == "ON"
    assert settings["sql_mode"] == "STRICT_TRANS_TABLES # inside quotes"
    assert settings["max_connections"] == "500"
    assert settings["innodb_redo_log_capacity"] == "8G"
    assert settings["!includedir"] == "/etc/mysql/conf.d/"


def test_client_sections_of_a_my_cnf_are_kept_apart_from_the_server() -> None:
    settings = configs.parse_mycnf(MY_CNF)
    assert settings["[client] port"] == "3306"
    assert settings["[client] socket"] == "/tmp/mysql.sock"
    assert "port" not in settings and "socket" not in settings


def test_a_config_file_is_read_as_my_cnf_only_when_it_looks_like_one(corpus: Path) -> None:
    conf_diff = _member(_pg(corpus, "174"), "/conf.diff")
    assert not configs.looks_like_mycnf("conf.diff", conf_diff)
    assert configs.looks_like_mycnf("conf.diff", "[mysqld]\ninnodb_io_capacity=100\n")
    assert configs.settings_for_file("conf.diff", "config", "[mysqld]\ninnodb-io-capacity=100\n") == {
        "innodb_io_capacity": "100"
    }


# --------------------------------------------------------------------------- postgresql.conf


def test_the_real_conf_diff_of_pg174_parses_to_its_settings(corpus: Path) -> None:
    text = _member(_pg(corpus, "174"), "/conf.diff")
    settings = configs.parse_pg_conf(text)
    assert settings["huge_pages"] == "off"  # "huge_pages = \toff\t\t\t# on, off, or try"
    assert settings["wal_level"] == "replica"  # quoted in the file
    assert settings["shared_buffers"] == "96GB"
    assert settings["work_mem"] == "1GB"
    assert settings["jit"] == "off"
    assert "autovacuum_vacuum_cost_delay" in settings and settings["autovacuum_vacuum_cost_delay"] == "1ms"
    # Every uncommented assignment and nothing else: count them independently.
    assignments = [line for line in text.splitlines() if re.match(r"^\s*[a-z_]+\s*=", line)]
    assert len(settings) == len(assignments)


def test_pg10_conf_diff_leaves_out_what_pg10_does_not_know(corpus: Path) -> None:
    settings = configs.parse_pg_conf(_member(_pg(corpus, "1023"), "/conf.diff"))
    assert "jit" not in settings  # commented out: "not supported until pg11"
    assert "autovacuum_vacuum_insert_scale_factor" not in settings


def test_postgres_conf_values_keep_hashes_inside_quotes_and_equals_is_optional() -> None:
    text = "log_line_prefix = '%m [%p] # not a comment'   # a comment\nsearch_path 'a, ''b'''\nport=5433 # x\n"
    assert configs.parse_pg_conf(text) == {
        "log_line_prefix": "%m [%p] # not a comment",
        "search_path": "a, 'b'",
        "port": "5433",
    }


# --------------------------------------------------------------------------- SHOW GLOBAL VARIABLES


def test_show_variables_of_the_real_5651_run_skip_warnings_and_the_repeated_dump(corpus: Path) -> None:
    text = _show_variables(corpus, "my5651")
    settings = configs.parse_show_variables(text)
    rows = [line for line in text.splitlines() if "\t" in line and not line.startswith("Variable_name")]
    assert len(rows) == 2 * len(settings)  # the file holds the same dump twice
    assert not any(" " in name or ":" in name for name in settings)  # "Warning: Using a password …" is no variable
    assert settings["version"] == "5.6.51-log"
    assert settings["innodb_flush_method"] == "O_DIRECT_NO_FSYNC"


def test_eq_range_index_dive_limit_is_10_in_both_5651_and_8043_because_the_config_sets_it(corpus: Path) -> None:
    """The default moved from 10 to 200 in 5.7.4, but these runs' z12a config pins it."""
    old = configs.parse_show_variables(_show_variables(corpus, "my5651"))
    new = configs.parse_show_variables(_show_variables(corpus, "my8043"))
    assert old["eq_range_index_dive_limit"] == new["eq_range_index_dive_limit"] == "10"
    assert [c.name for c in configs.default_changes_between("MySQL", "5.6.51", "8.0.43", ["eq_range_index_dive_limit"])]


SB_GV_TAB = "Variable_name\tValue\ninnodb_io_capacity\t10000\ninit_connect\t\nsql_mode\tA,B\n"
SB_GV_BOXED = """\
+--------------------+-------+
| Variable_name      | Value |
+--------------------+-------+
| innodb_io_capacity | 10000 |
| init_connect       |       |
| sql_mode           | A,B   |
+--------------------+-------+
"""
SB_GV_VERTICAL = """\
*************************** 1. row ***************************
Variable_name: innodb_io_capacity
        Value: 10000
*************************** 2. row ***************************
Variable_name: init_connect
        Value:
*************************** 3. row ***************************
Variable_name: sql_mode
        Value: A,B
"""


@pytest.mark.parametrize("text", [SB_GV_TAB, SB_GV_BOXED, SB_GV_VERTICAL], ids=["batch", "table", "vertical"])
def test_an_sb_gv_file_parses_alike_in_each_form_the_mysql_client_prints(text: str) -> None:
    assert configs.parse_show_variables(text) == {"innodb_io_capacity": "10000", "init_connect": "", "sql_mode": "A,B"}


# --------------------------------------------------------------------------- psql show all


@pytest.mark.parametrize("version", ["1023", "1122", "174"])
def test_psql_show_all_of_each_real_tarball_has_as_many_settings_as_its_row_count(corpus: Path, version: str) -> None:
    text = _member(_pg(corpus, version), "/sb.pg.conf.point-query.range100.pk1")
    settings = configs.parse_pg_show_all(text)
    footer = re.search(r"^\((\d+) rows\)$", text, re.M)
    assert footer is not None
    assert len(settings) == int(footer[1])
    assert settings["work_mem"] == "1GB"
    assert settings["server_version"] == {"1023": "10.23", "1122": "11.22", "174": "17.4"}[version]
    assert settings["search_path"] == '"$user", public'


def test_show_all_columns_come_from_the_separator_so_a_bar_inside_a_setting_stays() -> None:
    text = (
        "        name        |     setting      | description\n"
        "--------------------+------------------+-------------\n"
        " log_line_prefix    | a | b            | Controls information prefixed to each log line.\n"
        " work_mem           | 4MB              | Sets the maximum memory.\n"
        "(2 rows)\n"
    )
    assert configs.parse_pg_show_all(text) == {"log_line_prefix": "a | b", "work_mem": "4MB"}


def test_unaligned_show_all_parses_too() -> None:
    text = "name|setting|description\nwork_mem|4MB|Sets the maximum memory.\njit|on|Allow JIT compilation.\n(2 rows)\n"
    assert configs.parse_pg_show_all(text) == {"work_mem": "4MB", "jit": "on"}


# --------------------------------------------------------------------------- hugepages


def test_the_real_sb_hp_file_says_no_huge_pages_were_reserved(corpus: Path) -> None:
    meminfo = configs.parse_meminfo(_member(_pg(corpus, "174"), "/sb.hp.pre"))
    assert meminfo["HugePages_Total"] == "0"
    assert meminfo["Hugepagesize"] == "2048 kB"
    hp = configs.hugepages(meminfo)
    assert (hp.pages, hp.page_kb, hp.anon_kb, hp.reserved_gb) == (0, 2048, 0, 0)
    assert hp.text == "none reserved (2048 kB pages)"


def test_reserved_huge_pages_and_mem_total_are_read_from_meminfo() -> None:
    hp = configs.hugepages(
        configs.parse_meminfo("MemTotal:       131891000 kB\nHugePages_Total:   51200\nHugepagesize:       2048 kB\n")
    )
    assert hp.reserved_gb == pytest.approx(100.0)
    assert hp.mem_total_kb == 131891000
    assert hp.text == "51200 × 2048 kB = 100.0 GB reserved"


# --------------------------------------------------------------------------- sysbench command line


def test_the_real_sysbench_command_line_gives_its_workload_parameters(corpus: Path) -> None:
    line = _member(_pg(corpus, "174"), "/sb.o.point-query.range100.pk1.dop40").splitlines()[0]
    params = configs.parse_sysbench_command(line)
    assert params["table-size"] == "10000000"
    assert params["tables"] == "8"
    assert params["range-size"] == "100"
    assert params["time"] == "330"
    assert params["rand-type"] == "uniform"
    assert params["skip-trx"] == "on"  # a bare flag
    assert params["script"] == "oltp_point_select.lua"  # the file name, not the checkout it ran from
    assert not any(key.endswith("password") for key in params)


def test_sysbench_options_match_across_spellings_and_the_lua_path_prefix() -> None:
    a = configs.parse_sysbench_command("sysbench --table_size=10 --skip_trx=1 /a/oltp_scan.lua run")
    b = configs.parse_sysbench_command("LUA_PATH=/x/?.lua /b/sysbench --table-size=10 --skip-trx=on /c/oltp_scan.lua")
    assert a == b == {"table-size": "10", "skip-trx": "on", "script": "oltp_scan.lua"}


def test_threads_and_connection_options_are_not_workload_but_table_size_and_custom_options_are() -> None:
    assert not configs.is_workload_option("threads")
    assert not configs.is_workload_option("mysql-host")
    assert not configs.is_workload_option("pgsql-conn-id")
    assert configs.is_workload_option("table-size")
    assert configs.is_workload_option("db-ps-mode")
    assert configs.is_workload_option("random-points")  # an option of the write-ups' own Lua scripts


# --------------------------------------------------------------------------- values and defaults


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("1", "1.000000", True),  # innodb_max_dirty_pages_pct as 5.6 and 9.5 print it
        ("24G", "25769803776", True),
        ("1024", "1kB", True),  # track_activity_query_size in pg10 and pg17
        ("1800s", "30min", True),
        ("ON", "1", True),
        ("O_DIRECT", "o_direct", True),
        ("10", "200", False),
        ("1024", "1s", False),  # a bare number next to a duration is not guessed
        ("fsync", "O_DIRECT", False),
    ],
)
def test_values_compare_as_the_dbms_means_them(a: str, b: str, same: bool) -> None:
    assert configs.same_value(a, b) is same


def test_known_default_changes_lie_between_two_versions_in_either_order() -> None:
    def names(dbms: str, a: str, b: str) -> set[str]:
        return {c.name for c in configs.default_changes_between(dbms, a, b)}

    assert "eq_range_index_dive_limit" in names("MySQL", "5.6.51", "8.0.43")
    assert "eq_range_index_dive_limit" not in names("MySQL", "5.7.44", "8.0.43")
    assert {"innodb_flush_method", "innodb_change_buffering"} <= names("MySQL", "8.4.6", "8.0.44")
    assert "innodb_flush_method" not in names("MySQL", "8.4.6", "9.5.0")
    assert "innodb_flush_method" in names("FB MyRocks", "8.0.32", "8.4.0")  # a MySQL fork has MySQL's defaults
    assert names("MariaDB", "10.5.25", "10.6.18") == {"innodb_flush_method"}
    assert {"extra_float_digits", "password_encryption", "vacuum_cost_page_miss"} <= names("Postgres", "10.23", "17.4")
    assert "wal_level" not in names("Postgres", "10.23", "17.4")  # changed in 10 itself
    assert "effective_io_concurrency" in names("Postgres", "17.4", "18beta1")  # a beta has its release's defaults
    assert names("MySQL", "not a version", "8.0.43") == set()


def test_every_documented_default_change_names_a_real_change() -> None:
    for change in configs.KNOWN_DEFAULT_CHANGES:
        assert not configs.same_value(change.old, change.new), change
        assert change.source
        assert configs.default_changes_between(change.family, "0.1", change.version, [change.name]), change
