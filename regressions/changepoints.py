"""Where did a regression arrive? Change points in a version-ordered series of relative QPS.

The rule (shown in the UI next to every regression record):

1. **Series.** One point per version, in semantic version order: the relative QPS
   of one microbenchmark versus the base (the base itself is 1.0). Missing
   results (None), and infinite values from a base of 0 QPS, are skipped: they
   are not a level. When a version has several builds (``my8406`` and
   ``my8406v2``), exactly one of them is the point (``choose_points``): the build
   with the base's flavour and config, else a default flavour with the base's
   config, else a default flavour with another config, earliest name first. A
   default flavour is made only of known build-type parts (``rel``, ``withdbg``,
   ``o2nofp``, ``lto``, …: ``DEFAULT_FLAVOUR_PARTS``); a flavour with any other
   part (``mdev16168_rel_withdbg``, ``v2_rel_o2nofp``) is an experiment and is
   never a point unless asked for, so a patched build cannot pose as a release.
   The other builds stay in the evidence, marked as not used, and every record
   names the builds its levels rest on.
2. **Noise** σ, the relative noise of one point, is estimated per microbenchmark,
   because a scan or a delete jumps by 10–40 % between runs where a point query
   moves by 1 %:
   - from repeated runs (same build, config, server and workload) when the
     microbenchmark has any: the median of their coefficients of variation;
   - else, in a series of more than ``SHORT_SERIES`` (4) points, from the
     series' own neighbour differences dᵢ = ln(xᵢ₊₁/xᵢ):
     σ = median |dᵢ| / (0.6745·√2), the median absolute deviation of the
     differences from "no change", which the few real steps cannot inflate (√2:
     a difference carries the noise of two points), floored at ``NOISE_FLOOR``
     (1 %) because a handful of quiet differences says little about the next run;
   - else (a short series, 4 points or fewer, whose differences are mostly the
     steps themselves) ``DEFAULT_NOISE``, 2 %: the run-to-run spread of a
     sysbench or Insert Benchmark run on a dedicated, warmed-up server.
   Every record shows the σ it used and where it came from.
3. **Segmentation.** PELT (``ruptures``, least squares, segments of one point
   allowed so the newest release can be the one that regressed) with a
   permissive penalty, σ_abs² · ln n, proposes candidate levels.
4. **Gate.** Between two adjacent levels A (before) and B (after) the change is
   B/A − 1. A step is kept only when |change| > ``min_change`` (default 5 %, the
   red/green thresholds) **and** |change| > k · σ · √(1/n_A + 1/n_B) (k = 3,
   n = points in each level: the noise of a difference of two means) **and**
   the two levels fit their points at least as well as one straight line does
   (a step, not a ramp: same number of parameters). Failing boundaries are
   removed one at a time, weakest first, and the levels recomputed, until every
   remaining step passes. A slow drift of 1–2 % per release is therefore never
   given an arbitrary "arrived in"; the comparison page still shows it.
5. **Steps.** Each kept step reports the version where the new level starts
   ("arrived in"), the last version of the old level, the levels before and
   after, the change and its direction (lower QPS: regression). A later level
   back within ``min_change`` of the level before the step (or beyond it) ends
   it: for a regression that version is "fixed in", and the step that brought
   it back is no record of its own unless it overshoots by more than
   ``min_change``; then it is measured from the level before the step it
   ended (a fix of a −33 % dip that lands 9 % above the old level is a +9 %
   improvement, not +63 %). ``persists_until`` is the last version the effect held.
6. **Arrived in** (``arrived_in``): for the final level versus the base level,
   the first version from which the series has been at least that far from the
   base (within ``min_change``) without interruption. "The point-query loss
   arrives in 8.0.43" even though 5.7.44 had lost some already.
7. **Groups** (``regressions.detection``): when more than half of a group's
   microbenchmarks, and at least two, step the same way at the same version,
   one group record stands for them (its sizes are the medians of theirs);
   the others keep records of their own.

Pure Python and numpy: no Django, so the tests and the UI's explanation share it.
"""

from __future__ import annotations

import functools
import itertools
import math
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from reports.stats import median_of_sorted

DEFAULT_MIN_CHANGE = 0.05
DEFAULT_K = 3.0
# σ from first differences needs a handful of them to mean anything.
MIN_DIFFERENCES_FOR_NOISE = 4
# A series of this many points or fewer has no noise estimate of its own (its differences are mostly steps).
SHORT_SERIES = 4
# The noise of a short series without repeats: a dedicated server's run-to-run spread for sysbench / Insert Benchmark.
DEFAULT_NOISE = 0.02
# The least σ a series' own differences may claim: five quiet differences do not make a 1 % step significant.
NOISE_FLOOR = 0.01
# Build-type parts of a flavour: a flavour made only of these is a default build of the version.
DEFAULT_FLAVOUR_PARTS = frozenset(
    ["rel", "release", "withdbg", "dbg", "debug", "o2", "o3", "nofp", "o2nofp", "o3nofp", "lto", "pgo", "native"]
)
# Φ⁻¹(0.75): turns a median absolute deviation into a standard deviation for normal noise.
MAD_TO_SIGMA = _MAD_TO_SIGMA = 0.6745

Direction = Literal["regression", "improvement"]
NoiseSource = Literal["given", "repeats", "series", "default", "unknown"]


@dataclass(frozen=True)
class Segment:
    """A run of consecutive points at one level; ``first``/``last`` index the input series."""

    first: int
    last: int
    indexes: tuple[int, ...]
    level: float

    @property
    def n(self) -> int:
        return len(self.indexes)


@dataclass(frozen=True)
class Step:
    index: int  # where the new level starts: "arrived in"
    version: str
    previous_index: int  # the last point of the old level
    previous_version: str
    level_before: float
    level_after: float
    change: float  # level_after / level_before − 1
    threshold: float  # the gate this change passed
    direction: Direction
    persists_until_index: int  # last point where the step's effect still held
    persists_until_version: str
    ended_index: int | None = None  # the level came back here (for a regression: fixed in)
    ended_version: str | None = None
    reverses: int | None = None  # this step undoes the step that arrived at this index

    @property
    def is_reversal(self) -> bool:
        return self.reverses is not None


@dataclass(frozen=True)
class Arrival:
    """The final level versus the base, and the first version from which it holds."""

    index: int
    version: str
    base_level: float
    level: float
    change: float
    direction: Direction


@dataclass(frozen=True)
class Detection:
    values: tuple[float | None, ...]
    versions: tuple[str, ...]
    segments: tuple[Segment, ...]
    steps: tuple[Step, ...]
    noise: float | None
    noise_source: NoiseSource
    min_change: float
    k: float
    base_index: int
    thresholds: dict[int, float] = field(default_factory=dict)

    @property
    def reported_steps(self) -> tuple[Step, ...]:
        """Steps that are records of their own.

        A step that undoes an earlier regression is that one's fix. A step that
        undoes an earlier improvement is a regression of its own (the gain was
        given back), unless the improvement held for one version only: that
        spike's record already says where it ended.
        """
        by_index = {s.index: s for s in self.steps}

        def own(step: Step) -> bool:
            if step.reverses is None:
                return True
            undone = by_index.get(step.reverses)
            spike = undone is not None and undone.persists_until_index == undone.index
            return step.direction == "regression" and not spike

        return tuple(s for s in self.steps if own(s))

    def segment_of(self, index: int) -> Segment | None:
        return next((s for s in self.segments if index in s.indexes), None)

    def level_at(self, index: int) -> float | None:
        segment = self.segment_of(index)
        return segment.level if segment else None


# --------------------------------------------------------------------------- noise


def _usable(value: float | None) -> bool:
    return value is not None and math.isfinite(value)


def log_differences(values: Iterable[float | None]) -> list[float]:
    """ln(xᵢ₊₁/xᵢ) between consecutive present, positive points: relative changes, scale-free."""
    present = [v for v in values if v is not None and math.isfinite(v) and v > 0]
    return [math.log(b / a) for a, b in itertools.pairwise(present)]


def robust_noise(values: Iterable[float | None], floor: float = NOISE_FLOOR) -> float | None:
    """Relative noise of one point from this series' neighbour differences: median |Δ ln x| / (0.6745 · √2), floored.

    The median absolute difference (its deviation from no change, which is what
    a version without a step should show) ignores the few differences that are
    real steps; √2 because a difference carries the noise of two points. None
    when there are fewer than ``MIN_DIFFERENCES_FOR_NOISE`` differences.
    """
    differences = log_differences(values)
    if len(differences) < MIN_DIFFERENCES_FOR_NOISE:
        return None
    return max(floor, median_of_sorted(sorted(abs(d) for d in differences)) / (_MAD_TO_SIGMA * math.sqrt(2)))


def pooled_noise(series: Iterable[Iterable[float | None]]) -> float | None:
    """median |Δ ln x| / (0.6745 · √2) over several series at once; detection no longer pools (see rule 2)."""
    differences = [abs(d) for values in series for d in log_differences(values)]
    if len(differences) < MIN_DIFFERENCES_FOR_NOISE:
        return None
    return statistics.median(differences) / (_MAD_TO_SIGMA * math.sqrt(2))


def noise_from_repeats(cvs: Iterable[float | None]) -> float | None:
    """Median coefficient of variation of the points that had repeated runs; None when none had."""
    known = [cv for cv in cvs if cv is not None and math.isfinite(cv)]
    return statistics.median(known) if known else None


def series_noise(
    values: Sequence[float | None], cvs: Sequence[float | None] | None = None, *, default_noise: float = DEFAULT_NOISE
) -> tuple[float, NoiseSource]:
    """The σ of one microbenchmark's series and where it came from: repeats, its own differences, or the default."""
    if cvs is not None and (repeated := noise_from_repeats(cvs)) is not None:
        return repeated, "repeats"
    # _usable's test written out: detection counts the points of thousands of series per refresh.
    usable = sum(1 for v in values if v is not None and math.isfinite(v))
    if usable > SHORT_SERIES and (own := robust_noise(values)) is not None:
        return own, "series"
    return default_noise, "default"


# --------------------------------------------------------------------------- builds


def is_default_flavour(flavour: str) -> bool:
    """Whether a build flavour is made only of known build-type parts (``rel_o2nofp``; empty counts too)."""
    return all(part in DEFAULT_FLAVOUR_PARTS for part in flavour.lower().split("_") if part)


def choose_points(
    columns: Sequence[tuple[str, str, str]], base_index: int = 0, *, experimental: bool = False
) -> list[int]:
    """One column per version: indexes of the columns that are points of the series.

    ``columns`` are (version, flavour, config) in version order; several in a row
    may share a version (builds ``my8406`` and ``my8406v2``). The base's column is
    always chosen; for other versions the build with the base's flavour and config
    wins, then a default flavour (``is_default_flavour``) with the base's config,
    then a default flavour with another config, the earliest column first. An
    experimental flavour is a point only with ``experimental``, after all of
    those; without it a version that has only experimental builds has no point.
    """
    if not columns:
        return []
    base_version, base_flavour, base_config = columns[base_index]
    by_version: dict[str, list[int]] = {}
    for i, (version, _flavour, _config) in enumerate(columns):
        by_version.setdefault(version, []).append(i)

    def rank(i: int) -> tuple[int, int]:
        _v, flavour, config = columns[i]
        if (flavour, config) == (base_flavour, base_config):
            return (0, i)
        if is_default_flavour(flavour):
            return (1 if config == base_config else 2, i)
        return (3 if config == base_config else 4, i)

    chosen = []
    for version, indexes in by_version.items():
        if version == base_version:
            chosen.append(base_index)
            continue
        best = min(indexes, key=rank)
        if rank(best)[0] <= 2 or experimental:
            chosen.append(best)
    return sorted(chosen)


# --------------------------------------------------------------------------- detection


def _mean(values: Sequence[float]) -> float:
    return math.fsum(values) / len(values)


def _change(before: float, after: float) -> float:
    if before == 0:
        return 0.0 if after == 0 else math.inf
    return after / before - 1.0


def _threshold(noise: float | None, n_before: int, n_after: int, min_change: float, k: float) -> float:
    if noise is None:
        return min_change
    return max(min_change, k * noise * math.sqrt(1 / n_before + 1 / n_after))


def _candidate_breaks(signal: list[float], noise: float | None, min_change: float, k: float) -> list[int]:
    """PELT's breakpoints (positions in ``signal`` where a new level starts), generous on purpose: the gate decides."""
    if len(signal) < 2:
        return []
    scale = median_of_sorted(sorted(abs(v) for v in signal)) or 1.0
    # Never let a tiny σ make every point a level: floor it at the smallest step the gate could keep.
    sigma = max(noise or 0.0, min_change / k) * scale
    penalty = sigma**2 * math.log(len(signal))
    return [b for b in least_squares_breaks(signal, penalty) if b < len(signal)]


def least_squares_breaks(signal: Sequence[float], penalty: float) -> list[int]:
    """The ends of the optimal least-squares segmentation of ``signal`` with ``penalty`` per segment, segments
    of one point allowed: PELT's answer (``ruptures.Pelt(model="l2", min_size=1, jump=1)``).

    ruptures' kernel search with the linear kernel solves this same problem in compiled code; its ``Pelt``
    recomputes a slice's variance for every candidate in Python, which took seconds per series, and detection
    segments every microbenchmark and metric of a series after each import.
    """
    if len(signal) < 2:
        return [len(signal)] if signal else []
    return list(_least_squares_breaks(tuple(signal), penalty))


# The search is most of a segmentation's time, and one detection asks it the same question again: rule 2's
# noise refinement and the stories segment a series with the same σ, and a metric series' own stories (10 %)
# and its steps (5 %) share their penalty when σ is above both gates' floors. The answer is a function of the
# signal and the penalty alone, so it is kept (by value: a changed series is another key).
@functools.lru_cache(maxsize=4096)
def _least_squares_breaks(signal: tuple[float, ...], penalty: float) -> tuple[int, ...]:
    # On first use: ruptures loads scipy (about a second) and numpy, which a command's start should not pay.
    import numpy as np
    import ruptures

    algo = ruptures.KernelCPD(kernel="linear", min_size=1, jump=1)
    return tuple(int(b) for b in algo.fit(np.asarray(signal, dtype=float).reshape(-1, 1)).predict(pen=penalty))


def _segments(signal: list[float], breaks: list[int]) -> list[tuple[int, int]]:
    bounds = [0, *breaks, len(signal)]
    return [(a, b) for a, b in itertools.pairwise(bounds)]


def _is_ramp(
    signal: list[float],
    first: int,
    boundary: int,
    end: int,
    before_level: float | None = None,
    after_level: float | None = None,
) -> bool:
    """Whether one straight line fits ``signal[first:end]`` better than two levels split at ``boundary``.

    Both models have two parameters, so the comparison is fair; a tie (two
    points, both fit exactly) keeps the step. ``before_level`` and ``after_level`` are the two levels (the
    means of each side) when the caller has them.
    """
    points = signal[first:end]
    if len(points) < 3:
        return False
    before, after = signal[first:boundary], signal[boundary:end]
    # Each level once, not once per point it is subtracted from.
    mean_before = _mean(before) if before_level is None else before_level
    mean_after = _mean(after) if after_level is None else after_level
    step_sse = sum((v - mean_before) ** 2 for v in before) + sum((v - mean_after) ** 2 for v in after)
    import numpy as np  # on first use, as in least_squares_breaks

    # The least-squares line in closed form, about the points' centre (what np.polyfit(x, y, 1) solves, without
    # its general solver: this runs for every boundary a segmentation proposes).
    y = np.asarray(points, dtype=float)
    x, xx = _centred(len(points))
    # y.mean() without its Python wrapper: the same sum (numpy's pairwise one) over the same count.
    deviations = y - np.add.reduce(y) / len(points)
    residuals = deviations - (x @ deviations) / xx * x
    line_sse = float(residuals @ residuals)
    return line_sse < step_sse * (1 - 1e-9)


@functools.lru_cache(maxsize=256)
def _centred(n: int) -> tuple[Any, Any]:
    """The positions 0 … n − 1 about their centre, as a read-only array, and their sum of squares: the same for
    every ramp test of n points."""
    import numpy as np

    x = np.arange(n, dtype=float) - (n - 1) / 2
    x.flags.writeable = False
    return x, x @ x


def _prune(
    signal: list[float], breaks: list[int], noise: float | None, min_change: float, k: float
) -> tuple[list[int], dict[int, float]]:
    """Remove the weakest failing boundary until every step passes; returns the breaks and their thresholds.

    A boundary fails the gate when its change is too small for ``min_change`` or
    the noise, or when its two levels are a ramp (``_is_ramp``). The weakest is
    the one whose change is smallest relative to its threshold.
    """
    breaks = sorted(breaks)
    # Removing a boundary changes only the two levels beside it: every other level, and whether the pair of
    # levels around a boundary is a ramp, is what it was in the round before, so each is worked out once.
    means: dict[tuple[int, int], float] = {}
    ramps: dict[tuple[int, int, int], bool] = {}

    def level(a: int, b: int) -> float:
        found = means.get((a, b))
        if found is None:
            found = means[(a, b)] = _mean(signal[a:b])
        return found

    while True:
        spans = _segments(signal, breaks)
        weakest: tuple[float, int] | None = None
        thresholds: dict[int, float] = {}
        for (a0, a1), (b0, b1) in itertools.pairwise(spans):
            before, after = level(a0, a1), level(b0, b1)
            threshold = _threshold(noise, a1 - a0, b1 - b0, min_change, k)
            thresholds[b0] = threshold
            strength = abs(_change(before, after)) / threshold
            if strength > 1.0:
                ramp = ramps.get((a0, b0, b1))
                if ramp is None:
                    ramp = ramps[(a0, b0, b1)] = _is_ramp(signal, a0, b0, b1, before, after)
                if not ramp:
                    continue
            if weakest is None or strength < weakest[0]:
                weakest = (strength, b0)
        if weakest is None:
            return breaks, thresholds
        breaks.remove(weakest[1])


def _too_flat_to_step(signal: Sequence[float], min_change: float) -> bool:
    """Whether no two levels of ``signal`` can differ by more than ``min_change``, so the gate (rule 4) keeps no
    step whatever segmentation proposes: every level is the mean of some of its points, so it lies between the
    least and the greatest of them. A third of a refresh's series (HW metrics most) never move that much.
    The margin covers the rounding of a mean."""
    if len(signal) < 2:
        return False
    least, greatest = min(signal), max(signal)
    return least > 0 and greatest < least * (1 + min_change) * (1 - 1e-9)


def segments_of(
    values: Sequence[float | None], *, noise: float, min_change: float = DEFAULT_MIN_CHANGE, k: float = DEFAULT_K
) -> tuple[Segment, ...]:
    """The levels ``detect`` finds in ``values`` with the noise given, without its steps (what a caller that reads
    only the levels needs: the stories segment every series of a refresh several times)."""
    return _segmented(values, noise, min_change, k)[0]


def _segmented(
    values: Sequence[float | None], noise: float | None, min_change: float, k: float
) -> tuple[tuple[Segment, ...], dict[int, float]]:
    """The levels of ``values`` (rule 4's segmentation and gate) and the threshold of each kept step, by the index
    where its level starts."""
    positions = [i for i, v in enumerate(values) if v is not None and math.isfinite(v)]  # _usable, written out
    signal = [float(values[i]) for i in positions]  # type: ignore[arg-type]
    if _too_flat_to_step(signal, min_change):
        # What segmentation and the gate would conclude, without proposing the levels they would all remove.
        breaks: list[int] = []
        by_break: dict[int, float] = {}
    else:
        breaks, by_break = _prune(signal, _candidate_breaks(signal, noise, min_change, k), noise, min_change, k)
    segments = tuple(
        Segment(
            first=positions[a],
            last=positions[b - 1],
            indexes=tuple(positions[a:b]),
            level=_mean(signal[a:b]),
        )
        for a, b in _segments(signal, breaks)
        if b > a
    )
    return segments, {positions[b]: t for b, t in by_break.items() if b in breaks}


def detect(
    values: Sequence[float | None],
    versions: Sequence[str] | None = None,
    *,
    cvs: Sequence[float | None] | None = None,
    noise: float | None = None,
    min_change: float = DEFAULT_MIN_CHANGE,
    k: float = DEFAULT_K,
    base_index: int = 0,
    default_noise: float = DEFAULT_NOISE,
) -> Detection:
    """Steps in a version-ordered series of relative QPS (see the module docstring for the rule).

    ``noise`` (relative σ of one point) overrides everything, so a caller can pass
    a figure it measured elsewhere; else ``series_noise`` (rule 2).
    """
    versions = tuple(versions) if versions is not None else tuple(str(i) for i in range(len(values)))
    if len(versions) != len(values):
        raise ValueError(f"{len(values)} values but {len(versions)} versions")
    source: NoiseSource = "given"
    if noise is None:
        noise, source = series_noise(values, cvs, default_noise=default_noise)

    segments, thresholds = _segmented(values, noise, min_change, k)
    steps = _steps(segments, versions, thresholds, min_change)
    return Detection(
        values=tuple(values),
        versions=versions,
        segments=segments,
        steps=steps,
        noise=noise,
        noise_source=source,
        min_change=min_change,
        k=k,
        base_index=base_index,
        thresholds=thresholds,
    )


def _returned(level: float, before: float, direction: Direction, min_change: float) -> bool:
    """Whether ``level`` is back within ``min_change`` of (or beyond) the level before a step."""
    if direction == "regression":
        return level >= before * (1 - min_change)
    return level <= before * (1 + min_change)


def _steps(
    segments: Sequence[Segment], versions: Sequence[str], thresholds: dict[int, float], min_change: float
) -> tuple[Step, ...]:
    last_index = segments[-1].last if segments else 0
    # Per step (segments[i - 1] → segments[i]), the level it is measured from: the level before it, except for a
    # step that ends an earlier one and overshoots, which is measured from the level before that earlier step
    # (a fix of a −33 % dip that lands 9 % higher is a +9 % improvement, not +63 %).
    origin = {i: segments[i - 1].level for i in range(1, len(segments))}
    ends: dict[int, int | None] = {}  # per step: the segment where its effect ended
    reverses: dict[int, int] = {}
    remeasured: set[int] = set()
    for i in range(1, len(segments)):
        direction: Direction = "regression" if segments[i].level < origin[i] else "improvement"
        later = range(i + 1, len(segments))
        ended = next((j for j in later if _returned(segments[j].level, origin[i], direction, min_change)), None)
        ends[i] = ended
        if ended is None:
            continue
        if abs(_change(origin[i], segments[ended].level)) <= min_change:
            # Back within min_change of the level before this step: the later step undoes it (the earliest such
            # step, for nested ones).
            reverses.setdefault(segments[ended].first, segments[i].first)
        elif ended not in remeasured:  # the earliest step it ends, for nested ones
            remeasured.add(ended)
            origin[ended] = origin[i]
    found = []
    for i in range(1, len(segments)):
        before, after, ended = segments[i - 1], segments[i], ends[i]
        change = _change(origin[i], after.level)
        ended_index = segments[ended].first if ended is not None else None
        persists = segments[ended - 1].last if ended is not None else last_index
        found.append(
            Step(
                index=after.first,
                version=versions[after.first],
                previous_index=before.last,
                previous_version=versions[before.last],
                level_before=origin[i],
                level_after=after.level,
                change=change,
                threshold=thresholds.get(after.first, min_change),
                direction="regression" if change < 0 else "improvement",
                persists_until_index=persists,
                persists_until_version=versions[persists],
                ended_index=ended_index,
                ended_version=versions[ended_index] if ended_index is not None else None,
                reverses=reverses.get(after.first),
            )
        )
    return tuple(found)


def steps(values: Sequence[float | None], versions: Sequence[str] | None = None, **options: object) -> list[Step]:
    """The steps worth a record of their own (``Detection.reported_steps``) of ``detect(values, versions)``."""
    return list(detect(values, versions, **options).reported_steps)  # type: ignore[arg-type]


def arrived_in(
    values: Sequence[float | None] | Detection,
    versions: Sequence[str] | None = None,
    **options: object,
) -> Arrival | None:
    """For the final level versus the base level: the first version from which it holds; None when there is no change.

    The final level is a change when it passes the same gate as a step (between
    the base's level and the last level). Walking back from the last level, every
    earlier level at least as far from the base (or within ``min_change`` of the
    final one) belongs to it; the first version of the earliest such level is the
    arrival.
    """
    detection = values if isinstance(values, Detection) else detect(values, versions, **options)  # type: ignore[arg-type]
    if not detection.segments:
        return None
    base_segment = detection.segment_of(detection.base_index) or detection.segments[0]
    final = detection.segments[-1]
    if final == base_segment:
        return None
    change = _change(base_segment.level, final.level)
    threshold = _threshold(detection.noise, base_segment.n, final.n, detection.min_change, detection.k)
    if abs(change) <= threshold:
        return None
    direction: Direction = "regression" if change < 0 else "improvement"
    first = final
    for segment in reversed(detection.segments[:-1]):
        if segment == base_segment:
            break
        at_least_as_far = segment.level <= final.level if direction == "regression" else segment.level >= final.level
        close = abs(_change(final.level, segment.level)) <= detection.min_change
        if not (at_least_as_far or close):
            break
        first = segment
    return Arrival(
        index=first.first,
        version=detection.versions[first.first],
        base_level=base_segment.level,
        level=final.level,
        change=change,
        direction=direction,
    )
