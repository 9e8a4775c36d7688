"""The reference author's scripts' printing, shared by every suite's export layout: the ratio of a value to the
base's, and how a cell of QPS or of a ratio is printed (``NA`` where the scripts would print an empty field). Pure.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

NA = "NA"


@dataclass(frozen=True)
class ExportTable:
    """A comparison as a suite's export layout reads it: plain values, no Django, the base column first."""

    columns: Sequence[str]  # the column keys, the base first
    versions: Mapping[str, str]  # column key → its version, as a layout's header may name it
    labels: Sequence[str]  # the microbenchmark labels, in the comparison's order
    qps: Mapping[tuple[str, str], float | None]  # (column, label) → QPS; missing: absent or None
    pk: int = 1  # sysbench's pk mode of the runs, which the author's file names carry
    keep_pre: bool = False  # the author's tables of these runs' era print the ``.pre`` tests' rows
    # (column, label) → the decimals the author's table printed the cell with, where the column was read from one.
    decimals: Mapping[tuple[str, str], int] = field(default_factory=dict)

    @property
    def base(self) -> str:
        return self.columns[0]


# A suite's tests × columns export: (the table, "tsv" or "csv", relative to the base or absolute) → the file's text.
TableLayout = Callable[[ExportTable, str, bool], str]


def relative_qps(value: float | None, base: float | None) -> float | None:
    """QPS of a run relative to the base run: ``value / base``, exact (never rounded here).

    - either side missing (None or NaN) → None: a missing result is shown as
      missing, never as 0;
    - base 0 and value > 0 → ``math.inf``: the base did no work, anything is an
      unbounded improvement, and the UI shows "∞" rather than crashing;
    - both 0 → 1.0: two runs that both did nothing did not change.
    """
    # NaN can come out of a sysbench line such as "(nan per sec.)": it is no measurement, so it counts as missing.
    if value is None or base is None or math.isnan(value) or math.isnan(base):
        return None
    if base == 0:
        return 1.0 if value == 0 else math.inf
    return value / base


def metric_ratio(value: float | None, base: float | None) -> float | None:
    """A HW metric (cpu/o, cs/o, r/o, rKB/o, wKB/o, o/s) of a run relative to the base: other / base.

    As in the reference script: both 0 → 1, base 0 → inf, and a
    missing side → None. A value of 0 over a non-zero base is a plain 0.
    """
    return relative_qps(value, base)


# A value whose printed precision nothing records keeps at least this many significant digits: printed as an
# integer from 100 up (the author's %.0f), with decimals below, so a ratio of printed values is never off by more
# than about 1 % (scan's 1.466 → 1.596 is 1.47 → 1.60, 1.09, never 1 → 2, 2.00).
SIGNIFICANT_DIGITS = 3
MAX_DECIMALS = 6


def printed_decimals(value: float | None, decimals: int | None = None) -> int:
    """How many decimals a QPS cell prints: ``decimals`` when the author's table said (a run read from it), else
    enough for SIGNIFICANT_DIGITS."""
    if decimals is not None:
        return decimals
    if value is None or math.isnan(value) or math.isinf(value) or value == 0:
        return 0
    return max(0, min(MAX_DECIMALS, SIGNIFICANT_DIGITS - 1 - math.floor(math.log10(abs(value)))))


def qps_text(value: float | None, decimals: int | None = None) -> str:
    """A QPS cell as the author's tables print it: ``decimals`` when known, else ``printed_decimals``'s rule."""
    if value is None or math.isnan(value):
        return NA
    return f"{value:.{printed_decimals(value, decimals)}f}"


def printed_qps(value: float | None, decimals: int | None = None) -> float | None:
    # The relative table divides the values the absolute table prints, not the exact QPS: this is what makes
    # it match the reference to the last digit (the exact ratio differs in 2 of 231 cells of mysql-small).
    if value is None or math.isnan(value):
        return None
    return float(qps_text(value, decimals))


def ratio_text(rel: float | None) -> str:
    if rel is None:
        return NA
    if math.isinf(rel):
        return "inf"
    return f"{rel:.2f}"


def met_ratio_text(value: float | None, base: float | None) -> str:
    # The script prints "1" (not "1.00") when both are 0 and "inf" when only the base is.
    if value is None or base is None:
        return NA
    if value == 0 and base == 0:
        return "1"
    return ratio_text(metric_ratio(value, base))
