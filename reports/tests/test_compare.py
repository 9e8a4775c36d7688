"""Comparisons from imported runs: the reference tables, summaries, noise, the command, API and page."""

from __future__ import annotations

import io
import json
import re
import statistics
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from reports.compare import ComparisonError, ComparisonSpec, compute_comparison, get_comparison, resolve_run
from reports.models import GroupSetDefinition, Report
from runs import synthetic
from runs.importer import archive_directory, submit_and_import
from runs.models import Bundle, Run

pytestmark = pytest.mark.django_db

BASE = "x.my5651_rel_o2nofp.z12a_c8r32.pk1"
REFERENCE_RUNS = [
    "x.my5744_rel_o2nofp.z12a_c8r32.pk1",
    "x.my8043_rel_o2nofp.z12a_c8r32.pk1",
    "x.my8044_rel_o2nofp.z12a_c8r32.pk1",
    "x.my8406_rel_o2nofp.z12a_c8r32.pk1",
    "x.my8407_rel_o2nofp.z12a_c8r32.pk1",
    "x.my9400_rel_o2nofp.z12a_c8r32.pk1",
    "x.my9500_rel_o2nofp.z12a_c8r32.pk1",
]


@pytest.fixture
def small(corpus: Path) -> Path:
    directory = corpus / "sysbench-mysql-small"
    submit_and_import(archive_directory(directory), name="small.tar.gz", source=Bundle.Source.COMMAND)
    return directory


def _compare(*args: str) -> str:
    out = io.StringIO()
    call_command("compare", *args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def _cells(text: str) -> dict[tuple[str, str], str]:
    """(run, label) → cell text of a qps.*.tsv file."""
    lines = text.splitlines()
    columns = [line.split(" : ")[1] for line in lines if line.startswith("col-") and " : " in line]
    cells = {}
    for line in lines:
        if "\t" in line and not line.startswith("col-1\t"):
            *values, label = line.split("\t")
            cells.update({(run, label): value for run, value in zip(columns, values, strict=True)})
    return cells


def test_tsv_of_the_reference_runs_is_byte_identical_to_the_authors_table(small: Path) -> None:
    out = _compare("--base", BASE, "--runs", *REFERENCE_RUNS, "--format", "tsv")
    assert out == (small / "qps.rel.all.tsv").read_text()


def test_absolute_tsv_and_both_csvs_are_byte_identical_too(small: Path) -> None:
    assert _compare("--base", BASE, "--runs", *REFERENCE_RUNS, "--absolute") == (small / "qps.abs.all.tsv").read_text()
    assert (
        _compare("--base", BASE, "--runs", *REFERENCE_RUNS, "--format", "csv")
        == (small / "qps.rel.all.csv").read_text()
    )


def test_the_whole_series_matches_every_cell_of_the_reference(small: Path) -> None:
    out = _compare("--base", BASE, "--format", "tsv")
    ours, theirs = _cells(out), _cells((small / "qps.rel.all.tsv").read_text())
    assert len(theirs) == 7 * 33
    for key, value in theirs.items():
        assert abs(float(ours[key]) - float(value)) <= 0.01, key
    assert "x.my8406v2_rel_o2nofp.z12a_c8r32.pk1" in out  # the series has one more build than the reference


def test_metrics_reproduce_every_block_of_o_met_all_that_has_files(small: Path) -> None:
    out = _compare("--base", BASE, "--runs", *REFERENCE_RUNS, "--metrics")
    ours = {block.split("\n", 1)[0]: block for block in out.strip().split("\n\n")}
    theirs = {block.split("\n", 1)[0]: block for block in (small / "o.met.all").read_text().strip().split("\n\n")}
    compared = 0
    for name, block in theirs.items():
        if name.startswith("sb.prepare"):
            continue  # the load's sb.prepare.met files are not in the corpus
        assert ours[name] == block, name
        compared += 1
    assert compared == 37


def test_group_summaries_equal_an_independent_computation(small: Path) -> None:
    base = Run.objects.get(name=BASE)
    comparison = compute_comparison(ComparisonSpec(base_run_id=base.pk))
    assert comparison.group_set == "current-32"
    reference = _cells((small / "qps.abs.all.tsv").read_text())
    for group in comparison.groups:
        members = [label for label in comparison.labels if comparison.group_of[label] == group]
        for column in comparison.others:
            if column.key not in reference and column.key.startswith("x.my8406v2"):
                continue
            ratios = {
                label: comparison.qps[column.key][label] / comparison.qps[comparison.base][label] for label in members
            }
            summary = comparison.summaries[group][column.key]
            assert summary.min == pytest.approx(min(ratios.values()))
            assert summary.max == pytest.approx(max(ratios.values()))
            assert summary.avg == pytest.approx(statistics.mean(ratios.values()))
            assert summary.median == pytest.approx(statistics.median(ratios.values()))
            assert summary.min_label == min(ratios, key=ratios.__getitem__)
            assert (summary.n, summary.total) == (len(members), len(members))
    sizes = {g: sum(1 for label in comparison.labels if comparison.group_of[label] == g) for g in comparison.groups}
    assert list(sizes.values()) == [9, 5, 8, 10]


def test_warmups_are_excluded_by_default_and_pre_tests_are_listed_ungrouped(small: Path) -> None:
    comparison = compute_comparison(ComparisonSpec(base_run_id=Run.objects.get(name=BASE).pk))
    # scan.warm is a measured scan (SPEC §2), compared by default; it is no member of current-32's groups.
    assert [label for label in comparison.labels if ".warm" in label] == ["scan.warm_range=100"]
    assert set(comparison.ungrouped) == {
        "point-query.pre_range=100",
        "range-notcovered-si.pre_range=100",
        "scan.warm_range=100",
    }
    with_warm = compute_comparison(ComparisonSpec(base_run_id=Run.objects.get(name=BASE).pk, include_warmups=True))
    assert "scan.warm_range=100" in with_warm.labels


def test_flags_follow_the_thresholds(small: Path) -> None:
    base = Run.objects.get(name=BASE)
    comparison = compute_comparison(ComparisonSpec(base_run_id=base.pk, red=0.5, green=1.3))
    for column in comparison.others:
        for label in comparison.labels:
            rel = comparison.relative[column.key][label]
            expected = "missing" if rel is None else "red" if rel <= 0.5 else "green" if rel >= 1.3 else "grey"
            assert comparison.flags[column.key][label] == expected


def test_a_missing_test_is_missing_and_counted_n_of_n(corpus: Path) -> None:
    # Postgres 10.23 vs 17.4: a test present in one run only must show as missing, not as 0.
    for name in ("x.pg1023_o2nofp.x10a_wm1_c32r128.pk1.tar.gz", "x.pg174_o2nofp.x10a_wm1_c32r128.pk1.tar.gz"):
        data = (corpus / "sysbench-pg-tarballs" / name).read_bytes()
        submit_and_import(data, name=name, source=Bundle.Source.COMMAND, overrides={"server": "pg"})
    base = Run.objects.get(name__startswith="x.pg1023")
    comparison = compute_comparison(ComparisonSpec(base_run_id=base.pk))
    assert comparison.dop == 40
    other = comparison.others[0].key
    missing = [label for label in comparison.labels if comparison.relative[other][label] is None]
    for label in missing:
        assert comparison.flags[other][label] == "missing"
    for group in comparison.groups:
        summary = comparison.summaries[group][other]
        assert summary.total >= summary.n


def test_repeated_runs_are_averaged_and_changes_inside_their_noise_are_not_flagged() -> None:
    spec = synthetic.SeriesSpec(versions=("8.0.28", "8.0.30"), repeats=3, noise=0.05, steps=(), seed=3)
    submit_and_import(synthetic.bundle_bytes(spec), name="rep.tgz", source=Bundle.Source.COMMAND)
    assert Run.objects.count() == 6
    base = Run.objects.filter(build__version__text="8.0.28").first()
    assert base is not None
    comparison = compute_comparison(ComparisonSpec(base_run_id=base.pk, red=0.99, green=1.01))
    assert [c.repeats for c in comparison.columns] == [3, 3]
    other = comparison.others[0].key
    assert any(comparison.noisy[other].values())
    for label, noisy in comparison.noisy[other].items():
        if noisy:
            assert comparison.flags[other][label] == "grey"
        assert comparison.cv[other][label] is not None


def test_a_planted_regression_outside_the_noise_is_flagged_red() -> None:
    spec = synthetic.SeriesSpec(versions=("8.0.28", "8.0.30"), repeats=2, noise=0.01, seed=5)
    spec.steps = (synthetic.Step(1, "update-index", 0.7),)
    submit_and_import(synthetic.bundle_bytes(spec), name="reg.tgz", source=Bundle.Source.COMMAND)
    base = Run.objects.filter(build__version__text="8.0.28").first()
    assert base is not None
    comparison = compute_comparison(ComparisonSpec(base_run_id=base.pk))
    other = comparison.others[0].key
    assert comparison.flags[other]["update-index_range=100"] == "red"
    assert comparison.relative[other]["update-index_range=100"] == pytest.approx(0.7, abs=0.05)


def test_a_user_defined_group_set_is_used_by_name(small: Path) -> None:
    GroupSetDefinition.objects.create(name="mine", rules=[["updates", "re:^update-"], ["scans", ["scan"]]])
    out = _compare("--base", BASE, "--group-set", "mine", "--format", "json")
    payload = json.loads(out)
    assert list(payload["groups"]) == ["updates", "scans"]
    assert payload["groups"]["scans"] == ["scan_range=100"]
    assert len(payload["groups"]["updates"]) == 5


def test_the_command_refuses_an_unknown_run_or_group_set(small: Path) -> None:
    with pytest.raises(CommandError, match="no run named"):
        _compare("--base", "x.nope.z.pk1")
    with pytest.raises(CommandError, match="unknown group set"):
        _compare("--base", BASE, "--group-set", "nope")


def test_markdown_prints_a_table_per_group_with_a_row_per_version(small: Path) -> None:
    out = _compare("--base", BASE, "--format", "markdown")
    groups = re.findall(r"^### (.+) \(relative to MySQL 5\.6\.51\)$", out, re.M)
    assert len(groups) == out.count("| version | min | max | avg | median |") >= 4
    assert out.count("| MySQL 9.5.0 | ") == len(groups)


def test_the_api_returns_the_json_form(small: Path, client: Client) -> None:
    response = client.get("/api/compare", {"base": BASE, "runs": ",".join(REFERENCE_RUNS[:2])})
    assert response.status_code == 200
    payload = response.json()
    assert payload["base"] == BASE
    assert [c["key"] for c in payload["columns"]] == [BASE, *REFERENCE_RUNS[:2]]
    assert payload["relative_qps"][REFERENCE_RUNS[0]]["point-query_range=100"] == pytest.approx(21618 / 24515, abs=1e-3)
    assert client.get("/api/compare", {"base": "x.nope.z.pk1"}).status_code == 400
    tsv = client.get("/api/compare", {"base": BASE, "runs": ",".join(REFERENCE_RUNS), "format": "tsv"})
    assert tsv.content.decode() == (small / "qps.rel.all.tsv").read_text()


def test_the_page_shows_summaries_and_swaps_in_place_for_htmx(small: Path, client: Client) -> None:
    base = Run.objects.get(name=BASE)
    page = client.get("/compare/", {"base": base.pk})
    html = page.content.decode()
    assert page.status_code == 200 and "<html" in html
    assert "range queries with aggregation" in html and "0.65" in html
    fragment = client.get("/compare/", {"base": base.pk, "group_set": "classic-42"}, HTTP_HX_REQUEST="true")
    text = fragment.content.decode()
    assert "<html" not in text and 'id="comparison"' in text and "point-2" in text


def test_the_csv_export_of_the_page_is_the_reference_csv(small: Path, client: Client) -> None:
    base = Run.objects.get(name=BASE)
    runs = [str(Run.objects.get(name=n).pk) for n in REFERENCE_RUNS]
    response = client.get("/compare/export", {"base": base.pk, "runs": runs, "format": "csv"})
    assert response.status_code == 200
    assert "attachment" in response["Content-Disposition"]
    assert response.content.decode() == (small / "qps.rel.all.csv").read_text()


def test_a_saved_report_has_a_permalink(small: Path, client: Client, user_with_role: Any) -> None:
    client.force_login(user_with_role("triager"))
    base = Run.objects.get(name=BASE)
    response = client.post("/reports/save", {"base": base.pk, "group_set": "auto", "name": "MySQL 5.6 to 9.5"})
    report = Report.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/reports/{report.slug}/"
    followed = client.get(response["Location"], follow=True)
    assert "MySQL 9.5.0" in followed.content.decode()
    assert client.post("/reports/save", {"base": base.pk, "name": "MySQL 5.6 to 9.5"}).status_code == 409


def test_the_comparison_is_cached_and_recomputed_when_a_run_arrives(small: Path) -> None:
    base = Run.objects.get(name=BASE)
    spec = ComparisonSpec(base_run_id=base.pk)
    first = get_comparison(spec)
    with CaptureQueriesContext(connection) as queries:
        again = get_comparison(spec)
    assert len(queries) == 2  # the base's series and its stamp; no result is read
    assert [c.key for c in again.columns] == [c.key for c in first.columns]
    Run.objects.filter(name="x.my9500_rel_o2nofp.z12a_c8r32.pk1").delete()
    assert len(get_comparison(spec).columns) == len(first.columns) - 1


def test_query_count_does_not_grow_with_runs(small: Path) -> None:
    base = Run.objects.get(name=BASE)
    other = Run.objects.get(name=REFERENCE_RUNS[0])
    with CaptureQueriesContext(connection) as two:
        compute_comparison(ComparisonSpec(base_run_id=base.pk, run_ids=(other.pk,)))
    with CaptureQueriesContext(connection) as all_runs:
        compute_comparison(ComparisonSpec(base_run_id=base.pk))
    assert len(two) == len(all_runs)


def test_a_run_name_on_two_servers_needs_a_server(small: Path, corpus: Path, tmp_path: Path) -> None:
    # Another run of the same build on another server: same directory name, other results.
    other = tmp_path / BASE
    other.mkdir()
    for name in ("sb.o.point-query.range100.pk1.dop1", "sb.o.insert.range100.pk1.dop1"):
        (other / name).write_bytes((corpus / "sysbench-mysql-small" / BASE / name).read_bytes())
    files = archive_directory(tmp_path)
    submit_and_import(files, name="again.tgz", source=Bundle.Source.COMMAND, overrides={"server": "other"})
    with pytest.raises(ComparisonError, match="several servers"):
        resolve_run(BASE)
    assert resolve_run(BASE, server="other").server.name == "other"


def test_a_cell_with_a_result_where_the_base_has_none_says_no_base_not_missing() -> None:
    from reports.rendering import cell

    assert ">no base</td>" in cell(None, qps=1234.0) and "missing" not in cell(None, qps=1234.0)
    assert cell(None) == '<td class="num missing">missing</td>'


def test_the_group_set_choice_offers_only_the_base_suites_sets_and_the_users_own(
    small_base: Run, client: Client
) -> None:
    GroupSetDefinition.objects.create(name="mine", rules=[["all", "re:."]])
    html = client.get("/compare/", {"base": small_base.pk}).content.decode()
    select = html.split('<select name="group_set"', 1)[1].split("</select>", 1)[0]
    offered = re.findall(r'<option value="([^"]*)"', select)
    # db_bench's and the Insert Benchmark's sets group no sysbench test: not offered on a sysbench series.
    assert offered == ["auto", "classic-42", "current-32", "mine"]


def test_the_db_bench_link_without_any_db_bench_run_says_so_and_preselects_no_other_run(
    small_base: Run, client: Client
) -> None:
    html = client.get("/compare/", {"suite": "db_bench"}).content.decode()
    assert 'id="suite-missing"' in html and "No runs of RocksDB db_bench have been imported yet" in html
    select = html.split('<select name="base"', 1)[1].split("</select>", 1)[0]
    assert '<option value="" selected disabled>pick a base run</option>' in select
    assert select.count("selected") == 1  # no sysbench run put in the db_bench page's place
    # Any run can still be picked from there.
    assert f'<option value="{small_base.pk}">' in select
