"""A run id in a query string that names no row is a 4xx or the page without it, never a 500."""

from __future__ import annotations

import pytest
from django.test import Client

from benchdash.http import row_id
from runs.models import Result, Run

# "²" passes str.isdigit but int() refuses it; the long one is beyond PostgreSQL's bigint.
NOT_IDS = ["²", "99999999999999999999", "١"]


def test_row_id_takes_ascii_digits_below_the_bigint_limit_only() -> None:
    assert row_id("42") == 42
    assert row_id(str(2**63 - 1)) == 2**63 - 1
    for text in [*NOT_IDS, str(2**63), "", "-1", "1.0", " 1"]:
        assert row_id(text) is None, text


@pytest.mark.django_db
@pytest.mark.parametrize("value", NOT_IDS)
def test_every_page_reading_a_base_or_run_id_answers_it_without_a_server_error(small_base: Run, value: str) -> None:
    microbenchmark = Result.objects.filter(run=small_base).values_list("microbenchmark_id", flat=True).first()
    paths = [
        "/compare/",
        "/compare/export",
        "/compare/writeup",
        "/compare/heatmap",
        "/compare/table",
        "/compare/hw",
        "/compare/scaleup",
        "/compare/timeline",
        f"/microbenchmarks/{microbenchmark}/",
        f"/microbenchmarks/{microbenchmark}/timeline",
        "/ibench/",
        "/diff/",
        "/api/compare",
        "/api/compare/writeup",
    ]
    client = Client(raise_request_exception=False)
    for path in paths:
        answer = client.get(path, {"base": value, "a": value, "b": value})
        assert answer.status_code < 500, (path, value, answer.status_code)
    # The same pages with the real base still answer.
    assert client.get("/compare/", {"base": small_base.pk}).status_code == 200
    assert client.get("/api/compare", {"base": "²"}).json() == {"detail": "no run with id ²"}
