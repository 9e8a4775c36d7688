"""The address the comparison page's form pushes after an htmx swap: the query the page was drawn from, without
the empty fields the form serialises."""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, urlsplit

import pytest
from django.test import Client

from runs.models import Run

pytestmark = pytest.mark.django_db

HTMX = {"HX-Request": "true"}


def test_swapping_the_base_pushes_an_address_without_the_empty_fields(small_base: Run, client: Client) -> None:
    other = Run.objects.get(name="x.my8043_rel_o2nofp.z12a_c8r32.pk1")
    # What htmx sends when the base select changes: every field of the form, most of them empty.
    form = {
        "base": other.pk,
        "group_set": "auto",
        "dop": "",
        "red": "",
        "green": "",
        "releases": "",
        "view": "lines",
        "y_min": "",
        "y_max": "",
        "scan_formula": "era",
        "y_max_point-queries": "",
        "y_max_writes": "1.5",
    }
    for _ in range(2):  # drawn, then from the page cache
        response = client.get("/compare/", form, headers=HTMX)
        assert response.status_code == 200
        pushed = urlsplit(response["HX-Push-Url"])
        assert pushed.path == "/compare/"
        assert dict(parse_qsl(pushed.query, keep_blank_values=True)) == {
            "base": str(other.pk),
            "group_set": "auto",
            "view": "lines",
            "scan_formula": "era",
            "y_max_writes": "1.5",
        }
    # The pushed address draws the same comparison: that base, the writes chart's own top.
    again = client.get(response["HX-Push-Url"]).content.decode()
    assert re.search(rf'<option value="{other.pk}" selected>', again)
    assert re.search(r'name="y_max_writes"[^>]* value="1.5"', again)


def test_a_full_page_load_pushes_nothing(small_base: Run, client: Client) -> None:
    response = client.get("/compare/", {"base": small_base.pk, "dop": ""})
    assert response.status_code == 200 and "HX-Push-Url" not in response
