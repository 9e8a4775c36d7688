"""What changed between two runs: settings diffs, workload mismatches, the diff and server pages, explanations."""

from __future__ import annotations

import gzip
import io
import math
import tarfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.template.loader import render_to_string
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from conftest import _SHARED, CORPUS, shared_rows
from reports.compare import ComparisonSpec, compute_comparison
from reports.diff import RunDiff, RunSettings, SourceDiff, diff_runs, run_settings, workload_mismatch
from reports.diff_views import load_run_settings
from reports.explain import explain, run_diff_for_column
from runs.importer import archive_directory, submit_and_import
from runs.models import Bundle, Run, Server

pytestmark = pytest.mark.django_db

PG10 = "x.pg1023_o2nofp.x10a_wm1_c32r128.pk1"
PG11 = "x.pg1122_o2nofp.x10a_wm1_c32r128.pk1"
PG17 = "x.pg174_o2nofp.x10a_wm1_c32r128.pk1"
MY56 = "x.my5651_rel_o2nofp.z12a_c8r32.pk1"
MY95 = "x.my9500_rel_o2nofp.z12a_c8r32.pk1"
HTMX = {"HX-Request": "true"}


def _import_pg(corpus: Path, *versions: str) -> dict[str, Run]:
    for version in versions:
        path = next((corpus / "sysbench-pg-tarballs").glob(f"x.pg{version}_*.tar.gz"))
        submit_and_import(path.read_bytes(), name=path.name, source=Bundle.Source.COMMAND)
    return {run.name: run for run in Run.objects.all()}


@shared_rows("pg")
def _pg_series() -> None:
    if CORPUS.is_dir():
        _import_pg(CORPUS, "1023", "1122", "174")


@pytest.fixture
def pg(corpus: Path) -> dict[str, Run]:
    """Three PostgreSQL runs imported, once for consecutive tests that want them (conftest's ``SharedRows``)."""
    _SHARED.get("pg")
    return {run.name: run for run in Run.objects.all()}


@pytest.fixture
def small(corpus: Path) -> dict[str, Run]:
    directory = corpus / "sysbench-mysql-small"
    submit_and_import(archive_directory(directory), name="small.tar.gz", source=Bundle.Source.COMMAND)
    return {run.name: run for run in Run.objects.filter(name__startswith="x.my")}


def _diff(a: Run, b: Run) -> RunDiff:
    loaded = load_run_settings([a.pk, b.pk])
    return diff_runs(loaded[a.pk][1], loaded[b.pk][1])


def _source(diff: RunDiff, name: str) -> SourceDiff:
    return next(s for s in diff.sources if s.source == name)


# --------------------------------------------------------------------------- real Postgres runs


def test_pg1023_and_pg174_differ_exactly_where_postgres_documented_a_default_change(pg: dict[str, Run]) -> None:
    diff = _diff(pg[PG10], pg[PG17])
    settings = _source(diff, "pg_settings")
    changed = {d.name: (d.a, d.b) for d in settings.changed}
    assert changed == {
        "extra_float_digits": ("0", "1"),
        "password_encryption": ("md5", "scram-sha-256"),
        "vacuum_cost_page_miss": ("10", "2"),
    }
    assert all(d.highlighted and d.matches_documented for d in settings.changed)
    assert {d.name for d in settings.identity} == {"server_version", "server_version_num"}
    # 1024 bytes in pg10 and "1kB" in pg17 are the same setting, printed with a unit since pg11.
    assert "track_activity_query_size" not in changed
    assert [(d.name, d.name_b) for d in settings.renamed] == [("force_parallel_mode", "debug_parallel_query")]
    assert "wal_keep_segments" in {d.name for d in settings.only_a}
    assert "hash_mem_multiplier" in {d.name for d in settings.only_b}


def test_the_conf_diff_of_pg174_adds_three_settings_that_pg10_did_not_have(pg: dict[str, Run]) -> None:
    config = _source(_diff(pg[PG10], pg[PG17]), "config")
    assert not config.changed and not config.only_a
    assert {d.name for d in config.only_b} == {
        "autovacuum_vacuum_insert_scale_factor",
        "vacuum_buffer_usage_limit",
        "jit",
    }
    jit = next(d for d in config.only_b if d.name == "jit")
    assert jit.defaults and not jit.highlighted  # pg10 has no jit: noted, but nothing changed in the reader's config


def test_known_default_changes_say_which_reached_the_runs(pg: dict[str, Run]) -> None:
    rows = {row.change.name: row for row in _diff(pg[PG10], pg[PG17]).default_changes}
    assert rows["password_encryption"].applies is True  # neither config sets it: the pg14 default reached pg17
    assert rows["checkpoint_completion_target"].applies is False  # both configs pin 0.9
    assert rows["checkpoint_completion_target"].pinned


def test_runs_of_one_workload_have_no_command_line_difference_and_no_warning(pg: dict[str, Run]) -> None:
    diff = _diff(pg[PG10], pg[PG17])
    assert diff.commands.shared == len(pg[PG10].commands) > 30
    assert diff.commands.options == []
    assert diff.warnings == []
    assert workload_mismatch(list(pg.values())) == []


# --------------------------------------------------------------------------- real MySQL runs


def test_5651_and_9500_variables_show_the_documented_mysql_default_changes(small: dict[str, Run]) -> None:
    diff = _diff(small[MY56], small[MY95])
    variables = _source(diff, "variables")
    highlighted = {d.name for d in variables.highlighted}
    assert {
        "max_allowed_packet",
        "event_scheduler",
        "local_infile",
        "innodb_strict_mode",
        "slave_parallel_workers",
        "table_open_cache",
    } <= highlighted
    assert all(d.matches_documented for d in variables.highlighted)
    changed = {d.name for d in variables.changed}
    # Pinned by the config in both runs, so equal although the default moved in 5.7.4.
    assert "eq_range_index_dive_limit" not in changed
    assert "innodb_max_dirty_pages_pct" not in changed  # "1" and "1.000000"
    assert {"back_log", "thread_stack", "sql_mode"} <= changed - highlighted  # changed with no documented default move
    assert {(d.name, d.name_b) for d in variables.renamed} == {
        ("tx_isolation", "transaction_isolation"),
        ("tx_read_only", "transaction_read_only"),
    }
    assert {"version", "basedir", "server_uuid"} <= {d.name for d in variables.identity}
    sql_mode = next(d for d in variables.changed if d.name == "sql_mode")
    assert sql_mode.items_only_a == ["STRICT_TRANS_TABLES"]
    assert sql_mode.items_only_b == ["NO_UNSIGNED_SUBTRACTION"]


def test_a_bundle_without_a_config_file_cannot_tell_whether_a_default_was_pinned(small: dict[str, Run]) -> None:
    rows = {row.change.name: row for row in _diff(small[MY56], small[MY95]).default_changes}
    eq = rows["eq_range_index_dive_limit"]
    assert not eq.has_config_a and (eq.running_a, eq.running_b) == ("10", "10")
    assert eq.applies is False  # the running values agree, whatever the config said
    assert rows["max_allowed_packet"].applies is True
    assert rows["innodb_use_fdatasync"].applies is None  # 5.6 has no such variable, and no config to read


# --------------------------------------------------------------------------- hand-written fixtures

MY_CNF_A = "[mysqld]\ninnodb_buffer_pool_size=24G\ninnodb-io-capacity = 10000\nloose-innodb_adaptive_hash_index=0\n"
MY_CNF_B = "[mysqld]\ninnodb_buffer_pool_size=25769803776\ninnodb_io_capacity=20000\nskip-log-bin\n"
SB_GV_A = "Variable_name\tValue\ninnodb_change_buffering\tall\ninnodb_flush_method\tfsync\nversion\t8.0.44\n"
SB_GV_B = "Variable_name\tValue\ninnodb_change_buffering\tnone\ninnodb_flush_method\tfsync\nversion\t8.4.6\n"


def _fixture_runs() -> tuple[RunSettings, RunSettings]:
    a = run_settings(
        "x.my8044.c.pk1", "MySQL", "8.0.44", [("my.cnf", "config", MY_CNF_A), ("sb.gv.1", "variables", SB_GV_A)]
    )
    b = run_settings(
        "x.my8406.c.pk1", "MySQL", "8.4.6", [("my.cnf", "config", MY_CNF_B), ("sb.gv.1", "variables", SB_GV_B)]
    )
    return a, b


def test_my_cnf_fixtures_diff_by_meaning_not_by_spelling() -> None:
    diff = diff_runs(*_fixture_runs())
    config = _source(diff, "config")
    assert [(d.name, d.a, d.b) for d in config.changed] == [("innodb_io_capacity", "10000", "20000")]
    assert config.same == 1  # 24G and 25769803776
    assert [d.name for d in config.only_a] == ["innodb_adaptive_hash_index"]
    assert [(d.name, d.b) for d in config.only_b] == [("log_bin", "OFF")]
    assert config.changed[0].highlighted  # innodb_io_capacity's default moved in 8.4.0
    assert not config.changed[0].matches_documented  # but these values are the config's, not the defaults


def test_sb_gv_fixtures_highlight_change_buffering_and_not_the_pinned_flush_method() -> None:
    diff = diff_runs(*_fixture_runs())
    variables = _source(diff, "variables")
    assert [(d.name, d.matches_documented) for d in variables.highlighted] == [("innodb_change_buffering", True)]
    rows = {row.change.name: row for row in diff.default_changes}
    assert rows["innodb_flush_method"].applies is False  # fsync in both: the 8.4 default did not reach B
    assert rows["innodb_change_buffering"].applies is True
    assert rows["innodb_adaptive_hash_index"].set_in_a == "0" and rows["innodb_adaptive_hash_index"].set_in_b is None


def test_a_run_without_a_file_is_reported_as_missing_not_as_hundreds_of_only_in_rows() -> None:
    a, _ = _fixture_runs()
    b = run_settings("x.my8406.c.pk1", "MySQL", "8.4.6", [("my.cnf", "config", MY_CNF_B)])
    variables = _source(diff_runs(a, b), "variables")
    assert (variables.in_a, variables.in_b, variables.compared) == (True, False, False)
    assert variables.only_a == []


# --------------------------------------------------------------------------- workload mismatch


@dataclass
class _Run:
    name: str
    commands: dict[str, str]


def _cmd(extra: str = "", threads: int = 1) -> str:
    return f"sysbench --db-driver=mysql --table-size=1000 --tables=8 --threads={threads} --time=300 {extra} x.lua run"


def test_workload_mismatch_ignores_threads_and_connection_details() -> None:
    a = _Run("a", {"point-query_range=100": _cmd("--mysql-host=h1 --mysql-password=x", threads=1)})
    b = _Run("b", {"point-query_range=100": _cmd("--mysql-host=h2 --mysql-password=y", threads=16)})
    assert workload_mismatch([a, b]) == []


def test_workload_mismatch_names_each_option_value_and_run_loudly() -> None:
    a = _Run("a", {"scan_range=100": _cmd(), "insert_range=100": _cmd()})
    b = _Run("b", {"scan_range=100": _cmd("--db-ps-mode=disable"), "insert_range=100": _cmd()})
    c = _Run("c", {"other_range=1": _cmd("--rand-type=zipfian")})  # shares no microbenchmark: nothing to compare
    (warning,) = workload_mismatch([a, b, c])
    assert warning.startswith("WORKLOAD MISMATCH: --db-ps-mode differs")
    assert "(not set) in a; disable in b" in warning
    assert "on 1 of 2 shared microbenchmarks" in warning
    assert "meaningless" in warning


def test_another_lua_script_for_the_same_microbenchmark_is_a_workload_mismatch() -> None:
    a = _Run("a", {"scan_range=100": "sysbench --table-size=10 /a/oltp_scan.lua run"})
    b = _Run("b", {"scan_range=100": "sysbench --table-size=10 /b/oltp_scan_v2.lua run"})
    assert workload_mismatch([a, b]) == [
        "WORKLOAD MISMATCH: the Lua script differs between runs (oltp_scan.lua in a; oltp_scan_v2.lua in b) "
        "on 1 of 1 shared microbenchmarks; relative QPS between these runs is meaningless"
    ]


def _resized_tarball(tarball: Path, *, build: str, table_size: int) -> bytes:
    """The real pg1023 bundle as if run with another --table-size: results and settings kept, raw samples left out."""
    out = io.BytesIO()
    with (
        tarfile.open(tarball) as src,
        gzip.GzipFile(fileobj=out, mode="wb", mtime=0) as gz,
        tarfile.open(fileobj=gz, mode="w") as dst,
    ):
        for member in src.getmembers():
            base = member.name.rsplit("/", 1)[-1]
            if not member.isfile() or not base.startswith(
                ("sb.o.", "sb.met.", "sb.r.", "sb.pg.conf.", "sb.hp.", "conf")
            ):
                continue
            handle = src.extractfile(member)
            assert handle is not None
            data = handle.read()
            if base.startswith("sb.o."):
                data = data.replace(b"--table-size=10000000", f"--table-size={table_size}".encode())
            info = tarfile.TarInfo(member.name.replace("x.pg1023_o2nofp.", f"x.{build}."))
            info.size = len(data)
            dst.addfile(info, io.BytesIO(data))
    return out.getvalue()


def test_two_imported_runs_that_differ_in_table_size_get_a_loud_warning(corpus: Path) -> None:
    runs = _import_pg(corpus, "1023")
    base = runs[PG10]
    data = _resized_tarball(
        next((corpus / "sysbench-pg-tarballs").glob("x.pg1023_*.tar.gz")), build="pg1023_big", table_size=20_000_000
    )
    # The uploader forced the same workload name, so both land in one comparison.
    submit_and_import(data, name="big.tar.gz", source=Bundle.Source.COMMAND, overrides={"workload": base.workload.name})
    big = Run.objects.get(name="x.pg1023_big.x10a_wm1_c32r128.pk1")
    assert big.workload_id == base.workload_id
    comparison = compute_comparison(ComparisonSpec(base_run_id=base.pk))
    runs_of_comparison = list(Run.objects.filter(pk__in=[i for c in comparison.columns for i in c.run_ids]))
    warnings = workload_mismatch(runs_of_comparison)
    assert len(warnings) == 1
    assert "WORKLOAD MISMATCH: --table-size differs" in warnings[0]
    assert f"10000000 in {base.name}" in warnings[0] and f"20000000 in {big.name}" in warnings[0]
    # The resized copy keeps no prepare files, so the base's load step is not shared. update-one runs with
    # --table-size=1 (it updates one row), so it is the same in both and not counted.
    shared = set(base.commands) & set(big.commands)
    assert len(shared) == len(base.commands) - 1
    resized = sum("--table-size=10000000" in base.commands[label] for label in shared)
    assert resized == len(shared) - 1
    assert f"on {resized} of {len(shared)} shared microbenchmarks" in warnings[0]
    # The diff page of the two runs says it too, above everything else.
    diff = _diff(base, big)
    assert diff.warnings == warnings
    assert [(o.option, o.a, o.b, o.workload) for o in diff.commands.options] == [
        ("table-size", "10000000", "20000000", True)
    ]


# --------------------------------------------------------------------------- the diff page


def test_the_diff_page_shows_highlighted_default_changes_and_swaps_in_place_for_htmx(
    pg: dict[str, Run], client: Client
) -> None:
    url = f"{reverse('reports:run_diff')}?a={pg[PG10].pk}&b={pg[PG17].pk}"
    page = client.get(url)
    assert page.status_code == 200
    html = page.content.decode()
    assert '<tr class="warning" data-setting="password_encryption">' in html
    assert "default changed in Postgres 14: md5 → scram-sha-256" in html
    assert "force_parallel_mode" in html and "debug_parallel_query" in html
    assert reverse("reports:server", args=[pg[PG10].server_id]) in html
    fragment = client.get(url, headers=HTMX)
    assert fragment.status_code == 200
    assert b"<html" not in fragment.content and b'id="diff"' in fragment.content
    assert b"password_encryption" in fragment.content


def test_the_diff_page_offers_the_series_when_only_one_run_is_given(pg: dict[str, Run], client: Client) -> None:
    html = client.get(f"{reverse('reports:run_diff')}?a={pg[PG10].pk}").content.decode()
    assert f"?a={pg[PG10].pk}&amp;b={pg[PG17].pk}" in html
    assert f"?a={pg[PG10].pk}&amp;b={pg[PG10].pk}" not in html


def test_the_empty_diff_page_tells_to_pick_the_runs_from_the_lists_not_to_type_ids(
    pg: dict[str, Run], client: Client
) -> None:
    html = client.get(reverse("reports:run_diff")).content.decode()
    hint = html.split('id="diff-hint">', 1)[1].split("</p>", 1)[0]
    assert "Pick run A and run B above" in hint
    assert "run id" not in html


def test_the_diff_page_refuses_unknown_runs_and_bad_ids(pg: dict[str, Run], client: Client) -> None:
    assert client.get(f"{reverse('reports:run_diff')}?a={pg[PG10].pk}&b=999999").status_code == 404
    assert client.get(f"{reverse('reports:run_diff')}?a=abc").status_code == 400
    assert client.get(reverse("reports:run_diff")).status_code == 200  # the empty form


def test_diff_page_queries_do_not_grow_with_the_number_of_settings(
    pg: dict[str, Run], small: dict[str, Run], client: Client
) -> None:
    def count(a: Run, b: Run) -> int:
        with CaptureQueriesContext(connection) as ctx:
            assert client.get(f"{reverse('reports:run_diff')}?a={a.pk}&b={b.pk}").status_code == 200
        return len(ctx.captured_queries)

    # 271 vs 377 Postgres settings in 3 files a run, 410 vs 597 MySQL variables in 1: three queries each,
    # the runs, their files, and every run for the two pickers; and five for "settings or code?" (B's
    # microbenchmarks, the runs and their files again, the benchmark run that made B, the experiment of the pair).
    assert count(pg[PG10], pg[PG17]) == count(small[MY56], small[MY95]) == 3 + 5


# --------------------------------------------------------------------------- the server page


def test_the_server_page_shows_what_the_bundles_tell(pg: dict[str, Run], client: Client) -> None:
    server = pg[PG17].server
    html = client.get(reverse("reports:server", args=[server.pk])).content.decode()
    assert '48 <span class="muted">(3 runs)</span>' in html
    assert "none reserved (2048 kB pages)" in html
    assert "x10a_wm1_c32r128: 32 cores, 128 GB" in html
    assert "to edit this server" in html and 'name="storage"' not in html  # no form without a login


def test_editing_a_server_needs_the_uploader_role(pg: dict[str, Run], client: Client, user_with_role: Any) -> None:
    server = pg[PG17].server
    url = reverse("reports:server", args=[server.pk])
    data = {"cpus": "48", "ram_gb": "128", "storage": "NVMe RAID0", "os": "Ubuntu 24.04", "governor": "performance"}
    anonymous = client.post(url, data)
    assert anonymous.status_code == 302 and "login" in anonymous["Location"]
    server.refresh_from_db()
    assert server.storage == ""

    client.force_login(User.objects.create_user("no-role", password="not-used-here"))
    assert 'name="storage"' not in client.get(url).content.decode()
    assert client.post(url, data).status_code == 403
    server.refresh_from_db()
    assert server.storage == ""

    client.force_login(user_with_role("uploader"))
    assert 'name="storage"' in client.get(url).content.decode()
    saved = client.post(url, data)
    assert saved.status_code == 302 and saved["Location"] == url
    server.refresh_from_db()
    assert (server.ram_gb, server.storage, server.os, server.governor) == (
        128,
        "NVMe RAID0",
        "Ubuntu 24.04",
        "performance",
    )

    fragment = client.post(url, {**data, "notes": "SMT off"}, headers=HTMX)
    assert fragment.status_code == 200 and b"<html" not in fragment.content and b"SMT off" in fragment.content
    assert Server.objects.get(pk=server.pk).notes == "SMT off"


def test_a_blank_cpu_count_is_suggested_from_the_runs_but_an_entered_one_is_kept(
    pg: dict[str, Run], client: Client, user_with_role: Any
) -> None:
    server = pg[PG17].server
    client.force_login(user_with_role("uploader"))
    Server.objects.filter(pk=server.pk).update(cpus=None)
    html = client.get(reverse("reports:server", args=[server.pk])).content.decode()
    assert 'name="cpus" value="48"' in html and "suggested from the bundles" in html
    Server.objects.filter(pk=server.pk).update(cpus=24)
    html = client.get(reverse("reports:server", args=[server.pk])).content.decode()
    assert 'name="cpus" value="24"' in html


def test_server_page_queries_do_not_grow_with_the_number_of_runs(corpus: Path, client: Client) -> None:
    def count() -> int:
        server = Server.objects.get()
        with CaptureQueriesContext(connection) as ctx:
            assert client.get(reverse("reports:server", args=[server.pk])).status_code == 200
        return len(ctx.captured_queries)

    _import_pg(corpus, "1023")
    one = count()
    _import_pg(corpus, "1122", "174")
    assert count() == one


# --------------------------------------------------------------------------- explain


def test_explain_ranks_the_hw_ratios_by_distance_from_1_and_lists_the_config_differences(pg: dict[str, Run]) -> None:
    comparison = compute_comparison(ComparisonSpec(base_run_id=pg[PG10].pk))
    key = next(c.key for c in comparison.columns if c.run_ids == [pg[PG17].pk])
    # The microbenchmark that moved most, so there is something to explain.
    relative = {lbl: rel for lbl, rel in comparison.relative[key].items() if rel is not None}
    label = max(relative, key=lambda lbl: abs(math.log(relative[lbl])))
    result = explain(comparison, key, label)

    assert result["relative"] == relative[label] and result["direction"] != "unchanged"
    ratios = {name: r for name, r in comparison.metric_ratios[key][label].items() if r is not None}
    expected = sorted(
        (name for name in ("cpu_o", "cs_o", "r_o", "rkb_o", "wkb_o") if name in ratios),
        key=lambda name: -abs(math.log(ratios[name])) if 0 < ratios[name] < math.inf else -math.inf,
    )
    assert expected  # the pg runs have sb.met files
    assert [m["key"] for m in result["metrics"]] == expected
    for m in result["metrics"]:
        costlier = m["ratio"] > 1
        assert m["explains"] == (
            m["significant"] and result["direction"] != "unchanged" and costlier == (result["relative"] < 1)
        )
    assert result["explained_by"] == [m for m in result["metrics"] if m["explains"]]
    assert {d.name for _, d in result["highlighted"]} == {
        "extra_float_digits",
        "password_encryption",
        "vacuum_cost_page_miss",
    }
    assert result["config_changes"] == result["config"].differences > 0
    assert label in result["summary"]


def test_the_explain_partial_prints_the_explanation(pg: dict[str, Run]) -> None:
    comparison = compute_comparison(ComparisonSpec(base_run_id=pg[PG10].pk))
    key = next(c.key for c in comparison.columns if c.run_ids == [pg[PG17].pk])
    diff = run_diff_for_column(comparison, key)
    label = "point-query_range=100"
    result = explain(comparison, key, label, run_diff=diff)
    html = render_to_string("reports/diff/explain.html", {"explanation": result})
    assert f'data-label="{label}"' in html
    assert result["summary"] in html
    assert f"({result['change_text']})" in html and result["change_text"][0] in "+-"
    for m in result["metrics"]:
        assert f'data-metric="{m["key"]}"' in html
    assert "password_encryption" in html
    assert f"?a={pg[PG10].pk}&amp;b={pg[PG17].pk}" in html


def test_explain_refuses_the_base_and_unknown_columns_or_microbenchmarks(pg: dict[str, Run]) -> None:
    comparison = compute_comparison(ComparisonSpec(base_run_id=pg[PG10].pk))
    key = next(c.key for c in comparison.columns if c.run_ids == [pg[PG17].pk])
    with pytest.raises(ValueError, match="is the base"):
        explain(comparison, comparison.base, comparison.labels[0])
    with pytest.raises(ValueError, match="no column"):
        explain(comparison, "nope", comparison.labels[0])
    with pytest.raises(ValueError, match="no microbenchmark"):
        explain(comparison, key, "nope_range=1")
    assert pg[PG11].pk in {i for c in comparison.columns for i in c.run_ids}


def test_the_diff_page_offers_runs_to_pick_grouped_by_series_instead_of_typed_ids(
    pg: dict[str, Run], client: Client
) -> None:
    html = client.get(f"{reverse('reports:run_diff')}?a={pg[PG10].pk}&b={pg[PG17].pk}").content.decode()
    a_select = html[html.index('<select name="a"') : html.index("</select>", html.index('<select name="a"'))]
    run = pg[PG10]
    series = f"{run.server.name} · {run.workload.name} · {run.build.version.dbms.name}"
    assert f'<optgroup label="{series}">' in a_select
    assert f'<option value="{run.pk}" selected>' in a_select
    assert 'type="number"' not in html
