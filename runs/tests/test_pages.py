"""The pages that show what was imported, filled from the real corpus: content, filters, query counts."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.core.cache import cache
from django.db import connection
from django.test import Client
from django.test.html import Element, parse_html
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from runs.importer import ImportReport, archive_directory, submit_and_import
from runs.models import Bundle, Result, Run
from runs.signals import announce_import

pytestmark = pytest.mark.django_db

PG174 = "x.pg174_o2nofp.x10a_wm1_c32r128.pk1"
MY5651 = "x.my5651_rel_o2nofp.z12a_c8r32.pk1"
RUN_HREF = re.compile(r"^/runs/(\d+)/$")


def _elements(root: Element) -> Iterator[Element]:
    yield root
    for child in root.children:
        if isinstance(child, Element):
            yield from _elements(child)


def _text(element: Element) -> str:
    return " ".join(child if isinstance(child, str) else _text(child) for child in element.children).strip()


def _page(client: Client, url: str) -> Element:
    response = client.get(url)
    assert response.status_code == 200, (url, response.status_code)
    return parse_html(response.content.decode())


def _linked_run_ids(page: Element) -> set[int]:
    """Ids of the runs a page links to (``/runs/<id>/``)."""
    hrefs = (dict(e.attributes).get("href") or "" for e in _elements(page) if e.name == "a")
    return {int(m[1]) for href in hrefs if (m := RUN_HREF.match(href))}


def _table_rows(page: Element) -> tuple[list[str], list[list[str]]]:
    """Header and body cells of the page's (first) table, as the table copies them: a cell's exact value
    (data-value) where it shows a compact one, else its text."""
    table = next(e for e in _elements(page) if e.name == "table")
    header = [_text(e) for e in _elements(table) if e.name == "th"]
    rows = [
        [dict(td.attributes).get("data-value") or _text(td) for td in tr.children if isinstance(td, Element)]
        for tr in _elements(table)
        if tr.name == "tr"
    ]
    return header, [row for row in rows[1:] if row]


def _import_pg(corpus: Path, server: str = "pg-48") -> ImportReport:
    data = (corpus / "sysbench-pg-tarballs" / f"{PG174}.tar.gz").read_bytes()
    return submit_and_import(data, name=f"{PG174}.tar.gz", source=Bundle.Source.COMMAND, overrides={"server": server})


def _import_dir(path: Path, server: str) -> ImportReport:
    return submit_and_import(
        archive_directory(path), name=f"{path.name}.tar.gz", source=Bundle.Source.COMMAND, overrides={"server": server}
    )


# --------------------------------------------------------------------------- run list


def test_the_run_list_filters_by_dbms_and_by_server(client: Client, corpus: Path) -> None:
    _import_pg(corpus)
    _import_dir(corpus / "sysbench-mysql-small", server="c8r32")
    postgres = set(Run.objects.filter(build__version__dbms__name="Postgres").values_list("pk", flat=True))
    mysql = set(Run.objects.filter(build__version__dbms__name="MySQL").values_list("pk", flat=True))
    assert len(postgres) == 1 and len(mysql) == 9

    assert _linked_run_ids(_page(client, "/runs/")) == postgres | mysql
    assert _linked_run_ids(_page(client, "/runs/?dbms=Postgres")) == postgres
    assert _linked_run_ids(_page(client, "/runs/?dbms=MySQL")) == mysql
    assert _linked_run_ids(_page(client, "/runs/?server=pg-48")) == postgres
    assert _linked_run_ids(_page(client, "/runs/?server=c8r32")) == mysql
    assert _linked_run_ids(_page(client, "/runs/?server=c8r32&dbms=Postgres")) == set()
    assert _linked_run_ids(_page(client, "/runs/?dbms=MariaDB")) == set()


def test_the_run_list_offers_the_known_dbms_and_server_names_as_filter_choices(client: Client, corpus: Path) -> None:
    _import_pg(corpus)
    page = _page(client, "/runs/?dbms=Postgres")
    selects = {dict(e.attributes)["name"]: e for e in _elements(page) if e.name == "select"}
    options = {
        name: {
            dict(o.attributes)["value"]: "selected" in dict(o.attributes) for o in _elements(s) if o.name == "option"
        }
        for name, s in selects.items()
    }
    assert options == {"dbms": {"": False, "Postgres": True}, "server": {"": False, "pg-48": False}}


def test_the_run_list_dates_each_run_and_marks_a_date_that_is_only_a_file_time(client: Client, corpus: Path) -> None:
    _import_pg(corpus)
    _import_dir(corpus / "sysbench-mysql-small", server="c8r32")
    header, rows = _table_rows(_page(client, "/runs/"))
    shown = {row[0]: dict(zip(header, row, strict=True))["Date"] for row in rows}
    runs = Run.objects.filter(name__in=[PG174, MY5651])
    assert {run.name: run.start_recorded for run in runs} == {PG174: True, MY5651: False}
    for run in runs:
        assert run.started_at is not None
        marker = "" if run.start_recorded else " (file\xa0time)"
        assert shown[run.name] == f"{run.started_at:%Y-%m-%d}{marker}", run.name


# --------------------------------------------------------------------------- run detail

# Results table header → Result field; QPS and TPS are rounded by the template, the rest shown with the
# decimals the result files have (latency 2 as sysbench prints it, cpu/o 6, per-operation metrics 3).
_COLUMNS = {
    "QPS": ("qps", 0.5),
    "TPS": ("tps", 0.005),
    "lat avg": ("lat_avg_ms", 0),
    "lat max": ("lat_max_ms", 0),
    "cpu/o": ("cpu_o", 0),
    "cs/o": ("cs_o", 0),
    "r/o": ("r_o", 0),
    "rKB/o": ("rkb_o", 0),
    "wKB/o": ("wkb_o", 0),
    "r/s": ("rps", 0),
    "rMB/s": ("rmbps", 0),
    "w/s": ("wps", 0),
    "wMB/s": ("wmbps", 0),
    "cs/s": ("cs_s", 0),
    "cpu/s": ("cpu_s", 0),
}


def test_the_run_page_shows_every_result_with_its_metrics(client: Client, corpus: Path) -> None:
    run = Run.objects.get(pk=_import_pg(corpus).runs[0].id)
    header, rows = _table_rows(_page(client, f"/runs/{run.pk}/"))
    by_key = {(row[0], int(row[1])): dict(zip(header, row, strict=True)) for row in rows}
    # The load step has a table of its own (runs/tests/test_load_step.py).
    results = list(Result.objects.filter(run=run).exclude(microbenchmark__test="load").select_related("microbenchmark"))
    assert len(results) == 39 and len(by_key) == len(rows) == 39

    for result in results:
        cells = by_key[(result.microbenchmark.label, result.dop)]
        for column, (field, tolerance) in _COLUMNS.items():
            value = getattr(result, field)
            if value is None:
                assert cells[column] == "–", (result, column)
            else:
                assert float(cells[column]) == pytest.approx(value, rel=1e-9, abs=tolerance), (result, column)
        if result.lat_pct_ms is not None:
            value, label = cells["lat pct"].split()
            assert float(value) == pytest.approx(result.lat_pct_ms) and label == f"p{result.lat_pct:.0f}"

    point = by_key[("point-query_range=100", 40)]
    assert (point["QPS"], point["cpu/o"], point["cs/o"], point["lat pct"]) == (
        "1028663",
        "0.000079",
        "2.431",
        "0.05 p95",
    )


def test_the_run_page_shows_a_big_qps_compactly_with_the_exact_value_on_hover(client: Client, corpus: Path) -> None:
    run = Run.objects.get(pk=_import_pg(corpus).runs[0].id)
    html = client.get(f"/runs/{run.pk}/").content.decode()
    # point-query at 40 clients: 1,028,663 QPS.
    assert '<td class="num" data-value="1028663" title="1,028,663">1.03M</td>' in html


def test_a_sysbench_run_page_labels_its_time_as_the_start_its_ps_sampler_recorded(client: Client, corpus: Path) -> None:
    run = Run.objects.get(pk=_import_pg(corpus).runs[0].id)
    page = _page(client, f"/runs/{run.pk}/")
    facts = next(e for e in _elements(page) if e.name == "dl")
    terms = [_text(e) for e in facts.children if isinstance(e, Element) and e.name == "dt"]
    assert "Started" in terms and "File time" not in terms
    assert "ps sampler" in _text(facts)


def test_a_db_bench_run_page_labels_its_time_as_the_start_its_results_record(client: Client, corpus: Path) -> None:
    directory = corpus / "dbbench" / "arc" / "dec25.dbb.clang" / "8core"
    report = submit_and_import(archive_directory(directory), name="8core.tgz", source=Bundle.Source.COMMAND)
    run = Run.objects.get(pk=report.runs[0].id)
    assert run.started_at is not None
    page = _page(client, f"/runs/{run.pk}/")
    facts = next(e for e in _elements(page) if e.name == "dl")
    shown = dict(
        zip(
            [_text(e) for e in facts.children if isinstance(e, Element) and e.name == "dt"],
            [_text(e) for e in facts.children if isinstance(e, Element) and e.name == "dd"],
            strict=True,
        )
    )
    assert "File time" not in shown
    assert shown["Started"].startswith(f"{run.started_at:%Y-%m-%d %H:%M} UTC")
    assert "recorded in the results" in shown["Started"]


def test_the_run_page_shows_the_run_facts_and_its_config(client: Client, corpus: Path) -> None:
    run = Run.objects.get(pk=_import_pg(corpus).runs[0].id)
    page = _page(client, f"/runs/{run.pk}/")
    facts = next(e for e in _elements(page) if e.name == "dl")
    terms = [_text(e) for e in facts.children if isinstance(e, Element) and e.name == "dt"]
    values = [_text(e) for e in facts.children if isinstance(e, Element) and e.name == "dd"]
    shown = dict(zip(terms, values, strict=True))
    assert shown["DBMS / version"] == "Postgres 17.4"
    assert shown["Server"] == "pg-48, 48 CPUs reported"
    assert shown["Workload"] == "sysbench 8 tables × 10M rows"
    assert shown["Config"] == "x10a_wm1_c32r128"
    assert "shared_buffers = 96GB" in _text(page)
    assert f"/bundles/{run.bundle_id}/" in {dict(e.attributes).get("href") for e in _elements(page) if e.name == "a"}


def test_an_unknown_run_is_404(client: Client) -> None:
    assert client.get("/runs/999999/").status_code == 404


# --------------------------------------------------------------------------- home, bundles, health


def test_the_home_page_lists_each_server_and_workload_with_a_link_to_its_runs(
    client: Client, corpus: Path, django_capture_on_commit_callbacks: Any
) -> None:
    reports = [_import_pg(corpus), _import_dir(corpus / "sysbench-mysql-small", server="c8r32")]
    # Home lists the series the refresh after each import's commit summarised.
    with django_capture_on_commit_callbacks(execute=True):
        for report in reports:
            announce_import(report.bundle_id)
    header, rows = _table_rows(_page(client, "/"))
    shown = {
        (r[header.index("Server")], r[header.index("Workload")], r[header.index("DBMS")], r[header.index("Runs")])
        for r in rows
    }
    assert shown == {
        ("pg-48", "sysbench 8 tables × 10M rows", "Postgres", "1"),
        ("c8r32", "sysbench 1 table × 50M rows", "MySQL", "9"),
    }
    page = _page(client, "/")
    run_links = [dict(e.attributes)["href"] for e in _elements(page) if e.name == "a" and _text(e) == "9"]
    assert len(run_links) == 1
    assert _linked_run_ids(_page(client, run_links[0])) == set(
        Run.objects.filter(server__name="c8r32").values_list("pk", flat=True)
    )


def test_the_home_page_without_runs_points_to_the_upload_page_those_who_may_upload(
    client: Client, user_with_role: Any
) -> None:
    page = _page(client, "/")
    assert "No runs yet" in _text(page)
    assert "/upload/" not in {dict(e.attributes).get("href") for e in _elements(page) if e.name == "a"}
    client.force_login(user_with_role("uploader"))
    page = _page(client, "/")
    assert "/upload/" in {dict(e.attributes).get("href") for e in _elements(page) if e.name == "a"}


def test_the_bundle_list_shows_each_bundle_with_its_status(client: Client, corpus: Path) -> None:
    report = _import_pg(corpus)
    failed = Bundle.objects.create(
        sha256="f" * 64, original_name="broken.tgz", size=10, source=Bundle.Source.UPLOAD, status="failed", error="x"
    )
    page = _page(client, "/bundles/")
    header, rows = _table_rows(page)
    shown = {(r[header.index("Bundle")], r[header.index("Status")]) for r in rows}
    assert shown == {(f"{PG174}.tar.gz", "imported"), ("broken.tgz", "failed")}
    links = {_text(e): dict(e.attributes)["href"] for e in _elements(page) if e.name == "a"}
    assert links[f"{PG174}.tar.gz"] == f"/bundles/{report.bundle_id}/"
    assert links["broken.tgz"] == f"/bundles/{failed.pk}/"


def test_the_bundle_list_is_newest_first(client: Client) -> None:
    now = timezone.now()
    # Upload times deliberately out of id order, so neither id order matches newest first by chance.
    for n, minutes_ago in enumerate((20, 10, 30)):
        bundle = Bundle.objects.create(sha256=f"{n}" * 64, original_name=f"b{n}.tgz", size=1, source="upload")
        Bundle.objects.filter(pk=bundle.pk).update(uploaded_at=now - timedelta(minutes=minutes_ago))
    header, rows = _table_rows(_page(client, "/bundles/"))
    assert [r[header.index("Bundle")] for r in rows] == ["b1.tgz", "b0.tgz", "b2.tgz"]


def test_healthz_answers_ok_when_the_database_answers(client: Client) -> None:
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json()["database"] == "ok" and response["Content-Type"] == "application/json"


def test_healthz_answers_ok_when_an_event_loop_already_runs_in_its_thread(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An async server's thread, or a browser driver's in the browser tests: asyncio.run would refuse to start there,
    # and the probe called the database down.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

    async def probe() -> Any:
        return client.get("/healthz")

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        response = asyncio.run(probe())
    else:  # after a browser test in this process, Playwright's loop already runs here
        response = client.get("/healthz")
    assert response.status_code == 200 and response.json()["database"] == "ok"


# --------------------------------------------------------------------------- query counts


def _queries(client: Client, url: str) -> int:
    """Queries of a page rendered from scratch (pages are cached whole: a second request costs less)."""
    cache.clear()
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url)
    assert response.status_code == 200, (url, response.status_code)
    return len(queries)


def test_the_pages_use_as_many_queries_with_ten_runs_as_with_one(client: Client, corpus: Path) -> None:
    small = corpus / "sysbench-mysql-small"
    first = _import_dir(small / MY5651, server="c8r32")
    first_run = first.runs[0].id
    pages = ["/runs/", f"/runs/{first_run}/", "/bundles/", "/", f"/bundles/{first.bundle_id}/", "/runs/?dbms=MySQL"]
    for url in pages:
        client.get(url)  # first hits warm caches (content types, template loading), which are not per request
    with_one = {url: _queries(client, url) for url in pages}

    many = _import_dir(small, server="c8r32")
    _import_pg(corpus)
    assert Run.objects.count() == 10 and Bundle.objects.count() == 3
    with_ten = {url: _queries(client, url) for url in pages}
    assert with_ten == with_one

    # The page of a bundle of eight runs, and of runs with other result counts, costs the same.
    assert _queries(client, f"/bundles/{many.bundle_id}/") == with_one[f"/bundles/{first.bundle_id}/"]
    for run in Run.objects.exclude(pk=first_run):
        assert _queries(client, f"/runs/{run.pk}/") == with_one[f"/runs/{first_run}/"], run.name


def test_the_pages_stay_within_a_small_fixed_number_of_queries(
    client: Client, corpus: Path, django_assert_max_num_queries: Any
) -> None:
    _import_pg(corpus)
    _import_dir(corpus / "sysbench-mysql-small", server="c8r32")
    run = Run.objects.first()
    assert run is not None
    for url in ("/runs/", f"/runs/{run.pk}/", "/bundles/", "/", f"/bundles/{run.bundle_id}/"):
        client.get(url)
        # Lists run a count, a page and the filter choices; a detail page its object and its children.
        with django_assert_max_num_queries(6):
            assert client.get(url).status_code == 200
