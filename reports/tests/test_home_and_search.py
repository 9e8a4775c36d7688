"""Home: every series with its newest run and that run's red flags; search by DBMS, version, microbenchmark."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from reports.models import SeriesSummary
from runs.models import Microbenchmark, Run

pytestmark = pytest.mark.django_db


@pytest.fixture
def imported(corpus: Path, django_capture_on_commit_callbacks: Any) -> None:
    # The command queues the series refresh on commit; the test transaction never commits, so run it here.
    with django_capture_on_commit_callbacks(execute=True):
        call_command("import_bundle", str(corpus / "sysbench-mysql-small"), "--server", "8-core server")


def test_an_import_refreshes_the_series_summary_with_the_newest_runs_red_flags(imported: None) -> None:
    summary = SeriesSummary.objects.select_related("base_run", "latest_run").get()
    assert summary.base_run.name == "x.my5651_rel_o2nofp.z12a_c8r32.pk1"
    assert summary.latest_run.name == "x.my9500_rel_o2nofp.z12a_c8r32.pk1"
    assert summary.runs == 9
    flags = dict(summary.red_flags)
    assert flags["insert_range=100"] == pytest.approx(7743 / 15010, abs=1e-3)
    assert "read-only-distinct_range=1000" not in flags  # green, not red
    assert [v for _, v in summary.red_flags] == sorted(v for _, v in summary.red_flags)  # worst first


def test_the_home_page_shows_the_red_flags_and_links_the_comparison(imported: None, client: Client) -> None:
    html = client.get("/").content.decode()
    base = Run.objects.get(name="x.my5651_rel_o2nofp.z12a_c8r32.pk1")
    assert f"/compare/?base={base.pk}" in html
    red = len(SeriesSummary.objects.get().red_flags)
    assert f"{red} red" in html and "insert_range=100" in html


def test_search_finds_runs_by_version_and_microbenchmarks_with_their_series(imported: None, client: Client) -> None:
    html = client.get("/search/", {"q": "8.0.43"}).content.decode()
    assert "x.my8043_rel_o2nofp.z12a_c8r32.pk1" in html and "x.my9500" not in html
    update_index = Microbenchmark.objects.get(test="update-index")
    html = client.get("/search/", {"q": "update-index"}).content.decode()
    base = Run.objects.get(name="x.my5651_rel_o2nofp.z12a_c8r32.pk1")
    assert f"/microbenchmarks/{update_index.pk}/?base={base.pk}" in html
    assert "No run matches." in html


def test_home_and_search_query_counts_do_not_grow_with_runs(
    corpus: Path, client: Client, django_capture_on_commit_callbacks: Any
) -> None:
    small = corpus / "sysbench-mysql-small"
    with django_capture_on_commit_callbacks(execute=True):
        call_command("import_bundle", str(small / "x.my5651_rel_o2nofp.z12a_c8r32.pk1"), "--server", "a")
    counts = []
    for _ in range(2):
        with CaptureQueriesContext(connection) as home:
            client.get("/")
        with CaptureQueriesContext(connection) as search:
            client.get("/search/", {"q": "point"})
        counts.append((len(home), len(search)))
        with django_capture_on_commit_callbacks(execute=True):
            call_command("import_bundle", str(small), "--server", "b")
    assert counts[0] == counts[1]


def test_search_links_series_from_their_summaries_without_reading_the_results(imported: None, client: Client) -> None:
    with CaptureQueriesContext(connection) as search:
        html = client.get("/search/", {"q": "update-index"}).content.decode()
    update_index = Microbenchmark.objects.get(test="update-index")
    assert f"/microbenchmarks/{update_index.pk}/?base=" in html
    # Reading the results (a million rows in a large archive) to find where a microbenchmark ran grew with it.
    assert not [q["sql"] for q in search.captured_queries if '"runs_result"' in q["sql"]]
    assert update_index.pk in SeriesSummary.objects.get().microbenchmark_ids


def test_search_finds_a_release_written_as_dbms_and_version(imported: None, client: Client) -> None:
    # No one field holds "mysql 9.5": the DBMS and the version are matched word by word.
    html = client.get("/search/", {"q": "mysql 9.5"}).content.decode()
    assert "x.my9500_rel_o2nofp.z12a_c8r32.pk1" in html and "x.my8043" not in html
    assert 'id="search-empty"' not in html
    assert "No run matches." in client.get("/search/", {"q": "postgres 9.5"}).content.decode()


@pytest.mark.parametrize("page", ["/", "/search/?q=x"])
def test_every_example_in_a_search_placeholder_finds_something(imported: None, client: Client, page: str) -> None:
    html = client.get(page).content.decode()
    placeholders = re.findall(r'<input type="search"[^>]*placeholder="([^"]+)"', html)
    examples = {e.strip() for text in placeholders for e in text.removeprefix("Search: e.g.").split(",")}
    assert examples
    for example in sorted(examples):
        found = client.get("/search/", {"q": example}).content.decode()
        assert 'id="search-empty"' not in found, example
