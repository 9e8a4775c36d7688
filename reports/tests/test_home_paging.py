"""Home reads the series summaries a page at a time: constant size and queries whatever the archive holds,
page links that work without JavaScript, and a command that writes the summaries of an existing archive."""

from __future__ import annotations

import re
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from reports import views
from reports.models import SeriesSummary
from runs.importer import archive_directory, submit_and_import
from runs.models import Bundle, Run

pytestmark = pytest.mark.django_db

PG174 = "sysbench-pg-tarballs/x.pg174_o2nofp.x10a_wm1_c32r128.pk1.tar.gz"


def _import_without_refresh(corpus: Path) -> None:
    """Two series stored as an import leaves them before its refresh ran (or after it was lost)."""
    submit_and_import(
        archive_directory(corpus / "sysbench-mysql-small"),
        name="small.tgz",
        source=Bundle.Source.COMMAND,
        overrides={"server": "c8r32"},
    )
    submit_and_import(
        (corpus / PG174).read_bytes(), name="pg174.tar.gz", source=Bundle.Source.COMMAND, overrides={"server": "pg-48"}
    )


def _rows(html: str) -> list[str]:
    body = html.split('data-name="series"', 1)[1].split("</table>", 1)[0]
    return re.findall(r"<tr>\s*<td[^>]*>([^<]*)</td>", body)  # each row's first cell: its server


def test_before_the_refresh_home_says_the_series_are_being_summarised_and_the_command_writes_them(
    corpus: Path, client: Client
) -> None:
    _import_without_refresh(corpus)
    assert not SeriesSummary.objects.exists()
    assert "being summarised" in client.get("/").content.decode()

    out = StringIO()
    call_command("rebuild_series_summaries", stdout=out)
    assert "2 series summaries written for 2 server × workload pairs" in out.getvalue()
    summaries = {s.server.name: s for s in SeriesSummary.objects.select_related("server", "base_run", "latest_run")}
    assert set(summaries) == {"c8r32", "pg-48"}
    assert summaries["c8r32"].runs == 9 and summaries["c8r32"].latest_run.name == "x.my9500_rel_o2nofp.z12a_c8r32.pk1"
    assert _rows(client.get("/").content.decode()) == ["c8r32", "pg-48"]


def test_the_command_is_idempotent(corpus: Path) -> None:
    _import_without_refresh(corpus)
    call_command("rebuild_series_summaries", stdout=StringIO())
    first = list(SeriesSummary.objects.values_list("server_id", "base_run_id", "latest_run_id", "runs", "red_flags"))
    call_command("rebuild_series_summaries", stdout=StringIO())
    again = list(SeriesSummary.objects.values_list("server_id", "base_run_id", "latest_run_id", "runs", "red_flags"))
    assert first == again and SeriesSummary.objects.count() == 2


def test_home_shows_one_page_of_series_and_links_the_next_one_in_plain_html(
    corpus: Path, client: Client, monkeypatch: Any
) -> None:
    _import_without_refresh(corpus)
    call_command("rebuild_series_summaries", stdout=StringIO())
    monkeypatch.setattr(views, "HOME_PAGE_SIZE", 1)
    first = client.get("/").content.decode()
    assert _rows(first) == ["c8r32"]
    assert "2 series, 1–1 shown" in first and "page 1 of 2" in first
    assert 'href="?page=2"' in first
    second = client.get("/", {"page": "2"}).content.decode()
    assert _rows(second) == ["pg-48"] and 'href="?page=1"' in second
    # A page past the end (an old link) shows the last page rather than an error.
    assert _rows(client.get("/", {"page": "99"}).content.decode()) == ["pg-48"]


def test_home_reads_the_same_number_of_queries_and_lists_at_most_a_page_however_many_series(
    corpus: Path, client: Client, monkeypatch: Any
) -> None:
    monkeypatch.setattr(views, "HOME_PAGE_SIZE", 1)
    submit_and_import(
        (corpus / PG174).read_bytes(), name="pg174.tar.gz", source=Bundle.Source.COMMAND, overrides={"server": "pg-48"}
    )
    call_command("rebuild_series_summaries", stdout=StringIO())
    counts = []
    for _ in range(2):
        with CaptureQueriesContext(connection) as home:
            html = client.get("/", {"page": "1"}).content.decode()
        counts.append(len(home))
        assert len(_rows(html)) == 1
        submit_and_import(
            archive_directory(corpus / "sysbench-mysql-small"),
            name="small.tgz",
            source=Bundle.Source.COMMAND,
            overrides={"server": "c8r32"},
        )
        call_command("rebuild_series_summaries", stdout=StringIO())
    assert Run.objects.count() == 10 and SeriesSummary.objects.count() == 2
    assert counts[0] == counts[1]
