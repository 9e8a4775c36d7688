"""Big absolute numbers in tables: compact (1.11M) on screen, the exact value on hover and in what a table copies."""

from __future__ import annotations

import math

import pytest
from django.test import Client

from reports.compare import ComparisonSpec, get_comparison
from reports.templatetags.benchdash import compact_number, number_cell
from runs.models import Run


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (0, "0"),
        (950.4, "950"),
        (24515, "24,515"),
        (99999.4, "99,999"),
        (100000, "100k"),
        (112938, "113k"),
        (999_999, "1.00M"),
        (1_112_938, "1.11M"),
        (12_345_678, "12.3M"),
        (2.5e9, "2.50G"),
        (-1_112_938, "-1.11M"),
        (math.inf, "∞"),
    ],
)
def test_a_number_is_compact_from_a_hundred_thousand_on(value: float, shown: str) -> None:
    assert compact_number(value) == shown


def test_a_number_cell_shows_the_compact_value_and_keeps_the_exact_one_to_hover_sort_and_copy() -> None:
    assert number_cell(1112938.4) == '<td class="num" data-value="1112938" title="1,112,938">1.11M</td>'
    assert number_cell(24515.2) == '<td class="num" data-value="24515">24,515</td>'
    assert number_cell(None) == '<td class="num missing">missing</td>'


@pytest.mark.django_db
def test_the_comparison_shows_each_base_qps_compactly_with_the_exact_value(small_base: Run, client: Client) -> None:
    comparison = get_comparison(ComparisonSpec(base_run_id=small_base.pk))
    html = client.get("/compare/", {"base": small_base.pk}).content.decode()
    for label in comparison.labels:
        qps = comparison.qps[comparison.base][label]
        assert qps is not None
        row = html.split(f'<tr data-label="{label}">', 1)[1].split("</tr>", 1)[0]
        assert f'data-value="{qps:.0f}"' in row
        assert f">{compact_number(qps)}</td>" in row
