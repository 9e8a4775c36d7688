from __future__ import annotations

import math
from typing import Any

from django import template
from django.utils.safestring import SafeString, mark_safe

from reports import svgchart

register = template.Library()


@register.filter
def rel(value: float | None) -> str:
    """A relative value as the write-ups print it: 2 decimals, ∞ for a zero base, 'missing' for no result."""
    if value is None:
        return "missing"
    if math.isinf(value):
        return "∞"
    return f"{value:.2f}"


@register.filter
def get(mapping: dict[str, object] | None, key: str) -> object:
    """``mapping|get:key``: a dict's value, or None (templates cannot index by a variable)."""
    return (mapping or {}).get(key)


@register.filter
def percent(value: object) -> str:
    """A fraction as a percentage with one decimal (a record's noise σ), '–' when it is not a number."""
    if not isinstance(value, int | float) or not math.isfinite(value):
        return "–"
    return f"{value:.1%}"


@register.filter
def index(sequence: list[object] | None, i: int) -> object:
    """``items|index:n``: the n-th item, or None past the end."""
    if not sequence or i >= len(sequence):
        return None
    return sequence[i]


@register.filter
def static_chart(figure: dict[str, Any] | None, chart_id: str) -> SafeString:
    """``figure|static_chart:id``: the figure drawn as SVG on the server, or "" when only plotly.js can draw it.

    The page shows the drawing at once and runs plotly.js only when the user
    reaches for the chart (static/js/benchdash.js). ``chart_id`` (the figure's
    json_script id) keeps the SVG's own ids unique in the page.
    """
    svg = svgchart.render_responsive(figure, id_prefix=f"{chart_id}-svg") if figure else None
    return mark_safe(svg or "")  # reports.svgchart escapes every text it writes
