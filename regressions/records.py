"""Stories as records: the candidates detection makes of them, and their storage.

A ``Candidate`` is one record as detection sees it, before it meets the database. ``upsert`` stores one
series' candidates in one release view, each on its natural key (server, workload, microbenchmark or group,
kind, arrived_in, release view, metric), so running detection again updates a story and never adds a row;
the series' points its stories' evidence shows are kept once per series and view (``SharedPoints``).

A record detection no longer finds is deleted unless people triaged it (a state other than new, a linked
bug, a logged event); then it is kept, marked ``no_longer_detected``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from regressions import stories
from regressions.evidence import Evidence
from regressions.models import Regression, SharedPoints, points_digest
from runs import releases
from runs.bulk import create_rows

State = Regression.State
# (microbenchmark id, group, kind, arrived_in id, metric)
NaturalKey = tuple[int | None, str, str, int, str]

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
    # The evidence as stored: the series' points kept apart, once per series and view (``SharedPoints``).
    "stored_evidence",
    "shared_points_id",
)
# The story's own fields, detection's too.
STORY_FIELDS = (
    "metric",
    "outlier",
    "current_change",
    "worst_change",
    "story_events",
    "outliers",
    "noise",
    "noise_source",
    "noise_rule",
    "builds",
    "metric_steps",
    "summary",
    "qps_change",
    "folded_into_id",
    "no_longer_detected",
    "same_over_every_release",
)


@dataclass
class Candidate:
    """One record as detection sees it, before it meets the database."""

    microbenchmark_id: int | None
    group: str
    kind: str
    arrived_in_id: int
    values: dict[str, Any]
    releases: str = releases.DEFAULT_VIEW
    # The natural key of the group story that stands for this member story in lists.
    folded_into_key: NaturalKey | None = None
    opened: bool = False  # an open regression story of its own (not folded): news when it is new
    metric: str = stories.QPS
    # What the story rests on, as its page and the API show it (stored as JSON on the record).
    evidence: Evidence | None = None

    @property
    def key(self) -> NaturalKey:
        return natural_key(self.microbenchmark_id, self.group, self.kind, self.arrived_in_id, self.metric)


@dataclass
class DetectionSummary:
    series: int = 0  # DBMS series examined
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    stale: int = 0  # triaged records detection no longer finds: kept, marked no longer detected
    removed: int = 0  # untriaged records detection no longer finds: deleted
    noise: dict[str, float | None] = field(default_factory=dict)  # DBMS → median of the microbenchmarks' noise
    regression_ids: list[int] = field(default_factory=list)
    opened: list[int] = field(default_factory=list)  # new open regression stories (announced by story_opened)

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
            "removed": self.removed,
            "regression_ids": self.regression_ids,
            "opened": self.opened,
        }


def natural_key(
    microbenchmark_id: int | None, group: str, kind: str, arrived_in_id: int, metric: str = stories.QPS
) -> NaturalKey:
    """The key of a record within one release view of one server + workload (the view is part of the
    database's key: both views are stored side by side). A metric's story is a record of its own beside
    the QPS story of the same microbenchmark, kind and version."""
    # A microbenchmark record's group is informative only; a group record is its group.
    return (microbenchmark_id, "" if microbenchmark_id is not None else group, kind, arrived_in_id, metric)


def record_as_dict(r: Regression) -> dict[str, Any]:
    """A record as ``detect_regressions --format json`` and the API print it (give it with its versions, DBMS,
    server, workload, microbenchmark and folded_into selected)."""
    return {
        "id": r.pk,
        "kind": r.kind,
        "metric": r.metric,
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
        "current_change": r.current_change,
        "worst_change": r.worst_change,
        "outlier": r.outlier,
        "open": r.is_open_story,
        "folded_into": r.folded_into_id,
        "events": r.story_events,
        "outliers": r.outliers,
        "noise": r.noise,
        "noise_source": r.noise_source,
        "noise_rule": r.noise_rule,
        "threshold": r.threshold,
        "builds": r.builds,
        "releases": r.releases,
        "metric_steps": r.metric_steps,
        "qps_change": r.qps_change,
        "summary": r.summary,
        "no_longer_detected": r.no_longer_detected,
        "state": r.state,
    }


def upsert(
    server_id: int,
    workload_id: int,
    dbms_id: int,
    view: str,
    candidates: Sequence[Candidate],
    summary: DetectionSummary,
) -> list[int]:
    """Store one series' stories in one view; returns the ids of the new open stories (for ``story_opened``).

    The new records are inserted in one statement, in candidate order (so they get the ids one insert each
    would give); then the links of new member stories to new group stories, and the changed records, are each
    written in one statement: a fixed number of queries however many stories the series tells. A record
    detection no longer finds is deleted, unless people triaged it (a state other than new, a bug, a triage
    event): then it is kept and marked no longer detected.
    """
    now = timezone.now()
    with transaction.atomic():
        existing = {
            natural_key(r.microbenchmark_id, r.group, r.kind, r.arrived_in_id, r.metric): r
            for r in Regression.objects.select_for_update().filter(
                server_id=server_id, workload_id=workload_id, arrived_in__dbms_id=dbms_id, releases=view
            )
        }
        # The points the stored records name now (read before the records are changed below).
        named_before = {r.shared_points_id for r in existing.values() if r.shared_points_id is not None}
        shared = _share_points(server_id, workload_id, candidates)
        stored_values = {candidate.key: _stored_values(candidate, shared) for candidate in candidates}
        new = _new_records(candidates, existing, stored_values)
        inserted, opened = _insert(server_id, workload_id, new, existing, summary, now)
        seen = _update_stored(candidates, existing, inserted, stored_values, summary, now)
        _retire_gone([r.pk for key, r in existing.items() if key not in seen], summary, now)
        _drop_points(named_before - set(shared.values()))
        summary.regression_ids.extend(seen.values())
    return opened


def _new_records(
    candidates: Sequence[Candidate], existing: dict[NaturalKey, Regression], stored_values: dict[NaturalKey, Any]
) -> list[tuple[Candidate, dict[str, Any]]]:
    """The candidates no record stands for yet, with their values.

    A member names the group story standing for it when that came before it among the candidates (group stories
    come first); a new group's id is known only after the insert, so a new member is inserted with the link to an
    existing group alone, and linked to a new one afterwards."""
    earlier: set[NaturalKey] = set()
    new: list[tuple[Candidate, dict[str, Any]]] = []
    for candidate in candidates:
        target = candidate.folded_into_key
        if candidate.key not in existing:
            stored = existing.get(target) if target is not None and target in earlier else None
            link = stored.pk if stored is not None else None
            new.append(
                (candidate, {**stored_values[candidate.key], "folded_into_id": link, "no_longer_detected": False})
            )
        earlier.add(candidate.key)
    return new


def _insert(
    server_id: int,
    workload_id: int,
    new: list[tuple[Candidate, dict[str, Any]]],
    existing: dict[NaturalKey, Regression],
    summary: DetectionSummary,
    now: Any,
) -> tuple[dict[NaturalKey, Regression], list[int]]:
    """Insert the new records; returns them by key and the ids of the open stories among them. One a concurrent
    detection stored first joins ``existing``, to be updated like any stored record."""
    inserted: dict[NaturalKey, Regression] = {}
    opened: list[int] = []
    for (candidate, values), record in zip(new, _create_all(server_id, workload_id, new, now), strict=True):
        if record is None:
            # A concurrent detection stored some of them a moment ago: one at a time, as before.
            record, created = _create(server_id, workload_id, candidate, values, now)
            if not created:
                existing[candidate.key] = record
                continue
        inserted[candidate.key] = record
        summary.created += 1
        if candidate.opened:
            opened.append(record.pk)
    return inserted, opened


def _update_stored(
    candidates: Sequence[Candidate],
    existing: dict[NaturalKey, Regression],
    inserted: dict[NaturalKey, Regression],
    stored_values: dict[NaturalKey, Any],
    summary: DetectionSummary,
    now: Any,
) -> dict[NaturalKey, int]:
    """Link new members to new group stories and write what detection changed of the stored records, each in one
    statement; stamp the stored ones with this detection's time. Returns every candidate's record id by key."""
    seen: dict[NaturalKey, int] = {}
    links: list[Regression] = []
    changed: list[Regression] = []
    changed_fields: set[str] = set()
    for candidate in candidates:
        target = candidate.folded_into_key
        folded_into_id = seen.get(target) if target else None
        record = inserted.get(candidate.key)
        if record is not None:
            if record.folded_into_id != folded_into_id:
                record.folded_into_id = folded_into_id
                links.append(record)
            seen[candidate.key] = record.pk
            continue
        record = existing[candidate.key]
        values = {**stored_values[candidate.key], "folded_into_id": folded_into_id, "no_longer_detected": False}
        fields = [name for name in (*DETECTED_FIELDS, *STORY_FIELDS) if getattr(record, name) != values[name]]
        for name in fields:
            setattr(record, name, values[name])
        if fields:
            changed.append(record)
            changed_fields.update(fields)
        summary.updated += bool(fields)
        summary.unchanged += not fields
        seen[candidate.key] = record.pk
    if links:
        Regression.objects.bulk_update(links, ["folded_into_id"])
    if changed:
        for record in changed:
            record.detected_at = record.updated_at = now
        # One statement for all of them: a field a record did not change is written with the value it has.
        fields = [name for name in (*DETECTED_FIELDS, *STORY_FIELDS) if name in changed_fields]
        Regression.objects.bulk_update(changed, [*fields, "detected_at", "updated_at"])
    # The records inserted above carry this detection's time already: only the stored ones are stamped.
    stamped = [pk for key, pk in seen.items() if key not in inserted]
    if stamped:
        Regression.objects.filter(pk__in=stamped).update(detected_at=now)
    return seen


def _retire_gone(gone: list[int], summary: DetectionSummary, now: Any) -> None:
    """Records detection no longer finds: kept and marked when people triaged them, deleted otherwise."""
    triaged = set(
        Regression.objects.filter(pk__in=gone)
        .filter(~Q(state=State.NEW) | Q(bugs__isnull=False) | Q(events__isnull=False))
        .values_list("pk", flat=True)
    )
    Regression.objects.filter(pk__in=triaged).update(no_longer_detected=True, updated_at=now)
    Regression.objects.filter(pk__in=[pk for pk in gone if pk not in triaged]).delete()
    summary.stale += len(triaged)
    summary.removed += len(gone) - len(triaged)


def _drop_points(superseded: set[int]) -> None:
    """The points the stored records named before, when no record names them any more."""
    if not superseded:
        return
    try:
        with transaction.atomic():  # a savepoint: a row a concurrent detection names meanwhile stays
            SharedPoints.objects.filter(pk__in=superseded, regressions__isnull=True).delete()
    except IntegrityError:
        pass


def _share_points(server_id: int, workload_id: int, candidates: Sequence[Candidate]) -> dict[int, int]:
    """The ``SharedPoints`` rows of the points lists the candidates' evidence shows, found by digest or inserted:
    by the ``id()`` of each list (every story of a view shares its series' list), the row's id."""
    lists: dict[int, list[Any]] = {}
    for candidate in candidates:
        if candidate.evidence is not None:
            points = candidate.evidence.context.points_json
            lists.setdefault(id(points), points)
    if not lists:
        return {}
    digests = {key: points_digest(points) for key, points in lists.items()}
    rows = {
        digest: SharedPoints(server_id=server_id, workload_id=workload_id, digest=digest, points=lists[key])
        for key, digest in digests.items()
    }
    # One statement whether they are new or stored already (by this detection's series before, or by a
    # concurrent one a moment ago): a conflict on the digest gives back the stored row's id.
    SharedPoints.objects.bulk_create(
        list(rows.values()),
        update_conflicts=True,
        unique_fields=["server", "workload", "digest"],
        update_fields=["digest"],
    )
    found = {digest: row.pk for digest, row in rows.items()}
    return {key: found[digest] for key, digest in digests.items()}


def _stored_values(candidate: Candidate, shared: dict[int, int]) -> dict[str, Any]:
    """A candidate's values as the record stores them, with its evidence as JSON: ``points`` set to ``None`` and
    the row holding them named, when they are shared (``Regression.evidence`` gives back the evidence as made)."""
    out = dict(candidate.values)
    evidence = candidate.evidence.as_json() if candidate.evidence is not None else {}
    points = evidence.get("points")
    ref = shared.get(id(points)) if isinstance(points, list) else None
    out["stored_evidence"] = {**evidence, "points": None} if ref is not None else evidence
    out["shared_points_id"] = ref
    return out


def _create_all(
    server_id: int, workload_id: int, batch: Sequence[tuple[Candidate, dict[str, Any]]], now: Any
) -> list[Regression | None]:
    """Insert new records in one statement, in the given order (so they get the ids one insert each would give);
    all None when a concurrent detection stored one of them first (the caller then stores them one by one)."""
    if not batch:
        return []
    records = [
        Regression(**_own_fields(server_id, workload_id, candidate), **values, detected_at=now)
        for candidate, values in batch
    ]
    try:
        with transaction.atomic():  # a savepoint: a conflict must not abort the whole detection
            # On PostgreSQL through COPY, the ids taken from the sequence first (in order, as one insert each
            # gives them): a multi-row INSERT of the stories' columns had psycopg split and quote a statement
            # of some 40 parameters per story in Python.
            create_rows(Regression, records)
    except IntegrityError:
        return [None] * len(batch)
    return list(records)


def _own_fields(server_id: int, workload_id: int, candidate: Candidate) -> dict[str, Any]:
    """What a new record takes from its series and its candidate, besides the candidate's values."""
    return {
        "server_id": server_id,
        "workload_id": workload_id,
        "microbenchmark_id": candidate.microbenchmark_id,
        "kind": candidate.kind,
        "arrived_in_id": candidate.arrived_in_id,
        "releases": candidate.releases,
    }


def _create(
    server_id: int, workload_id: int, candidate: Candidate, values: dict[str, Any], now: Any
) -> tuple[Regression, bool]:
    fields = _own_fields(server_id, workload_id, candidate)
    try:
        # A savepoint: a concurrent detection may have stored the same record a moment ago.
        with transaction.atomic():
            return Regression.objects.create(**fields, **values, detected_at=now), True
    except IntegrityError:
        lookup = {**fields, "metric": candidate.metric}
        if candidate.microbenchmark_id is None:
            lookup["group"] = candidate.group
        return Regression.objects.get(**lookup), False
