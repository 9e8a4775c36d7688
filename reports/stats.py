"""Comparison math over plain Python data: relative QPS, flags, group summaries, noise.

No Django here: the views, the exports and the tests all feed these functions
dicts and lists, so the numbers the UI shows and the numbers the exports write
come from one place.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, NamedTuple, TypeVar

# The ratio rule is the one the suites' export layouts print (suites.tables): one rule, read here by the comparison.
from suites.tables import metric_ratio as metric_ratio
from suites.tables import relative_qps as relative_qps

Flag = Literal["red", "green", "grey", "missing"]
RunKey = TypeVar("RunKey", bound=Hashable)

DEFAULT_RED = 0.95
DEFAULT_GREEN = 1.05


# --------------------------------------------------------------------------- ratios


# HW metrics per operation (comparison keys and the names pages show them by): the level below which a value
# is "about zero". The counters are sampled per second and divided by operations per second, so a level this
# small is the host's background (a scan's 0.08 context switches per operation, the 0.003 KB a read-only test
# writes per operation): a ratio from it (cs/o +141588 %, wKB/o ×0.00, rKB/o ∞) says nothing. From such a base
# there is no ratio, no red or green flag and no ratio story: the two levels are shown as they are.
ABOUT_ZERO: dict[str, float] = {"cs_o": 0.1, "r_o": 0.01, "rkb_o": 0.05, "wkb_o": 0.05}
ABOUT_ZERO_BY_NAME: dict[str, float] = {"cs/o": 0.1, "r/o": 0.01, "rKB/o": 0.05, "wKB/o": 0.05}


def about_zero(metric: str, value: float | None) -> bool:
    """Whether a HW metric's level (by comparison key or shown name) is below its floor (``ABOUT_ZERO``)."""
    floor = ABOUT_ZERO.get(metric, ABOUT_ZERO_BY_NAME.get(metric, 0.0))
    return value is not None and not math.isnan(value) and (value < floor or value == 0)


def flag(rel: float | None, red: float = DEFAULT_RED, green: float = DEFAULT_GREEN) -> Flag:
    """Colour of a relative value: "red" at or below ``red``, "green" at or above ``green``, else "grey".

    None (a missing result) is "missing", never a colour; inf is "green"
    because it is above any threshold.
    """
    if rel is None or math.isnan(rel):
        return "missing"
    if rel <= red:
        return "red"
    if rel >= green:
        return "green"
    return "grey"


# --------------------------------------------------------------------------- summaries


@dataclass(frozen=True)
class GroupSummary:
    """Summary of the relative QPS of one group of tests for one run ("n of N").

    ``n`` counts the present values (inf included), ``total`` every test of the
    group. ``min``/``max`` include inf, so an infinite ratio still shows as the
    max with its label. ``avg`` and ``median`` are over the *finite* values only:
    one base with 0 QPS would otherwise turn the average into inf and hide what
    the other tests say; ``infinite`` lists the labels left out that way so the
    UI can say so. All four statistics are None when no value is present.
    """

    min: float | None
    max: float | None
    avg: float | None
    median: float | None
    n: int
    total: int
    min_label: str | None
    max_label: str | None
    missing: tuple[str, ...] = ()
    infinite: tuple[str, ...] = ()

    @property
    def complete(self) -> bool:
        return self.n == self.total

    @property
    def count_text(self) -> str:
        """``"9"`` when nothing is missing, else ``"7 of 9"``."""
        return str(self.total) if self.complete else f"{self.n} of {self.total}"


def median_of_sorted(values: list[float]) -> float:
    middle = len(values) // 2
    if len(values) % 2:
        return values[middle]
    return (values[middle - 1] + values[middle]) / 2


def summarize(values: Mapping[str, float | None]) -> GroupSummary:
    """Summarize a group's relative values, keyed by label, in the group's order.

    Missing values (None or NaN) count in ``total`` and are listed in
    ``missing``; they take no part in the statistics. On ties the first label
    in the mapping's order gives the min / max. See GroupSummary for inf.
    """
    missing: list[str] = []
    infinite: list[str] = []
    finite: list[float] = []
    lo = hi = None
    lo_label = hi_label = None
    for label, value in values.items():
        if value is None or value != value:  # value != value: NaN, without a function call per value
            missing.append(label)
            continue
        if lo is None or value < lo:
            lo, lo_label = value, label
        if hi is None or value > hi:
            hi, hi_label = value, label
        if value == math.inf or value == -math.inf:
            infinite.append(label)
        else:
            finite.append(value)
    n = len(values) - len(missing)
    avg = median = None
    if finite:
        avg = math.fsum(finite) / len(finite)
        finite.sort()
        median = median_of_sorted(finite)
    return GroupSummary(
        min=lo,
        max=hi,
        avg=avg,
        median=median,
        n=n,
        total=len(values),
        min_label=lo_label,
        max_label=hi_label,
        missing=tuple(missing),
        infinite=tuple(infinite),
    )


# --------------------------------------------------------------------------- comparison


@dataclass
class ComparisonResult(Generic[RunKey]):
    """Relative QPS of each run versus the base, per label, with flags and per-group summaries.

    ``relative[run][label]`` and ``flags[run][label]`` cover every label in
    ``labels``: the grouped labels in group order, then the ungrouped ones (seen
    in the data but in no group) in order of first appearance.
    ``summaries[(group, run)]`` is the GroupSummary of that group for that run.
    """

    base: RunKey
    runs: list[RunKey]
    groups: list[str]
    labels: list[str]
    ungrouped: list[str]
    relative: dict[RunKey, dict[str, float | None]] = field(default_factory=dict)
    flags: dict[RunKey, dict[str, Flag]] = field(default_factory=dict)
    summaries: Mapping[tuple[str, RunKey], GroupSummary] = field(default_factory=dict)
    red: float = DEFAULT_RED
    green: float = DEFAULT_GREEN

    def summary(self, group: str, run: RunKey) -> GroupSummary:
        return self.summaries[(group, run)]


def compare(
    qps: Mapping[RunKey, Mapping[str, float | None]],
    base: RunKey,
    runs: Sequence[RunKey],
    groups: Mapping[str, Sequence[str]],
    red: float = DEFAULT_RED,
    green: float = DEFAULT_GREEN,
) -> ComparisonResult[RunKey]:
    """Compare ``runs`` with ``base``: relative QPS per (run, label), flags, and a summary per (group, run).

    ``qps[run][label]`` holds absolute QPS; a run or label absent from it is
    missing, the same as None. ``groups`` maps each group name to its labels in
    display order; a label of a group that no run has still counts in that
    group's N, so a test that did not run is never dropped silently.

    Plain loops over dicts: 60 runs × 42 tests is ~2,500 divisions and ~250
    small sorts, a few milliseconds, so numpy would only add conversion cost.
    """
    empty: Mapping[str, float | None] = {}
    base_qps = qps.get(base, empty)

    labels: list[str] = []
    seen: set[str] = set()
    for members in groups.values():
        for label in members:
            if label not in seen:
                seen.add(label)
                labels.append(label)
    ungrouped: list[str] = []
    for run in (base, *runs):
        for label in qps.get(run, empty):
            if label not in seen:
                seen.add(label)
                labels.append(label)
                ungrouped.append(label)

    result: ComparisonResult[RunKey] = ComparisonResult(
        base=base,
        runs=list(runs),
        groups=list(groups),
        labels=labels,
        ungrouped=ungrouped,
        red=red,
        green=green,
    )
    summaries: dict[tuple[str, RunKey], GroupSummary] = {}
    result.summaries = summaries
    for run in runs:
        run_qps = qps.get(run, empty)
        rel_row: dict[str, float | None] = {}
        flag_row: dict[str, Flag] = {}
        for label in labels:
            # relative_qps and flag, written out: this runs once per cell (8,400 at 200 versions × 42 tests), and
            # the calls were most of its cost. ``x != x``: NaN. A test holds the two to the same answers.
            value, base_value = run_qps.get(label), base_qps.get(label)
            if value is None or base_value is None or value != value or base_value != base_value:
                rel_row[label], flag_row[label] = None, "missing"
                continue
            rel = (1.0 if value == 0 else math.inf) if base_value == 0 else value / base_value
            rel_row[label] = rel
            flag_row[label] = "red" if rel <= red else "green" if rel >= green else "missing" if rel != rel else "grey"
        result.relative[run] = rel_row
        result.flags[run] = flag_row
        for group, members in groups.items():
            summaries[(group, run)] = summarize({label: rel_row[label] for label in members})
    return result


# --------------------------------------------------------------------------- noise


class Spread(NamedTuple):
    mean: float
    stdev: float
    min: float
    max: float
    cv: float
    """Coefficient of variation, stdev / mean (0 when the mean is 0 and the values agree)."""


def spread(values: Sequence[float]) -> Spread:
    """Mean, sample standard deviation (n − 1), min, max and coefficient of variation of repeated results.

    One value gives stdev 0 and cv 0: there is no evidence of noise, which is
    not evidence of its absence; callers that have a single result should pass
    ``None`` as its cv to ``outside_noise``. Raises ValueError on no values.
    """
    if not values:
        raise ValueError("spread() needs at least one value")
    count = len(values)
    mean = math.fsum(values) / count
    stdev = math.sqrt(math.fsum((v - mean) ** 2 for v in values) / (count - 1)) if count > 1 else 0.0
    return Spread(mean=mean, stdev=stdev, min=min(values), max=max(values), cv=_cv(mean, stdev))


def _cv(mean: float, stdev: float) -> float:
    # A zero mean has no relative spread to speak of: agreeing zeros are noiseless, anything else unbounded.
    if mean == 0:
        return 0.0 if stdev == 0 else math.inf
    return stdev / abs(mean)


def outside_noise(rel: float | None, base_cv: float | None, other_cv: float | None, k: float = 2.0) -> bool:
    """Whether a relative value is a change larger than the run-to-run noise.

    Rule (shown in the UI): a change counts only when |rel − 1| > k × √(cv_base² + cv_other²),
    where cv is the coefficient of variation (stdev / mean) of each side's
    repeated results. The square root adds the two relative errors as for the
    ratio of two independent means; k = 2 is roughly a 95 % band.

    - rel None (missing) → False: nothing to flag;
    - rel inf → True;
    - a cv of None means that side has no repeated results, so the noise is
      unknown: the other side's cv alone is used, and with neither known the
      answer is True, leaving the decision to the red/green thresholds.
    """
    if rel is None or math.isnan(rel):
        return False
    if math.isinf(rel):
        return True
    if base_cv is None and other_cv is None:
        return True
    combined = math.hypot(base_cv or 0.0, other_cv or 0.0)
    return abs(rel - 1.0) > k * combined


def json_safe(value: Any) -> Any:
    """JSON has no infinity or NaN: ±∞ (a zero base's ratio) becomes the string "inf" or "-inf", NaN null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        # Most lists are a series' values: finite floats and None, kept as they are without a call each.
        return [v if v is None or (type(v) is float and math.isfinite(v)) else json_safe(v) for v in value]
    return value
