"""Scale-up: how each version's throughput moves with the number of clients (the concurrency, ``dop``).

The write-ups that compare versions at several concurrencies read two things per
microbenchmark and per group: throughput against client count, one line per
version ("5.1.14 is 12% slower at 1 thread, better at 16"), and the same
throughput relative to the base *at the same concurrency*. This module computes
both from plain per-concurrency values, with no Django, so the view, a test and
an export get the same numbers:

- per microbenchmark: QPS, relative QPS (``stats.relative_qps`` against the base
  at that concurrency) and the HW metrics per operation, per version and client count;
- per group: the summary (``stats.summarize``: min, max, average, median, n of N) of
  its microbenchmarks' relative QPS at each client count, and its *scaling*: the
  average over its microbenchmarks of QPS at N clients / QPS at the lowest client
  count, per version (absolute QPS of different microbenchmarks cannot be added up,
  their growth can be averaged). Growth is measured from the series' lowest client count: a version
  not measured there has no growth curve, rather than one from another starting point.

Missing values stay ``None`` (a gap, never 0), as everywhere.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from reports import stats

HW_METRICS = ("cpu_o", "cs_o", "r_o", "rkb_o", "wkb_o", "o_s")

# qps[column key][label] and metrics[column key][label][metric] at one concurrency: a comparison's own shape.
Qps = Mapping[str, Mapping[str, float | None]]
Metrics = Mapping[str, Mapping[str, Mapping[str, float | None]]]


@dataclass(frozen=True)
class AtConcurrency:
    """The values of every version at one client count."""

    dop: int
    qps: Qps
    metrics: Metrics = field(default_factory=dict)


@dataclass(frozen=True)
class Curve:
    """One version's values against client count, in the order of ``ScaleUp.dops`` (None: not measured)."""

    key: str
    label: str
    values: tuple[float | None, ...]


@dataclass(frozen=True)
class MicrobenchmarkScaleUp:
    label: str
    qps: tuple[Curve, ...]
    relative: tuple[Curve, ...]  # the base's own curve is 1.0 wherever it was measured
    metrics: dict[str, tuple[Curve, ...]]  # metric name → one curve per version


@dataclass(frozen=True)
class GroupScaleUp:
    name: str
    members: tuple[str, ...]
    relative: dict[str, tuple[stats.GroupSummary, ...]]  # column key → summary of relative QPS per client count
    scaling: dict[str, tuple[stats.GroupSummary, ...]]  # column key → summary of QPS(N) / QPS(lowest) per client count

    def relative_curves(self, columns: Sequence[tuple[str, str]]) -> tuple[Curve, ...]:
        return tuple(Curve(key, label, tuple(s.avg for s in self.relative[key])) for key, label in columns)

    def scaling_curves(self, columns: Sequence[tuple[str, str]]) -> tuple[Curve, ...]:
        return tuple(Curve(key, label, tuple(s.avg for s in self.scaling[key])) for key, label in columns)


@dataclass(frozen=True)
class ScaleUp:
    dops: tuple[int, ...]
    base: str
    columns: tuple[tuple[str, str], ...]  # (key, display label) in the order to draw, base first
    microbenchmarks: dict[str, MicrobenchmarkScaleUp]
    groups: dict[str, GroupScaleUp]


def microbenchmark_scaleup(
    label: str, points: Sequence[AtConcurrency], base: str, columns: Sequence[tuple[str, str]]
) -> MicrobenchmarkScaleUp:
    """One microbenchmark's curves; ``points`` sorted by client count."""
    qps: list[Curve] = []
    relative: list[Curve] = []
    metrics: dict[str, list[Curve]] = {name: [] for name in HW_METRICS}
    for key, shown in columns:
        values = tuple(p.qps.get(key, {}).get(label) for p in points)
        base_values = tuple(p.qps.get(base, {}).get(label) for p in points)
        qps.append(Curve(key, shown, values))
        relative.append(
            Curve(key, shown, tuple(stats.relative_qps(v, b) for v, b in zip(values, base_values, strict=True)))
        )
        for name in HW_METRICS:
            metrics[name].append(
                Curve(key, shown, tuple(p.metrics.get(key, {}).get(label, {}).get(name) for p in points))
            )
    return MicrobenchmarkScaleUp(
        label=label,
        qps=tuple(qps),
        relative=tuple(relative),
        metrics={name: tuple(curves) for name, curves in metrics.items()},
    )


def group_scaleup(
    name: str, members: Sequence[str], by_label: Mapping[str, MicrobenchmarkScaleUp], columns: Sequence[tuple[str, str]]
) -> GroupScaleUp:
    """A group's summaries per client count, from its microbenchmarks' curves (members in the group's order)."""
    relative: dict[str, tuple[stats.GroupSummary, ...]] = {}
    scaling: dict[str, tuple[stats.GroupSummary, ...]] = {}
    for index, (key, _shown) in enumerate(columns):
        rel_curves = {label: by_label[label].relative[index].values for label in members}
        qps_curves = {label: by_label[label].qps[index].values for label in members}
        dops = len(next(iter(rel_curves.values()), ()))
        relative[key] = tuple(stats.summarize({m: c[at] for m, c in rel_curves.items()}) for at in range(dops))
        scaling[key] = tuple(
            stats.summarize({m: stats.relative_qps(c[at], c[0] if c else None) for m, c in qps_curves.items()})
            for at in range(dops)
        )
    return GroupScaleUp(name=name, members=tuple(members), relative=relative, scaling=scaling)


def scaleup(
    points: Sequence[AtConcurrency],
    *,
    base: str,
    columns: Sequence[tuple[str, str]],
    labels: Sequence[str],
    group_of: Mapping[str, str | None],
    groups: Sequence[str],
) -> ScaleUp:
    """Every microbenchmark's and every group's curves. ``columns`` lists (key, display label) with the base
    among them; ``labels`` the microbenchmarks in display order; ``group_of`` their groups (None: ungrouped)."""
    ordered = sorted(points, key=lambda p: p.dop)
    drawn = sorted(columns, key=lambda c: c[0] != base)  # the base first: its line is the reference
    by_label = {label: microbenchmark_scaleup(label, ordered, base, drawn) for label in labels}
    by_group = {}
    for group in groups:
        members = [label for label in labels if group_of.get(label) == group]
        if members:
            by_group[group] = group_scaleup(group, members, by_label, drawn)
    return ScaleUp(
        dops=tuple(p.dop for p in ordered),
        base=base,
        columns=tuple(drawn),
        microbenchmarks=by_label,
        groups=by_group,
    )
