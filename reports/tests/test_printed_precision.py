"""The absolute tables print QPS as the author printed it, so the relative tables (which divide what is printed)
match his — and no exported ratio strays from the exact one by more than the printed precision allows.

The author's sb.r.qps files print most QPS with ``%.0f`` but scan's millions of rows/s with three decimals
(2021-2025) and sysbench's own ``%.2f`` in 2018-2020; a table read from his keeps the decimals of each cell. A
value whose printed precision nothing records keeps three significant digits: never ``1`` for 1.466.
"""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from suites.sysbench.layout import format_qps_csv, format_qps_tsv
from suites.tables import SIGNIFICANT_DIGITS, printed_decimals

LABEL = "scan_range=100"


def _cell(text: str) -> str:
    return text.splitlines()[-1].split("\t")[0]


def test_scan_in_millions_of_rows_per_second_is_never_a_false_two_fold_gain() -> None:
    values = {("base", LABEL): 1.466, ("new", LABEL): 1.596}
    assert _cell(format_qps_tsv(["base", "new"], [LABEL], values, relative_to="base")) == "1.09"
    # As the author printed it (3 decimals, a table read from his): his cells, his ratio.
    said = {("base", LABEL): 3, ("new", LABEL): 3}
    absolute = format_qps_tsv(["base", "new"], [LABEL], values, decimals=said)
    assert absolute.splitlines()[-1] == "1.466\t1.596\tscan_range=100"
    assert format_qps_csv(["base", "new"], [LABEL], values, relative_to="base", decimals=said) == f"{LABEL},1.09\n"


def test_one_decimal_printed_is_one_decimal_exported() -> None:
    values = {("a", "t_range=1"): 1119.2, ("b", "t_range=1"): 1119.0}
    said = {("a", "t_range=1"): 1, ("b", "t_range=1"): 0}
    assert format_qps_csv(["a", "b"], ["t_range=1"], values, decimals=said) == "t_range=1,1119.2,1119\n"


@given(
    base=st.floats(min_value=0.001, max_value=1e7, allow_nan=False, allow_infinity=False),
    other=st.floats(min_value=0.001, max_value=1e7, allow_nan=False, allow_infinity=False),
)
def test_no_exported_ratio_differs_from_the_exact_one_by_more_than_the_printed_precision_allows(
    base: float, other: float
) -> None:
    values = {("base", LABEL): base, ("other", LABEL): other}
    printed = float(_cell(format_qps_tsv(["base", "other"], [LABEL], values, relative_to="base")))
    exact = other / base
    # Each printed value is within half its last printed digit: at three significant digits, 0.5 % of it.
    half = 0.5 * 10.0 ** (1 - SIGNIFICANT_DIGITS)
    allowed = 0.005 + exact * (2 * half) / (1 - half) + 1e-12
    assert math.isclose(printed, exact, abs_tol=allowed), (base, other, printed, exact)


@given(
    whole=st.integers(min_value=0, max_value=10**7),
    fraction=st.integers(min_value=0, max_value=999),
    decimals=st.integers(min_value=0, max_value=3),
)
def test_a_value_read_from_the_authors_table_prints_back_as_he_printed_it(
    whole: int, fraction: int, decimals: int
) -> None:
    text = str(whole) if decimals == 0 else f"{whole}.{fraction % 10**decimals:0{decimals}d}"
    values = {("a", LABEL): float(text)}
    absolute = format_qps_tsv(["a"], [LABEL], values, decimals={("a", LABEL): decimals})
    assert absolute.splitlines()[-1] == f"{text}\t{LABEL}"


@given(value=st.floats(min_value=1e-4, max_value=1e9, allow_nan=False, allow_infinity=False))
def test_a_value_of_unknown_precision_keeps_three_significant_digits_and_integers_from_100(value: float) -> None:
    decimals = printed_decimals(value)
    assert (decimals == 0) == (value >= 100)
    printed = float(f"{value:.{decimals}f}")
    assert abs(printed - value) <= 0.5 * 10.0**-decimals + 1e-9
    assert abs(printed - value) <= value * 0.5 * 10.0 ** (1 - SIGNIFICANT_DIGITS) * 1.0001 + 1e-9
