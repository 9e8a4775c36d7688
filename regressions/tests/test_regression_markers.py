"""A bug linked to a regression shows on the comparison: badges in the tables, markers on the charts and heatmap."""

from __future__ import annotations

import json
import re

import pytest
from django.test import Client

from regressions.detection import detect_regressions
from regressions.models import Regression
from regressions.triage import link_bug
from runs.models import Run

pytestmark = pytest.mark.django_db


@pytest.fixture
def base(small_base: Run) -> Run:
    detect_regressions(small_base.server_id, small_base.workload_id)
    return small_base


def _figures(html: str) -> dict[str, dict]:
    found = re.findall(r'<script id="(chart-\d+)" type="application/json">(.*?)</script>', html, re.S)
    return {chart_id: json.loads(text) for chart_id, text in found}


def test_a_bug_on_the_point_query_regression_shows_on_the_chart_and_in_the_table(base: Run, client: Client) -> None:
    # The point queries' story arrived in 5.7.44 (and got worse in 8.0.43): its marker stands at the arrival.
    regression = Regression.objects.get(group="point queries", arrived_in__text="5.7.44", microbenchmark=None)
    link_bug(regression, "MySQL bug 102037")
    html = client.get("/compare/", {"base": base.pk}).content.decode()

    assert 'href="https://bugs.mysql.com/bug.php?id=102037"' in html  # the badge on the group's table
    figures = _figures(html)
    point_chart = next(f for f in figures.values() if "point queries" in json.dumps(f["layout"].get("title", "")))
    texts = [a["text"] for a in point_chart["layout"]["annotations"]]
    assert "MySQL bug #102037 (arrived)" in texts
    x_of = {key: x for x, key in point_chart["layout"]["meta"]["keys"].items()}
    marker = next(
        s for s in point_chart["layout"]["shapes"] if s.get("x0") == x_of["x.my5744_rel_o2nofp.z12a_c8r32.pk1"]
    )
    assert marker["type"] == "line"
    others = [f for f in figures.values() if f is not point_chart]
    assert all("MySQL bug #102037 (arrived)" not in json.dumps(f["layout"]) for f in others)


def test_a_bug_on_one_microbenchmark_shows_in_its_row_and_on_the_heatmap(base: Run, client: Client) -> None:
    # A member story folded into its group's story keeps its own marker on its own row.
    regression = (
        Regression.objects.select_related("arrived_in", "microbenchmark")
        .filter(microbenchmark__isnull=False, folded_into__isnull=False, outlier=False, metric="qps")
        .order_by("pk")
        .first()
    )
    assert regression is not None, "the real series tells no member story folded into its group's"
    label = f"{regression.microbenchmark.test}_range={regression.microbenchmark.range_size}"
    column = next(
        p["column"] for p in regression.evidence["points"] if p["used"] and p["version"] == regression.arrived_in.text
    )
    link_bug(regression, "MDEV-33894")
    html = client.get("/compare/", {"base": base.pk}).content.decode()
    row = re.search(rf'<tr data-label="{re.escape(label)}">.*?</tr>', html, re.S)
    assert row is not None and "https://jira.mariadb.org/browse/MDEV-33894" in row.group(0)

    heatmap = client.get("/compare/heatmap", {"base": base.pk}).content.decode()
    figure = json.loads(re.search(r'id="heatmap-figure" type="application/json">(.*?)</script>', heatmap, re.S)[1])
    badges = figure["data"][-1]
    keys = figure["layout"]["meta"]["keys"]
    assert badges["type"] == "scatter"
    assert [(keys[x], y) for x, y in zip(badges["x"], badges["y"], strict=True)] == [(column, label)]
    assert "MDEV-33894" in badges["text"][0]


def test_regressions_without_bugs_get_a_link_but_no_chart_marker(base: Run, client: Client) -> None:
    html = client.get("/compare/", {"base": base.pk}).content.decode()
    assert 'class="badge regression"' in html
    for figure in _figures(html).values():
        assert "(arrived)" not in json.dumps(figure["layout"])
