"""The list page and the API narrow regression records with the same filters and find the same records."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from regressions.models import Regression
from runs.models import Run

FILTERS = [
    {},
    {"state": "any"},
    {"tab": "all"},
    {"tab": "fixed", "state": "any"},
    {"tab": "outliers"},
    {"tab": "improvements", "releases": "all"},
    {"kind": "improvement"},
    {"dbms": "MySQL", "kind": "regression"},
    {"server": "8-core server"},
    {"workload": "no such workload"},
    {"group": "point queries"},
    {"microbenchmark": "point-query.pre"},
    {"microbenchmark": "scan_range=100"},
    {"q": "point"},
    {"q": "QUERY", "kind": "regression", "state": "new"},
]


@pytest.fixture
def detected(small_base_detected: Run) -> Run:
    return small_base_detected


@pytest.mark.parametrize("filters", FILTERS, ids=lambda f: "&".join(f"{k}={v}" for k, v in f.items()) or "none")
def test_the_page_and_the_api_list_the_same_records_for_the_same_filters(
    detected: Run, filters: dict[str, str]
) -> None:
    client = Client()
    page = client.get(reverse("regressions:regression_list"), filters)
    api = client.get("/api/regressions", {**filters, "limit": 500})
    assert page.status_code == api.status_code == 200
    on_page = [r.pk for r in page.context["page"].object_list]
    assert on_page == [item["id"] for item in api.json()["items"]]
    assert len(on_page) == api.json()["count"]


def test_the_filters_narrow_the_records_to_the_ones_they_name(detected: Run) -> None:
    def listed(**filters: str) -> set[int]:
        return {item["id"] for item in Client().get("/api/regressions", {**filters, "limit": 500}).json()["items"]}

    everything = listed(tab="all")
    assert everything == set(Regression.objects.values_list("pk", flat=True))
    workload = detected.workload.name
    assert listed(tab="all", workload=workload) == everything
    assert listed(tab="all", workload="no such workload") == set()
    point_pre = listed(tab="all", microbenchmark="point-query")
    assert point_pre and point_pre == set(
        Regression.objects.filter(microbenchmark__test="point-query").values_list("pk", flat=True)
    )
    by_text = listed(tab="all", q="point")
    assert point_pre <= by_text < everything
    assert all(
        "point" in (r.microbenchmark.test if r.microbenchmark else r.group)
        for r in Regression.objects.filter(pk__in=by_text).select_related("microbenchmark")
    )


@pytest.mark.django_db
def test_the_api_refuses_a_filter_given_twice_rather_than_reading_its_last_value() -> None:
    answer = Client().get("/api/regressions?metric=qps&metric=cs/o&dbms=MySQL")
    assert answer.status_code == 400
    assert answer.json() == {"detail": "each parameter takes one value; given more than once: metric"}
    assert Client().get("/api/regressions?metric=qps&dbms=MySQL").status_code == 200
