"""A comparison whose runs' scan values come from two formulas says so loudly and offers one formula for all."""

from __future__ import annotations

import re
from html import unescape
from pathlib import Path

import pytest
from django.test import Client

from reports.compare import ComparisonSpec, build_comparison, compute_comparison, load_series
from runs.importer import submit_and_import
from runs.models import Microbenchmark, Run
from runs.tests.hostile import tgz_of_files
from runs.tests.test_scan_eras import PG174, PG1122, SCAN_QPS, run_files, spec_value
from suites.sysbench import parse as sysbench

pytestmark = pytest.mark.django_db

SCAN = "scan_range=100"


@pytest.fixture
def mixed(corpus: Path) -> tuple[Run, Run]:
    """Postgres 11.22 as its tarball has it (scan reported as tps × rows / 1000), and 17.4 from its real files
    with its own scan value rewritten to the spec's: runs of the two eras of one series."""
    older = run_files(corpus, PG1122)
    newer = run_files(corpus, PG174)
    newer[f"{PG174}/{SCAN_QPS}"] = f"{spec_value(newer, PG174):.1f}\tpgsql scan range=100\n".encode()
    for name, files in (("pg1122.tgz", older), ("pg174.tgz", newer)):
        submit_and_import(tgz_of_files(files), name=name, source="cli", overrides={"server": "pg-48"})
    base, other = Run.objects.get(name=PG1122), Run.objects.get(name=PG174)
    assert (base.scan_formula, other.scan_formula) == (sysbench.SCAN_TPS_ROWS, sysbench.SCAN_SPEC)
    return base, other


def test_by_each_runs_own_formula_scan_is_its_scripts_value_and_the_eras_are_named(mixed: tuple[Run, Run]) -> None:
    base, _other = mixed
    comparison = compute_comparison(ComparisonSpec(base_run_id=base.pk, scan_formula="era"))
    # 9.81 tps × 10M rows / 1000 for 11.22; 17.4 by the spec's formula, 10M rows / 1000 / 3.54548 s.
    assert comparison.qps[PG1122][SCAN] == pytest.approx(98_100)
    assert comparison.qps[PG174][SCAN] == pytest.approx(10_000 / 3.54548)
    assert comparison.relative[PG174][SCAN] == pytest.approx(10_000 / 3.54548 / 98_100)
    assert comparison.scan_eras == {sysbench.SCAN_TPS_ROWS: [PG1122], sysbench.SCAN_SPEC: [PG174]}
    # Only scan changes: point-query is the same whichever formula scan is read by.
    spec = compute_comparison(ComparisonSpec(base_run_id=base.pk, scan_formula="spec"))
    assert spec.relative[PG174]["point-query_range=100"] == comparison.relative[PG174]["point-query_range=100"]
    # The comparison of scan alone (a drill-down's) reads the older run's command line too.
    scan = Microbenchmark.objects.get(test="scan", range_size=100).pk
    alone = build_comparison(
        load_series(ComparisonSpec(base_run_id=base.pk, scan_formula="era"), microbenchmark_id=scan)
    )
    assert alone.labels == [SCAN] and alone.qps == {key: {SCAN: comparison.qps[key][SCAN]} for key in comparison.qps}


def test_by_the_specs_formula_for_all_the_runs_compare_and_nothing_is_warned(mixed: tuple[Run, Run]) -> None:
    base, _other = mixed
    comparison = compute_comparison(ComparisonSpec(base_run_id=base.pk, scan_formula="spec"))
    assert comparison.qps[PG1122][SCAN] == pytest.approx(10_000 / 4.0528)
    assert comparison.relative[PG174][SCAN] == pytest.approx(4.0528 / 3.54548)
    assert comparison.scan_eras == {}


def test_the_page_warns_naming_each_eras_runs_and_one_click_compares_by_the_spec(
    mixed: tuple[Run, Run], client: Client
) -> None:
    base, _other = mixed
    page = client.get("/compare/", {"base": base.pk}).content.decode()
    warning = page[page.index('id="scan-era-warning"') :]
    warning = warning[: warning.index("</div>")]
    assert "Scan QPS of two formulas in one table" in warning
    assert f"<strong>tps×rows/1000</strong>: {PG1122}" in warning and f"<strong>spec</strong>: {PG174}" in warning
    link = unescape(re.search(r'id="scan-spec-link" href="([^"]+)"', warning)[1])  # type: ignore[index]
    assert "scan_formula=spec" in link

    by_spec = client.get(link).content.decode()
    assert 'id="scan-era-warning"' not in by_spec and 'id="scan-spec-note"' in by_spec
    cell = re.search(r"scan_range=100</a>.*?</tr>", by_spec, re.S)
    assert cell is not None and f"{4.0528 / 3.54548:.2f}" in cell[0]


def test_the_page_cache_keeps_the_two_formulas_apart(mixed: tuple[Run, Run], client: Client) -> None:
    base, _other = mixed
    first = client.get("/compare/", {"base": base.pk}).content.decode()
    by_spec = client.get("/compare/", {"base": base.pk, "scan_formula": "spec"}).content.decode()
    again = client.get("/compare/", {"base": base.pk, "scan_formula": "era"}).content.decode()
    assert 'id="scan-era-warning"' in first and 'id="scan-era-warning"' not in by_spec
    assert 'id="scan-era-warning"' in again


def test_the_api_reads_scan_by_the_spec_unless_asked_and_the_pages_api_link_asks_as_the_page_does(
    mixed: tuple[Run, Run], client: Client
) -> None:
    base, _other = mixed
    by_spec = client.get("/api/compare", {"base": base.pk}).json()
    assert by_spec["relative_qps"][PG174][SCAN] == pytest.approx(4.0528 / 3.54548)
    assert by_spec["scan_formula"] == "spec" and by_spec["scan_eras"] == {}

    page = client.get("/compare/", {"base": base.pk}).content.decode()
    link = unescape(re.search(r'href="([^"]+)" id="api-link"', page)[1])  # type: ignore[index]
    as_the_page = client.get(link).json()
    assert as_the_page["relative_qps"][PG174][SCAN] == pytest.approx(10_000 / 3.54548 / 98_100)
    assert as_the_page["scan_eras"] == {"tps×rows/1000": [PG1122], "spec": [PG174]}
    assert client.get("/api/compare", {"base": base.pk, "scan_formula": "both"}).status_code in (400, 422)
