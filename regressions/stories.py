"""Regression stories: what happened to one microbenchmark (or one group) across a product's versions.

``regressions.changepoints`` finds level shifts; this module tells them as stories,
the way an engineer reads a version series: *it arrived here, got worse there,
came partly back, was fixed, came back again*. One story per microbenchmark
and direction instead of one row per step, so a blip or a partial recovery
never turns into a "fixed in" plus a new "arrived in".

Input and output are plain values (``Series`` of ``Point`` named tuples in,
``Story`` dataclasses out); nothing here touches Django, so the detection task,
the command, the API and the tests share it.

The rule
--------

1. **Points.** A ``Series`` is one microbenchmark's values in version order,
   in the release view in use (``releases``: "long-term" or "all", decided by
   ``runs.releases`` before the series is built; recorded on each story).
   A missing or non-finite value is no point. An Insert Benchmark step whose
   background inserts missed their SLA (``Point.sla_missed``, in the run or
   its base) ran another write load: it is no point either, so it can neither
   start nor end a story.
2. **Noise** σ, the relative noise of one point, per series
   (``changepoints.series_noise``):

   - *repeats*: the median coefficient of variation of the points that had
     repeated runs (same build, config, server and workload), when any had;
   - *MAD*: else, with more than 4 points, the median absolute neighbour
     difference of ln(value), divided by 0.6745·√2 (a median absolute deviation
     turned into a standard deviation; √2 because a difference carries the
     noise of two points), floored at 1 %; then measured against the test's
     own real steps: the series is segmented with that σ (rules 3–4) and σ
     measured again from the points' residuals within their levels (median
     |ln x − ln level| / 0.6745, × √(n / (n − levels)) for the fitted means),
     repeated while it falls (at most ``NOISE_ROUNDS`` times), never above the
     first figure. Neighbouring differences count each real step as noise: the
     real insert series of MySQL 5.6 → 9.5 with a −20 % step added at 8.4.7
     read σ 7.2 % and lost 5.7.44's −19 %; its residuals read 1.1 % and tell
     all three steps;
   - *default*: else (4 points or fewer, whose differences are mostly the steps
     themselves) 2 %, the run-to-run spread of a sysbench or Insert Benchmark
     run on a dedicated, warmed-up server.

   ``Noise.text`` says which one was used and why, for the record's page.
3. **Outliers.** A point (not the first, not the last) is an outlier when it
   differs from both neighbours by more than the one-point gate
   max(``min_change``, k·σ·√2) in the same direction, while the next point
   is back within that gate of the point before, or past it the other way: a
   single-version excursion that returns at the next version (an overshooting
   return leaves the step from the point before to the next point, told as a
   story of its own, not as the excursion's "fix"). It is set aside before
   segmentation, so it never splits a story into "fixed" plus "arrived again";
   it is listed on the story whose span holds it, or becomes a story of kind
   "outlier" of its own when no story spans it. Two excursions in a row, a
   dip and a spike (or a spike and a dip), are outliers too: when
   segmentation (rule 4) tells them as two one-version levels, one each side
   of the level before them, and the level after them is back within the
   one-point gate of that level, both are set aside and the rest segmented
   again. Read as levels they would make one held step into "given back",
   "better again", "given back" (db_bench's overwriteandwait with buffered IO,
   1.40 → 1.23 → 1.68 → 1.42); two versions on the same side of the level
   before are a level of their own, a loss and its fix, and stay one. In the
   every-release view a point's neighbours are those of its release line
   (rule 9, ``lineage``), not of version order.
4. **Levels.** ``changepoints.detect`` segments the remaining points with the
   σ of rule 2 (PELT proposes, the gate keeps a step only when it exceeds
   ``min_change`` (5 %) and k·σ·√(1/n_A + 1/n_B) (k = 3) and is a step, not a
   ramp).
5. **Story.** Walking the levels in version order, the first kept step opens a
   story: ``arrived_in`` is the first version of the new level,
   ``previous_version`` the last version of the level before, and every change
   of the story is measured against the level before the arrival
   (``level_before``), never against the base. *One number per claim*:
   segmentation says where the levels change, the figures are read at the
   versions named, never as a level's mean. ``level_before`` is the value at
   ``previous_version``; an event's ``level`` is the value at its version, its
   ``change`` the step from the version before it (exactly the ratio the
   comparison shows between the two), its ``change_vs_before`` that value
   against ``level_before``. Each later level is one event of the same story:

   - further from ``level_before`` than the level before it: *further* (a
     regression got worse, an improvement gained more);
   - closer, but still beyond ``min_change``: *partial recovery*;
   - back within ``min_change`` of ``level_before`` (or beyond it): *fixed*
     (``fixed_in``; for an improvement *given back*, ``ended_in``);
   - after a fix, beyond ``min_change`` the same way again: *returned*; the
     story is open again (``fixed_in`` None) and lists the return;
   - past ``level_before`` by more than ``min_change`` the other way (a fix
     that overshoots, a gain lost and more): the story ends there, and a story
     of the other kind starts at that version, measured from the same
     ``level_before``.

   **5b.** A step of at least ``min_change`` that moves against the story it
   sits in, a loss given back within an improvement (*partial recovery* or
   *given back*) or a gain given back within a regression (*partial
   recovery*), is a story of the other kind of its own (``given_back_stories``),
   its arrival event naming the story it sits in (``within``): MySQL 5.7 → 8.0
   point, range and read-write losses inside 5.7's improvements are regression
   records, listed and alerted like any.

   ``change`` is the arrival's own step, ``current_change`` ("now") the newest
   version's value against ``level_before``, ``worst_change`` the furthest
   event level. A regression
   story is *open* while it has no ``fixed_in``. An event whose new level is
   the newest version alone, and whose step is under twice the one-point gate
   of rule 3, is *provisional*: no next version can yet tell it from an
   outlier (a −5 % step on the newest release is; a −38 % one is news).
6. **Groups.** A group's story is told from the group's median series (per
   version, the median of its members' values) over a fixed member set: every
   member the series measured. A version that lacks one of them (MySQL 9.5.0
   without random-points_range=1000 in one archive) is *incomplete*, n of N:
   its median is over other tests, so it is no point of the group's series and
   never moves a group story (the evidence marks it). A member story of the same
   kind arriving at the same version is folded into it (``folded_into``), so a
   list shows one row where most of a group moved together.
7. **Metric steps.** HW efficiency per operation (cpu/o, cs/o, rKB/o, wKB/o),
   db_bench's w_amp, stall% and p99 (a latency) and the Insert Benchmark's
   "p99 rate" (its p99 column is the per-second rate the worst 1 % of seconds
   reached, so higher is better there) are segmented by the same rule; for
   all the others higher is worse (``METRICS``). A step of a
   metric coincides with a QPS story when its version pair (previous, arrived]
   overlaps the pair of the story's arrival, a further step or a return:
   "cs/o ×3.1 at the same version". Metric values below a per-metric floor,
   "about zero" (``reports.stats.ABOUT_ZERO``, the comparison's HW flags use
   the same floors: cs/o 0.1, r/o 0.01, rKB/o and wKB/o 0.05 per operation;
   an idle read path's rKB/o of 0.001, a scan's cs/o of 0.08) are too small
   for a ratio to mean anything and make no step; where a story does start
   from such a level (rule 8's ``meaningful``), it is told with the two
   levels ("cs/o 0.08 → 160"), never as a ratio (+141588 %).
8. **Metric stories.** A metric that steps where no QPS story of its
   microbenchmark moves tells a story of its own (``metric_stories``), told
   by rules 2–5 with a larger minimum change (``METRIC_MIN_CHANGE``, 10 %):
   a *regression* when the cost per operation rises (for the Insert
   Benchmark's p99 rate, when it falls), an *improvement* when it falls. A
   step from or to a level below the metric's floor (rKB/o 0 → 0.01, or
   0.3 → 0) is noise, for these stories as for the steps of rule 7, unless
   the other level matters on its own (``MetricSpec.meaningful``: 1 KB read
   per operation does, wherever it came from). A cs/o jump with flat QPS is
   how a contention bug shows on a server with cores to spare. A group tells
   metric stories the same way, from the median of its members' metric
   series (rule 6), beside the group's QPS stories; a member's metric story
   of the same metric and kind arriving where the group's arrives, moves
   further or returns is folded into it. Each metric story carries what its
   subject's QPS did over the same version pair (``qps_change``): a cost per
   operation that rose while QPS held (MySQL 9.5.0's insert, cs/o +45 % at
   QPS −5 % against the level before, inside that test's noise) is a
   HW-metric story, listed on its own tab, never an open QPS regression nor
   an alert. QPS is read against the mean of its level up to the version
   before (outliers set aside), so a QPS outlier there is no change.
9. **Release lines.** A regression story is also read along each release line
   (10.11.x, 11.4.x, 8.0.x, 8.4.x), each line its own sequence for fixes
   (``line_states``): a line the loss hit that reaches the story is fixed when
   its newest version is back within ``min_change`` of ``level_before``. A
   story fixed in one maintained line (a long-term line, or the newest
   release's) but still open in another has a *backport gap*, said on the
   list, the story page and in JSON: "fixed in 11.4.8, still open in
   10.11.14". In the every-release view (``Series.lines``) rule 3 judges each
   point within its line: against the point before it in its line (a line's
   first point: the nearest earlier point that is not another line's newest
   after its first, whose backports the new line never had) and every point
   that continues it (the next in its line; a line's first point also the
   next line's first). So a line's newest point after its first is never an
   outlier, however version order places it: 10.11.14 with a backported fix
   between 10.11.6 and 11.0.6, which lack it, is the 10.11 line's fix, and
   8.0.44 beside 8.4.6 (the same release day) is read against 8.0.43.
   The stories walk the *line sequence*, not version order: each line's
   points in order, a line's first point after the point of the line it was
   branched from (8.4.6 after 8.0.43, 9.4.0 after 8.4.6), from the first
   version to the newest (MySQL 5.6.51, 5.7.44, 8.0.43, 8.4.6, 9.4.0, 9.5.0).
   The points off it, a line's newest point where a later line was branched
   before it (8.0.44, 8.4.7: ``Lineage.branches``), are each their line's
   own state, never a step of a story: a fix or a loss that reached that
   line (a backport) is told by the story's line state when the point stands
   at a level the story names (its level before, or an event's) and the line
   counts (``Series.maintained``), else, when it moved beyond the one-point
   gate from the point it continues, as an outlier of its own ("the newest
   version of its release line"). So a change is dated where it first
   appears along the line sequence: a loss in 8.4.7 and 9.4.0 arrives in
   9.4.0 against 8.4.6, the 8.4 line still open at 8.4.7; a loss of 8.0.44
   alone is the 8.0 line's outlier. The long-term view has no lines: version
   order is its line sequence.
"""

from __future__ import annotations

import functools
import itertools
import math
import operator
import statistics
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any, Literal, NamedTuple, Protocol

from regressions import changepoints
from reports.stats import ABOUT_ZERO_BY_NAME, json_safe, median_of_sorted

StoryKind = Literal["regression", "improvement", "outlier"]
EventKind = Literal["arrival", "further", "partial recovery", "fixed", "given back", "returned"]
NoiseSource = Literal["repeats", "MAD", "default", "given"]
ReleaseView = Literal["long-term", "all"]

QPS = "qps"


class Point(NamedTuple):
    """One version of a series: its value (relative QPS, or a metric), the repeats behind it, the build it is.

    A named tuple rather than a frozen dataclass: a refresh of a series of 300 runs makes tens of thousands of
    them (every metric of every microbenchmark in each release view), and a tuple is made in a third of the time."""

    version: str
    value: float | None
    cv: float | None = None  # coefficient of variation of the repeated runs; None without repeats
    repeats: int = 1
    build: str = ""
    sla_missed: bool = False  # Insert Benchmark: background inserts missed their rate; never a point

    @property
    def usable(self) -> bool:
        return self.value is not None and math.isfinite(self.value) and not self.sla_missed


# A point from its six fields in order, made without a call of Point's own __new__ (a Python function):
# ``points_of`` makes every point of every series of a refresh, tens of thousands of them.
_new_point = functools.partial(tuple.__new__, Point)
# A point's version, read without a Python-level step per point (``Series.versions`` of every series).
_version_of = operator.itemgetter(0)


def points_of(
    versions: Iterable[str],
    values: Iterable[float | None],
    cvs: Iterable[float | None],
    repeats: Iterable[int],
    builds: Iterable[str],
    sla_missed: Iterable[bool],
) -> tuple[Point, ...]:
    """The points of a series from its columns, one value of each field per point (the fields of ``Point``)."""
    return tuple(map(_new_point, zip(versions, values, cvs, repeats, builds, sla_missed, strict=True)))


@dataclass(frozen=True)
class Series:
    """One microbenchmark (or group) of one server + workload + DBMS, in version order."""

    subject: str  # microbenchmark label as in the compare tables (``update-inlist_range=100``) or a group name
    points: tuple[Point, ...]
    metric: str = QPS
    group: str | None = None  # the group of a microbenchmark; for a group's own series, the group itself
    is_group: bool = False
    releases: ReleaseView = "long-term"
    # The release line of each point (rule 9), in the every-release view: each point is judged within its line;
    # empty in the long-term view, which reads version order.
    lines: tuple[str, ...] = ()
    # The release lines a story's line states count (rule 9: the long-term ones and the newest release's);
    # empty: every line.
    maintained: frozenset[str] = frozenset()

    # A detection reads a series' versions, usable values and noise many times (its stories, its metric steps
    # beside each story, a group's median): each is worked out once per series. A frozen dataclass keeps these
    # in its __dict__, outside its fields (equality and hashing ignore them).
    @functools.cached_property
    def versions(self) -> tuple[str, ...]:
        return tuple(map(_version_of, self.points))

    @functools.cached_property
    def values(self) -> tuple[float | None, ...]:
        """Each point's value where it is usable (``Point.usable``, written out: a refresh reads every point of
        every series), else None."""
        isfinite = math.isfinite
        return tuple(
            v if v is not None and isfinite(v) and not missed else None for _, v, _, _, _, missed in self.points
        )

    @functools.cached_property
    def noise(self) -> Noise:
        """σ of this series by rule 2, with its text (``series_noise`` without overrides)."""
        return _measured_noise(self, changepoints.DEFAULT_NOISE)


@dataclass(frozen=True)
class Noise:
    sigma: float
    source: NoiseSource
    text: str  # the rule as applied, for the record's page


@dataclass(frozen=True)
class Event:
    """One level change inside a story."""

    kind: EventKind
    version: str  # first version of the new level
    previous_version: str  # last version of the level before
    level: float
    change: float  # the new level against the level just before it
    change_vs_before: float  # the new level against the story's level before the arrival
    # The new level is the newest version alone: no next version can yet tell a step from an outlier (rule 3).
    provisional: bool = False
    previous_level: float | None = None  # the value at previous_version: ``change`` is level / previous_level − 1
    against: str = ""  # the version whose value is the story's level before (``change_vs_before``)
    # A story of its own that was given back within another (rule 5b): "<kind> <its arrival version>" of that one.
    within: str = ""


@dataclass(frozen=True)
class MetricStep:
    """A step of one HW or suite metric of a microbenchmark."""

    metric: str
    subject: str
    version: str
    previous_version: str
    level_before: float
    level_after: float
    ratio: float  # level_after / level_before (inf from a level of 0)
    worse: bool
    explains: bool = False  # set when attached to a story: the metric moved the way that explains the story
    at: str = ""  # the story event it coincides with ("arrival", "further", "returned")

    @property
    def text(self) -> str:
        if math.isinf(self.ratio) or self.ratio < 0.01:
            # A ratio from or to (almost) nothing says less than the two levels.
            size = f"{self.level_before:.2g} → {self.level_after:.2g}"
        elif self.ratio >= 10 or self.ratio < 0.1:
            size = f"×{self.ratio:.2g}"
        else:
            size = f"×{self.ratio:.1f}"
        where = f"at the same version ({self.version})" if self.at == "arrival" else f"at {self.version}"
        return f"{self.metric} {size} {where}"


@dataclass(frozen=True)
class LineState:
    """Where a regression story stands in one release line: at the line's newest version it reaches."""

    line: str  # 10.11, 11.4, 8.0 …
    version: str
    fixed: bool


class LineFix(Protocol):
    """A release line's state as a story (``LineState``) or its stored evidence (``evidence.LineStatus``) has it."""

    @property
    def version(self) -> str: ...

    @property
    def fixed(self) -> bool: ...


def backport_gap_text(lines: Iterable[LineFix]) -> str:
    """Rule 9's backport gap in words, "fixed in 11.4.8, still open in 10.11.14", or "" when no line is fixed or
    none is still open: the one text the list, the story page, the JSON and the API say."""
    states = list(lines)
    fixed = [x.version for x in states if x.fixed]
    still = [x.version for x in states if not x.fixed]
    return f"fixed in {', '.join(fixed)}, still open in {', '.join(still)}" if fixed and still else ""


@dataclass(frozen=True)
class Story:
    kind: StoryKind
    subject: str
    metric: str
    arrived_in: str
    previous_version: str
    level_before: float
    change: float  # the arrival's own step against level_before
    current_change: float  # the latest level against level_before
    worst_change: float
    fixed_in: str | None  # regression back within min_change of level_before; None while open
    ended_in: str | None  # the same for either kind (an improvement "given back")
    events: tuple[Event, ...]
    outliers: tuple[str, ...]
    noise: Noise
    builds: tuple[str, ...]  # the builds of the points the story rests on (pass-through)
    releases: ReleaseView
    group: str | None = None
    is_group: bool = False
    latest_version: str = ""
    folded_into: str | None = None  # a member story its group's story stands for
    reference_version: str = ""  # the last version of the level_before (a story after a gain lost: the gain's)
    metric_steps: tuple[MetricStep, ...] = ()
    # A metric story: what the subject's QPS did over the arrival's version pair (None for a QPS story).
    qps_change: float | None = None
    # A regression story per maintained release line it reaches (rule 9): fixed or still open at its newest version.
    lines: tuple[LineState, ...] = ()

    @property
    def backport_gap(self) -> str:
        """ "fixed in 11.4.8, still open in 10.11.14" when some of its release lines are fixed and others not."""
        return backport_gap_text(self.lines)

    @property
    def is_open(self) -> bool:
        return self.kind == "regression" and self.fixed_in is None

    @property
    def partial_recoveries(self) -> tuple[Event, ...]:
        return tuple(e for e in self.events if e.kind == "partial recovery")

    @property
    def returns(self) -> tuple[Event, ...]:
        return tuple(e for e in self.events if e.kind == "returned")

    def as_dict(self) -> dict[str, Any]:
        """The story as JSON would carry it (``detect_regressions --format json``): the record fields the
        command prints, plus the story's events, outliers, noise rule and coinciding metric steps."""
        return json_safe(
            {
                "kind": self.kind if self.kind != "outlier" else ("regression" if self.change < 0 else "improvement"),
                "outlier": self.kind == "outlier",
                "metric": self.metric,
                "subject": self.subject,
                "group": self.group,
                "is_group": self.is_group,
                "folded_into": self.folded_into,
                "arrived_in": self.arrived_in,
                "previous_version": self.previous_version,
                "reference_version": self.reference_version or self.previous_version,
                "fixed_in": self.fixed_in,
                "ended_in": self.ended_in,
                "open": self.is_open,
                "level_before": self.level_before,
                "change": self.change,
                "current_change": self.current_change,
                "worst_change": self.worst_change,
                "latest_version": self.latest_version,
                "events": [_as_dict(e) for e in self.events],
                "outliers": list(self.outliers),
                "noise": self.noise.sigma,
                "noise_source": self.noise.source,
                "noise_rule": self.noise.text,
                "builds": list(self.builds),
                "releases": self.releases,
                "metric_steps": [{**_as_dict(m), "text": m.text} for m in self.metric_steps],
                "qps_change": self.qps_change,
                "lines": [{"line": x.line, "version": x.version, "fixed": x.fixed} for x in self.lines],
                "backport_gap": self.backport_gap,
                "summary": self.summary,
            }
        )

    @property
    def summary(self) -> str:
        """One line: "now −31% against 5.6.51: arrived in 5.7.44 (−12%), worse in 8.0.43 (−21%)".

        Each event's figure is its step, between its version and the version before it (the ratio the
        comparison shows for the two); "now" is the newest version against the level before the arrival."""
        if self.kind == "outlier" and self.ended_in is None:
            return (
                f"outlier at {self.arrived_in} ({_pct(self.change)} against {self.previous_version}), the newest "
                "version of its release line: no later one of the line reads it yet"
            )
        if self.kind == "outlier":
            return f"outlier at {self.arrived_in} ({_pct(self.change)}), back at the next version"
        near_zero = self.metric != QPS and metric_spec(self.metric).about_zero(self.level_before)
        parts = [
            f"{_VERBS[(self.kind, e.kind)]} {e.version} ({_step_text(self.metric, e)}"
            f"{', provisional' if e.provisional else ''})"
            for e in self.events
        ]
        now = _pct(self.current_change)
        if near_zero:
            # From about zero a ratio says nothing (rule 7): the two levels.
            now = f"{self.level_before:.3g} → {self.level_before * (1 + self.current_change):.3g}"
        head = f"now {now} against {self.reference_version or self.previous_version}"
        if self.metric != QPS:
            head = f"{self.metric} {head}"
        if self.outliers:
            parts.append("outlier " + ", ".join(self.outliers))
        if self.backport_gap:
            parts.append(f"backport gap: {self.backport_gap}")
        if self.events and self.events[0].within:
            parts.append(f"given back within the {self.events[0].within.replace(' ', ' story of ', 1)}")
        tail = ""
        if self.metric != QPS and self.qps_change is not None and math.isfinite(self.qps_change):
            tail = f"; QPS {_pct(self.qps_change)} over the same versions"
        return f"{head}: " + ", ".join(parts) + tail


def _step_text(metric: str, event: Event) -> str:
    """An event's step: a percentage, or for a metric from a level about zero the two levels (rule 7)."""
    before = event.previous_level
    if metric != QPS and before is not None and metric_spec(metric).about_zero(before):
        return f"{before:.3g} → {event.level:.3g}"
    return _pct(event.change)


def _as_dict(event: Event | MetricStep) -> dict[str, Any]:
    """``dataclasses.asdict`` of an event or a metric step, whose fields are all plain values: without its
    deep copy of each of them (a refresh turns thousands into JSON)."""
    return {name: getattr(event, name) for name in _FIELDS[type(event)]}


_FIELDS: Mapping[type, tuple[str, ...]] = {cls: tuple(f.name for f in fields(cls)) for cls in (Event, MetricStep)}

_VERBS: Mapping[tuple[str, str], str] = {
    **{(kind, "arrival"): "arrived in" for kind in ("regression", "improvement")},
    ("regression", "further"): "worse in",
    ("improvement", "further"): "better again in",
    ("regression", "partial recovery"): "partly back in",
    ("improvement", "partial recovery"): "partly given back in",
    ("regression", "fixed"): "fixed in",
    ("improvement", "given back"): "given back in",
    ("regression", "returned"): "back again in",
    ("improvement", "returned"): "gained again in",
}


def _pct(change: float) -> str:
    if math.isinf(change):
        return "+∞" if change > 0 else "−∞"
    return f"{change * 100:+.0f}%".replace("-", "−")


# --------------------------------------------------------------------------- noise


def series_noise(
    series: Series, *, noise: float | None = None, default_noise: float = changepoints.DEFAULT_NOISE
) -> Noise:
    """σ of one series and where it came from (rule 2), with the text a record shows."""
    if noise is not None:
        return Noise(noise, "given", f"σ {noise:.1%} given by the caller")
    if default_noise == changepoints.DEFAULT_NOISE:
        return series.noise
    return _measured_noise(series, default_noise)


def _measured_noise(series: Series, default_noise: float) -> Noise:
    values = series.values
    n = len(values) - values.count(None)
    sigma, source = changepoints.series_noise(values, [p.cv for p in series.points], default_noise=default_noise)
    if source == "series" and series.lines:
        sigma = _lineage_noise(values, series.lines) or sigma
    if source == "repeats":
        repeated = sum(1 for p in series.points if p.cv is not None)
        return Noise(sigma, "repeats", f"σ {sigma:.1%}: median spread of the repeated runs of {repeated} versions")
    if source == "series":
        refined = _residual_noise(values, series.versions, sigma, series.lines)
        if refined < sigma:
            return Noise(
                refined,
                "MAD",
                f"σ {refined:.1%}: median absolute residual of the points of this test within its levels ({n} "
                f"points, no repeats; {sigma:.1%} from neighbouring differences"
                f"{' within release lines' if series.lines else ''}, which its steps inflate), floored "
                f"at {changepoints.NOISE_FLOOR:.0%}",
            )
        neighbours = "neighbouring versions of this test" + (" within their release lines" if series.lines else "")
        return Noise(
            sigma,
            "MAD",
            f"σ {sigma:.1%}: median absolute difference between {neighbours} "
            f"({n} points, no repeats), floored at {changepoints.NOISE_FLOOR:.0%}",
        )
    return Noise(
        sigma,
        "default",
        f"σ {sigma:.1%}: the default for a series of {n} points (≤ {changepoints.SHORT_SERIES}) without repeats",
    )


def _lineage_noise(values: Sequence[float | None], lines: Sequence[str]) -> float | None:
    """Rule 2's neighbouring differences in the every-release view: each point against the point it is judged
    against within its release line (``lineage``), so a backported fix read beside another line's points does not
    count twice as noise."""
    around = lineage(values, lines)
    differences = [
        abs(math.log(values[i] / values[b]))  # type: ignore[operator]
        for i, b in around.before.items()
    ]
    if len(differences) < changepoints.MIN_DIFFERENCES_FOR_NOISE:
        return None
    return max(changepoints.NOISE_FLOOR, statistics.median(differences) / (changepoints.MAD_TO_SIGMA * math.sqrt(2)))


# Rule 2's refinement: at most this many rounds of segmenting with σ and measuring σ again from the residuals.
NOISE_ROUNDS = 3


def _residual_noise(
    values: Sequence[float | None], versions: Sequence[str], sigma: float, lines: Sequence[str] = ()
) -> float:
    """σ measured against the series' own real steps (rule 2): segment with σ (outliers set aside, the default
    gate), then σ again from the points' residuals within their levels, median |ln x − ln level| / 0.6745 with
    the levels' fitted means allowed for (× √(n / (n − levels))), floored; repeated while it falls, at most
    ``NOISE_ROUNDS`` times. Neighbouring differences count every real step as noise: a test with two real
    steps among eight versions read σ 7 %, its residuals 2 %. Never above the σ it starts from."""
    current = sigma
    for _ in range(NOISE_ROUNDS):
        set_aside, segments = levels(values, versions, current, lines=lines)
        outliers = set(set_aside)
        residuals = [
            abs(math.log(values[i] / seg.level))  # type: ignore[operator]
            for seg in segments
            if seg.level > 0
            for i in seg.indexes
            if i not in outliers and values[i] is not None and values[i] > 0  # type: ignore[operator]
        ]
        free = len(residuals) - len(segments)
        if free < changepoints.MIN_DIFFERENCES_FOR_NOISE:
            break
        found = median_of_sorted(sorted(residuals)) / changepoints.MAD_TO_SIGMA * math.sqrt(len(residuals) / free)
        found = max(changepoints.NOISE_FLOOR, found)
        if found >= current * 0.95:
            break
        current = found
    return min(current, sigma)


def _one_point_gate(sigma: float, min_change: float, k: float) -> float:
    return max(min_change, k * sigma * math.sqrt(2))


class Lineage(NamedTuple):
    """Which point each present point of a series is judged against (rule 3): the one before it and the ones that
    continue it, by index."""

    before: Mapping[int, int]
    after: Mapping[int, tuple[int, ...]]
    # With release lines: each line's newest point after its first (10.11.14 after 10.11.6).
    tips: frozenset[int] = frozenset()
    # The tips off the line sequence the newest point descends from (rule 9): 8.0.44, where 8.4.6 was branched
    # from 8.0.43. Each is its line's own state, never a step of a story.
    branches: frozenset[int] = frozenset()


def lineage(values: Sequence[float | None], lines: Sequence[str] = ()) -> Lineage:
    """The neighbours each present point is judged against (rule 3): in version order the points either side; with
    ``lines`` (the every-release view, rule 9) its neighbours within its release line. There a point's next
    is the next point of its line, and for a line's first point also the first point of the next line (the
    line was branched there, so both continue it); a line's newest point after its first has none, so it is
    never an outlier: it is the line's own state (a fix backported to 10.11.14, a loss of 8.0.44 alone), not a
    one-version excursion of another line's sequence. The point before is the one before in its line, or for
    a line's first point the nearest earlier point that is no such newest point of another line (11.4.2
    branched before 10.11.14's backports)."""
    present = [i for i, v in enumerate(values) if v is not None and math.isfinite(v) and v > 0]
    if not lines:
        pairs = list(itertools.pairwise(present))
        return Lineage({b: a for a, b in pairs}, {a: (b,) for a, b in pairs})
    by_line: dict[str, list[int]] = {}
    for i in present:
        by_line.setdefault(lines[i], []).append(i)
    firsts = {found[0] for found in by_line.values()}
    tips = {found[-1] for found in by_line.values() if len(found) > 1}
    before: dict[int, int] = {}
    after: dict[int, tuple[int, ...]] = {}
    for found in by_line.values():
        for a, b in itertools.pairwise(found):
            before[b] = a
            after[a] = (b,)
    for n, i in enumerate(present):
        if i not in firsts:
            continue
        earlier = next((j for j in reversed(present[:n]) if j not in tips), None)
        if earlier is not None:
            before[i] = earlier
        later = next((j for j in present[n + 1 :] if lines[j] != lines[i]), None)
        if later is not None:
            after[i] = (*after.get(i, ()), later)
    newest_line = lines[present[-1]] if present else ""
    return Lineage(before, after, frozenset(tips), frozenset(t for t in tips if lines[t] != newest_line))


def branch_points(values: Sequence[float | None], lines: Sequence[str] = ()) -> list[int]:
    """Rule 9: the points off the line sequence (``Lineage.branches``): each line's newest point after its first
    where a later line was branched from the point before it (8.0.44, with 8.4.6 branched from 8.0.43). The
    stories walk the line sequence alone, so these are set aside from its segmentation; each is read against
    the point it continues in its line, and told as its line's state (``line_states``: a backported fix, the
    loss reaching that line) or as an outlier of its own, never as a step of a story."""
    if not lines:
        return []
    return sorted(lineage(values, lines).branches)


def outlier_indexes(
    values: Sequence[float | None],
    sigma: float,
    *,
    min_change: float = changepoints.DEFAULT_MIN_CHANGE,
    k: float = changepoints.DEFAULT_K,
    lines: Sequence[str] = (),
) -> list[int]:
    """Indexes of single-version excursions (rule 3) among the present values, each judged against its
    neighbours (``lineage``: in version order, or with ``lines`` within its release line); a point without a
    neighbour on either side never is one."""
    present = [i for i, v in enumerate(values) if v is not None and math.isfinite(v) and v > 0]
    # The present values in a list of their own: a refresh runs this for every series it segments, each of up to
    # hundreds of points, so each is read from it without a function call per point.
    at: list[float] = [values[i] for i in present]  # type: ignore[misc]
    gate = _one_point_gate(sigma, min_change, k)
    if at:
        least, greatest = min(at), max(at)
        if greatest / least - 1 <= gate and 1 - least / greatest <= gate:
            return []  # no point is that far from any other, so none from its neighbours
    if not lines:
        return [present[n] for n in _version_order_outliers(at, gate)]
    return _line_outliers(values, present, at, lines, gate)


def _version_order_outliers(at: Sequence[float], gate: float) -> list[int]:
    """``outlier_indexes`` in version order, by position in ``at`` (the present values): each point against the
    points either side, the same test as ``_line_outliers`` on a lineage of neighbours in a row, read without a
    look-up or a call per point."""
    found: list[int] = []
    last = len(at) - 1
    for n in range(1, last):
        if found and found[-1] == n:
            continue  # the second point of a dip and a spike
        a, x, b = at[n - 1], at[n], at[n + 1]
        # Most points are no excursion: both parts of rule 3 need a point beyond the gate of the one before it.
        if abs(x / a - 1) <= gate:
            continue
        if n + 1 < last and _dip_and_spike(a, x, b, at[n + 2], gate):
            found += (n, n + 1)
        elif (not found or found[-1] != n - 1) and _excursion(a, x, (b,), gate):
            found.append(n)
    return found


def _line_outliers(
    values: Sequence[float | None], present: Sequence[int], at: Sequence[float], lines: Sequence[str], gate: float
) -> list[int]:
    """``outlier_indexes`` with release lines: each present point (``at`` holds their values) against its
    neighbours within its line (``lineage``)."""
    value = dict(zip(present, at, strict=True))
    around = lineage(values, lines)
    found: list[int] = []
    taken: set[int] = set()
    for here in present:
        before, after = around.before.get(here), around.after.get(here, ())
        if here in taken or before is None or not after:
            continue
        a, x = value[before], value[here]
        # As in version order: no part of rule 3 without a step beyond the gate from the point before.
        if abs(x / a - 1) <= gate:
            continue
        pair = _paired_excursion(value, around, here, gate)
        if pair is not None:
            found += (here, pair)
            taken.update((here, pair))
        elif before not in taken and _excursion(a, x, [value[i] for i in after], gate):
            found.append(here)
            taken.add(here)
    return found


def _excursion(a: float, x: float, nexts: Sequence[float], gate: float) -> bool:
    """Whether ``x`` differs from the value before it (``a``) and from every value after it (``nexts``) by more
    than ``gate`` the same way, and each value after is back: within the gate of the value before, or past it the
    other way. An overshooting return is still a one-version excursion, plus a step from before to after that
    segmentation tells on its own; read as a story, the excursion would "arrive" and be "fixed" by that very
    step, beside a second story arriving with it."""
    up = x / a - 1 > gate and all(x / b - 1 > gate for b in nexts)
    down = 1 - x / a > gate and all(1 - x / b > gate for b in nexts)
    if up:
        return all(b / a - 1 <= gate for b in nexts)
    return down and all(1 - b / a <= gate for b in nexts)


def _paired_excursion(value: Mapping[int, float], around: Lineage, here: int, gate: float) -> int | None:
    """The second point of a dip and a spike (or a spike and a dip) starting at ``here`` (rule 3's second part,
    read on the points themselves): two points in a row, the second the only one continuing the first, beyond
    ``gate`` on opposite sides of the point before them, and every point after them back within ``gate``.
    ``value``: the present points' values by index."""
    follows = around.after.get(here, ())
    if len(follows) != 1:
        return None
    second = follows[0]
    after = around.after.get(second, ())
    if around.before.get(second) != here or not after:
        return None
    a, x1, x2 = value[around.before[here]], value[here], value[second]
    if all(_dip_and_spike(a, x1, x2, value[b], gate) for b in after):
        return second
    return None


def _dip_and_spike(a: float, x1: float, x2: float, b: float, gate: float) -> bool:
    """Two versions in a row (``x1``, ``x2``) beyond ``gate`` on opposite sides of the version before them (``a``),
    and the version after (``b``) back within ``gate`` of it (rule 3's second part, read on the points themselves)."""
    first, second = x1 / a - 1, x2 / a - 1
    return first * second < 0 and min(abs(first), abs(second)) > gate and abs(b / a - 1) <= gate


def zigzag_excursions(
    segments: Sequence[changepoints.Segment], gate: float, around: Lineage | None = None
) -> list[int]:
    """Indexes of two one-version levels in a row, one each side of the level before them, after which the
    series is back within ``gate`` of that level (rule 3's second part): a dip and a spike around one level.
    With ``around`` (release lines, rule 9) the second must be the only point continuing the first, and be
    continued itself: a line's newest point and the next line's first are no pair."""
    found: list[int] = []
    for before, first, second, after in zip(segments, segments[1:], segments[2:], segments[3:], strict=False):
        if first.n != 1 or second.n != 1 or before.level <= 0 or first.first in found:
            continue
        if around is not None and (
            around.after.get(first.first) != (second.first,) or not around.after.get(second.first)
        ):
            continue
        opposite = (first.level - before.level) * (second.level - before.level) < 0
        if opposite and abs(_change(before.level, after.level)) <= gate:
            found.extend((first.first, second.first))
    return found


def levels(
    values: Sequence[float | None],
    versions: Sequence[str],
    sigma: float,
    *,
    min_change: float = changepoints.DEFAULT_MIN_CHANGE,
    k: float = changepoints.DEFAULT_K,
    lines: Sequence[str] = (),
) -> tuple[list[int], list[changepoints.Segment]]:
    """The outliers of a series (rule 3) and the levels of the rest (rule 4): one-version excursions are set
    aside before segmentation; a dip and a spike in a row that segmentation tells as two one-version levels
    are set aside after it, and the rest segmented again. With ``lines`` (the every-release view) each point
    is judged within its release line (``lineage``)."""
    outliers, segments = _levels(tuple(values), tuple(versions), sigma, min_change, k, tuple(lines))
    return list(outliers), list(segments)


# A detection asks for the same series' levels again and again (a metric's steps beside each story of its
# subject, its own stories, a group's median series): segmentation is most of detection's time, and a pure
# function of these arguments, so the answers are kept (by value: a changed series is another key).
@functools.lru_cache(maxsize=4096)
def _levels(
    values: tuple[float | None, ...],
    versions: tuple[str, ...],
    sigma: float,
    min_change: float,
    k: float,
    lines: tuple[str, ...] = (),
) -> tuple[tuple[int, ...], tuple[changepoints.Segment, ...]]:
    # With release lines, the points off the line sequence are set aside too (rule 9).
    outliers = sorted(
        {*outlier_indexes(values, sigma, min_change=min_change, k=k, lines=lines)} | {*branch_points(values, lines)}
    )
    aside = set(outliers)
    kept = [None if i in aside else v for i, v in enumerate(values)]
    segments = changepoints.segments_of(kept, noise=sigma, min_change=min_change, k=k)
    around = lineage(values, lines) if lines else None
    paired = zigzag_excursions(segments, _one_point_gate(sigma, min_change, k), around)
    if paired:
        aside.update(paired)
        outliers = sorted(aside)
        kept = [None if i in aside else v for i, v in enumerate(values)]
        segments = changepoints.segments_of(kept, noise=sigma, min_change=min_change, k=k)
    return tuple(outliers), tuple(segments)


# --------------------------------------------------------------------------- stories


@dataclass
class _Open:
    kind: Literal["regression", "improvement"]
    arrived: int  # segment positions
    previous: int
    level_before: float
    reference: int  # the segment whose level is level_before
    events: list[Event] = field(default_factory=list)
    ended: int | None = None
    last: int = 0  # last segment position the story covers
    superseded: bool = False


def _beyond(level: float, before: float, kind: str, min_change: float, higher_is_better: bool = True) -> bool:
    """Whether ``level`` is more than ``min_change`` from ``before`` in the story's direction."""
    if (kind == "regression") == higher_is_better:
        return level < before * (1 - min_change)
    return level > before * (1 + min_change)


def _change(before: float, after: float) -> float:
    if before == 0:
        return 0.0 if after == 0 else math.inf
    return after / before - 1.0


def build_stories(
    series: Series,
    *,
    min_change: float = changepoints.DEFAULT_MIN_CHANGE,
    k: float = changepoints.DEFAULT_K,
    noise: float | None = None,
    default_noise: float = changepoints.DEFAULT_NOISE,
    higher_is_better: bool = True,
) -> list[Story]:
    """The stories of one series, oldest arrival first (see the module docstring for the rule).

    ``noise`` overrides rule 2 (a σ measured elsewhere). QPS reads higher values
    as better; a cost per operation (``higher_is_better`` False) is a
    regression when it rises.
    """
    versions = series.versions
    values = series.values
    measured = series_noise(series, noise=noise, default_noise=default_noise)
    outliers, segments = levels(values, versions, measured.sigma, min_change=min_change, k=k, lines=series.lines)
    if not segments:
        return []
    walk = _Walk(segments, versions, values, min_change, higher_is_better)
    told = walk.tell()
    _mark_provisional(told, walk, _one_point_gate(measured.sigma, min_change, k))
    aside = branch_points(values, series.lines)
    excursions = [i for i in outliers if i not in aside]
    stories = [_story(s, series, walk, measured, excursions) for s in told]
    # A point off the line sequence (rule 9) is its line's state: told by a story's line state, or an outlier of
    # its own when it moved beyond the one-point gate from the point it continues; nothing is silently lost.
    gate = _one_point_gate(measured.sigma, min_change, k)
    alone = _branches_alone(series, stories, aside, gate, min_change) if aside else []
    stories.extend(_outlier_stories(series, stories, sorted({*excursions, *alone}), walk, measured, outliers))
    if series.metric == QPS:
        stories.extend(given_back_stories(stories, min_change))
    return sorted(stories, key=lambda s: versions.index(s.arrived_in))


def _branches_alone(
    series: Series, stories: Sequence[Story], branches: Sequence[int], gate: float, min_change: float
) -> list[int]:
    """The points off the line sequence (rule 9) no story's line state tells, among those that moved beyond
    ``gate`` from the point they continue in their line: each is an outlier of its own. A regression story
    tells such a point when the point's line is one of its line states and the point stands within ``gate`` of
    a level the story names (its level before, or an event's): the line's own fix (8.0.44 back at 5.7.44's
    level), or the story's loss reaching that line (8.4.7 down with 9.4.0, both against 8.4.6)."""
    values = series.values
    around = lineage(values, series.lines)
    line_of = dict(zip(series.versions, series.lines, strict=True)).__getitem__
    maintained = series.maintained or None
    states = {
        id(s): {x.version for x in line_states(s, series, line_of, min_change, maintained)}
        for s in stories
        if s.kind == "regression"
    }
    alone = []
    for i in branches:
        parent = around.before.get(i)
        here = values[i]
        if parent is None or here is None:
            continue
        was = values[parent]
        assert was is not None
        if abs(_change(was, here)) <= gate:
            continue
        told = any(
            series.versions[i] in states[id(s)]
            and any(abs(_change(level, here)) <= gate for level in (s.level_before, *(e.level for e in s.events)))
            for s in stories
            if s.kind == "regression"
        )
        if not told:
            alone.append(i)
    return alone


def line_states(
    story: Story,
    series: Series,
    line_of: Callable[[str], str],
    min_change: float = changepoints.DEFAULT_MIN_CHANGE,
    maintained: Collection[str] | None = None,
) -> tuple[LineState, ...]:
    """Rule 9: a regression story read along each release line, each line its own sequence for fixes (a fix
    backported to 10.11.14 is a fix in the 10.11 line, though semantic order reads 10.11.13's loss as an outlier
    before 11.4.6's arrival). A line counts when it reaches the story (its newest point is at or after the
    story's ``previous_version``) and the loss hit it (a point beyond ``min_change`` from ``level_before``); it
    is fixed when its newest point is back within ``min_change``. With ``maintained`` (the long-term lines and
    the newest release's) only those lines count: a short-term line a newer release has replaced gets no fix,
    and "still open in 11.0.6" would tell nobody anything. Only two lines or more say anything a single
    sequence does not."""
    if story.kind != "regression" or story.previous_version not in series.versions:
        return ()
    versions, values = series.versions, series.values
    reached = versions.index(story.previous_version)
    newest: dict[str, int] = {}
    hit: set[str] = set()
    for i, value in enumerate(values):
        if value is None:
            continue
        line = line_of(versions[i])
        newest[line] = i
        if _beyond(value, story.level_before, "regression", min_change):
            hit.add(line)
    found = tuple(
        LineState(line, versions[i], not _beyond(values[i], story.level_before, "regression", min_change))  # type: ignore[arg-type]
        for line, i in newest.items()
        if i >= reached and line in hit and (maintained is None or line in maintained)
    )
    return found if len(found) >= 2 else ()


# The events of a story that move against it (rule 5b): an improvement's losses, a regression's gains back.
_AGAINST: Mapping[str, tuple[str, ...]] = {
    "improvement": ("partial recovery", "given back"),
    "regression": ("partial recovery",),
}


def given_back_stories(told: Sequence[Story], min_change: float) -> list[Story]:
    """The steps given back within a story (rule 5b), each a story of the other kind of its own: a loss of at
    least ``min_change`` inside an improvement ("partly given back in 8.0.43 (−19%)") is a regression story,
    a gain inside a regression an improvement one. Its arrival event names the story it sits in (``within``);
    it is fixed when that story later comes back past the level before the step. None where a story of that
    kind already arrives at that version (a gain lost and more)."""
    arrivals = {(s.kind, s.arrived_in) for s in told}
    found = []
    for story in told:
        for n, event in enumerate(story.events):
            if event.kind not in _AGAINST.get(story.kind, ()) or event.previous_level is None:
                continue
            kind: Literal["regression", "improvement"] = "regression" if event.change < 0 else "improvement"
            if kind == story.kind or abs(event.change) < min_change or (kind, event.version) in arrivals:
                continue
            found.append(_given_back(story, n, kind, min_change))
    return found


def _given_back(story: Story, n: int, kind: Literal["regression", "improvement"], min_change: float) -> Story:
    event = story.events[n]
    before = event.previous_level
    assert before is not None
    later = story.events[n + 1 :]
    # Back past the level before the step, later in the story it sits in: that is its fix.
    back = next((e for e in later if not _beyond(e.level, before, kind, min_change)), None)
    now = story.level_before * (1 + story.current_change)
    arrival = replace(
        event,
        kind="arrival",
        change_vs_before=event.change,
        against=event.previous_version,
        within=f"{story.kind} {story.arrived_in}",
    )
    changes = [event.change, *(_change(before, e.level) for e in later if e is not back)]
    worst = min(changes) if kind == "regression" else max(changes)
    return replace(
        story,
        kind=kind,
        arrived_in=event.version,
        previous_version=event.previous_version,
        level_before=before,
        change=event.change,
        current_change=_change(before, now),
        worst_change=worst,
        fixed_in=back.version if back is not None and kind == "regression" else None,
        ended_in=back.version if back is not None else None,
        events=(arrival,) if back is None else (arrival, replace(back, kind=_end_kind(kind))),
        outliers=(),
        folded_into=None,
        reference_version=event.previous_version,
        metric_steps=(),
    )


@dataclass
class _Walk:
    """Walks a series' levels in version order and tells its stories (rule 5). Every figure is read at a
    version (rule 5's "one number per claim"): a level's value is the series' value at the level's first
    version (``at``) or its last (``end``), never a level's mean, so a step is exactly the ratio between the
    two versions it names, the ratio the comparison shows for them."""

    segments: Sequence[changepoints.Segment]
    versions: Sequence[str]
    values: Sequence[float | None]
    min_change: float
    higher_is_better: bool

    def at(self, j: int) -> float:
        """The value at the first version of level ``j``."""
        return self.values[self.segments[j].first]  # type: ignore[return-value]

    def end(self, j: int) -> float:
        """The value at the last version of level ``j``."""
        return self.values[self.segments[j].last]  # type: ignore[return-value]

    def beyond(self, level: float, before: float, kind: str) -> bool:
        return _beyond(level, before, kind, self.min_change, self.higher_is_better)

    def event(self, kind: EventKind, j: int, story: _Open) -> Event:
        level, previous = self.at(j), self.end(j - 1)
        return Event(
            kind=kind,
            version=self.versions[self.segments[j].first],
            previous_version=self.versions[self.segments[j - 1].last],
            level=level,
            change=_change(previous, level),
            change_vs_before=_change(story.level_before, level),
            previous_level=previous,
            against=self.versions[self.segments[story.reference].last],
        )

    def opened(self, j: int, kind: Literal["regression", "improvement"], before: float, reference: int) -> _Open:
        story = _Open(kind, arrived=j, previous=j - 1, level_before=before, reference=reference, last=j)
        story.events.append(self.event("arrival", j, story))
        return story

    def tell(self) -> list[_Open]:
        told: list[_Open] = []
        story: _Open | None = None
        for j in range(1, len(self.segments)):
            if story is None:
                # The direction of the step between the levels; its size is read at the two versions.
                down = self.segments[j].level < self.segments[j - 1].level
                kind: Literal["regression", "improvement"] = (
                    "regression" if down == self.higher_is_better else "improvement"
                )
                story = self.opened(j, kind, self.end(j - 1), j - 1)
                told.append(story)
                continue
            following = self.follow(story, j)
            if following is not story:
                told.append(following)
                story = following
        return told

    def follow(self, story: _Open, j: int) -> _Open:
        """Level ``j`` as an event of an open story; a story of the other kind when it passes the level before
        the arrival the other way (returned, for the caller to tell)."""
        story.last = j
        before, level = story.level_before, self.at(j)
        opposite: Literal["regression", "improvement"] = "improvement" if story.kind == "regression" else "regression"
        if self.beyond(level, before, opposite):
            # Past the level before the arrival the other way: this story ends, one of the other kind starts here.
            if story.ended is None:
                story.ended = j
                story.events.append(self.event(_end_kind(story.kind), j, story))
            story.superseded = True
            return self.opened(j, opposite, before, story.reference)
        if story.ended is not None:
            if self.beyond(level, before, story.kind):
                story.ended = None
                story.events.append(self.event("returned", j, story))
            return story  # a small move near the old level after the fix: nothing to tell
        if not self.beyond(level, before, story.kind):
            story.ended = j
            story.events.append(self.event(_end_kind(story.kind), j, story))
        elif abs(_change(before, level)) > abs(_change(before, self.end(j - 1))):
            story.events.append(self.event("further", j, story))
        else:
            story.events.append(self.event("partial recovery", j, story))
        return story


def _mark_provisional(told: Sequence[_Open], walk: _Walk, gate: float) -> None:
    """A step onto the newest version alone, smaller than twice the one-point gate, could still be an outlier."""
    segments = walk.segments
    if len(segments) < 2 or segments[-1].n != 1:
        return
    newest = walk.versions[segments[-1].first]
    for s in told:
        s.events = [
            replace(e, provisional=True) if e.version == newest and abs(e.change) < 2 * gate else e for e in s.events
        ]


def _outlier_stories(
    series: Series,
    stories: Sequence[Story],
    outliers: Sequence[int],
    walk: _Walk,
    measured: Noise,
    set_aside: Collection[int] = (),
) -> list[Story]:
    """An outlier no story spans is a story of kind "outlier" of its own (rule 3); each is read against the
    points not ``set_aside`` (every point the segmentation left out, ``outliers`` among them)."""
    if not outliers:
        return []
    versions, values = walk.versions, walk.values
    aside = {*outliers, *set_aside}
    kept = [None if i in aside else v for i, v in enumerate(values)]
    covered = {o for s in stories for o in s.outliers}
    # Each outlier against the point it was judged against (rule 3: in its release line, in the every-release
    # view), back at the first point that continues it.
    around = lineage(values, series.lines)
    found = []
    for i in outliers:
        if versions[i] in covered:
            continue
        neighbour = around.before.get(i, -1)
        if neighbour < 0 or kept[neighbour] is None:
            neighbour = max(v for v in range(i) if kept[v] is not None)
        back: int | None = next((v for v in around.after.get(i, ()) if kept[v] is not None), None)
        if back is None and i not in around.tips:
            back = min(v for v in range(i + 1, len(kept)) if kept[v] is not None)
        reference = kept[neighbour]
        assert reference is not None and values[i] is not None
        found.append(
            Story(
                kind="outlier",
                subject=series.subject,
                metric=series.metric,
                arrived_in=versions[i],
                previous_version=versions[neighbour],
                level_before=reference,
                change=_change(reference, values[i]),  # type: ignore[arg-type]
                current_change=0.0,
                worst_change=_change(reference, values[i]),  # type: ignore[arg-type]
                fixed_in=None,
                # A line's newest point (rule 9) has no later version of its line to be back at.
                ended_in=versions[back] if back is not None else None,
                events=(),
                outliers=(versions[i],),
                noise=measured,
                builds=tuple(series.points[x].build for x in (neighbour, i) if series.points[x].build),
                releases=series.releases,
                group=series.group,
                is_group=series.is_group,
                latest_version=versions[walk.segments[-1].last],
            )
        )
    return found


def _end_kind(kind: str) -> EventKind:
    return "fixed" if kind == "regression" else "given back"


def _story(told: _Open, series: Series, walk: _Walk, noise: Noise, outliers: Sequence[int]) -> Story:
    segments, versions = walk.segments, walk.versions
    before = told.level_before
    # The levels the story lives through, each at its first version: from its arrival to the level it ended on
    # (or the latest one).
    levels = [walk.at(j) for j in range(told.arrived, told.last + 1)]
    if told.superseded:
        levels = levels[:-1] or levels
    changes = [_change(before, level) for level in levels]
    worst = min(changes) if (told.kind == "regression") == walk.higher_is_better else max(changes)
    first_index, last_index = segments[told.previous].first, segments[told.last].last
    arrival = told.events[0]
    ended = versions[segments[told.ended].first] if told.ended is not None else None
    return Story(
        kind=told.kind,
        subject=series.subject,
        metric=series.metric,
        arrived_in=arrival.version,
        previous_version=arrival.previous_version,
        level_before=before,
        # The arrival's own step: between the two versions the story names.
        change=arrival.change,
        # Now: the newest version's value against the level before the arrival.
        current_change=_change(before, walk.end(len(segments) - 1)),
        worst_change=worst,
        fixed_in=ended if told.kind == "regression" else None,
        ended_in=ended,
        events=tuple(told.events),
        outliers=tuple(versions[i] for i in outliers if first_index < i < last_index),
        noise=noise,
        builds=tuple(
            dict.fromkeys(
                series.points[i].build
                for j in range(told.previous, told.last + 1)
                for i in segments[j].indexes
                if series.points[i].build
            )
        ),
        releases=series.releases,
        group=series.group,
        is_group=series.is_group,
        latest_version=versions[segments[-1].last],
        reference_version=versions[segments[told.reference].last],
    )


# --------------------------------------------------------------------------- groups


def group_series(group: str, members: Sequence[Series]) -> Series:
    """The group's median series: per version, the median of the members' usable values (rule 6).

    Members must share one version list (the columns of one comparison). The
    median's noise comes from the members' repeats (their median spread shrinks
    with √n) when they have any, else rule 2 on the median series itself.
    """
    if not members:
        raise ValueError(f"group {group!r} has no members")
    versions = members[0].versions
    if any(m.versions != versions for m in members):
        raise ValueError(f"members of group {group!r} are not on the same versions")
    points = []
    member_values = [m.values for m in members]
    # The group's fixed member set: every member the series measured at all. A version without one of them is
    # incomplete (n of N): its median is over another set of tests, so it is no point of the group's series.
    expected = sum(1 for values in member_values if any(v is not None for v in values))
    # Version by version, the members' points and usable values side by side (``Series.values``: each member's
    # are worked out once); a refresh makes a group series of every metric of every group.
    columns = zip(
        versions, zip(*(m.points for m in members), strict=True), zip(*member_values, strict=True), strict=True
    )
    for version, at, present in columns:
        values = [v for v in present if v is not None]  # a usable point's value is its usable value
        # Most versions have every member's point usable: then they are the usable points as they are.
        usable = at if len(values) == len(at) else [p for p, v in zip(at, present, strict=True) if v is not None]
        cvs = [p.cv for p in usable if p.cv is not None]
        points.append(
            _new_point(
                (
                    version,
                    median_of_sorted(sorted(values)) if values and len(usable) >= expected else None,
                    median_of_sorted(sorted(cvs)) / math.sqrt(len(values)) if cvs and values else None,
                    max([p.repeats for p in usable]) if usable else 1,
                    next((p.build for p in at if p.build), ""),
                    not usable and any(p.sla_missed for p in at),
                )
            )
        )
    return Series(
        subject=group,
        points=tuple(points),
        metric=members[0].metric,
        group=group,
        is_group=True,
        releases=members[0].releases,
        lines=members[0].lines,
        maintained=members[0].maintained,
    )


def fold_into_groups(member_stories: Iterable[Story], group_stories: Iterable[Story]) -> list[Story]:
    """Member stories, each marked ``folded_into`` its group when the group has a story of the same metric and
    kind that arrives, moves further or returns at the member's arrival version (the group's story stands for it
    in a list)."""
    arrivals = {
        (s.subject, s.metric, s.kind, e.version)
        for s in group_stories
        for e in s.events
        if e.kind in ("arrival", "further", "returned")
    }
    return [
        replace(s, folded_into=s.group) if s.group and (s.group, s.metric, s.kind, s.arrived_in) in arrivals else s
        for s in member_stories
    ]


def stories_for(
    members: Sequence[Series],
    *,
    min_change: float = changepoints.DEFAULT_MIN_CHANGE,
    k: float = changepoints.DEFAULT_K,
    groups: Mapping[str, Series] | None = None,
) -> list[Story]:
    """Stories of every microbenchmark of one comparison and of every group: group stories first, then the members'
    (folded ones marked). ``members`` carry their group in ``Series.group``; ungrouped ones have None. ``groups``
    are the groups' median series (``group_series`` of their members) when the caller has made them already."""
    by_group: dict[str, list[Series]] = {}
    for series in members:
        if series.group:
            by_group.setdefault(series.group, []).append(series)
    made = groups or {}
    group_stories = [
        story
        for group, series in by_group.items()
        for story in build_stories(
            made[group] if group in made else group_series(group, series), min_change=min_change, k=k
        )
    ]
    own = [story for series in members for story in build_stories(series, min_change=min_change, k=k)]
    return group_stories + fold_into_groups(own, group_stories)


# --------------------------------------------------------------------------- metrics


@dataclass(frozen=True)
class MetricSpec:
    name: str  # as shown: cpu/o, cs/o, rKB/o, …
    higher_is_worse: bool = True
    # Below this a level is too small for a ratio to mean anything: a step from or to such a level (×0, "from 0")
    # is noise unless its other side reaches ``meaningful``.
    floor: float = 0.0
    # A level that matters whatever it came from: an update that starts reading 4 KB per operation from storage.
    meaningful: float = math.inf

    def about_zero(self, level: float) -> bool:
        """Below the floor: too small for a ratio from it to mean anything (``reports.stats.ABOUT_ZERO``)."""
        return level < self.floor or level == 0

    def is_step(self, before: float, after: float) -> bool:
        """Whether a move between two levels can be a step at all (rule 8): both levels above the floor, or
        the higher one at a level that matters on its own."""
        if min(before, after) >= self.floor and min(before, after) > 0:
            return True
        return max(before, after) >= self.meaningful


METRICS: Mapping[str, MetricSpec] = {
    spec.name: spec
    for spec in (
        MetricSpec("cpu/o"),
        # The floors are the comparison's "about zero" (``reports.stats.ABOUT_ZERO``): one rule for both.
        MetricSpec("cs/o", floor=ABOUT_ZERO_BY_NAME["cs/o"], meaningful=0.5),
        MetricSpec("rKB/o", floor=ABOUT_ZERO_BY_NAME["rKB/o"], meaningful=1.0),
        MetricSpec("wKB/o", floor=ABOUT_ZERO_BY_NAME["wKB/o"], meaningful=1.0),
        MetricSpec("w_amp"),
        MetricSpec("stall%", floor=1.0, meaningful=5.0),
        MetricSpec("p99"),  # db_bench: latency, µs
        MetricSpec("p99 rate", higher_is_worse=False),  # Insert Benchmark: the rate of the worst 1 % of seconds
    )
}

# A metric story of its own (rule 8) needs a larger step than QPS: HW counters per operation move with the
# host's noise more than throughput does, and the list must not fill with ×1.06 cpu/o.
METRIC_MIN_CHANGE = 0.10


def metric_spec(metric: str) -> MetricSpec:
    # Made only for a metric without a spec of its own: every metric series of a refresh asks.
    return METRICS.get(metric) or MetricSpec(metric)


def metric_steps(
    series: Series,
    *,
    min_change: float = changepoints.DEFAULT_MIN_CHANGE,
    k: float = changepoints.DEFAULT_K,
    spec: MetricSpec | None = None,
) -> list[MetricStep]:
    """Steps of one metric series (absolute values or ratios to the base: changes are relative), by rules 2–4.

    Outliers are set aside as for QPS. ``spec`` defaults to ``METRICS[series.metric]`` (higher is worse).
    """
    spec = spec or metric_spec(series.metric)
    measured = series_noise(series)
    values = series.values
    _, segments = levels(values, series.versions, measured.sigma, min_change=min_change, k=k, lines=series.lines)
    found = []
    for before, after in itertools.pairwise(segments):
        # Read at the two versions the step names, as for QPS (rule 5): the ratio the comparison shows.
        level_before, level_after = values[before.last], values[after.first]
        assert level_before is not None and level_after is not None
        if not spec.is_step(level_before, level_after):
            continue
        ratio = math.inf if level_before == 0 else level_after / level_before
        found.append(
            MetricStep(
                metric=series.metric,
                subject=series.subject,
                version=series.versions[after.first],
                previous_version=series.versions[before.last],
                level_before=level_before,
                level_after=level_after,
                ratio=ratio,
                worse=(ratio > 1) == spec.higher_is_worse,
            )
        )
    return found


def coinciding_steps(story: Story, steps: Iterable[MetricStep], versions: Sequence[str]) -> tuple[MetricStep, ...]:
    """The metric steps whose version pair overlaps the story's arrival, a further step or a return.

    ``versions`` orders every version the story and the steps name (the
    comparison's columns). Each step comes back with ``at`` (which event of the
    story it meets) and ``explains`` (a regression with a metric getting worse,
    an improvement with one getting better), those that explain it first.
    """
    position = {v: i for i, v in enumerate(versions)}
    moments = [e for e in story.events if e.kind in ("arrival", "further", "returned")]
    if story.kind == "outlier":
        moments = [Event("arrival", story.arrived_in, story.previous_version, 0.0, story.change, story.change)]
    found = []
    for step in steps:
        lo, hi = position.get(step.previous_version), position.get(step.version)
        if lo is None or hi is None:
            continue
        for event in moments:
            a, b = position.get(event.previous_version), position.get(event.version)
            if a is not None and b is not None and lo < b and a < hi:
                explains = step.worse == (story.kind == "regression" or (story.kind == "outlier" and story.change < 0))
                found.append(replace(step, at=event.kind, explains=explains))
                break
    return tuple(
        sorted(found, key=lambda s: (not s.explains, -abs(math.log(s.ratio)) if 0 < s.ratio < math.inf else -math.inf))
    )


def with_metric_steps(
    story: Story,
    metric_series: Iterable[Series],
    versions: Sequence[str],
    *,
    min_change: float = changepoints.DEFAULT_MIN_CHANGE,
    k: float = changepoints.DEFAULT_K,
) -> Story:
    """The story with the steps of its microbenchmark's metric series that coincide with it attached."""
    steps = [step for series in metric_series for step in metric_steps(series, min_change=min_change, k=k)]
    return replace(story, metric_steps=coinciding_steps(story, steps, versions))


def _overlaps(
    position: Mapping[str, int], previous_a: str, version_a: str, previous_b: str, version_b: str
) -> bool | None:
    """Whether two version pairs (previous, version] overlap; None when a version is not in ``position``."""
    lo, hi = position.get(previous_a), position.get(version_a)
    a, b = position.get(previous_b), position.get(version_b)
    if lo is None or hi is None or a is None or b is None:
        return None
    return lo < b and a < hi


def metric_stories(
    series: Series,
    qps_stories: Iterable[Story],
    versions: Sequence[str],
    *,
    min_change: float = METRIC_MIN_CHANGE,
    k: float = changepoints.DEFAULT_K,
    spec: MetricSpec | None = None,
) -> list[Story]:
    """The stories one metric series tells on its own (rule 8): a regression when the cost per operation rises.

    A story whose arrival coincides with a moment of one of ``qps_stories``
    (the same microbenchmark's QPS stories: arrival, further step, return, or
    an outlier) is left out: that story already carries the step among its
    metric steps. So is a story whose arrival moves from or to a level too
    small to mean anything, and a one-version excursion (an outlier of a cost
    counter is noise, not news).
    """
    spec = spec or metric_spec(series.metric)
    position = {v: i for i, v in enumerate(versions)}
    moments = [
        (e.previous_version, e.version)
        for s in qps_stories
        for e in (
            s.events
            if s.kind != "outlier"
            else (Event("arrival", s.arrived_in, s.previous_version, 0.0, s.change, s.change),)
        )
        if e.kind in ("arrival", "further", "returned")
    ]
    found = []
    for story in build_stories(series, min_change=min_change, k=k, higher_is_better=not spec.higher_is_worse):
        if story.kind == "outlier":
            continue
        arrival = story.events[0]
        if not spec.is_step(story.level_before, arrival.level):
            continue
        if any(_overlaps(position, arrival.previous_version, arrival.version, a, b) for a, b in moments):
            continue
        found.append(story)
    return found


def with_qps_change(story: Story, qps: Series | None) -> Story:
    """A metric story with what its subject's QPS did from ``previous_version`` to ``arrived_in`` (rule 8): a
    cost per operation that rose while QPS held is no QPS regression, and the record says so. The QPS before is
    the mean of its level's points up to ``previous_version`` (outliers set aside, rules 3-4: a QPS outlier
    there does not pass for a change), the QPS after the arrival's own point."""
    if qps is None or story.metric == QPS:
        return story
    versions = qps.versions
    if story.previous_version not in versions or story.arrived_in not in versions:
        return story
    values = qps.values
    _, segments = levels(values, versions, series_noise(qps).sigma, lines=qps.lines)
    previous, arrived = versions.index(story.previous_version), versions.index(story.arrived_in)
    holding = [seg for seg in segments if seg.first <= previous]
    before = [values[i] for i in holding[-1].indexes if i <= previous] if holding else []
    after = values[arrived]
    if not before or after is None:
        return story
    level = statistics.fmean(v for v in before if v is not None)
    return story if level <= 0 else replace(story, qps_change=_change(level, after))
