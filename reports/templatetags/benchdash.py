from __future__ import annotations

import math

from django import template
from django.utils.html import format_html
from django.utils.safestring import SafeString

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


# From here on an absolute number is shown compactly: a base QPS of 1112938 reads as 1.11M at a glance.
COMPACT_FROM = 100_000


def compact_number(value: float) -> str:
    """A big number in three significant digits and a suffix (k, M, G); smaller ones whole, with separators."""
    if not math.isfinite(value):
        return "∞" if value > 0 else "−∞"
    size = abs(value)
    if size < COMPACT_FROM:
        return f"{value:,.0f}"
    # The smallest suffix whose three significant digits stay under 1000 (999,999 is 1.00M, not 1000k).
    for limit, suffix in ((1e3, "k"), (1e6, "M"), (1e9, "G")):
        scaled = value / limit
        digits = 2 if abs(scaled) < 10 else 1 if abs(scaled) < 100 else 0
        text = f"{scaled:.{digits}f}"
        if abs(float(text)) < 1000 or suffix == "G":
            return f"{text}{suffix}"
    return f"{value:,.0f}"


@register.simple_tag
def number_cell(value: float | None, css: str = "num", missing: str = "missing") -> SafeString:
    """A table cell of an absolute number: compact when big, the exact value on hover, and the exact value as
    what the table sorts and copies (data-value)."""
    if value is None:
        return format_html('<td class="{} missing">{}</td>', css, missing)
    exact = f"{value:.0f}" if math.isfinite(value) else compact_number(value)
    shown = compact_number(value)
    if shown == f"{value:,.0f}":
        return format_html('<td class="{}" data-value="{}">{}</td>', css, exact, shown)
    return format_html('<td class="{}" data-value="{}" title="{}">{}</td>', css, exact, f"{value:,.0f}", shown)


@register.filter
def compact(value: float | None) -> str:
    """``value|compact``: the compact form of an absolute number (see ``compact_number``); '' for None."""
    return "" if value is None else compact_number(float(value))
