"""Detection over a server + workload: the DB-aware caller of the pure cores.

``detect_regressions`` is the one code path behind the command, the Celery task
and the API. Per DBMS series it reads the comparison once (``load_series``: the
relative QPS of every microbenchmark, its HW metrics, the Insert Benchmark and
db_bench measurements, SLA misses), turns it into the stories' input without
touching the database (``story_series``: one build per version, the release
view), tells the stories (``regressions.stories``: arrival, further steps,
partial recoveries, fix, return, outliers, group stories with their members
folded in, coinciding metric steps; then each microbenchmark's HW and suite
metric stories that no QPS story of it accounts for, ``stories.metric_stories``),
makes one ``records.Candidate`` per story (``find_candidates``) and stores them
(``records.upsert``). Each new open regression story (not folded into its
group's story, QPS only) is announced once by ``regressions.signals.story_opened``.
"""

from __future__ import annotations

import functools
import math
import operator
import statistics
from collections import defaultdict
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from django.conf import settings

import suites
from regressions import changepoints, stories
from regressions.evidence import Evidence, EvidencePoint, LineStatus, Rule, SeriesContext
from regressions.models import Regression
from regressions.records import Candidate, DetectionSummary, natural_key, upsert
from regressions.signals import story_opened
from reports.compare import Comparison, ComparisonError, ComparisonSpec, get_comparison
from reports.stats import json_safe
from runs import branches, releases
from runs.models import Build, Result, Run
from suites import groups as groupsets


def detect_regressions(
    server_id: int,
    workload_id: int,
    base_run_id: int | None = None,
    *,
    min_change: float = changepoints.DEFAULT_MIN_CHANGE,
    k: float = changepoints.DEFAULT_K,
    view: releases.ReleaseView = releases.DEFAULT_VIEW,
    experimental: bool = False,
    every_release: bool = False,
    comparisons: Mapping[ComparisonSpec, Comparison] | None = None,
    announce_versions: Collection[str] | None = None,
) -> DetectionSummary:
    """Detect the stories of every DBMS series of a server + workload and store them as records; returns counts.

    With ``base_run_id`` only that run's DBMS is examined, against that run;
    otherwise every DBMS of the series against its oldest version. ``view``
    "long-term" reads only the long-term release lines of a series that mixes
    both (``runs.releases``; the ``BENCHDASH_RELEASE_LINES`` setting overrides
    the table), "all" every release. Each view's records are stored apart (the
    view is part of their key), so detecting "all" leaves the long-term records
    alone and the list switches between the views. ``experimental`` lets an
    experimental build be a version's point. Raises ComparisonError when there
    is nothing to compare.

    Both views read alike on a series with no short-term release beside its
    long-term ones: there its long-term records stand for both
    (``same_over_every_release``), whichever view is asked for, and no "all"
    record is stored (any left from before are removed like every record
    detection no longer finds). ``every_release`` also keeps the "all" records
    of the series that do mix both current, from the same loaded series. Only
    the default view's new stories are announced: a story is news once, not
    once per view.

    ``comparisons`` are comparisons the caller has computed already (the refresh
    computes each DBMS's for its summary): one with the spec detection asks for
    is used as it is, not computed or fetched from the cache again.

    ``announce_versions`` are the versions of the import that triggered this
    detection: only a new open story that involves one of them (an event's
    version, or the version before it) is news to announce, so importing an
    older point release announces no story of other releases that its points
    merely reshaped. ``None`` (the command, a lost refresh) announces every new
    open story; a story told once is never told again either way (alerts are
    once per story identity, ``regressions.alerts``).
    """
    bases = _bases(server_id, workload_id, base_run_id)
    summary = DetectionSummary()
    for dbms_id, base in bases.items():
        # Versions of different DBMSs interleave in version order: each DBMS is a series of its own, which is
        # the comparison's default series (the base's DBMS), so no run ids are named.
        series = load_series(base, comparisons=comparisons)
        summary.series += 1
        _detect_series(
            series,
            (server_id, workload_id, dbms_id),
            summary,
            min_change=min_change,
            k=k,
            view=view,
            experimental=experimental,
            every_release=every_release,
            announce_versions=announce_versions,
        )
    if summary.opened:
        story_opened.send(
            sender=Regression, regression_ids=list(summary.opened), server_id=server_id, workload_id=workload_id
        )
    return summary


def _bases(server_id: int, workload_id: int, base_run_id: int | None) -> dict[int, int]:
    """The base run of each DBMS series to examine: ``base_run_id``'s alone when given, else each DBMS's oldest."""
    runs = list(
        Run.objects.filter(server_id=server_id, workload_id=workload_id)
        .order_by("build__version__sort_key", "build__name", "pk")
        .values("pk", "build__version__dbms_id", "branch", "pull_request")
    )
    if not runs:
        raise ComparisonError(f"no runs on server {server_id} with workload {workload_id}")
    if base_run_id is not None:
        dbms_of_base = next((r["build__version__dbms_id"] for r in runs if r["pk"] == base_run_id), None)
        if dbms_of_base is None:
            raise ComparisonError(f"run {base_run_id} is not on server {server_id} with workload {workload_id}")
        return {dbms_of_base: base_run_id}
    # Each DBMS's series is its main line (runs.branches): a pull request's runs are judged by the CI verdict,
    # never a point of the series or its base.
    bases: dict[int, int] = {}
    for run in runs:
        if branches.in_main_line(run["branch"], run["pull_request"]):
            bases.setdefault(run["build__version__dbms_id"], run["pk"])
    if not bases:
        raise ComparisonError(
            f"no runs of a base branch on server {server_id} with workload {workload_id}: only pull requests' runs"
        )
    return bases


def _detect_series(
    series: SeriesData,
    where: tuple[int, int, int],
    summary: DetectionSummary,
    *,
    min_change: float,
    k: float,
    view: releases.ReleaseView,
    experimental: bool,
    every_release: bool,
    announce_versions: Collection[str] | None = None,
) -> None:
    """Detect and store one DBMS series' stories in the views asked for (``where``: server, workload, DBMS)."""
    server_id, workload_id, dbms_id = where
    # The long-term view's input tells whether the series mixes release kinds, and is that view's input too.
    long_term = story_series(
        series,
        view=releases.DEFAULT_VIEW,
        experimental=experimental,
        release_overrides=settings.BENCHDASH_RELEASE_LINES,
    )
    mixed = _mixes(long_term)
    # A series that does not mix release kinds reads the same points in both views: its long-term records
    # stand for both, whichever view was asked for.
    stored_views: list[releases.ReleaseView] = []
    if view == releases.DEFAULT_VIEW or not mixed:
        stored_views.append(releases.DEFAULT_VIEW)
    if mixed and (view == "all" or every_release):
        stored_views.append("all")
    for stored in stored_views:
        candidates, noise = find_candidates(
            series,
            min_change=min_change,
            k=k,
            view=stored,
            experimental=experimental,
            release_overrides=settings.BENCHDASH_RELEASE_LINES,
            built=long_term if stored == releases.DEFAULT_VIEW else None,
        )
        if stored == view or len(stored_views) == 1:
            summary.noise[next(p.dbms for p in series.points if p.key == series.base)] = noise
        for candidate in candidates:
            candidate.values["same_over_every_release"] = not mixed
            # Only the default view's stories are news, and only those involving the import's versions.
            candidate.opened = stored == releases.DEFAULT_VIEW and _news(candidate, announce_versions)
        opened = upsert(server_id, workload_id, dbms_id, stored, candidates, summary)
        if stored == releases.DEFAULT_VIEW:
            summary.opened.extend(opened)
    if not mixed and (view == "all" or every_release):
        # "all" records left from before (the series once mixed, or the release lines were classified
        # otherwise) go the way of every record detection no longer finds.
        upsert(server_id, workload_id, dbms_id, "all", [], summary)


def mixes_release_lines(series: SeriesData, *, experimental: bool = False) -> bool:
    """Whether the long-term view leaves out a short-term release of this series, so that the two release
    views read different points (and may tell different stories)."""
    built = story_series(
        series,
        view=releases.DEFAULT_VIEW,
        experimental=experimental,
        release_overrides=settings.BENCHDASH_RELEASE_LINES,
    )
    return _mixes(built)


def _news(candidate: Candidate, announce_versions: Collection[str] | None) -> bool:
    """Whether a candidate, if it is a new record, is news to announce: an open story of its own that involves a
    version of the triggering import (every open story when no import triggered the detection)."""
    if not candidate.opened:
        return False
    if announce_versions is None:
        return True
    events = candidate.values.get("story_events") or []
    involved = {e.get("version") for e in events} | {e.get("previous_version") for e in events}
    return not involved.isdisjoint(announce_versions)


def _provisional(points: Sequence[SeriesPoint], built: StorySeries, view: str) -> str | None:
    """The version of the view's newest point when the default view reads it only because it is the newest (a
    short-term release among long-term ones): provisional until a newer release arrives."""
    if view != releases.DEFAULT_VIEW or not built.chosen:
        return None
    newest = built.chosen[-1]
    if built.long_term[newest] or not any(built.long_term[i] for i in built.chosen):
        return None
    return points[newest].version


def _mixes(long_term: StorySeries) -> bool:
    return "short-term release" in long_term.unused.values()


@dataclass(frozen=True)
class SeriesPoint:
    """One column of a DBMS series as detection reads it: a build (+ config) of one version."""

    key: str
    dbms: str
    version: str
    build: str
    flavour: str
    config: str
    repeats: int
    version_id: int | None
    build_id: int | None


@dataclass(frozen=True)
class SeriesData:
    """Everything detection needs of one DBMS series, loaded once: no query is left to make after this."""

    server: str
    base: str  # the base column's key
    base_run_id: int
    dop: int
    group_set: str
    points: list[SeriesPoint]
    labels: list[str]
    groups: list[str]
    group_of: dict[str, str | None]
    microbenchmark_ids: dict[str, int]
    # label → per point: relative QPS against the base (the base itself 1.0 where it has a value), and cv.
    relative: dict[str, list[float | None]]
    cv: dict[str, list[float | None]]
    # label → metric name as stories show it (cpu/o, cs/o, rKB/o, wKB/o, w_amp, stall%, p99, p99 rate) → per point.
    metrics: dict[str, dict[str, list[float | None]]] = field(default_factory=dict)
    # label → per point: the Insert Benchmark's background inserts missed their SLA (in that run or the base's).
    sla_missed: dict[str, list[bool]] = field(default_factory=dict)


# Comparison HW columns → the names stories show them by.
HW_METRICS = {"cpu_o": "cpu/o", "cs_o": "cs/o", "rkb_o": "rKB/o", "wkb_o": "wKB/o"}
# Insert Benchmark and db_bench measurements kept in Result.extra.
EXTRA_METRICS = ("w_amp", "stall%", "p99")


def load_series(
    base_run_id: int,
    run_ids: Sequence[int] = (),
    *,
    comparisons: Mapping[ComparisonSpec, Comparison] | None = None,
) -> SeriesData:
    """Read one DBMS series for detection: its comparison against ``base_run_id`` (taken from ``comparisons``
    when it is there), the ids of its builds, the HW metrics of every microbenchmark and the Insert Benchmark /
    db_bench measurements of its results."""
    spec = ComparisonSpec(base_run_id=base_run_id, run_ids=tuple(run_ids))
    comparison = (comparisons or {}).get(spec) or get_comparison(spec)
    columns = comparison.columns
    builds = {
        b["name"]: b
        for b in Build.objects.filter(name__in={c.build for c in columns}).values("pk", "name", "version_id")
    }

    def relative(column_key: str, label: str) -> float | None:
        if column_key == comparison.base:
            return 1.0 if comparison.qps[column_key].get(label) is not None else None
        return comparison.relative[column_key].get(label)

    base_key = comparison.base
    return SeriesData(
        server=comparison.server,
        base=comparison.base,
        base_run_id=comparison.spec.base_run_id,
        dop=comparison.dop,
        group_set=comparison.group_set,
        points=[
            SeriesPoint(
                key=c.key,
                dbms=c.dbms,
                version=c.version,
                build=c.build,
                flavour=c.flavour,
                config=c.config,
                repeats=c.repeats,
                version_id=builds[c.build]["version_id"] if c.build in builds else None,
                build_id=builds[c.build]["pk"] if c.build in builds else None,
            )
            for c in columns
        ],
        labels=list(comparison.labels),
        groups=list(comparison.groups),
        group_of=dict(comparison.group_of),
        microbenchmark_ids=dict(comparison.microbenchmark_ids),
        relative={label: [relative(c.key, label) for c in columns] for label in comparison.labels},
        cv={label: [comparison.cv[c.key].get(label) for c in columns] for label in comparison.labels},
        metrics=_metrics(comparison, _extra_measurements(comparison)),
        sla_missed={
            label: [
                (c.key, label) in comparison.sla_missed or (base_key, label) in comparison.sla_missed for c in columns
            ]
            for label in comparison.labels
        },
    )


def _extra_measurements(comparison: Comparison) -> dict[tuple[str, str], dict[str, list[float]]]:
    """Result.extra (w_amp, stall%, p99) per (column, microbenchmark label): every run's value of the column."""
    column_of_run = {run_id: c.key for c in comparison.columns for run_id in c.run_ids}
    label_of = {mb: label for label, mb in comparison.microbenchmark_ids.items()}
    extra: dict[tuple[str, str], dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    # Only the results that measured one of them: a sysbench series has none, and reading (and decoding) every
    # result's JSON again cost as much as the comparison's own read.
    rows = Result.objects.filter(
        run_id__in=column_of_run, dop=comparison.dop, extra__has_any_keys=EXTRA_METRICS
    ).values_list("run_id", "microbenchmark_id", "extra")
    for run_id, mb_id, values in rows:
        label = label_of.get(mb_id)
        for name in EXTRA_METRICS:
            value = (values or {}).get(name)
            if label is not None and isinstance(value, int | float) and not isinstance(value, bool):
                extra[(column_of_run[run_id], label)][name].append(float(value))
    return extra


def _metrics(
    comparison: Comparison, extra: dict[tuple[str, str], dict[str, list[float]]]
) -> dict[str, dict[str, list[float | None]]]:
    """Per label, each metric's value per column: the comparison's HW metrics, then the suite's measurements (the
    mean over the column's runs) under the names the suite shows them by."""
    columns = comparison.columns
    # Each column's metrics once, not once per label and metric (42 labels × 4 metrics × every column).
    by_column = [comparison.metrics[c.key] for c in columns]
    metrics: dict[str, dict[str, list[float | None]]] = {}
    for label in comparison.labels:
        measured = [of_column.get(label) or {} for of_column in by_column]
        per_metric: dict[str, list[float | None]] = {
            shown: [values.get(column) for values in measured] for column, shown in HW_METRICS.items()
        }
        # A suite whose results measured none of them (sysbench) has nothing to look up.
        for name in EXTRA_METRICS if extra else ():
            found = [extra.get((c.key, label), {}).get(name) for c in columns]
            if any(found):
                shown = suites.get(comparison.suite).metric_label(name)
                per_metric[shown] = [statistics.mean(v) if v else None for v in found]
        metrics[label] = per_metric
    return metrics


@dataclass(frozen=True)
class StorySeries:
    """A loaded series as ``regressions.stories`` reads it: the chosen points (one build per version, in the
    release view), a QPS series per microbenchmark and its metric series."""

    chosen: list[int]  # indexes into SeriesData.points, in version order
    unused: dict[int, str]  # index → why that build is no point
    long_term: list[bool]  # per SeriesData point
    qps: list[stories.Series]
    metrics: dict[str, list[stories.Series]]  # label → its metric series
    versions: list[str]
    dbms: str = ""


def story_series(
    series: SeriesData,
    *,
    view: releases.ReleaseView = releases.DEFAULT_VIEW,
    experimental: bool = False,
    release_overrides: dict[str, Any] | None = None,
) -> StorySeries:
    """The stories' input for one loaded series: one build per version (``changepoints.choose_points``), the
    release view of ``runs.releases``, relative QPS against the base. Pure."""
    points = series.points
    base_index = next(i for i, p in enumerate(points) if p.key == series.base)
    policy = releases.policy_for(points[base_index].dbms, series.server, release_overrides)
    chosen, unused = _choose_points(series, base_index, policy, view=view, experimental=experimental)
    long_term = [policy.is_long_term(p.version) for p in points]
    qps, metrics = _label_series(series, chosen, view, maintained_lines(series, chosen, long_term))
    return StorySeries(
        chosen=chosen,
        unused=unused,
        long_term=long_term,
        qps=qps,
        metrics=metrics,
        versions=[points[i].version for i in chosen],
        dbms=points[base_index].dbms,
    )


def _choose_points(
    series: SeriesData,
    base_index: int,
    policy: releases.ReleasePolicy,
    *,
    view: releases.ReleaseView,
    experimental: bool,
) -> tuple[list[int], dict[int, str]]:
    """The series' points in the view (indexes, in version order) and why each other build is none."""
    points = series.points
    chosen = changepoints.choose_points(
        [(p.version, p.flavour, p.config) for p in points], base_index, experimental=experimental
    )
    in_view = releases.points_in_view([points[i].version for i in chosen], policy, view, keep=chosen.index(base_index))
    short_term = {i for i, keep in zip(chosen, in_view, strict=True) if not keep}
    chosen = [i for i, keep in zip(chosen, in_view, strict=True) if keep]
    used = set(chosen)
    with_point = {points[i].version for i in used | short_term}
    unused = {
        i: "short-term release"
        if i in short_term
        else ("another build of this version" if p.version in with_point else "experimental build")
        for i, p in enumerate(points)
        if i not in used
    }
    return chosen, unused


def told_labels(series: SeriesData) -> list[str]:
    """The microbenchmarks that tell stories: the test set of the author's tables of the series' era (SPEC §2).

    Warm-up passes are not in the series at all (comparisons leave them out; ``scan.warm`` is no warm-up but a
    measured scan, and is told). A ``.pre`` test the era's group set leaves ungrouped (current-32: the 2025
    tables list no ``.pre`` test) is left out: it ran the same queries as its test before the write phase, and
    told apart it repeated that test's stories; the comparison still shows it. Where the group set reads
    ``.pre`` tests (classic-42: point-1, range-1) they are the author's tests and tell stories."""
    return [label for label in series.labels if not (groupsets.is_pre(label) and not series.group_of.get(label))]


def maintained_lines(series: SeriesData, chosen: Sequence[int], long_term: Sequence[bool]) -> frozenset[str]:
    """The maintained release lines of a series' chosen points (stories rule 9): the long-term ones and the
    newest release's."""
    points = series.points
    found = {releases.release_line(points[i].dbms, points[i].version) for i in chosen if long_term[i]}
    found |= {releases.release_line(points[i].dbms, points[i].version) for i in chosen[-1:]}
    return frozenset(found)


def _label_series(
    series: SeriesData, chosen: list[int], view: releases.ReleaseView, maintained: frozenset[str] = frozenset()
) -> tuple[list[stories.Series], dict[str, list[stories.Series]]]:
    """Each microbenchmark's QPS series over the chosen points, and its metric series."""
    points = series.points
    # Points by column rather than one keyword call each: a series of 300 runs makes 50,000 of them.
    versions = [points[i].version for i in chosen]
    # The every-release view judges each point within its release line (stories rule 9); the long-term view
    # reads version order.
    lines = tuple(releases.release_line(points[i].dbms, points[i].version) for i in chosen) if view == "all" else ()
    maintained = maintained if lines else frozenset()
    builds = [points[i].build for i in chosen]
    repeats = [points[i].repeats for i in chosen]
    nothing, once, never = [None] * len(chosen), [1] * len(chosen), [False] * len(chosen)
    pick = operator.itemgetter(*chosen) if len(chosen) > 1 else (lambda column: tuple(column[i] for i in chosen))
    qps, metrics = [], {}
    for label in told_labels(series):
        missed = series.sla_missed.get(label) or [False] * len(points)
        relative, cv = series.relative[label], series.cv[label]
        qps.append(
            stories.Series(
                label,
                stories.points_of(versions, pick(relative), pick(cv), repeats, builds, pick(missed)),
                group=series.group_of.get(label),
                releases=view,
                lines=lines,
                maintained=maintained,
            )
        )
        metrics[label] = [
            stories.Series(
                label,
                stories.points_of(versions, pick(values), nothing, once, builds, never),
                metric=name,
                releases=view,
                lines=lines,
                maintained=maintained,
            )
            for name, values in (series.metrics.get(label) or {}).items()
        ]
    return qps, metrics


def find_stories(
    built: StorySeries,
    *,
    min_change: float = changepoints.DEFAULT_MIN_CHANGE,
    k: float = changepoints.DEFAULT_K,
    metric_min_change: float = stories.METRIC_MIN_CHANGE,
) -> list[stories.Story]:
    """Every story of a series (group stories first, member stories marked when folded), with the metric steps
    that coincide with each attached (a group's metrics are its members' medians), then the metric stories of
    each microbenchmark and each group that no QPS story of it accounts for, member metric stories folded into
    their group's like QPS ones (``stories.fold_into_groups``). Pure."""
    # Each group's median QPS series once: its stories are told from it, its metric stories' QPS read from it.
    members_of: dict[str, list[stories.Series]] = defaultdict(list)
    for s in built.qps:
        if s.group:
            members_of[s.group].append(s)
    group_qps = {group: stories.group_series(group, found) for group, found in members_of.items()}
    told = stories.stories_for(built.qps, min_change=min_change, k=k, groups=group_qps)
    metric_series = _metric_series(built)
    # The steps of a subject's metrics, once per subject however many stories it tells.
    steps_of: dict[tuple[bool, str], list[stories.MetricStep]] = {}

    def steps(subject: tuple[bool, str]) -> list[stories.MetricStep]:
        if subject not in steps_of:
            steps_of[subject] = [
                step
                for m in metric_series.get(subject, [])
                for step in stories.metric_steps(m, min_change=min_change, k=k)
            ]
        return steps_of[subject]

    qps_of_subject = {(False, s.subject): s for s in built.qps} | {(True, g): s for g, s in group_qps.items()}

    @functools.cache
    def line_of(version: str) -> str:
        # Once per version: rule 9 reads every point of each regression story's series.
        return releases.release_line(built.dbms, version)

    # The maintained lines (rule 9): the long-term ones and the newest release's.
    maintained = {line_of(v) for i, v in zip(built.chosen, built.versions, strict=True) if built.long_term[i]}
    maintained |= {line_of(v) for v in built.versions[-1:]}

    result = [
        replace(
            story,
            metric_steps=stories.coinciding_steps(story, steps((story.is_group, story.subject)), built.versions),
            lines=stories.line_states(
                story, qps_of_subject[(story.is_group, story.subject)], line_of, min_change, maintained
            ),
        )
        for story in told
    ]
    own = _own_metric_stories(
        built, metric_series, qps_of_subject, told, min_change=max(min_change, metric_min_change), k=k
    )
    groups = [s for s in own if s.is_group]
    return result + groups + stories.fold_into_groups([s for s in own if not s.is_group], groups)


def _metric_series(built: StorySeries) -> dict[tuple[bool, str], list[stories.Series]]:
    """The metric series of every subject, keyed (is a group, subject): a microbenchmark's own, a group's the
    median of its members' (one per metric any member has)."""
    metric_series: dict[tuple[bool, str], list[stories.Series]] = {}
    by_group: dict[str, dict[str, list[stories.Series]]] = defaultdict(lambda: defaultdict(list))
    for s in built.qps:
        metric_series[(False, s.subject)] = built.metrics.get(s.subject, [])
        for m in metric_series[(False, s.subject)] if s.group else ():
            by_group[s.group][m.metric].append(m)  # type: ignore[index]
    for group, by_metric in by_group.items():
        metric_series[(True, group)] = [
            replace(stories.group_series(group, found), metric=name) for name, found in by_metric.items()
        ]
    return metric_series


def _own_metric_stories(
    built: StorySeries,
    metric_series: dict[tuple[bool, str], list[stories.Series]],
    qps_of_subject: dict[tuple[bool, str], stories.Series],
    told: Sequence[stories.Story],
    *,
    min_change: float,
    k: float,
) -> list[stories.Story]:
    """Metric stories of their own, per microbenchmark and per group: the steps no QPS story of it accounts for,
    each with its subject's QPS change."""
    qps_of: dict[tuple[bool, str], list[stories.Story]] = defaultdict(list)
    for story in told:
        qps_of[(story.is_group, story.subject)].append(story)
    group_of = {s.subject: s.group for s in built.qps}
    own: list[stories.Story] = []
    for (is_group, subject), found in metric_series.items():
        for m in found:
            own.extend(
                stories.with_qps_change(
                    replace(story, group=subject if is_group else group_of.get(subject)),
                    qps_of_subject.get((is_group, subject)),
                )
                for story in stories.metric_stories(
                    m, qps_of[(is_group, subject)], built.versions, min_change=min_change, k=k
                )
            )
    return own


def _standing_for(story: stories.Story, told: Sequence[stories.Story]) -> stories.Story | None:
    """The group story a folded member story is folded into (``stories.fold_into_groups``' own test)."""
    if story.folded_into is None:
        return None
    return next(
        (
            g
            for g in told
            if g.is_group
            and g.subject == story.folded_into
            and g.kind == story.kind
            and g.metric == story.metric
            and any(e.version == story.arrived_in for e in g.events if e.kind in ("arrival", "further", "returned"))
        ),
        None,
    )


def find_candidates(
    series: SeriesData,
    *,
    min_change: float = changepoints.DEFAULT_MIN_CHANGE,
    k: float = changepoints.DEFAULT_K,
    view: releases.ReleaseView = releases.DEFAULT_VIEW,
    experimental: bool = False,
    release_overrides: dict[str, Any] | None = None,
    built: StorySeries | None = None,
) -> tuple[list[Candidate], float | None]:
    """Records detection would store for one series (one per story), and the median noise of its microbenchmarks.

    Pure: it reads only ``series`` (see ``load_series``) and touches no database. ``built`` is the series'
    ``story_series`` with these arguments when the caller has made it already.
    """
    if built is None:
        built = story_series(series, view=view, experimental=experimental, release_overrides=release_overrides)
    told = find_stories(built, min_change=min_change, k=k)
    maker = _CandidateMaker(series, built, told, view=view, experimental=experimental, min_change=min_change, k=k)
    candidates = [maker.candidate(story) for story in told]
    # The folded-into key names arrival points; resolve them to version ids.
    for c in candidates:
        if c.folded_into_key is not None:
            mb, group, kind, point, metric = c.folded_into_key
            c.folded_into_key = (mb, group, kind, series.points[point].version_id, metric)  # type: ignore[assignment]
    return candidates, _median_noise(told, built)


def _median_noise(told: Sequence[stories.Story], built: StorySeries) -> float | None:
    """The median noise of the series' microbenchmarks: over their QPS stories, else over every QPS series."""
    noises = [s.noise.sigma for s in told if not s.is_group and s.metric == stories.QPS]
    if not noises:
        noises = [stories.series_noise(s).sigma for s in built.qps if any(p.usable for p in s.points)]
    return statistics.median(noises) if noises else None


@dataclass
class _CandidateMaker:
    """Makes one series' candidates: what every story's evidence shares (the series' points, each subject's
    values, made JSON-safe once and shared by the stories that show them) and what each story has of its own."""

    series: SeriesData
    built: StorySeries
    told: Sequence[stories.Story]
    view: releases.ReleaseView
    experimental: bool
    min_change: float
    k: float
    context: SeriesContext = field(init=False)
    index_of: dict[str, int] = field(init=False)
    members: dict[str, list[str]] = field(init=False)
    _safe: dict[tuple[str, str, str], list[Any]] = field(init=False, default_factory=dict)

    def __post_init__(self) -> None:
        series, built = self.series, self.built
        self.index_of = {series.points[i].version: i for i in built.chosen}
        self.context = SeriesContext(
            base=series.base,
            dop=series.dop,
            group_set=series.group_set,
            releases=self.view,
            experimental=self.experimental,
            points=tuple(
                EvidencePoint(
                    version=p.version,
                    build=p.build,
                    column=p.key,
                    used=i not in built.unused,
                    unused_because=built.unused.get(i),
                    long_term=built.long_term[i],
                    repeats=p.repeats,
                )
                for i, p in enumerate(series.points)
            ),
            provisional_release=_provisional(series.points, built, self.view),
        )
        self.members = defaultdict(list)
        for label in series.labels:
            group = series.group_of.get(label)
            if group:
                self.members[group].append(label)

    def safe(self, kind: str, label: str, metric: str = stories.QPS) -> list[Any]:
        """A subject's values (or cv) at every point, JSON-safe, made once per series."""
        key = (kind, label, metric)
        if key not in self._safe:
            if kind == "cv":
                values = self.series.cv[label]
            elif metric == stories.QPS:
                values = self.series.relative[label]
            else:
                values = self.series.metrics.get(label, {}).get(metric, [None] * len(self.series.points))
            self._safe[key] = json_safe(values)
        return self._safe[key]

    def levels(self, story: stories.Story) -> list[Any]:
        """The story's level at each point: level_before up to the arrival, then each event's level."""
        points = self.series.points
        out: list[float | None] = [None] * len(points)
        if story.kind == "outlier":
            return out
        current, events = story.level_before, list(story.events)
        for i in self.built.chosen:
            while events and points[i].version == events[0].version:
                current = events.pop(0).level
            out[i] = current
        return json_safe(out)  # type: ignore[no-any-return]

    def subject_evidence(self, story: stories.Story) -> dict[str, Any]:
        """The evidence's fields that depend on what the story is of: a group, a metric, a microbenchmark's QPS."""
        if story.is_group:
            labels = self.members.get(story.subject, [])
            folded = [
                s.subject for s in self.told if s.folded_into == story.subject and _standing_for(s, self.told) is story
            ]
            own: dict[str, Any] = {
                "members": tuple(folded),
                "members_total": len(labels),
                # A group's metric story rests on its members' measured values per operation, a QPS one on their
                # relative QPS.
                "values": {label: self.safe("values", label, story.metric) for label in labels},
            }
            if story.metric != stories.QPS:
                own |= {"metric": story.metric, "levels": self.levels(story)}
            return own
        if story.metric != stories.QPS:
            # A metric's own story: its evidence is the metric's values (absolute, per operation), no QPS.
            return {
                "metric": story.metric,
                "values": {story.subject: self.safe("values", story.subject, story.metric)},
                "cv": [None] * len(self.series.points),
                "levels": self.levels(story),
            }
        return {
            "values": {story.subject: self.safe("values", story.subject)},
            "cv": self.safe("cv", story.subject),
            "levels": self.levels(story),
        }

    def rule(self, story: stories.Story) -> Rule:
        floor = self.min_change if story.metric == stories.QPS else max(self.min_change, stories.METRIC_MIN_CHANGE)
        gate = max(floor, self.k * story.noise.sigma * math.sqrt(2))
        safe = json_safe([floor, self.k, story.noise.sigma, gate])
        return Rule(min_change=safe[0], k=safe[1], noise=safe[2], noise_source=story.noise.source, threshold=safe[3])

    def points_of(self, story: stories.Story) -> tuple[int, int, int, int | None]:
        """The indexes of the story's arrival, the version before it, the last version it persists in and its fix."""
        index_of = self.index_of
        fixed = index_of[story.fixed_in] if story.fixed_in else None
        fix_event = next((e for e in story.events if e.kind == "fixed"), None)
        persists = (
            index_of[fix_event.previous_version] if fix_event and story.fixed_in else index_of[story.latest_version]
        )
        return index_of[story.arrived_in], index_of[story.previous_version], persists, fixed

    def candidate(self, story: stories.Story) -> Candidate:
        series, points = self.series, self.series.points
        folded_into = _standing_for(story, self.told)
        arrived, previous, persists, fixed = self.points_of(story)
        rule = self.rule(story)
        evidence = Evidence(
            context=self.context,
            subject=story.subject,
            arrived_point=arrived,
            previous_point=previous,
            persists_point=persists,
            fixed_point=fixed,
            builds=tuple(story.builds),
            rule=rule,
            lines=tuple(LineStatus(x.line, x.version, x.fixed) for x in story.lines),
            **self.subject_evidence(story),
        )
        microbenchmark_id = None if story.is_group else series.microbenchmark_ids[story.subject]
        group = story.subject if story.is_group else story.group or ""
        as_dict = story.as_dict()
        return Candidate(
            microbenchmark_id=microbenchmark_id,
            group=group,
            kind=as_dict["kind"],
            arrived_in_id=points[arrived].version_id,  # type: ignore[arg-type]
            releases=self.view,
            folded_into_key=None
            if folded_into is None
            else natural_key(
                None, folded_into.subject, folded_into.kind, self.index_of[folded_into.arrived_in], folded_into.metric
            ),
            # Alerts announce QPS stories; a metric's story waits on the list's own tab.
            opened=story.is_open and folded_into is None and story.metric == stories.QPS,
            metric=story.metric,
            evidence=evidence,
            values=_story_values(story, as_dict, group, series, (arrived, previous, persists, fixed), rule),
        )


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def _story_values(
    story: stories.Story,
    as_dict: dict[str, Any],
    group: str,
    series: SeriesData,
    at: tuple[int, int, int, int | None],
    rule: Rule,
) -> dict[str, Any]:
    """The record's fields detection owns, of one story (``at``: its arrival, previous, persists and fixed points)."""
    points = series.points
    arrived, previous, persists, fixed = at
    return {
        "group": group,
        "group_set": series.group_set,
        "arrived_in_build_id": points[arrived].build_id,
        "previous_version_id": points[previous].version_id,
        "fixed_in_id": points[fixed].version_id if fixed is not None else None,
        "persists_until_id": points[persists].version_id,
        "level_before": story.level_before,
        "level_after": story.level_before * (1 + story.current_change) if math.isfinite(story.current_change) else None,
        "change": _finite(story.change),
        "threshold": rule.threshold,
        "base_run_id": series.base_run_id,
        "metric": story.metric,
        "outlier": story.kind == "outlier",
        "current_change": _finite(story.current_change),
        "worst_change": _finite(story.worst_change),
        "story_events": as_dict["events"],
        "outliers": as_dict["outliers"],
        "noise": story.noise.sigma,
        "noise_source": story.noise.source,
        "noise_rule": story.noise.text,
        "builds": as_dict["builds"],
        "metric_steps": as_dict["metric_steps"],
        "summary": story.summary,
        "qps_change": story.qps_change,
        # The long-term records of a series that does not mix release kinds stand for both views:
        # detect_regressions decides, as it knows the series.
        "same_over_every_release": False,
    }
