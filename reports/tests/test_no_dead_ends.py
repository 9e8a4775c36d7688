"""Pages reached without a base, with only the base ticked, or with groups of 0 or 1 microbenchmark: each says
what it shows and what to do, none answers a bare 404 or an empty chart."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from conftest import SMALL_BASE_RUN
from runs.importer import archive_directory, submit_and_import
from runs.models import Bundle, Microbenchmark, Run
from runs.signals import announce_import

pytestmark = pytest.mark.django_db

DEC25 = "dbbench/arc/dec25.dbb.clang/8core"


@pytest.fixture
def dec25(corpus: Path) -> None:
    submit_and_import(archive_directory(corpus / DEC25), name="8core.tgz", source=Bundle.Source.COMMAND)


@pytest.fixture
def ibench2021(corpus: Path) -> None:
    submit_and_import(archive_directory(corpus / "ibench-2021"), name="ibench.tgz", source=Bundle.Source.COMMAND)


def _note(html: str) -> str:
    found = re.search(r'<div class="card note" role="status" id="default-base-note">(.*?)</div>', html, re.S)
    assert found, "the page says which base it picked"
    return re.sub(r"<[^>]+>", "", found.group(1))


def test_it_compares_against_the_oldest_version_when_the_comparison_page_has_no_base(
    small_base: Run, client: Client
) -> None:
    response = client.get(reverse("reports:compare"))
    assert response.status_code == 200
    html = response.content.decode()
    assert f'<option value="{small_base.pk}" selected>' in html
    note = _note(html)
    assert "oldest version" in note and "MySQL 5.6.51" in note and SMALL_BASE_RUN in note


def test_it_opens_the_heatmap_without_a_base_on_the_series_default_and_says_so(small_base: Run, client: Client) -> None:
    response = client.get(reverse("reports:heatmap"))
    assert response.status_code == 200
    assert "MySQL 5.6.51" in _note(response.content.decode())


def test_it_opens_a_drilldown_without_a_base_on_a_series_that_ran_that_microbenchmark(
    small_base: Run, client: Client
) -> None:
    mb = Microbenchmark.objects.get(test="point-query", range_size=100)
    response = client.get(reverse("reports:drilldown", args=[mb.pk]))
    assert response.status_code == 200
    html = response.content.decode()
    assert SMALL_BASE_RUN in _note(html)
    assert f"base={small_base.pk}" in html  # the back link carries the picked base


def test_it_opens_the_insert_benchmark_view_without_a_base_and_it_is_in_the_navigation(
    ibench2021: None, client: Client, django_capture_on_commit_callbacks: Any
) -> None:
    response = client.get(reverse("reports:ibench"))
    assert response.status_code == 200
    html = response.content.decode()
    note = _note(html)
    oldest = Run.objects.filter(workload__suite="ibench").order_by("build__version__sort_key").first()
    assert oldest is not None and oldest.name in note
    assert f'<a href="{reverse("reports:ibench")}">Insert Benchmark</a>' in html
    # Home lists the series the refresh after the import's commit summarised.
    with django_capture_on_commit_callbacks(execute=True):
        announce_import(Bundle.objects.get().pk)
    home = client.get(reverse("reports:home")).content.decode()
    assert f"{reverse('reports:ibench')}?base=" in home


def test_insert_benchmark_bars_that_exist_are_never_labelled_missing(ibench2021: None, client: Client) -> None:
    html = client.get(reverse("reports:ibench")).content.decode()
    figures = [
        json.loads(m)
        for m in re.findall(r'<script id="ibench-step-\d+" type="application/json">(.*?)</script>', html, re.S)
    ]
    assert figures
    for figure in figures:
        bar = figure["data"][0]
        for value, text in zip(bar["y"], bar["text"], strict=True):
            assert (value is None) == ("missing" in text), (value, text)


def test_the_insert_benchmark_view_without_any_run_says_how_to_get_one(db: None, client: Client) -> None:
    response = client.get(reverse("reports:ibench"))
    assert response.status_code == 200 and "No Insert Benchmark runs yet" in response.content.decode()


def test_db_bench_is_in_the_navigation_and_its_page_hides_groups_without_microbenchmarks(
    dec25: None, client: Client
) -> None:
    html = client.get(reverse("reports:home")).content.decode()
    assert f'href="{reverse("reports:compare")}?suite=db_bench"' in html
    page = client.get(reverse("reports:compare"), {"suite": "db_bench"}).content.decode()
    assert "RocksDB" in _note(page)
    assert "(0 microbenchmarks)" not in page
    headings = re.findall(r'<h3 id="group-\d+">(.*?) <span class="muted">\((\d+) microbenchmarks?\)', page)
    assert headings and all(int(n) > 0 for _, n in headings)


def test_a_group_of_one_microbenchmark_is_a_plain_row_not_a_min_max_table(dec25: None, client: Client) -> None:
    page = client.get(reverse("reports:compare"), {"suite": "db_bench"}).content.decode()
    singles = re.findall(r'<h3 id="group-\d+">([^<]*) <span class="muted">\(1 microbenchmark\)', page)
    assert singles, "db_bench's load group has one microbenchmark"
    for name in singles:
        assert f'<table class="relative single" data-group="{name}">' in page
        assert f'<table class="summary" data-group="{name}">' not in page


def test_the_base_picker_names_the_workload_of_runs_that_differ_only_by_it(dec25: None, client: Client) -> None:
    html = client.get(reverse("reports:compare"), {"base": ""}).content.decode()
    options = re.findall(r"<option value=\"\d+\"[^>]*>([^<]*RocksDB 9\.8\.4[^<]*)</option>", html)
    assert len(options) == len(set(options)) >= 3
    assert any("byrx" in o.rsplit(" · ", 1)[-1] for o in options)


def test_ticking_only_the_base_says_to_pick_a_run_instead_of_drawing_empty_charts(
    small_base: Run, client: Client
) -> None:
    html = client.get(reverse("reports:compare"), {"base": small_base.pk, "runs": small_base.pk}).content.decode()
    assert "pick at least one run to compare with the base" in html
    assert 'data-figure="chart-' not in html
