"""The comparison page's absolute-QPS group charts: each microbenchmark's QPS as measured, the base first."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from django.test import Client

from reports.compare import Comparison
from runs.models import Run

pytestmark = pytest.mark.django_db


def _figures(html: str) -> list[dict[str, Any]]:
    found = re.findall(r'<script id="chart-\d+" type="application/json">(.*?)</script>', html)
    return [json.loads(text.replace("\\u003C", "<").replace("\\u003E", ">").replace("\\u0026", "&")) for text in found]


def test_the_absolute_view_draws_each_microbenchmarks_qps_with_the_base_first(
    small_base: Run, comparison: Comparison, client: Client
) -> None:
    html = client.get("/compare/", {"base": small_base.pk, "view": "absolute", "releases": "all"}).content.decode()
    assert 'id="absolute-note"' in html and '<option value="absolute" selected>' in html
    figures = _figures(html)
    assert len(figures) == 4  # point queries, two kinds of range queries, writes
    keys = [comparison.base, *(c.key for c in sorted(comparison.others, key=lambda c: c.version_sort))]
    point = next(f for f in figures if f["layout"]["title"]["text"].startswith("point queries"))
    assert "(QPS; the base, MySQL 5.6.51, first)" in point["layout"]["title"]["text"]
    assert point["layout"]["yaxis"]["automargin"] is True  # the tick labels (1M, 0.8M) are not cut off
    trace = next(t for t in point["data"] if t["name"] == "point-query_range=100")
    assert len(trace["y"]) == len(keys) == 9
    for key, y in zip(keys, trace["y"], strict=True):
        assert y == pytest.approx(comparison.qps[key]["point-query_range=100"], abs=0.5)


def test_the_absolute_view_on_a_log_axis(small_base: Run, client: Client) -> None:
    html = client.get("/compare/", {"base": small_base.pk, "view": "absolute", "log": "on"}).content.decode()
    assert all(f["layout"]["yaxis"]["type"] == "log" for f in _figures(html))


def test_the_absolute_view_ignores_the_relative_y_range_and_keeps_a_charts_own_top_for_later(
    small_base: Run, client: Client
) -> None:
    from reports.views import group_y_max_param

    plain = client.get("/compare/", {"base": small_base.pk, "view": "absolute"}).content.decode()
    top = group_y_max_param("point queries")
    ranged = client.get(
        "/compare/", {"base": small_base.pk, "view": "absolute", "y_min": "0.9", "y_max": "1.1", top: "1.3"}
    ).content.decode()
    # Relative QPS bounds on a QPS axis would squash every line to its edge: the charts are those without them.
    assert _figures(ranged) == _figures(plain)
    # No "this chart's y-axis to" field that would do nothing here; the chart's own top rides along, hidden.
    assert 'class="group-y-max"' not in ranged
    assert f'<input type="hidden" name="{top}" form="compare-controls" value="1.3">' in ranged
    lines = client.get("/compare/", {"base": small_base.pk, "view": "lines", top: "1.3"}).content.decode()
    assert f'name="{top}" id="id_{top}" form="compare-controls" value="1.3"' in lines
