"""Login throttling behind reverse proxies: the client's address comes from X-Forwarded-For only as deep
as the configured proxies, so a client can neither lock others out nor dodge its own lockout."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client, RequestFactory

from benchdash.clientip import client_address

PASSWORD = "a long enough password"
PROXY = "10.0.0.2"


def _request(forwarded: str | None, peer: str = PROXY) -> Any:
    extra = {"REMOTE_ADDR": peer}
    if forwarded is not None:
        extra["HTTP_X_FORWARDED_FOR"] = forwarded
    return RequestFactory().get("/", **extra)


def test_without_trusted_proxies_the_peer_is_the_client_whatever_the_header_says(settings: Any) -> None:
    settings.BENCHDASH_TRUSTED_PROXIES = 0
    assert client_address(_request("203.0.113.9")) == PROXY


def test_behind_one_proxy_the_address_it_appended_is_the_client_and_what_the_client_wrote_is_ignored(
    settings: Any,
) -> None:
    settings.BENCHDASH_TRUSTED_PROXIES = 1
    assert client_address(_request("203.0.113.9")) == "203.0.113.9"
    assert client_address(_request("198.51.100.1, 203.0.113.9")) == "203.0.113.9"  # the first is forged
    settings.BENCHDASH_TRUSTED_PROXIES = 2
    assert client_address(_request("198.51.100.1, 203.0.113.9, 10.0.0.1")) == "203.0.113.9"


def test_a_missing_short_or_malformed_header_falls_back_to_the_peer(settings: Any) -> None:
    settings.BENCHDASH_TRUSTED_PROXIES = 2
    assert client_address(_request(None)) == PROXY
    assert client_address(_request("203.0.113.9")) == PROXY  # one hop where two were promised
    settings.BENCHDASH_TRUSTED_PROXIES = 1
    assert client_address(_request("not-an-address")) == PROXY


def _log_in(username: str, password: str, forwarded: str) -> int:
    client = Client()
    client.get("/account/login/", REMOTE_ADDR=PROXY, HTTP_X_FORWARDED_FOR=forwarded)
    response = client.post(
        "/account/login/",
        {"username": username, "password": password},
        REMOTE_ADDR=PROXY,
        HTTP_X_FORWARDED_FOR=forwarded,
    )
    return response.status_code


@pytest.mark.django_db
def test_behind_a_proxy_one_clients_failures_lock_that_client_only_and_forging_the_header_does_not_help(
    settings: Any, user_with_role: Callable[..., Any]
) -> None:
    settings.BENCHDASH_TRUSTED_PROXIES = 1
    user = user_with_role("uploader")
    user.set_password(PASSWORD)
    user.save()
    attacker = "203.0.113.9"
    for attempt in range(settings.AXES_FAILURE_LIMIT):
        # Each try claims a new address in front of the real one; the proxy's own entry is what counts.
        _log_in(user.username, "wrong", f"198.51.100.{attempt}, {attacker}")
    assert _log_in(user.username, PASSWORD, f"198.51.100.77, {attacker}") == 429
    # The same user from another client behind the same proxy is not locked out.
    assert _log_in(user.username, PASSWORD, "192.0.2.5") == 302
