"""A saved report opens with the charts as they were saved: y-axis range, log scale, lines or bars, and each
group chart's own top."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.test import Client

from reports.models import Report
from runs.models import Run

pytestmark = pytest.mark.django_db


def _input_value(html: str, name: str) -> str:
    found = re.search(rf'<input [^>]*name="{re.escape(name)}"[^>]*>', html)
    assert found, name
    value = re.search(r'value="([^"]*)"', found[0])
    return value[1] if value else ""


def test_a_saved_report_keeps_the_chart_scale_and_view(small_base: Run, client: Client, user_with_role: Any) -> None:
    client.force_login(user_with_role("uploader"))
    asked = {
        "base": small_base.pk,
        "y_min": "0.5",
        "y_max": "1.5",
        "log": "on",
        "view": "bars",
        "y_max_point-queries": "2.5",
        "y_max_scan": "not a number",
        "name": "scaled",
    }
    saved = client.post("/reports/save", asked)
    assert saved.status_code == 302
    report = Report.objects.get()
    assert (report.y_min, report.y_max, report.log, report.view) == (0.5, 1.5, True, "bars")
    assert report.group_y_max == {"y_max_point-queries": 2.5}  # a top the page would ignore is not kept

    opened = client.get(report.get_absolute_url())
    html = client.get(opened["Location"]).content.decode()
    assert _input_value(html, "y_min") == "0.5" and _input_value(html, "y_max") == "1.5"
    assert re.search(r'<input type="checkbox" name="log"[^>]* checked', html)
    assert '<option value="bars" selected>' in html
    assert _input_value(html, "y_max_point-queries") == "2.5"


def test_a_report_saved_without_a_scale_opens_with_the_automatic_one(
    small_base: Run, client: Client, user_with_role: Any
) -> None:
    client.force_login(user_with_role("uploader"))
    client.post("/reports/save", {"base": small_base.pk, "name": "plain"})
    report = Report.objects.get()
    assert (report.y_min, report.y_max, report.log, report.view, report.group_y_max) == (None, None, False, "", {})
    location = client.get(report.get_absolute_url())["Location"]
    assert not re.search(r"[?&](y_min|y_max|log|view)=", location)
