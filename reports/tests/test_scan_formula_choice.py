"""The comparison page offers a choice of scan formula only where scan had two (sysbench), and a saved report
keeps the one it was saved with."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from reports.models import Report
from reports.tests.test_scan_eras import mixed  # noqa: F401  (the fixture: runs of both scan eras)
from runs.importer import submit_and_import
from runs.models import Bundle, Run
from runs.tests.hostile import tgz_of_files
from runs.tests.test_openformat_import import engine_bundle
from runs.tests.test_scan_eras import PG174, PG1122

pytestmark = pytest.mark.django_db

SELECTOR = 'id="id_scan_formula"'


def test_a_sysbench_comparison_offers_the_scan_formula(small_base: Run, client: Client) -> None:
    page = client.get("/compare/", {"base": small_base.pk}).content.decode()
    assert SELECTOR in page and '<label for="id_scan_formula">Scan QPS</label>' in page


def test_a_custom_suites_comparison_has_no_scan_formula_to_choose(client: Client) -> None:
    submit_and_import(engine_bundle(), name="engine.tgz", source=Bundle.Source.COMMAND)
    base = Run.objects.get(build__version__text="10.11.19")
    assert base.workload.suite == "custom"
    for query in ({"base": base.pk, "dop": 2}, {"base": base.pk, "dop": 2, "scan_formula": "spec"}):
        page = client.get("/compare/", query).content.decode()
        assert 'id="concurrency"' in page  # the comparison itself is there
        assert SELECTOR not in page and "Scan QPS" not in page and 'id="scan-spec-note"' not in page


def test_a_db_bench_comparison_has_no_scan_formula_to_choose(corpus: Path, client: Client) -> None:
    summary = (corpus / "dbbench/arc/dec25.dbb.clang/8core/sum.byrx.txt").read_bytes()
    submit_and_import(tgz_of_files({"8core/sum.byrx.txt": summary}), name="dbb.tgz", source=Bundle.Source.COMMAND)
    base = Run.objects.order_by("build__version__sort_key").first()
    assert base is not None and base.workload.suite == "db_bench"
    page = client.get("/compare/", {"base": base.pk}).content.decode()
    assert 'id="concurrency"' in page and SELECTOR not in page  # the comparison is there, not the choice


def test_a_report_saved_with_the_specs_formula_opens_with_it(
    mixed: tuple[Run, Run],  # noqa: F811
    client: Client,
    user_with_role: Any,
) -> None:
    base, _other = mixed
    client.force_login(user_with_role("triager"))
    saved = client.post("/reports/save", {"base": base.pk, "scan_formula": "spec", "name": "pg by the spec"})
    report = Report.objects.get()
    assert saved.status_code == 302 and report.scan_formula == "spec"

    opened = client.get(report.get_absolute_url())
    assert "scan_formula=spec" in opened["Location"]
    page = client.get(opened["Location"]).content.decode()
    # Read by the spec's formula, as saved: no two-era warning, the note that says which formula.
    assert 'id="scan-era-warning"' not in page and 'id="scan-spec-note"' in page
    assert '<option value="spec" selected>' in page


def test_a_report_saved_as_each_run_computed_scan_opens_with_the_eras_named(
    mixed: tuple[Run, Run],  # noqa: F811
    client: Client,
    user_with_role: Any,
) -> None:
    base, _other = mixed
    client.force_login(user_with_role("triager"))
    client.post("/reports/save", {"base": base.pk, "scan_formula": "era", "name": "pg as reported"})
    report = Report.objects.get()
    assert report.scan_formula == "era"
    page = client.get(client.get(report.get_absolute_url())["Location"]).content.decode()
    assert 'id="scan-era-warning"' in page and PG1122 in page and PG174 in page


def test_a_report_saved_before_the_formula_was_kept_opens_as_the_page_did_then(
    mixed: tuple[Run, Run],  # noqa: F811
    client: Client,
) -> None:
    base, _other = mixed
    # Reports made before the field existed got the column's default: the page's default then, "era".
    report = Report.objects.create(name="old", slug="old", base_run=base)
    assert report.scan_formula == "era"
    assert "scan_formula=era" in client.get(report.get_absolute_url())["Location"]
