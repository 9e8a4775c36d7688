"""``fixed``: floatformat's text for a positive number of places, without its cost."""

from __future__ import annotations

import math
import random

import pytest
from django.template.defaultfilters import floatformat

from reports.templatetags.benchdash import fixed

SPECIAL = [0.0, -0.0, 0.0625, 0.0005, 0.0015, 2.5e-7, -0.0004, -0.0005, 0.1 + 0.2, 1e14 + 0.0005, 123456.7895]
SPECIAL += [1e-20, 5e-324, 1e20, math.inf, -math.inf, math.nan, 5, 0, -3]


def _values() -> list[float]:
    rng = random.Random(7)
    values: list[float] = list(SPECIAL)
    for _ in range(20_000):
        value = rng.uniform(-1, 1) * 10 ** rng.randint(-12, 14)
        # Exact halves and values rounded to a few places are where half-up and half-even rounding part.
        values += [value, round(value, rng.randint(0, 8)), rng.randint(0, 10**6) / 2000]
    return values


@pytest.mark.parametrize("places", [1, 2, 3, 6])
def test_it_writes_what_floatformat_writes(places: int) -> None:
    differing = [
        (v, fixed(v, places), floatformat(v, places)) for v in _values() if fixed(v, places) != floatformat(v, places)
    ]
    assert differing == []


def test_none_is_empty_as_in_the_filter() -> None:
    assert fixed(None, 3) == floatformat(None, 3) == ""
