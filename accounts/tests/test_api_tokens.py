"""API tokens: created on a page and shown once, stored hashed, used as ``Authorization: Bearer``, revocable."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test import Client
from django.utils import timezone

from accounts.models import ApiToken
from accounts.permissions import UPLOADER, create_token, token_digest, user_for_token
from runs.models import Bundle

pytestmark = pytest.mark.django_db

TOKEN_RE = re.compile(r"<code>(bd_[A-Za-z0-9_-]{40,})</code>")
PG174 = "x.pg174_o2nofp.x10a_wm1_c32r128.pk1"


@pytest.fixture
def uploader(user_with_role: Callable[..., Any]) -> Any:
    return user_with_role(UPLOADER)


def _upload(token: str, data: bytes = b"not an archive" * 10, **extra: Any) -> Any:
    return Client(**extra).post(
        "/api/bundles/", {"file": SimpleUploadedFile("b.tgz", data)}, headers={"Authorization": f"Bearer {token}"}
    )


def test_the_token_page_shows_a_new_token_once_and_stores_only_its_hash(uploader: Any) -> None:
    client = Client()
    client.force_login(uploader)
    created = client.post("/account/tokens/", {"name": "CI nightly"})
    assert created.status_code == 200 and created["Cache-Control"] == "no-store"
    (token,) = TOKEN_RE.findall(created.content.decode())

    row = ApiToken.objects.get()
    assert (row.name, row.user, row.prefix) == ("CI nightly", uploader, token[:10])
    assert row.digest == token_digest(token) and len(row.digest) == 64
    # The token itself is in no column of any table, only its digest is.
    with connection.cursor() as cursor:
        cursor.execute("SELECT * FROM runs_apitoken")
        assert not any(token in str(value) for value in cursor.fetchall()[0])

    again = client.get("/account/tokens/").content.decode()
    assert token not in again and TOKEN_RE.search(again) is None
    assert "CI nightly" in again and f"{token[:10]}…" in again and "never" in again


def test_a_token_uploads_as_its_user_and_records_when_it_was_last_used(uploader: Any) -> None:
    row, token = create_token(uploader, "laptop")
    assert row.last_used_at is None
    response = _upload(token)
    assert response.status_code in (202, 422), response.content
    assert Bundle.objects.get().uploaded_by == uploader
    row.refresh_from_db()
    assert row.last_used_at is not None and timezone.now() - row.last_used_at < timezone.timedelta(minutes=1)


def test_last_used_is_written_at_most_once_a_minute(uploader: Any, django_assert_num_queries: Any) -> None:
    _row, token = create_token(uploader, "busy script")
    assert user_for_token(token) == uploader
    with django_assert_num_queries(1):  # the lookup only: the recent last_used_at is not written again
        assert user_for_token(token) == uploader


@pytest.mark.parametrize(
    "header",
    [
        "Bearer bd_not-a-real-token-at-all-not-a-real-token-xx",
        "Bearer ",
        "Token {token}",
        "Basic {token}",
        "Bearer {token}x",
        "Bearer{token}",
    ],
)
def test_a_wrong_or_malformed_authorization_header_gets_401(uploader: Any, header: str) -> None:
    _row, token = create_token(uploader, "real")
    response = Client().post(
        "/api/bundles/",
        {"file": SimpleUploadedFile("b.tgz", b"x" * 10)},
        headers={"Authorization": header.format(token=token)},
    )
    assert response.status_code == 401 and response.json() == {"detail": "Unauthorized"}
    assert response["WWW-Authenticate"] == 'Bearer realm="benchdash API"'
    assert Bundle.objects.count() == 0


def test_a_revoked_token_stops_working_at_once(uploader: Any) -> None:
    row, token = create_token(uploader, "leaked")
    client = Client()
    client.force_login(uploader)
    page = client.post(f"/account/tokens/{row.pk}/revoke/", follow=True).content.decode()
    assert "Token revoked" in page and "revoked" in page
    assert _upload(token).status_code == 401
    assert Bundle.objects.count() == 0


def test_nobody_revokes_another_users_token(uploader: Any, user_with_role: Callable[..., Any]) -> None:
    row, token = create_token(uploader, "mine")
    other = Client()
    other.force_login(user_with_role(UPLOADER, username="someone-else"))
    response = other.post(f"/account/tokens/{row.pk}/revoke/", follow=True)
    assert "No such token of yours" in response.content.decode()
    row.refresh_from_db()
    assert row.active and user_for_token(token) == uploader


def test_the_token_of_a_deactivated_user_stops_working(uploader: Any) -> None:
    _row, token = create_token(uploader, "ci")
    uploader.is_active = False
    uploader.save()
    assert _upload(token).status_code == 401


def test_a_token_needs_no_csrf_token_but_a_session_does(uploader: Any) -> None:
    _row, token = create_token(uploader, "ci")
    # A bearer token is not sent by the browser on its own, so cross-site requests cannot use it: no CSRF check.
    assert _upload(token, enforce_csrf_checks=True).status_code in (202, 422)
    session = Client(enforce_csrf_checks=True)
    session.force_login(uploader)
    refused = session.post("/api/bundles/", {"file": SimpleUploadedFile("c.tgz", b"y" * 10)})
    assert refused.status_code == 403 and "CSRF" in refused.json()["detail"]
    assert Bundle.objects.count() == 1


def test_the_token_pages_need_a_login(uploader: Any) -> None:
    row, _token = create_token(uploader, "x")
    assert Client().get("/account/tokens/")["Location"].startswith("/account/login/")
    assert Client().post(f"/account/tokens/{row.pk}/revoke/").status_code == 302
    row.refresh_from_db()
    assert row.active


def test_the_openapi_schema_documents_bearer_tokens_on_the_write_endpoints(client: Client) -> None:
    schema = client.get("/api/openapi.json").json()
    schemes = schema["components"]["securitySchemes"]
    bearer = [name for name, scheme in schemes.items() if scheme == {"type": "http", "scheme": "bearer"}]
    assert len(bearer) == 1
    writes = [
        schema["paths"]["/api/bundles/"]["post"],
        schema["paths"]["/api/regressions/{regression_id}"]["patch"],
        schema["paths"]["/api/regressions/triage"]["post"],
        schema["paths"]["/api/regressions/{regression_id}/bugs"]["post"],
    ]
    for operation in writes:
        assert {bearer[0]: []} in operation["security"]
        assert {"401", "403"} & set(operation["responses"]) or "Authorization" in schema["info"]["description"]
    assert "Bearer" in schema["info"]["description"]


@pytest.mark.django_db(transaction=True)
def test_a_real_bundle_uploaded_with_a_token_is_imported(uploader: Any, corpus: Path) -> None:
    _row, token = create_token(uploader, "ci")
    data = (corpus / "sysbench-pg-tarballs" / f"{PG174}.tar.gz").read_bytes()
    response = _upload(token, data)
    assert response.status_code == 201, response.content
    assert [run["name"] for run in response.json()["runs"]] == [PG174]


def test_an_admin_revokes_a_leaked_token_in_the_admin(uploader: Any, admin_client: Client) -> None:
    row, token = create_token(uploader, "leaked")
    response = admin_client.post("/admin/accounts/apitoken/", {"action": "revoke", "_selected_action": [row.pk]})
    assert response.status_code == 302
    assert user_for_token(token) is None
    assert admin_client.get("/admin/accounts/apitoken/add/").status_code == 403  # tokens are made by their owner only


@pytest.mark.parametrize("kind", ["unknown", "revoked", "deactivated"])
def test_a_bad_token_gets_401_in_json_never_a_csrf_refusal(uploader: Any, kind: str) -> None:
    row, token = create_token(uploader, "ci")
    if kind == "unknown":
        token = token[:-4] + "zzzz"
    elif kind == "revoked":
        row.revoked_at = timezone.now()
        row.save()
    else:
        uploader.is_active = False
        uploader.save()
    headers = {"Authorization": f"Bearer {token}"}
    # A script sends no cookie and no CSRF token: exactly what the CSRF check would refuse.
    for client in (Client(enforce_csrf_checks=True), _logged_in_browser(uploader, kind)):
        upload = client.post("/api/bundles/", {"file": SimpleUploadedFile("b.tgz", b"x" * 10)}, headers=headers)
        patch = client.patch("/api/regressions/1", "{}", content_type="application/json", headers=headers)
        read = client.get("/api/regressions", headers=headers)  # public browsing would let it in without one
        for response in (upload, patch, read):
            assert response.status_code == 401, (kind, response.status_code, response.content)
            assert response["Content-Type"].startswith("application/json")
            assert response.json() == {"detail": "Unauthorized"}
    assert Bundle.objects.count() == 0


def _logged_in_browser(user: Any, kind: str) -> Client:
    """A browser holding a session of another, active user: a bad token it sends is still a bad token."""
    from django.contrib.auth import get_user_model

    other = get_user_model().objects.create_user(f"browser-{kind}")
    client = Client(enforce_csrf_checks=True)
    client.force_login(other)
    return client
