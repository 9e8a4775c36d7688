"""A run already imported under another series is attached to the bundle's series through the API and the command.

``POST /api/bundles/{id}/attach`` does what the bundle page's button does, with
the same role; ``manage.py import_bundle --attach-existing`` does what
``attach_existing = true`` in the manifest does, and attaches the skipped runs of
a bundle imported before without it.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.test import Client

from accounts.permissions import UPLOADER, create_token
from runs.models import Bundle, Result, Run, RunFile
from runs.tests import hostile

pytestmark = pytest.mark.django_db(transaction=True)  # the upload imports on commit

RUN = hostile.RUN


def _bundle(server: str = "", *, note: str = "") -> bytes:
    manifest = (f'server = "{server}"\n' if server else "") + note
    files = {"my.cnf": b"[mysqld]\ninnodb_buffer_pool_size=8G\n"}
    return hostile.tgz([*hostile.good_run(files), hostile.member("benchdash.toml", manifest.encode())])


def _client(user: Any) -> Client:
    return Client(headers={"Authorization": f"Bearer {create_token(user, 'attach tests')[1]}"})


@pytest.fixture
def uploader(user_with_role: Callable[..., Any]) -> Client:
    return _client(user_with_role(UPLOADER))


def _upload(client: Client, data: bytes, name: str) -> dict[str, Any]:
    response = client.post("/api/bundles/", {"file": SimpleUploadedFile(name, data)})
    assert response.status_code in (200, 201), response.content[:500]
    return dict(response.json())


def _attach(client: Client, bundle_id: int, run: object) -> Any:
    return client.post(f"/api/bundles/{bundle_id}/attach", {"run": run}, content_type="application/json")


def _held_elsewhere(uploader: Client) -> tuple[dict[str, Any], dict[str, Any]]:
    """The same run uploaded for pn53, then for c2d-32: the second bundle skips it."""
    first = _upload(uploader, _bundle("pn53"), "first.tgz")
    second = _upload(uploader, _bundle("c2d-32", note="# again\n"), "second.tgz")
    assert second["runs"] == []
    return first, second


def test_the_api_attaches_a_run_held_under_another_server_to_the_bundles_series_once(uploader: Client) -> None:
    first, second = _held_elsewhere(uploader)
    [original] = first["runs"]
    [skipped] = second["skipped_runs"]
    assert skipped["id"] == original["id"] and skipped["attachable"] and skipped["attached_run_id"] is None

    response = _attach(uploader, second["bundle_id"], original["id"])
    assert response.status_code == 201, response.content
    body = response.json()
    attached = Run.objects.get(server__name="c2d-32")
    assert body["created"] is True and body["run"]["id"] == attached.pk
    assert body["run"]["server"] == "c2d-32" and body["run"]["name"] == RUN
    assert body["run"]["results"] == Result.objects.filter(run_id=original["id"]).count() > 0
    assert body["bundle_url"].endswith(f"/bundles/{second['bundle_id']}/")
    assert attached.bundle_id == second["bundle_id"]
    assert RunFile.objects.filter(run=attached).count() == RunFile.objects.filter(run_id=original["id"]).count()
    # The first series keeps its own run.
    assert Run.objects.get(pk=original["id"]).server.name == "pn53"

    again = _attach(uploader, second["bundle_id"], original["id"])
    assert again.status_code == 200 and again.json()["created"] is False
    assert again.json()["run"]["id"] == attached.pk and Run.objects.count() == 2

    [listed] = uploader.get(f"/api/bundles/{second['bundle_id']}").json()["skipped_runs"]
    assert listed["attachable"] and listed["attached_run_id"] == attached.pk


def test_attaching_through_the_api_needs_the_uploader_role(
    uploader: Client, user_with_role: Callable[..., Any]
) -> None:
    first, second = _held_elsewhere(uploader)
    run = first["runs"][0]["id"]
    reader = _client(user_with_role("viewer", username="reader"))
    triager = _client(user_with_role("triager", username="triager"))

    assert _attach(Client(), second["bundle_id"], run).status_code == 401
    assert _attach(Client(headers={"Authorization": "Bearer nonsense"}), second["bundle_id"], run).status_code == 401
    assert _attach(reader, second["bundle_id"], run).status_code == 403
    assert _attach(triager, second["bundle_id"], run).status_code == 403
    assert Run.objects.count() == 1
    assert _attach(_client(user_with_role("admin", username="boss")), second["bundle_id"], run).status_code == 201


def test_a_run_the_bundle_cannot_attach_is_refused_with_the_reason_and_nothing_is_stored(uploader: Client) -> None:
    first, second = _held_elsewhere(uploader)
    run = first["runs"][0]["id"]

    # The first bundle imported the run itself: nothing of it is held elsewhere.
    refused = _attach(uploader, first["bundle_id"], run)
    assert refused.status_code == 400
    assert "is not a run of this bundle held under another series" in refused.json()["detail"]
    assert _attach(uploader, second["bundle_id"], run + 1000).status_code == 400
    assert _attach(uploader, second["bundle_id"] + 1000, run).status_code == 404
    invalid = _attach(uploader, second["bundle_id"], "the first one")
    assert invalid.status_code == 422 and invalid.json()["detail"][0]["loc"][-1] == "run"
    assert _attach(uploader, second["bundle_id"], None).status_code == 422
    assert Run.objects.count() == 1 and Bundle.objects.count() == 2


def test_the_attach_endpoint_is_documented_with_every_status_code(uploader: Client) -> None:
    schema = uploader.get("/api/openapi.json").json()
    operation = schema["paths"]["/api/bundles/{bundle_id}/attach"]["post"]
    assert set(operation["responses"]) == {"200", "201", "400", "401", "403", "404", "422", "500", "503"}
    assert operation["requestBody"]["content"]["application/json"]


def _import(*args: str) -> str:
    out = io.StringIO()
    call_command("import_bundle", *args, "--jobs=1", stdout=out)
    return out.getvalue()


def test_the_import_command_attaches_runs_held_under_another_server_when_asked(tmp_path: Path) -> None:
    first = tmp_path / "first.tgz"
    first.write_bytes(_bundle())
    _import(str(first), "--server", "pn53")
    holder = Run.objects.get()

    # Other bytes holding the same results, for another server: skipped without the option...
    second = tmp_path / "second.tgz"
    second.write_bytes(_bundle(note="# packed again\n"))
    output = _import(str(second), "--server", "c2d-32")
    assert "attach_existing" in output and Run.objects.count() == 1

    # ...and attached with it, as another bundle's run of the series c2d-32.
    third = tmp_path / "third.tgz"
    third.write_bytes(_bundle(note="# and again\n"))
    _import(str(third), "--server", "c2d-32", "--attach-existing")
    attached = Run.objects.get(server__name="c2d-32")
    assert attached.bundle.original_name == "third.tgz" and attached.pk != holder.pk
    assert Result.objects.filter(run=attached).count() == Result.objects.filter(run=holder).count()
    # Asked again: the same run, none more.
    _import(str(third), "--server", "c2d-32", "--attach-existing")
    assert Run.objects.filter(server__name="c2d-32").count() == 1


def test_the_import_command_attaches_the_skipped_runs_of_bytes_imported_before_without_it(tmp_path: Path) -> None:
    first = tmp_path / "first.tgz"
    first.write_bytes(_bundle())
    _import(str(first), "--server", "pn53")
    second = tmp_path / "second.tgz"
    second.write_bytes(_bundle(note="# packed again\n"))
    _import(str(second), "--server", "c2d-32")
    assert Run.objects.count() == 1

    output = _import(str(second), "--server", "c2d-32", "--attach-existing")
    attached = Run.objects.get(server__name="c2d-32")
    assert "already imported" in output and "attached to the series server c2d-32" in output
    assert f"as run {attached.pk}" in output and attached.bundle.original_name == "second.tgz"
    output = _import(str(second), "--attach-existing")
    assert "was attached before" in output and Run.objects.count() == 2
