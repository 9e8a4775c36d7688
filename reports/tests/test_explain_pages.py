"""The drill-down and the regression page say why a microbenchmark changed: HW metrics and config differences."""

from __future__ import annotations

import re
from html import unescape

import pytest
from django.test import Client

from regressions.detection import detect_regressions
from regressions.models import Regression
from runs.models import Microbenchmark, Run

pytestmark = pytest.mark.django_db


def test_the_drill_down_explains_the_clicked_build_with_cpu_per_query_and_settings(
    small_base: Run, client: Client
) -> None:
    point = Microbenchmark.objects.get(test="point-query", range_size=100)
    query = {"base": small_base.pk, "column": "x.my8043_rel_o2nofp.z12a_c8r32.pk1"}
    first = client.get(f"/microbenchmarks/{point.pk}/", query).content.decode()
    # The first response has the charts and the table; it loads the explanation once its charts are painted (not
    # with the page, where it held a server worker the page's scripts waited for), and links to it.
    details = re.search(r'<div id="drill-details" hx-get="([^"]+)" hx-trigger="benchdash:painted from:body"', first)
    assert details is not None and "Why it changed" not in first
    url = unescape(details.group(1))
    assert url.startswith(f"/microbenchmarks/{point.pk}/details?") and f'href="{details.group(1)}"' in first
    assert "column=x.my8043_rel_o2nofp.z12a_c8r32.pk1" in url
    fragment = client.get(url, headers={"HX-Request": "true"}).content.decode()
    alone = client.get(url).content.decode()
    # Swapped in by htmx (no page around it), or a page of its own without script: the same explanation.
    assert "<html" not in fragment and "<html" in alone and 'id="drill-suite-metrics" hx-swap-oob="true"' in fragment
    for html in (fragment, alone):
        _explains(html)


def _explains(html: str) -> None:
    assert "Why it changed" in html
    assert "point-query_range=100 · MySQL 8.0.43 vs MySQL 5.6.51" in html
    assert 'data-metric="cpu_o"' in html and "CPU per operation" in html
    assert "documented default" in html or "default changed in" in html


def test_the_regression_page_explains_against_the_version_before_the_arrival(small_base: Run, client: Client) -> None:
    detect_regressions(small_base.server_id, small_base.workload_id)
    # A test that held in 5.7.44 and lost in 8.0.43 (update-inlist, −28%): the story is told against 5.7.44, not
    # the 5.6.51 base.
    regression = Regression.objects.filter(
        microbenchmark__test="update-inlist", arrived_in__text="8.0.43", metric="qps", releases="long-term"
    ).get()
    assert regression.previous_version.text == "5.7.44"  # type: ignore[union-attr]
    html = client.get(f"/regressions/{regression.pk}/").content.decode()
    assert "Why it changed" in html
    assert "update-inlist_range=100 · MySQL 8.0.43 vs MySQL 5.7.44" in html


def test_a_group_regression_has_no_single_microbenchmark_to_explain(small_base: Run, client: Client) -> None:
    detect_regressions(small_base.server_id, small_base.workload_id)
    regression = Regression.objects.filter(microbenchmark=None).first()
    assert regression is not None
    html = client.get(f"/regressions/{regression.pk}/").content.decode()
    assert "Why it changed" not in html
