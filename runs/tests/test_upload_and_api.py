"""Uploading real bundles through the web page and the HTTP API, as a user or a script would."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.test.html import Element, parse_html

from runs.models import Bundle, Result, Run, RunFile

PG174 = "x.pg174_o2nofp.x10a_wm1_c32r128.pk1"


@pytest.fixture
def client(client: Client, user_with_role: Callable[..., Any]) -> Client:
    """Uploads need the uploader role: every test here is such a user (the refusals are in test_permissions.py)."""
    client.force_login(user_with_role("uploader"))
    return client


@pytest.fixture
def pg_tarball(corpus: Path) -> bytes:
    return (corpus / "sysbench-pg-tarballs" / f"{PG174}.tar.gz").read_bytes()


def _elements(root: Element) -> Iterator[Element]:
    yield root
    for child in root.children:
        if isinstance(child, Element):
            yield from _elements(child)


def _text(element: Element) -> str:
    return " ".join(child if isinstance(child, str) else _text(child) for child in element.children)


def _page(response: Any) -> Element:
    assert response.status_code == 200, response.status_code
    return parse_html(response.content.decode())


def _counts() -> tuple[int, int, int, int]:
    return Bundle.objects.count(), Run.objects.count(), Result.objects.count(), RunFile.objects.count()


def _upload(client: Client, capture: Any, data: bytes, name: str, **fields: str) -> tuple[Any, list[Any]]:
    """POST the upload form; the import queued on commit runs when the capture block ends (Celery is eager).

    Also returns the statuses of the bundles as the request left them, before any commit.
    """
    with capture(execute=True):
        response = client.post("/upload/", {"bundle": SimpleUploadedFile(name, data), **fields})
        before_commit = list(Bundle.objects.values_list("status", flat=True))
    return response, before_commit


# --------------------------------------------------------------------------- upload page


@pytest.mark.django_db
def test_the_upload_page_has_a_labelled_file_input(client: Client) -> None:
    page = _page(client.get("/upload/"))
    elements = list(_elements(page))
    file_inputs = [e for e in elements if e.name == "input" and dict(e.attributes).get("type") == "file"]
    assert len(file_inputs) == 1
    field_id = dict(file_inputs[0].attributes)["id"]
    labels = [e for e in elements if e.name == "label" and dict(e.attributes).get("for") == field_id]
    assert len(labels) == 1 and _text(labels[0]).strip() == "Result bundle"
    form = next(e for e in elements if e.name == "form" and dict(e.attributes).get("id") == "upload-form")
    assert dict(form.attributes)["enctype"] == "multipart/form-data"


@pytest.mark.django_db
def test_uploading_a_real_tarball_redirects_to_its_bundle_page_which_links_the_new_run(
    client: Client, pg_tarball: bytes, django_capture_on_commit_callbacks: Any
) -> None:
    response, before_commit = _upload(
        client, django_capture_on_commit_callbacks, pg_tarball, f"{PG174}.tar.gz", server="pg-48", workload=""
    )
    bundle = Bundle.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/bundles/{bundle.pk}/"
    # The request only stored and queued the bundle; the import ran after the commit.
    assert before_commit == ["queued"]

    page = _page(client.get(response["Location"]))
    statuses = [e for e in _elements(page) if e.name == "span" and "status" in dict(e.attributes).get("class", "")]
    assert [_text(s).strip() for s in statuses] == ["imported"]
    run = Run.objects.select_related("server").get()
    assert run.name == PG174 and run.server.name == "pg-48" and run.bundle == bundle
    links = {dict(e.attributes).get("href"): _text(e).strip() for e in _elements(page) if e.name == "a"}
    assert links[f"/runs/{run.pk}/"] == PG174
    assert client.get(f"/runs/{run.pk}/").status_code == 200


@pytest.mark.django_db
def test_uploading_the_same_file_again_stores_nothing_new_and_says_when_and_as_which_bundle(
    client: Client, pg_tarball: bytes, django_capture_on_commit_callbacks: Any
) -> None:
    first, _ = _upload(client, django_capture_on_commit_callbacks, pg_tarball, "first.tar.gz")
    counts = _counts()
    assert counts[:3] == (1, 1, 40)  # 39 tests and the load step
    bundle = Bundle.objects.get()

    with django_capture_on_commit_callbacks() as queued:
        again = client.post("/upload/", {"bundle": SimpleUploadedFile("renamed.tar.gz", pg_tarball)})
    assert queued == []  # an imported bundle is not queued a second time
    assert _counts() == counts
    assert Bundle.objects.get().original_name == "first.tar.gz"
    page = _page(again)
    (notice,) = [e for e in _elements(page) if dict(e.attributes).get("role") == "status"]
    text = " ".join(_text(notice).split())
    assert f"Already imported on {bundle.imported_at:%Y-%m-%d %H:%M} as bundle {bundle.pk}" in text
    assert f"/bundles/{bundle.pk}/" in [dict(e.attributes).get("href") for e in _elements(notice) if e.name == "a"]
    # The whole page, header and navigation included, with an empty form for the next upload.
    assert [e for e in _elements(page) if e.name == "nav"] and first["Location"] == f"/bundles/{bundle.pk}/"


@pytest.mark.django_db
def test_an_htmx_upload_is_sent_to_the_bundle_page_as_a_full_page_load(
    client: Client, pg_tarball: bytes, django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            "/upload/",
            {"bundle": SimpleUploadedFile("a.tar.gz", pg_tarball)},
            headers={"HX-Request": "true", "HX-Target": "upload-panel"},
        )
    bundle = Bundle.objects.get()
    # htmx follows HX-Redirect with a normal navigation: the bundle page arrives whole, never as a fragment.
    assert response.status_code == 200 and response["HX-Redirect"] == f"/bundles/{bundle.pk}/"
    assert response.content == b""


@pytest.mark.django_db
def test_an_htmx_upload_with_errors_or_a_duplicate_swaps_only_the_upload_panel(
    client: Client, pg_tarball: bytes, django_capture_on_commit_callbacks: Any
) -> None:
    htmx = {"HX-Request": "true", "HX-Target": "upload-panel"}
    empty = client.post("/upload/", {}, headers=htmx)
    root = parse_html(empty.content.decode())
    assert root.name == "div" and dict(root.attributes)["id"] == "upload-panel"
    assert "This field is required" in empty.content.decode() and "<nav" not in empty.content.decode()

    _upload(client, django_capture_on_commit_callbacks, pg_tarball, "a.tar.gz")
    again = client.post("/upload/", {"bundle": SimpleUploadedFile("b.tar.gz", pg_tarball)}, headers=htmx)
    html = again.content.decode()
    assert parse_html(html).name == "div" and "<nav" not in html
    assert f"as bundle {Bundle.objects.get().pk}" in " ".join(_text(parse_html(html)).split())


@pytest.mark.django_db
def test_a_bundle_whose_runs_were_all_imported_before_says_so_and_links_them(
    client: Client, corpus: Path, django_capture_on_commit_callbacks: Any
) -> None:
    from runs.tests.hostile import tgz_of_files

    run = "x.my5651_rel_o2nofp.z12a_c8r32.pk1"
    files = {f"{run}/{p.name}": p.read_bytes() for p in (corpus / "sysbench-mysql-small" / run).iterdir()}
    first, _ = _upload(client, django_capture_on_commit_callbacks, tgz_of_files(files), "first.tgz")
    original = Run.objects.get()
    # Other bytes (a note added), the same run inside.
    files["NOTES.txt"] = b"uploaded again by a colleague\n"
    second, _ = _upload(client, django_capture_on_commit_callbacks, tgz_of_files(files), "second.tgz")
    assert second["Location"] != first["Location"] and Run.objects.count() == 1
    bundle = Bundle.objects.latest("pk")
    assert bundle.status == Bundle.Status.IMPORTED

    page = _page(client.get(second["Location"]))
    (notice,) = [e for e in _elements(page) if dict(e.attributes).get("role") == "status"]
    assert "Nothing new: its run was imported before, from other bundles." in " ".join(_text(notice).split())
    links = {dict(e.attributes)["href"]: _text(e).strip() for e in _elements(notice) if e.name == "a"}
    assert links == {f"/runs/{original.pk}/": run, f"/bundles/{original.bundle_id}/": f"bundle {original.bundle_id}"}


@pytest.mark.django_db
def test_a_file_that_is_not_an_archive_leaves_a_failed_bundle_with_its_error_shown_and_no_run(
    client: Client, django_capture_on_commit_callbacks: Any
) -> None:
    notes = b"these are my notes, not results\n" * 20
    response, _ = _upload(client, django_capture_on_commit_callbacks, notes, "a.tgz")
    bundle = Bundle.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/bundles/{bundle.pk}/"
    assert bundle.status == Bundle.Status.FAILED and "not a tar" in bundle.error
    assert Run.objects.count() == 0 and Result.objects.count() == 0

    page = _page(client.get(response["Location"]))
    alerts = [e for e in _elements(page) if dict(e.attributes).get("role") == "alert"]
    assert [_text(a).strip() for a in alerts] == [bundle.error]
    assert "failed" in [_text(e).strip() for e in _elements(page) if e.name == "span"]


@pytest.mark.django_db
def test_the_bundle_page_polls_only_its_status_fragment_and_keeps_its_layout_otherwise(
    client: Client, pg_tarball: bytes, django_capture_on_commit_callbacks: Any
) -> None:
    response, _ = _upload(client, django_capture_on_commit_callbacks, pg_tarball, "a.tar.gz")
    full = client.get(response["Location"]).content.decode()
    fragment = client.get(response["Location"], headers={"HX-Request": "true", "HX-Target": "bundle-status"})
    assert fragment.status_code == 200
    html = fragment.content.decode()
    assert "<html" in full and "<html" not in html and "<head" not in html and "<nav" not in html
    root = parse_html(html)
    assert root.name == "div" and dict(root.attributes)["id"] == "bundle-status"
    # Once imported the fragment stops polling, or the browser would ask every second forever.
    assert "hx-trigger" not in dict(root.attributes)
    assert PG174 in html and "imported" in html
    # Any other htmx request (a boosted link, a redirect followed by htmx) gets the whole page.
    other = client.get(response["Location"], headers={"HX-Request": "true"}).content.decode()
    assert "<nav" in other and "<html" in other


@pytest.mark.django_db
def test_a_queued_bundle_fragment_keeps_polling_until_the_import_ends(client: Client, pg_tarball: bytes) -> None:
    from runs.importer import store_bundle

    bundle, _ = store_bundle(pg_tarball, name="a.tar.gz", source=Bundle.Source.UPLOAD)
    htmx = {"HX-Request": "true", "HX-Target": "bundle-status"}
    html = client.get(f"/bundles/{bundle.pk}/", headers=htmx).content.decode()
    fragment = parse_html(html)
    attributes = dict(fragment.attributes)
    assert attributes["hx-get"] == f"/bundles/{bundle.pk}/" and attributes["hx-trigger"] == "every 1s"
    assert "waiting for a worker" in html


@pytest.mark.django_db
def test_an_importing_bundle_shows_files_read_and_runs_stored_and_keeps_polling(
    client: Client, pg_tarball: bytes
) -> None:
    from django.utils import timezone

    from runs.importer import store_bundle

    bundle, _ = store_bundle(pg_tarball, name="a.tar.gz", source=Bundle.Source.UPLOAD)
    progress = {"phase": "storing", "files_read": 120, "runs_found": 30, "runs_new": 28, "runs_stored": 7}
    Bundle.objects.filter(pk=bundle.pk).update(status="importing", progress=progress, heartbeat_at=timezone.now())
    htmx = {"HX-Request": "true", "HX-Target": "bundle-status"}
    html = " ".join(client.get(f"/bundles/{bundle.pk}/", headers=htmx).content.decode().split())
    assert "120 result files read, 30 runs found; storing: 7 of 28 new runs stored" in html
    assert 'value="7" max="28"' in html and 'hx-trigger="every 1s"' in html
    assert "stopped answering" not in html

    # A heartbeat long gone: the page says the import is being taken over, not that it is still going.
    Bundle.objects.filter(pk=bundle.pk).update(heartbeat_at=timezone.now() - timezone.timedelta(hours=1))
    html = client.get(f"/bundles/{bundle.pk}/", headers=htmx).content.decode()
    assert "stopped answering" in html


# --------------------------------------------------------------------------- API
# These tests run without a wrapping test transaction: the API answers 201 or 422 only because, in
# autocommit as in production, the import queued with on_commit runs (eagerly) before the response.


def _api_upload(client: Client, data: bytes, name: str, **fields: str) -> Any:
    return client.post("/api/bundles/", {"file": SimpleUploadedFile(name, data), **fields})


@pytest.mark.django_db(transaction=True)
def test_the_api_imports_a_real_tarball_and_answers_201_with_the_runs(client: Client, pg_tarball: bytes) -> None:
    response = _api_upload(client, pg_tarball, f"{PG174}.tar.gz", server="pg-48", workload="oltp 8x10M")
    assert response.status_code == 201, response.content
    body = response.json()
    bundle = Bundle.objects.get()
    run = Run.objects.get()
    assert body["bundle_id"] == bundle.pk and body["status"] == "imported" and body["already_imported"] is False
    assert body["error"] == "" and body["name"] == f"{PG174}.tar.gz"
    assert body["url"] == f"http://testserver/bundles/{bundle.pk}/"
    assert body["runs"] == [
        {
            "id": run.pk,
            "name": PG174,
            "dbms": "Postgres",
            "version": "17.4",
            "server": "pg-48",
            "workload": "oltp 8x10M",
            "results": 40,  # 39 tests and the load step
            "url": f"http://testserver/runs/{run.pk}/",
            # Nothing said where the build's code came from.
            "commit": "",
            "branch": "",
            "pull_request": None,
            "repository": "",
            "commit_time": None,
            "commit_url": "",
            "pull_request_url": "",
        }
    ]
    assert Result.objects.filter(run=run).count() == 40


@pytest.mark.django_db(transaction=True)
def test_the_api_answers_200_already_imported_for_the_same_bytes_and_stores_nothing(
    client: Client, pg_tarball: bytes
) -> None:
    first = _api_upload(client, pg_tarball, "a.tar.gz")
    assert first.status_code == 201
    counts = _counts()

    again = _api_upload(client, pg_tarball, "b.tar.gz", server="another-server")
    assert again.status_code == 200, again.content
    body = again.json()
    assert body["already_imported"] is True and body["status"] == "imported"
    assert body["bundle_id"] == first.json()["bundle_id"]
    assert body["runs"] == first.json()["runs"]
    assert _counts() == counts


@pytest.mark.django_db(transaction=True)
def test_the_api_refuses_a_truncated_gzip_with_422_and_stores_no_run(client: Client, pg_tarball: bytes) -> None:
    response = _api_upload(client, pg_tarball[: len(pg_tarball) // 2], "cut.tar.gz")
    assert response.status_code == 422, response.content
    body = response.json()
    assert body["status"] == "failed" and body["runs"] == []
    assert "truncated" in body["error"] or "corrupt" in body["error"]
    bundle = Bundle.objects.get()
    assert bundle.status == Bundle.Status.FAILED and bundle.error == body["error"]
    assert Run.objects.count() == 0 and Result.objects.count() == 0


@pytest.mark.django_db(transaction=True)
def test_the_api_reports_a_bundle_status_by_id_and_404_for_an_unknown_id(client: Client, pg_tarball: bytes) -> None:
    created = _api_upload(client, pg_tarball, "a.tar.gz").json()
    response = client.get(f"/api/bundles/{created['bundle_id']}")
    assert response.status_code == 200
    assert response.json() == {**created, "already_imported": False}

    missing = client.get(f"/api/bundles/{created['bundle_id'] + 1000}")
    assert missing.status_code == 404
    assert missing["Content-Type"].startswith("application/json")


@pytest.mark.django_db
def test_the_api_reports_a_failed_bundle_with_its_error(client: Client) -> None:
    bundle = Bundle.objects.create(
        sha256="0" * 64, original_name="bad.tgz", size=3, source=Bundle.Source.API, status="failed", error="broken"
    )
    body = client.get(f"/api/bundles/{bundle.pk}").json()
    assert (body["status"], body["error"], body["runs"]) == ("failed", "broken", [])


@pytest.mark.django_db
def test_the_openapi_schema_lists_the_bundle_endpoints(client: Client) -> None:
    response = client.get("/api/openapi.json")
    assert response.status_code == 200
    paths = response.json()["paths"]
    upload = paths["/api/bundles/"]["post"]
    assert {"201", "200", "202", "422"} <= set(upload["responses"])
    assert "multipart/form-data" in upload["requestBody"]["content"]
    assert "get" in paths["/api/bundles/{bundle_id}"]
    schemas = response.json()["components"]["schemas"]
    bundle = schemas["BundleOut"]["properties"]
    assert {"status", "progress", "skipped_runs", "note", "imported_at"} <= set(bundle)
    progress = schemas["ProgressOut"]["properties"]
    assert set(progress) == {"phase", "files_read", "runs_found", "runs_new", "runs_stored"}
    assert all(field.get("description") for field in progress.values())


@pytest.mark.django_db(transaction=True)
def test_the_api_says_when_and_as_which_bundle_the_same_bytes_were_imported(client: Client, pg_tarball: bytes) -> None:
    first = _api_upload(client, pg_tarball, "a.tar.gz").json()
    assert first["note"] == "" and first["status"] == "imported" and first["progress"]["runs_stored"] == 1
    again = _api_upload(client, pg_tarball, "b.tar.gz").json()
    bundle = Bundle.objects.get()
    assert again["note"] == (
        f"already imported on {bundle.imported_at:%Y-%m-%d %H:%M} UTC as bundle {bundle.pk}; nothing new was stored"
    )


@pytest.mark.django_db(transaction=True)
def test_the_api_answers_200_with_links_when_every_run_of_a_new_bundle_was_imported_before(
    client: Client, corpus: Path
) -> None:
    from runs.tests.hostile import tgz_of_files

    run = "x.my5651_rel_o2nofp.z12a_c8r32.pk1"
    files = {f"{run}/{p.name}": p.read_bytes() for p in (corpus / "sysbench-mysql-small" / run).iterdir()}
    assert _api_upload(client, tgz_of_files(files), "first.tgz").status_code == 201
    original = Run.objects.get()
    files["NOTES.txt"] = b"the same run, packed again\n"
    response = _api_upload(client, tgz_of_files(files), "second.tgz")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["already_imported"] is False and body["status"] == "imported" and body["runs"] == []
    assert body["note"].startswith("all 1 runs of this bundle were imported before")
    assert body["skipped_runs"] == [
        {
            "id": original.pk,
            "name": run,
            "bundle_id": original.bundle_id,
            "url": f"http://testserver/runs/{original.pk}/",
            # Held under the same server and workload: nothing to attach.
            "attachable": False,
            "attached_run_id": None,
        }
    ]
    assert Run.objects.count() == 1


@pytest.mark.django_db
def test_the_api_shows_an_importing_bundle_progress(client: Client, pg_tarball: bytes) -> None:
    from runs.importer import store_bundle

    bundle, _ = store_bundle(pg_tarball, name="a.tar.gz", source=Bundle.Source.UPLOAD)
    progress = {"phase": "reading", "files_read": 17, "runs_found": 0, "runs_new": 0, "runs_stored": 0}
    Bundle.objects.filter(pk=bundle.pk).update(status="importing", progress=progress)
    body = client.get(f"/api/bundles/{bundle.pk}").json()
    assert body["status"] == "importing" and body["progress"] == progress and body["imported_at"] is None
