"""Regressions as records (SPEC §6): detection over a server + workload, triage, and bug links.

``detect_regressions`` is the one code path behind the command, the Celery task
and the API: it builds the comparison of each DBMS series (base: its oldest
version unless given), runs ``reports.changepoints`` on every microbenchmark,
folds steps that most of a group's members take at the same version into one
group record, and upserts the records on their natural key, so running it again
updates sizes and evidence and never adds a row. Records it no longer finds are
kept (they may carry triage and bugs) and counted as stale.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser
from django.db import IntegrityError, transaction
from django.db.models import Q, QuerySet
from django.utils import timezone

from reports import bugs as bugrefs
from reports import changepoints, releases
from reports.compare import Comparison, ComparisonError, ComparisonSpec, get_comparison
from reports.models import Bug, Regression, TriageEvent
from runs.models import Build, Run

State = Regression.State

# Fields detection owns; everything else (state, bugs, notes) belongs to the people triaging.
DETECTED_FIELDS = (
    "group",
    "group_set",
    "arrived_in_build_id",
    "previous_version_id",
    "fixed_in_id",
    "persists_until_id",
    "level_before",
    "level_after",
    "change",
    "threshold",
    "base_run_id",
    "evidence",
)


@dataclass
class Candidate:
    """One record as detection sees it, before it meets the database."""

    microbenchmark_id: int | None
    group: str
    kind: str
    arrived_in_id: int
    values: dict[str, Any]

    @property
    def key(self) -> tuple[int | None, str, str, int]:
        return natural_key(self.microbenchmark_id, self.group, self.kind, self.arrived_in_id)


@dataclass
class DetectionSummary:
    series: int = 0  # DBMS series examined
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    stale: int = 0  # records of these series that detection no longer finds (kept, never deleted)
    noise: dict[str, float | None] = field(default_factory=dict)  # DBMS → median of the microbenchmarks' noise
    regression_ids: list[int] = field(default_factory=list)

    @property
    def found(self) -> int:
        return self.created + self.updated + self.unchanged

    def as_dict(self) -> dict[str, Any]:
        return {
            "series": self.series,
            "found": self.found,
            "created": self.created,
            "updated": self.updated,
            "unchanged": self.unchanged,
            "stale": self.stale,
            "regression_ids": self.regression_ids,
        }


def natural_key(
    microbenchmark_id: int | None, group: str, kind: str, arrived_in_id: int
) -> tuple[int | None, str, str, int]:
    # A microbenchmark record's group is informative only; a group record is its group.
    return (microbenchmark_id, "" if microbenchmark_id is not None else group, kind, arrived_in_id)


# --------------------------------------------------------------------------- detection


def detect_regressions(
    server_id: int,
    workload_id: int,
    base_run_id: int | None = None,
    *,
    min_change: float = changepoints.DEFAULT_MIN_CHANGE,
    k: float = changepoints.DEFAULT_K,
    view: releases.ReleaseView = releases.DEFAULT_VIEW,
    experimental: bool = False,
) -> DetectionSummary:
    """Detect steps in every DBMS series of a server + workload and store them as records; returns counts.

    With ``base_run_id`` only that run's DBMS is examined, against that run;
    otherwise every DBMS of the series against its oldest version. ``view``
    "long-term" reads only the long-term release lines of a series that mixes
    both (``reports.releases``; the ``BENCHDASH_RELEASE_LINES`` setting overrides
    the table), "all" every release; ``experimental`` lets an experimental build
    be a version's point. Raises ComparisonError when there is nothing to compare.
    """
    runs = list(
        Run.objects.filter(server_id=server_id, workload_id=workload_id)
        .order_by("build__version__sort_key", "build__name", "pk")
        .values("pk", "build__version__dbms_id")
    )
    if not runs:
        raise ComparisonError(f"no runs on server {server_id} with workload {workload_id}")
    by_dbms: dict[int, list[int]] = defaultdict(list)
    for run in runs:
        by_dbms[run["build__version__dbms_id"]].append(run["pk"])
    if base_run_id is not None:
        dbms_of_base = next((r["build__version__dbms_id"] for r in runs if r["pk"] == base_run_id), None)
        if dbms_of_base is None:
            raise ComparisonError(f"run {base_run_id} is not on server {server_id} with workload {workload_id}")
        bases = {dbms_of_base: base_run_id}
    else:
        bases = {dbms: run_ids[0] for dbms, run_ids in by_dbms.items()}

    summary = DetectionSummary()
    for dbms_id, base in bases.items():
        # Versions of different DBMSs interleave in version order: each DBMS is a series of its own.
        run_ids = () if len(by_dbms) == 1 else tuple(by_dbms[dbms_id])
        comparison = get_comparison(ComparisonSpec(base_run_id=base, run_ids=run_ids))
        candidates, noise = find_candidates(
            comparison,
            min_change=min_change,
            k=k,
            view=view,
            experimental=experimental,
            release_overrides=settings.BENCHDASH_RELEASE_LINES,
        )
        summary.series += 1
        summary.noise[comparison.column(comparison.base).dbms] = noise
        _upsert(server_id, workload_id, dbms_id, candidates, summary)
    return summary


def find_candidates(
    comparison: Comparison,
    *,
    min_change: float = changepoints.DEFAULT_MIN_CHANGE,
    k: float = changepoints.DEFAULT_K,
    view: releases.ReleaseView = releases.DEFAULT_VIEW,
    experimental: bool = False,
    release_overrides: dict[str, Any] | None = None,
) -> tuple[list[Candidate], float | None]:
    """Records detection would store for one comparison, and the median noise of its microbenchmarks."""
    columns = comparison.columns
    base_index = next(i for i, c in enumerate(columns) if c.key == comparison.base)
    chosen = changepoints.choose_points(
        [(c.version, c.flavour, c.config) for c in columns], base_index, experimental=experimental
    )
    policy = releases.policy_for(columns[base_index].dbms, comparison.server, release_overrides)
    in_view = releases.points_in_view([columns[i].version for i in chosen], policy, view, keep=chosen.index(base_index))
    short_term = {i for i, keep in zip(chosen, in_view, strict=True) if not keep}
    chosen = [i for i, keep in zip(chosen, in_view, strict=True) if keep]
    chosen_set = set(chosen)
    versions_with_point = {columns[i].version for i in chosen_set | short_term}

    def why_unused(i: int) -> str | None:
        if i in chosen_set:
            return None
        if i in short_term:
            return "short-term release"
        if columns[i].version in versions_with_point:
            return "another build of this version"
        return "experimental build"

    builds = {
        b["name"]: b
        for b in Build.objects.filter(name__in={c.build for c in columns}).values("pk", "name", "version_id")
    }
    versions = [columns[i].version for i in chosen]
    version_ids = [builds[columns[i].build]["version_id"] for i in chosen]
    build_ids = [builds[columns[i].build]["pk"] for i in chosen]
    chosen_base = chosen.index(base_index)

    def relative(column_key: str, label: str) -> float | None:
        if column_key == comparison.base:
            return 1.0 if comparison.qps[column_key].get(label) is not None else None
        return comparison.relative[column_key].get(label)

    all_values = {label: [relative(c.key, label) for c in columns] for label in comparison.labels}
    series = {label: [all_values[label][i] for i in chosen] for label in comparison.labels}
    cvs = {label: [comparison.cv[columns[i].key].get(label) for i in chosen] for label in comparison.labels}
    # Noise per microbenchmark (changepoints rule 2): a scan is far noisier than a point query on the same server.
    detections = {
        label: changepoints.detect(
            series[label],
            versions,
            cvs=cvs[label],
            min_change=min_change,
            k=k,
            base_index=chosen_base,
        )
        for label in comparison.labels
    }
    context = {
        "base": comparison.base,
        "dop": comparison.dop,
        "group_set": comparison.group_set,
        "releases": view,
        "experimental": experimental,
        "points": [
            {
                "version": c.version,
                "build": c.build,
                "column": c.key,
                "used": i in chosen_set,
                "unused_because": why_unused(i),
                "long_term": policy.is_long_term(c.version),
                "repeats": c.repeats,
            }
            for i, c in enumerate(columns)
        ],
    }

    def rule(noise: float | None, source: str, threshold: float) -> dict[str, Any]:
        return {
            "min_change": min_change,
            "k": k,
            "noise": noise,
            "noise_source": source,
            "threshold": threshold,
        }

    def point_index(chosen_index: int) -> int:
        return chosen[chosen_index]

    def builds_of(detection: changepoints.Detection, step: changepoints.Step) -> set[int]:
        """Columns of the two levels a step compares: the builds the record rests on."""
        levels = (detection.segment_of(step.previous_index), detection.segment_of(step.index))
        return {point_index(i) for segment in levels if segment is not None for i in segment.indexes}

    def build_names(column_indexes: Iterable[int]) -> list[str]:
        return [columns[i].build for i in sorted(column_indexes)]

    candidates: list[Candidate] = []
    folded: set[tuple[str, int]] = set()  # (label, step index) that a group record stands for
    for group in comparison.groups:
        members = [
            label
            for label in comparison.labels
            if comparison.group_of.get(label) == group and len(detections[label].segments) > 0
        ]
        moves: dict[tuple[int, str], list[tuple[str, changepoints.Step]]] = defaultdict(list)
        for label in members:
            for step in detections[label].reported_steps:
                moves[(step.index, step.direction)].append((label, step))
        for (index, direction), moved in sorted(moves.items()):
            if len(moved) < 2 or 2 * len(moved) <= len(members):
                continue  # "most members move together": more than half of them, and at least two
            folded.update((label, index) for label, _ in moved)
            ended = Counter(step.ended_index for _, step in moved).most_common(1)[0]
            fixed = ended[0] if ended[0] is not None and 2 * ended[1] > len(moved) else None
            persists = (
                max(step.persists_until_index for _, step in moved if step.ended_index == fixed)
                if fixed is not None
                else max(step.persists_until_index for _, step in moved)
            )
            previous = max(step.previous_index for _, step in moved)
            threshold = statistics.median(s.threshold for _, s in moved)
            evidence = {
                **context,
                "subject": group,
                "members": [label for label, _ in moved],
                "members_total": len(members),
                "values": {label: all_values[label] for label in members},
                "member_steps": {
                    label: {
                        "level_before": step.level_before,
                        "level_after": step.level_after,
                        "change": step.change,
                        "ended_in": step.ended_version,
                    }
                    for label, step in moved
                },
                "arrived_point": point_index(index),
                "previous_point": point_index(previous),
                "persists_point": point_index(persists),
                "fixed_point": point_index(fixed) if fixed is not None else None,
                "builds": build_names(set().union(*(builds_of(detections[label], step) for label, step in moved))),
                "rule": rule(
                    statistics.median(detections[label].noise or 0.0 for label, _ in moved),
                    Counter(detections[label].noise_source for label, _ in moved).most_common(1)[0][0],
                    threshold,
                ),
            }
            candidates.append(
                Candidate(
                    microbenchmark_id=None,
                    group=group,
                    kind=direction,
                    arrived_in_id=version_ids[index],
                    values={
                        "group": group,
                        "group_set": comparison.group_set,
                        "arrived_in_build_id": build_ids[index],
                        "previous_version_id": version_ids[previous],
                        "fixed_in_id": version_ids[fixed] if fixed is not None and direction == "regression" else None,
                        "persists_until_id": version_ids[persists],
                        "level_before": statistics.median(s.level_before for _, s in moved),
                        "level_after": statistics.median(s.level_after for _, s in moved),
                        "change": statistics.median(s.change for _, s in moved),
                        "threshold": threshold,
                        "evidence": _json_safe(evidence),
                    },
                )
            )
    for label in comparison.labels:
        detection = detections[label]
        for step in detection.reported_steps:
            if (label, step.index) in folded:
                continue
            evidence = {
                **context,
                "subject": label,
                "values": {label: all_values[label]},
                "cv": [comparison.cv[c.key].get(label) for c in columns],
                "levels": [
                    detection.level_at(chosen.index(i)) if i in chosen_set else None for i in range(len(columns))
                ],
                "arrived_point": point_index(step.index),
                "previous_point": point_index(step.previous_index),
                "persists_point": point_index(step.persists_until_index),
                "fixed_point": point_index(step.ended_index) if step.ended_index is not None else None,
                "builds": build_names(builds_of(detection, step)),
                "rule": rule(detection.noise, detection.noise_source, step.threshold),
            }
            candidates.append(
                Candidate(
                    microbenchmark_id=comparison.microbenchmark_ids[label],
                    group=comparison.group_of.get(label) or "",
                    kind=step.direction,
                    arrived_in_id=version_ids[step.index],
                    values={
                        "group": comparison.group_of.get(label) or "",
                        "group_set": comparison.group_set,
                        "arrived_in_build_id": build_ids[step.index],
                        "previous_version_id": version_ids[step.previous_index],
                        "fixed_in_id": (
                            version_ids[step.ended_index]
                            if step.ended_index is not None and step.direction == "regression"
                            else None
                        ),
                        "persists_until_id": version_ids[step.persists_until_index],
                        "level_before": step.level_before,
                        "level_after": step.level_after,
                        "change": step.change,
                        "threshold": step.threshold,
                        "evidence": _json_safe(evidence),
                    },
                )
            )
    base_run_id = comparison.spec.base_run_id
    for candidate in candidates:
        candidate.values["base_run_id"] = base_run_id
    noises = [d.noise for d in detections.values() if d.noise is not None]
    return candidates, statistics.median(noises) if noises else None


def record_as_dict(r: Regression) -> dict[str, Any]:
    """A record as ``detect_regressions --format json`` prints it (give it with its versions, DBMS, server,
    workload and microbenchmark selected)."""
    rule = (r.evidence or {}).get("rule") or {}
    return {
        "id": r.pk,
        "kind": r.kind,
        "metric": "qps",
        "subject": r.subject,
        "group": r.group,
        "is_group": r.is_group,
        "dbms": r.arrived_in.dbms.name,
        "server": r.server.name,
        "workload": r.workload.name,
        "arrived_in": r.arrived_in.text,
        "previous_version": r.previous_version.text if r.previous_version else None,
        "fixed_in": r.fixed_in.text if r.fixed_in else None,
        "persists_until": r.persists_until.text if r.persists_until else None,
        "level_before": r.level_before,
        "level_after": r.level_after,
        "change": r.change,
        "noise": rule.get("noise"),
        "noise_source": rule.get("noise_source"),
        "threshold": r.threshold,
        "builds": (r.evidence or {}).get("builds", []),
        "releases": (r.evidence or {}).get("releases"),
        # Single-version excursions are not modelled yet: every record is a level shift.
        "outlier": False,
        "state": r.state,
    }


def _json_safe(value: Any) -> Any:
    """JSON has no infinity or NaN: a zero base's ∞ is stored as the string "inf"."""
    if isinstance(value, float) and not math.isfinite(value):
        return None if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(v) for v in value]
    return value


def _upsert(
    server_id: int, workload_id: int, dbms_id: int, candidates: Sequence[Candidate], summary: DetectionSummary
) -> None:
    now = timezone.now()
    with transaction.atomic():
        existing = {
            natural_key(r.microbenchmark_id, r.group, r.kind, r.arrived_in_id): r
            for r in Regression.objects.select_for_update().filter(
                server_id=server_id, workload_id=workload_id, arrived_in__dbms_id=dbms_id
            )
        }
        seen: list[int] = []
        for candidate in candidates:
            record = existing.get(candidate.key)
            if record is None:
                record, created = _create(server_id, workload_id, candidate, now)
                if created:
                    summary.created += 1
                    seen.append(record.pk)
                    continue
            changed = [name for name in DETECTED_FIELDS if getattr(record, name) != candidate.values[name]]
            if changed:
                for name in changed:
                    setattr(record, name, candidate.values[name])
                record.detected_at = now
                record.save(update_fields=[*changed, "detected_at", "updated_at"])
                summary.updated += 1
            else:
                summary.unchanged += 1
            seen.append(record.pk)
        Regression.objects.filter(pk__in=seen).update(detected_at=now)
        seen_ids = set(seen)
        summary.stale += sum(1 for r in existing.values() if r.pk not in seen_ids)
        summary.regression_ids.extend(seen)


def _create(server_id: int, workload_id: int, candidate: Candidate, now: Any) -> tuple[Regression, bool]:
    fields = {
        "server_id": server_id,
        "workload_id": workload_id,
        "microbenchmark_id": candidate.microbenchmark_id,
        "kind": candidate.kind,
        "arrived_in_id": candidate.arrived_in_id,
    }
    try:
        # A savepoint: a concurrent detection may have stored the same record a moment ago.
        with transaction.atomic():
            return Regression.objects.create(**fields, **candidate.values, detected_at=now), True
    except IntegrityError:
        lookup = dict(fields)
        if candidate.microbenchmark_id is None:
            lookup["group"] = candidate.group
        return Regression.objects.get(**lookup), False


# --------------------------------------------------------------------------- triage


def _actor(user: Any) -> Any:
    """The user to log, or None for an anonymous or absent one (a task or the command)."""
    return user if user is not None and user.is_authenticated else None


def triage(
    regression_ids: Iterable[int], to_state: str, user: AbstractBaseUser | AnonymousUser | None, note: str = ""
) -> int:
    """Move regressions to ``to_state``, writing one TriageEvent each; returns how many changed state.

    Records already in ``to_state`` are left alone unless a note is given, which
    is then logged as an event of its own (the audit log keeps every word).
    """
    if to_state not in State.values:
        raise ValueError(f"unknown state {to_state!r}; one of {', '.join(State.values)}")
    ids = list(regression_ids)
    actor = _actor(user)
    with transaction.atomic():
        rows = list(Regression.objects.select_for_update().filter(pk__in=ids).values_list("pk", "state"))
        moving = [(pk, state) for pk, state in rows if state != to_state]
        logged = moving if not note else rows
        Regression.objects.filter(pk__in=[pk for pk, _ in moving]).update(state=to_state, updated_at=timezone.now())
        TriageEvent.objects.bulk_create(
            TriageEvent(regression_id=pk, user=actor, from_state=state, to_state=to_state, note=note)
            for pk, state in logged
        )
    return len(moving)


@dataclass
class LinkResult:
    bug: Bug
    linked: list[int]  # regressions the bug was newly linked to (the first one included)
    carried: list[int]  # of those, the regressions on other servers


def link_bug(
    regression: Regression,
    key_or_url: str,
    *,
    user: AbstractBaseUser | AnonymousUser | None = None,
    title: str = "",
    carry: bool = False,
) -> LinkResult:
    """Link a bug (key or URL, see ``reports.bugs``) to a regression; ValueError for a reference that is none.

    With ``carry`` the bug is also linked to the same regression on other servers
    (``same_regression_elsewhere``). New and acknowledged records move to "bug
    filed"; every link is a TriageEvent.
    """
    return link_bug_to_many([regression.pk], key_or_url, user=user, title=title, carry=carry)


def link_bug_to_many(
    regression_ids: Iterable[int],
    key_or_url: str,
    *,
    user: AbstractBaseUser | AnonymousUser | None = None,
    title: str = "",
    carry: bool = False,
) -> LinkResult:
    ref = bugrefs.parse(key_or_url)
    ids = list(dict.fromkeys(regression_ids))
    with transaction.atomic():
        bug, created = Bug.objects.get_or_create(
            tracker=ref.tracker, key=ref.key, defaults={"url": ref.url, "title": title}
        )
        if title and not created and not bug.title:
            bug.title = title
            bug.save(update_fields=["title"])
        targets = list(Regression.objects.filter(pk__in=ids).select_related("arrived_in", "previous_version"))
        carried: list[int] = []
        if carry:
            for regression in targets:
                carried.extend(same_regression_elsewhere(regression).values_list("pk", flat=True))
            carried = [pk for pk in dict.fromkeys(carried) if pk not in ids]
        linked = _link(bug, [*[r.pk for r in targets], *carried], user, carried=set(carried))
    return LinkResult(bug=bug, linked=linked, carried=[pk for pk in carried if pk in linked])


def _link(bug: Bug, regression_ids: Sequence[int], user: Any, *, carried: set[int]) -> list[int]:
    """Link in a fixed number of queries however many regressions; returns the ids newly linked."""
    through = Regression.bugs.through
    already = set(
        through.objects.filter(bug=bug, regression_id__in=regression_ids).values_list("regression_id", flat=True)
    )
    new = [pk for pk in regression_ids if pk not in already]
    through.objects.bulk_create([through(bug=bug, regression_id=pk) for pk in new], ignore_conflicts=True)
    states = dict(Regression.objects.filter(pk__in=new).values_list("pk", "state"))
    to_filed = [pk for pk in new if states.get(pk) in (State.NEW, State.ACKNOWLEDGED)]
    Regression.objects.filter(pk__in=to_filed).update(state=State.BUG_FILED, updated_at=timezone.now())
    actor = _actor(user)
    TriageEvent.objects.bulk_create(
        TriageEvent(
            regression_id=pk,
            user=actor,
            from_state=states[pk],
            to_state=State.BUG_FILED if pk in to_filed else states[pk],
            note=f"linked {bug.label}" + (" (carried from another server)" if pk in carried else ""),
        )
        for pk in new
        if pk in states
    )
    return [pk for pk in new if pk in states]


def unlink_bug(regression: Regression, bug: Bug, *, user: AbstractBaseUser | AnonymousUser | None = None) -> bool:
    removed, _ = Regression.bugs.through.objects.filter(regression=regression, bug=bug).delete()
    if removed:
        TriageEvent.objects.create(
            regression=regression,
            user=_actor(user),
            from_state=regression.state,
            to_state=regression.state,
            note=f"unlinked {bug.label}",
        )
    return bool(removed)


def same_regression_elsewhere(regression: Regression) -> QuerySet[Regression]:
    """The same change on other servers: same DBMS, kind and microbenchmark (or group), arriving at the same place.

    "The same place" is an overlap of the version intervals (previous version,
    arrived in]: a server that tested 8.0.28 and 8.0.32 sees at 8.0.32 what one
    that tested every release sees at 8.0.30.
    """
    found = Regression.objects.exclude(server_id=regression.server_id).filter(
        kind=regression.kind, arrived_in__dbms_id=regression.arrived_in.dbms_id
    )
    if regression.microbenchmark_id is not None:
        found = found.filter(microbenchmark_id=regression.microbenchmark_id)
    else:
        found = found.filter(microbenchmark__isnull=True, group=regression.group)
    arrived = regression.arrived_in.sort_key
    if regression.previous_version is None:
        return found.filter(arrived_in__sort_key=arrived)
    return found.filter(arrived_in__sort_key__gt=regression.previous_version.sort_key).filter(
        Q(previous_version__sort_key__lt=arrived) | Q(previous_version__isnull=True, arrived_in__sort_key=arrived)
    )


def comparison_markers(comparison: Comparison) -> dict[str, Any]:
    """Regressions of a comparison's series, placed on its columns: for charts, tables and the heatmap.

    Returns ``{"by_label": {label: [item]}, "by_group": {group: [item]}}`` where an
    item has the regression's id, url, kind, state, the column keys where it
    arrived and was fixed, and its bugs as (key, url). Two queries, whatever the
    number of regressions.
    """
    column_of_version: dict[str, str] = {}
    for column in comparison.columns:
        column_of_version.setdefault(column.version, column.key)
    found = (
        Regression.objects.filter(server_id=comparison.server_id, workload_id=comparison.workload_id)
        .select_related("arrived_in", "fixed_in", "microbenchmark")
        .prefetch_related("bugs")
    )
    by_label: dict[str, list[dict[str, Any]]] = {}
    by_group: dict[str, list[dict[str, Any]]] = {}
    for regression in found:
        item = {
            "id": regression.pk,
            "url": regression.get_absolute_url(),
            "kind": regression.kind,
            "state": regression.state,
            "arrived": column_of_version.get(regression.arrived_in.text),
            "arrived_version": regression.arrived_in.text,
            "fixed": column_of_version.get(regression.fixed_in.text) if regression.fixed_in else None,
            "bugs": [(bug.label, bug.url) for bug in regression.bugs.all()],
        }
        if regression.microbenchmark is not None:
            by_label.setdefault(regression.microbenchmark.label, []).append(item)
        elif regression.group:
            by_group.setdefault(regression.group, []).append(item)
    return {"by_label": by_label, "by_group": by_group}


def chart_markers(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Chart markers for the items that have bugs linked: what the write-ups annotate."""
    return [
        {
            "arrived": item["arrived"],
            "fixed": item["fixed"],
            "text": ", ".join(key for key, _ in item["bugs"]),
            "kind": item["kind"],
        }
        for item in items
        if item["bugs"]
    ]
