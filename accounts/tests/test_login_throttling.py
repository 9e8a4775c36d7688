"""Login throttling (django-axes): wrong passwords lock one username from one address out for a while."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.conf import settings
from django.test import Client

from accounts.permissions import UPLOADER, create_token

pytestmark = pytest.mark.django_db

PASSWORD = "a long enough password"


@pytest.fixture
def uploader(user_with_role: Callable[..., Any]) -> Any:
    user = user_with_role(UPLOADER)
    user.set_password(PASSWORD)
    user.save()
    return user


def _log_in(client: Client, username: str, password: str, address: str = "127.0.0.1") -> Any:
    """Through the real form, CSRF token and all, as a browser does."""
    page = client.get("/account/login/", REMOTE_ADDR=address)
    token = page.context["csrf_token"]
    return client.post(
        "/account/login/",
        {"username": username, "password": password, "next": "/upload/", "csrfmiddlewaretoken": token},
        REMOTE_ADDR=address,
    )


def _fail(client: Client, username: str, times: int, address: str = "127.0.0.1") -> None:
    for _ in range(times):
        response = _log_in(client, username, "wrong", address)
        assert response.status_code == 200 and "Please enter a correct username and password" in (
            response.content.decode().replace("&quot;", '"')
        )


def _lock_out(username: str) -> None:
    client = Client(enforce_csrf_checks=True)
    _fail(client, username, settings.AXES_FAILURE_LIMIT - 1)
    assert _log_in(client, username, "wrong").status_code == 429  # the last failure allowed locks at once


def test_after_the_failure_limit_even_the_right_password_is_refused_with_a_clear_message(uploader: Any) -> None:
    client = Client(enforce_csrf_checks=True)
    _fail(client, UPLOADER, settings.AXES_FAILURE_LIMIT - 1)
    locked = _log_in(client, UPLOADER, "wrong")
    assert locked.status_code == 429
    refused = _log_in(client, UPLOADER, PASSWORD)
    text = refused.content.decode()
    assert refused.status_code == 429 and 'id="lockout"' in text and "Too many failed logins" in text
    assert "15 minutes" in text and 'name="username"' in text and f'value="{UPLOADER}"' in text
    assert "_auth_user_id" not in client.session
    assert client.get("/upload/").status_code == 302  # still not logged in


def test_the_lockout_is_per_username_and_address(uploader: Any, user_with_role: Callable[..., Any]) -> None:
    other = user_with_role("triager", username="colleague")
    other.set_password(PASSWORD)
    other.save()
    _lock_out(UPLOADER)
    assert _log_in(Client(enforce_csrf_checks=True), UPLOADER, PASSWORD).status_code == 429
    # Someone else from the same address, and the same user from another address, still get in.
    assert _log_in(Client(enforce_csrf_checks=True), "colleague", PASSWORD).status_code == 302
    elsewhere = _log_in(Client(enforce_csrf_checks=True), UPLOADER, PASSWORD, address="10.1.2.3")
    assert elsewhere.status_code == 302 and elsewhere["Location"] == "/upload/"


def test_a_successful_login_clears_the_failures(uploader: Any) -> None:
    _fail(Client(enforce_csrf_checks=True), UPLOADER, settings.AXES_FAILURE_LIMIT - 1)
    assert _log_in(Client(enforce_csrf_checks=True), UPLOADER, PASSWORD).status_code == 302
    _fail(Client(enforce_csrf_checks=True), UPLOADER, settings.AXES_FAILURE_LIMIT - 1)
    assert _log_in(Client(enforce_csrf_checks=True), UPLOADER, PASSWORD).status_code == 302


def test_a_locked_out_user_keeps_their_api_token_and_sessions_made_without_a_password(uploader: Any) -> None:
    _row, token = create_token(uploader, "ci")
    _lock_out(UPLOADER)
    assert _log_in(Client(enforce_csrf_checks=True), UPLOADER, PASSWORD).status_code == 429
    api = Client().get("/api/regressions", headers={"Authorization": f"Bearer {token}"})
    assert api.status_code == 200
    session = Client()
    session.force_login(uploader)
    assert session.get("/upload/").status_code == 200


def test_the_admin_login_is_throttled_too(uploader: Any) -> None:
    client = Client()
    for _ in range(settings.AXES_FAILURE_LIMIT):
        client.post("/admin/login/", {"username": UPLOADER, "password": "wrong"})
    assert client.post("/admin/login/", {"username": UPLOADER, "password": PASSWORD}).status_code == 429
