"""A run already imported under another series is attached to the bundle's series from the bundle's page.

The page lists the skipped run with a button (uploaders only); the POST stores
the results once more for the series the bundle named, as a run of this
bundle, once however often it is pressed, and a later import with
``attach_existing = true`` finds that run instead of making another.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from accounts.permissions import UPLOADER, create_token
from runs.models import Result, Run, RunFile
from runs.tests import hostile

pytestmark = pytest.mark.django_db(transaction=True)  # the upload imports on commit

RUN = hostile.RUN


def _bundle(server: str, *, attach: bool = False, note: str = "") -> bytes:
    manifest = f'server = "{server}"\n' + ("attach_existing = true\n" if attach else "") + note
    files = {"my.cnf": b"[mysqld]\ninnodb_buffer_pool_size=8G\n"}
    return hostile.tgz([*hostile.good_run(files), hostile.member("benchdash.toml", manifest.encode())])


@pytest.fixture
def uploader(user_with_role: Callable[..., Any]) -> Client:
    client = Client()
    client.force_login(user_with_role(UPLOADER))
    return client


def _upload(client: Client, data: bytes, name: str) -> dict[str, Any]:
    token = create_token(get_user_model().objects.get(username="uploader"), name)[1]
    response = Client(headers={"Authorization": f"Bearer {token}"}).post(
        "/api/bundles/", {"file": SimpleUploadedFile(name, data)}
    )
    assert response.status_code in (200, 201), response.content[:500]
    return dict(response.json())


def _attach_form(page: str) -> bool:
    return 'action="/bundles/' in page and "Attach it to this series" in page


def test_the_bundle_page_attaches_a_run_held_under_another_server_to_this_series_once(
    uploader: Client, user_with_role: Callable[..., Any]
) -> None:
    first = _upload(uploader, _bundle("pn53"), "first.tgz")
    [original] = first["runs"]
    second = _upload(uploader, _bundle("c2d-32"), "second.tgz")
    assert second["runs"] == [] and "attach it with the button on the bundle's page" in second["warnings"][0]
    url = f"/bundles/{second['bundle_id']}/"

    page = uploader.get(url).content.decode()
    assert _attach_form(page) and "server <strong>c2d-32</strong>" in page and "lacks it" in page
    # Readers see the run is missing from the series, not the button.
    viewer = Client()
    viewer.force_login(user_with_role("viewer", username="reader"))
    assert not _attach_form(viewer.get(url).content.decode())
    assert viewer.post(f"{url}attach/", {"run": original["id"]}).status_code == 403
    assert Run.objects.count() == 1

    response = uploader.post(f"{url}attach/", {"run": original["id"]}, follow=True)
    assert response.redirect_chain == [(url, 302)]
    attached = Run.objects.get(server__name="c2d-32")
    page = response.content.decode()
    assert f"is now in the series server c2d-32, workload {attached.workload.name} as run {attached.pk}" in page
    assert f'href="/runs/{attached.pk}/"' in page and not _attach_form(page)
    # The series' own run: the same results and files, in this bundle; the first series keeps its run.
    holder = Run.objects.get(pk=original["id"])
    assert attached.bundle_id == second["bundle_id"] and attached.name == RUN and holder.server.name == "pn53"
    assert attached.build_id == holder.build_id and attached.config_id == holder.config_id
    fields = ("microbenchmark_id", "dop", "qps", "lat_avg_ms", "rps")
    assert list(Result.objects.filter(run=attached).order_by("pk").values_list(*fields)) == list(
        Result.objects.filter(run=holder).order_by("pk").values_list(*fields)
    )
    assert list(RunFile.objects.filter(run=attached).values_list("name", "text")) == list(
        RunFile.objects.filter(run=holder).values_list("name", "text")
    )
    assert f"attached to this series from bundle {second['bundle_id']}" in attached.warnings[-1]

    # Pressed again (a second tab): the same run, nothing more.
    again = uploader.post(f"{url}attach/", {"run": original["id"]}, follow=True)
    assert "was already attached" in again.content.decode()
    assert Run.objects.count() == 2 and Result.objects.count() == 2 * Result.objects.filter(run=holder).count()
    # The manifest's way to the same attachment finds this run: one run per series, however it was attached.
    manifest_way = _upload(uploader, _bundle("c2d-32", attach=True), "attach.tgz")
    assert manifest_way["runs"] == [] and Run.objects.count() == 2


def test_only_a_skipped_run_of_that_bundle_held_elsewhere_can_be_attached(uploader: Client) -> None:
    first = _upload(uploader, _bundle("pn53"), "first.tgz")
    [original] = first["runs"]
    # The same results for the same series again: skipped, but nothing is missing, so nothing to attach.
    same = _upload(uploader, _bundle("pn53", note="# again\n"), "same.tgz")
    page = uploader.get(f"/bundles/{same['bundle_id']}/").content.decode()
    assert not _attach_form(page)
    for bundle_id, run in ((same["bundle_id"], original["id"]), (first["bundle_id"], original["id"])):
        response = uploader.post(f"/bundles/{bundle_id}/attach/", {"run": run}, follow=True)
        assert response.status_code == 200 and "cannot be attached from this bundle" in response.content.decode()
    other = _upload(uploader, _bundle("c2d-32"), "other.tgz")
    for bad in ("", "x", "999999"):
        response = uploader.post(f"/bundles/{other['bundle_id']}/attach/", {"run": bad}, follow=True)
        assert "cannot be attached from this bundle" in response.content.decode()
    assert uploader.get(f"/bundles/{other['bundle_id']}/attach/").status_code == 405
    assert Run.objects.count() == 1
