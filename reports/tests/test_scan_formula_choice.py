"""The comparison page offers a choice of scan formula only where scan had two (sysbench)."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.test import Client

from runs.importer import submit_and_import
from runs.models import Bundle, Run
from runs.tests.hostile import tgz_of_files
from runs.tests.test_openformat_import import engine_bundle

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
