"""A missing page, a missing or malformed comparison base and a server error answer in the site's layout."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/no/such/page/", "/runs/999999/", "/compare/?base=99999", "/compare/?base=abc"])
def test_a_missing_page_is_a_404_with_the_sites_header_and_navigation(client: Client, path: str) -> None:
    response = client.get(path)
    assert response.status_code == 404
    page = response.content.decode()
    assert 'class="topbar"' in page and 'nav aria-label="Main"' in page
    assert "<h1>Not found</h1>" in page and 'href="/runs/"' in page


@pytest.mark.django_db
def test_a_server_error_is_a_500_with_the_sites_header(settings: Any) -> None:
    from django.urls import path

    def broken(request: Any) -> Any:
        raise RuntimeError("a bug")

    import benchdash.urls

    settings.ROOT_URLCONF = type(
        "Urls",
        (),
        {
            "urlpatterns": [path("broken/", broken), *benchdash.urls.urlpatterns],
            "handler500": benchdash.urls.handler500,
        },
    )
    response = Client(raise_request_exception=False).get("/broken/")
    assert response.status_code == 500
    page = response.content.decode()
    assert 'class="topbar"' in page and "Something went wrong on our side" in page


def test_every_page_starts_with_a_skip_link_to_the_main_content(client: Client) -> None:
    page = Client().get("/account/login/").content.decode()
    assert page.index('class="skip-link" href="#main"') < page.index('class="topbar"')
    assert '<main id="main"' in page


def test_favicon_ico_leads_to_the_sites_icon(settings: Any) -> None:
    settings.BENCHDASH_PUBLIC_BROWSING = False
    response = Client().get("/favicon.ico")
    assert response.status_code == 301 and response["Location"].endswith("favicon.svg")
