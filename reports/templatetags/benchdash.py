from __future__ import annotations

import math

from django import template

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
def index(sequence: list[object] | None, i: int) -> object:
    """``items|index:n``: the n-th item, or None past the end."""
    if not sequence or i >= len(sequence):
        return None
    return sequence[i]
