"""What an import says besides storing runs: 0 QPS results, and results already imported for another series.

Through the same paths a user takes: the upload API (its answer and the bundle
page) and the import command (its output).
"""

from __future__ import annotations

import io
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.test import Client

from accounts.permissions import create_token
from runs.models import Bundle, Result, Run
from runs.tests import hostile

pytestmark = pytest.mark.django_db(transaction=True)  # the upload imports on commit

RUN = hostile.RUN


@pytest.fixture
def uploader(user_with_role: Callable[..., Any]) -> Client:
    token = create_token(user_with_role("uploader"), "notices")[1]
    return Client(headers={"Authorization": f"Bearer {token}"})


def _upload(client: Client, data: bytes, name: str, **fields: str) -> dict[str, Any]:
    response = client.post("/api/bundles/", {"file": SimpleUploadedFile(name, data), **fields})
    assert response.status_code in (200, 201), response.content[:500]
    return dict(response.json())


def _zero_run() -> bytes:
    files = {
        "sb.o.point-query.range100.pk1.dop1": hostile.sb_o(qps="0.00", tps="0.00"),
        "sb.o.insert.range100.pk1.dop1": hostile.sb_o(qps="-0.00", tps="-0.00"),
        "sb.o.update-index.range100.pk1.dop1": hostile.sb_o(qps="5100.00"),
    }
    return hostile.tgz(hostile.member(f"{RUN}/{name}", data) for name, data in files.items())


def test_zero_and_negative_zero_qps_are_imported_as_zero_with_a_warning_on_the_bundle(uploader: Client) -> None:
    body = _upload(uploader, _zero_run(), "zero.tgz", server="pn53")

    assert [run["results"] for run in body["runs"]] == [3]
    stored = dict(Result.objects.values_list("microbenchmark__test", "qps"))
    assert stored["update-index"] == 5100.0
    for test in ("point-query", "insert"):
        assert stored[test] == 0.0 and math.copysign(1, stored[test]) == 1.0, test  # -0.0 stored as 0.0
    [warning] = [w for w in body["warnings"] if "0 QPS" in w]
    assert warning.startswith(f"{RUN}: 0 QPS for ")
    assert "insert_range=100 at 1 threads" in warning and "point-query_range=100 at 1 threads" in warning
    page = Client().get(f"/bundles/{body['bundle_id']}/")
    assert "0 QPS for" in page.content.decode()


def test_a_run_without_zero_qps_gets_no_such_warning(uploader: Client) -> None:
    body = _upload(uploader, hostile.tgz(hostile.good_run()), "good.tgz", server="pn53")
    assert not [w for w in body["warnings"] if "0 QPS" in w]


def _with_manifest(text: str) -> bytes:
    return hostile.tgz([*hostile.good_run(), hostile.member("benchdash.toml", text.encode())])


def test_a_run_already_imported_for_another_server_is_reported_with_that_run_and_can_be_attached(
    uploader: Client,
) -> None:
    first = _upload(uploader, _with_manifest('server = "pn53"\n'), "first.tgz")
    [original] = first["runs"]

    # The same results for another server: skipped, and said so with the run that holds them.
    second = _upload(uploader, _with_manifest('server = "c2d-32"\n'), "second.tgz")
    assert second["runs"] == []
    [warning] = second["warnings"]
    assert f"already imported as run {original['id']} ({RUN}) on server 'pn53'" in warning
    assert "server 'c2d-32' does not get it; set attach_existing = true" in warning
    assert warning in Client().get(f"/bundles/{second['bundle_id']}/").content.decode().replace("&#x27;", "'")
    assert not Run.objects.filter(server__name="c2d-32").exists()

    # Attached: the series gets its own run of those results; the first series keeps its own.
    attached = _upload(uploader, _with_manifest('server = "c2d-32"\nattach_existing = true\n'), "attach.tgz")
    [run] = attached["runs"]
    assert (run["server"], run["name"], run["results"]) == ("c2d-32", RUN, original["results"])
    assert set(Run.objects.values_list("server__name", flat=True)) == {"pn53", "c2d-32"}
    # Attaching the same again changes nothing: that attachment is one run, like any re-import.
    again = _upload(uploader, _with_manifest('server = "c2d-32"\nattach_existing = true\n\n'), "attach-again.tgz")
    assert again["runs"] == [] and again["warnings"] == []
    assert Run.objects.count() == 2


def test_the_import_command_prints_the_existing_run_of_skipped_results(tmp_path: Path) -> None:
    first, second = tmp_path / "first.tgz", tmp_path / "second.tgz"
    first.write_bytes(_with_manifest('server = "pn53"\n'))
    second.write_bytes(_with_manifest('server = "c2d-32"\n'))
    call_command("import_bundle", str(first), stdout=io.StringIO())
    out = io.StringIO()
    call_command("import_bundle", str(second), stdout=out)
    existing = Run.objects.get()
    assert (
        f"{RUN}: already imported as run {existing.pk} (bundle {existing.bundle_id}) on pn53, skipped" in out.getvalue()
    )
    assert "set attach_existing = true" in out.getvalue()
    assert Bundle.objects.count() == 2


def test_a_misspelt_attach_key_is_refused_not_ignored(uploader: Client) -> None:
    response = uploader.post(
        "/api/bundles/", {"file": SimpleUploadedFile("m.tgz", _with_manifest("attach_exisitng = true\n"))}
    )
    assert response.status_code == 422
    assert "attach_exisitng: Extra inputs are not permitted" in response.json()["error"]
