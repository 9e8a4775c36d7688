"""The pages' chart JSON (``json_data``): json_script's element and escapes, compact, read back unchanged."""

from __future__ import annotations

import json
import re

from django.utils.html import json_script

from reports.templatetags.benchdash import json_data

VALUE = {
    "data": [{"x": ["MySQL 8.0.43", "</script><script>alert(1)</script>"], "y": [1.0, None, 0.9507]}],
    "layout": {"title": {"text": "a & b <i>c</i> ≥ 1.05 ∞"}, "meta": {"keys": {"8.0<br>x": "x.my8043"}}},
}


def _body(html: str, element_id: str) -> str:
    found = re.fullmatch(rf'<script id="{element_id}" type="application/json">(.*)</script>', html, re.S)
    assert found is not None, html
    return found[1]


def test_it_reads_back_as_the_same_value_as_json_script_gives() -> None:
    ours, djangos = _body(json_data(VALUE, "chart-0"), "chart-0"), _body(json_script(VALUE, "chart-0"), "chart-0")
    assert json.loads(ours) == json.loads(djangos) == VALUE


def test_no_text_in_the_data_can_close_the_script_element_or_start_markup() -> None:
    body = _body(json_data(VALUE, "chart-0"), "chart-0")
    assert "<" not in body and ">" not in body and "&" not in body


def test_it_is_compact_and_smaller_than_json_scripts() -> None:
    ours, djangos = json_data(VALUE, "c"), json_script(VALUE, "c")
    assert '", "' not in ours and '": ' not in ours
    assert len(ours) < len(djangos)


def test_the_element_id_is_escaped() -> None:
    assert json_data([], 'a"b').startswith('<script id="a&quot;b" type="application/json">')
