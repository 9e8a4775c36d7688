"""The drill-down and the regression page say why a microbenchmark changed: HW metrics and config differences."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.test import Client

from reports.models import Regression
from reports.regressions import detect_regressions
from runs.importer import archive_directory, submit_and_import
from runs.models import Bundle, Microbenchmark, Run

pytestmark = pytest.mark.django_db


@pytest.fixture
def base(corpus: Path) -> Run:
    submit_and_import(
        archive_directory(corpus / "sysbench-mysql-small"), name="small.tar.gz", source=Bundle.Source.COMMAND
    )
    return Run.objects.get(name="x.my5651_rel_o2nofp.z12a_c8r32.pk1")


def test_the_drill_down_explains_the_clicked_build_with_cpu_per_query_and_settings(base: Run, client: Client) -> None:
    point = Microbenchmark.objects.get(test="point-query", range_size=100)
    html = client.get(
        f"/microbenchmarks/{point.pk}/", {"base": base.pk, "column": "x.my8043_rel_o2nofp.z12a_c8r32.pk1"}
    ).content.decode()
    assert "Why it changed" in html
    assert "point-query_range=100 · MySQL 8.0.43 vs MySQL 5.6.51" in html
    assert 'data-metric="cpu_o"' in html and "CPU per operation" in html
    assert "documented default" in html or "default changed in" in html


def test_the_regression_page_explains_where_it_arrived(base: Run, client: Client) -> None:
    detect_regressions(base.server_id, base.workload_id)
    regression = Regression.objects.filter(microbenchmark__test="point-query.pre", arrived_in__text="8.0.43").get()
    html = client.get(f"/regressions/{regression.pk}/").content.decode()
    assert "Why it changed" in html
    assert "point-query.pre_range=100 · MySQL 8.0.43 vs MySQL 5.6.51" in html


def test_a_group_regression_has_no_single_microbenchmark_to_explain(base: Run, client: Client) -> None:
    detect_regressions(base.server_id, base.workload_id)
    regression = Regression.objects.filter(microbenchmark=None).first()
    assert regression is not None
    html = client.get(f"/regressions/{regression.pk}/").content.decode()
    assert "Why it changed" not in html
