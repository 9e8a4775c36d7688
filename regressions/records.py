"""Stories as records: the candidates detection makes of them, and their storage.

A ``Candidate`` is one record as detection sees it, before it meets the database. ``upsert`` stores one
series' candidates in one release view, each on its natural key (server, workload, microbenchmark or group,
kind, arrived_in, release view, metric), so running detection again updates a story and never adds a row;
the series' points its stories' evidence shows are kept once per series and view (``SharedPoints``).

Stories keep their identity. A candidate whose exact key is not stored but that tells a stored story again
(same subject, metric and direction, one of its steps between two versions overlapping one of the stored
story's: an older point release imported between them moves the arrival) updates that record in place —
same id, triage, bugs and deliveries, its arrival moved.
A record detection no longer finds is deleted only when nobody touched it or
was told of it (state new, no bug, no logged event, no delivery); otherwise it is kept, marked
``no_longer_detected``, and ``superseded_by`` the story of the same subject, metric and direction detection
tells now (whose page its old links lead to), which takes over its triage state and bugs when it has none of
its own.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.db import IntegrityError, connection, transaction
from django.db.models import Field, Q
from django.utils import timezone

from regressions import stories
from regressions.evidence import Evidence
from regressions.models import Regression, SharedPoints, TriageEvent, points_digest
from runs import releases
from runs.bulk import create_rows
from runs.versions import sort_key

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
    "superseded_by_id",
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
        # The newest release when the default view reads it only as the newest: provisional until a newer one.
        "provisional_release": r.provisional_release,
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
        "figures": r.figures.as_json(),
        # Fixed in one maintained release line, still open in another (``stories.line_states``).
        "backport_gap": r.backport_gap,
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
        moved = _match_moved(candidates, existing)
        shared = _share_points(server_id, workload_id, candidates)
        stored_values = {candidate.key: _stored_values(candidate, shared) for candidate in candidates}
        new = _new_records(candidates, existing, stored_values)
        inserted, opened = _insert(server_id, workload_id, new, existing, summary, now)
        _inherit_from_other_view(list(inserted.values()), now)
        seen = _update_stored(candidates, existing, inserted, stored_values, summary, now, moved)
        gone = [r for key, r in existing.items() if key not in seen]
        _supersede(_retire_gone([r.pk for r in gone], summary, now), gone, seen)
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
            values = {
                **stored_values[candidate.key],
                "folded_into_id": link,
                "no_longer_detected": False,
                "superseded_by_id": None,
                "news": candidate.opened,
            }
            new.append((candidate, values))
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
    moved: Collection[int] = (),
) -> dict[NaturalKey, int]:
    """Link new members to new group stories and write what detection changed of the stored records, each in one
    statement; stamp the stored ones with this detection's time. Returns every candidate's record id by key.
    ``moved`` are the stored records whose arrival ``_match_moved`` moved: their ``arrived_in_id`` is written."""
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
        values = {
            **stored_values[candidate.key],
            "folded_into_id": folded_into_id,
            "no_longer_detected": False,
            "superseded_by_id": None,
            "arrived_in_id": candidate.arrived_in_id,
        }
        fields = [name for name in (*DETECTED_FIELDS, *STORY_FIELDS) if getattr(record, name) != values[name]]
        fields += ["arrived_in_id"] if record.pk in moved else []
        for name in fields:
            setattr(record, name, values[name])
        if fields:
            changed.append(record)
            changed_fields.update(fields)
        summary.updated += bool(fields)
        summary.unchanged += not fields
        seen[candidate.key] = record.pk
    if links:
        _link_members(links)
    if changed:
        for record in changed:
            record.detected_at = record.updated_at = now
        # One statement for all of them: a field a record did not change is written with the value it has.
        fields = [name for name in ("arrived_in_id", *DETECTED_FIELDS, *STORY_FIELDS) if name in changed_fields]
        Regression.objects.bulk_update(changed, [*fields, "detected_at", "updated_at"])
    # The records inserted above carry this detection's time already: only the stored ones are stamped.
    stamped = [pk for key, pk in seen.items() if key not in inserted]
    if stamped:
        Regression.objects.filter(pk__in=stamped).update(detected_at=now)
    return seen


def _link_members(links: Sequence[Regression]) -> None:
    """Write the new member stories' links to the group stories standing for them (``folded_into_id``), in one
    statement: on PostgreSQL an update from the pairs as two arrays, where ``bulk_update`` built (and compiled)
    a CASE of one WHEN per story."""
    if connection.vendor != "postgresql":
        Regression.objects.bulk_update(links, ["folded_into_id"])
        return
    quote = connection.ops.quote_name
    table, pk, link = quote(Regression._meta.db_table), quote(_column("id")), quote(_column("folded_into"))
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {table} SET {link} = pairs.target FROM unnest(%s::bigint[], %s::bigint[]) AS pairs(id, target) "
            f"WHERE {table}.{pk} = pairs.id",
            [[r.pk for r in links], [r.folded_into_id for r in links]],
        )


def _column(name: str) -> str:
    field = Regression._meta.get_field(name)
    if not isinstance(field, Field) or field.column is None:
        raise TypeError(f"Regression.{name} is no column")
    return field.column


def _retire_gone(gone: list[int], summary: DetectionSummary, now: Any) -> set[int]:
    """Records detection no longer finds: kept and marked when people touched them or were told of them (a state
    other than new, a bug, a logged event, a delivery), deleted otherwise. Returns the ids kept."""
    if not gone:
        # Most detections lose no story: not even the statements that would match nothing are built.
        return set()
    triaged = set(
        Regression.objects.filter(pk__in=gone)
        .filter(~Q(state=State.NEW) | Q(bugs__isnull=False) | Q(events__isnull=False) | Q(deliveries__isnull=False))
        .values_list("pk", flat=True)
    )
    Regression.objects.filter(pk__in=triaged).update(no_longer_detected=True, updated_at=now)
    Regression.objects.filter(pk__in=[pk for pk in gone if pk not in triaged]).delete()
    summary.stale += len(triaged)
    summary.removed += len(gone) - len(triaged)
    return triaged


def _drop_points(superseded: set[int]) -> None:
    """The points the stored records named before, when no record names them any more."""
    if not superseded:
        return
    try:
        with transaction.atomic():  # a savepoint: a row a concurrent detection names meanwhile stays
            SharedPoints.objects.filter(pk__in=superseded, regressions__isnull=True).delete()
    except IntegrityError:
        pass


def _subject_of(key: NaturalKey) -> tuple[int | None, str, str, str]:
    """What a story is a story of, whatever its arrival: (microbenchmark, group, direction, metric)."""
    microbenchmark_id, group, kind, _arrived, metric = key
    return (microbenchmark_id, group, kind, metric)


# The events that move a story in its own direction: its steps (a fix or a partial recovery goes the other way).
_STEPS = ("arrival", "further", "returned")


def _steps(events: Sequence[Any]) -> list[tuple[str, str]]:
    """A story's steps as (version before, version) sort keys, from its events."""
    return [
        (sort_key(e.get("previous_version") or ""), sort_key(e.get("version") or ""))
        for e in events
        if isinstance(e, dict) and e.get("kind") in _STEPS
    ]


def _overlap(one: Sequence[tuple[str, str]], other: Sequence[tuple[str, str]]) -> bool:
    return any(a_before < b_after and b_before < a_after for a_before, a_after in one for b_before, b_after in other)


def _match_moved(candidates: Sequence[Candidate], existing: dict[NaturalKey, Regression]) -> set[int]:
    """Match the candidates whose key is not stored to stored records of the same subject, metric and direction
    that no candidate names, when one of their steps overlaps one of the record's (version before, version]:
    the same story, its arrival moved by versions imported or deleted since (an older point release moves
    where the loss is first seen). The record is moved to the candidate's key in ``existing`` (its
    ``arrived_in_id`` set) and will be updated in place; returns the moved records' ids."""
    keys = {c.key for c in candidates}
    unclaimed: dict[tuple[int | None, str, str, str], list[Regression]] = {}
    for key, stored in existing.items():
        if key not in keys:
            unclaimed.setdefault(_subject_of(key), []).append(stored)
    moved: set[int] = set()
    for candidate in candidates:
        found = unclaimed.get(_subject_of(candidate.key))
        if candidate.key in existing or not found:
            continue
        steps = _steps(candidate.values.get("story_events") or [])
        same = next((r for r in found if _overlap(steps, _steps(r.story_events or []))), None)
        if same is None:
            continue
        found.remove(same)
        old_key = next(key for key, r in existing.items() if r is same)
        del existing[old_key]
        same.arrived_in_id = candidate.arrived_in_id
        existing[candidate.key] = same
        moved.add(same.pk)
    return moved


def _inherit_from_other_view(records: Sequence[Regression], now: Any) -> None:
    """New records take the triage (state, bugs) of the same story's record in the other release view: triage
    is one across views (``regressions.triage.with_other_views``). Two queries when any new record has one."""
    if not records:
        return

    def identity(r: Regression) -> tuple[Any, ...]:
        return (
            r.workload_id,
            r.microbenchmark_id,
            r.group if r.microbenchmark_id is None else "",
            r.kind,
            r.metric,
            r.arrived_in_id,
        )

    wanted = {identity(r): r for r in records}
    first = records[0]
    triaged = (
        Regression.objects.filter(
            server_id=first.server_id,
            workload_id=first.workload_id,
            arrived_in_id__in={r.arrived_in_id for r in records},
        )
        .exclude(releases=first.releases)
        .filter(~Q(state=State.NEW) | Q(bugs__isnull=False))
        .prefetch_related("bugs")
        .distinct()
    )
    through = Regression.bugs.through
    for other in triaged:
        record = wanted.get(identity(other))
        if record is None:
            continue
        Regression.objects.filter(pk=record.pk).update(state=other.state, updated_at=now)
        record.state = other.state
        through.objects.bulk_create(
            [through(regression_id=record.pk, bug_id=bug.pk) for bug in other.bugs.all()], ignore_conflicts=True
        )


def _supersede(kept_ids: set[int], gone: Sequence[Regression], seen: dict[NaturalKey, int]) -> None:
    """Link each kept record detection no longer finds to the story of the same subject, metric and direction
    it tells now (the first in the series' order), and give that story the record's triage state and bugs when
    it has none of its own (a triage event says where they came from)."""
    kept = [r for r in gone if r.pk in kept_ids]
    now = timezone.now()
    successors: dict[tuple[int | None, str, str, str], int] = {}
    for key, pk in seen.items():
        successors.setdefault(_subject_of(key), pk)
    links = {
        record.pk: successors[subject]
        for record in kept
        if (
            subject := _subject_of(
                natural_key(record.microbenchmark_id, record.group, record.kind, record.arrived_in_id, record.metric)
            )
        )
        in successors
    }
    for old, new in links.items():
        Regression.objects.filter(pk=old).update(superseded_by_id=new)
    _carry_triage(links, now)


def _carry_triage(links: dict[int, int], now: Any) -> None:
    """Superseded record → successor: the successor takes the state and the bugs of the story it replaces when
    it has no triage of its own."""
    if not links:
        return
    olds = {r.pk: r for r in Regression.objects.filter(pk__in=links).prefetch_related("bugs")}
    news = {r.pk: r for r in Regression.objects.filter(pk__in=links.values()).prefetch_related("bugs")}
    through = Regression.bugs.through
    for old_id, new_id in links.items():
        old, new = olds[old_id], news[new_id]
        if new.state != State.NEW or new.bugs.all() or (old.state == State.NEW and not old.bugs.all()):
            continue
        Regression.objects.filter(pk=new_id).update(state=old.state, updated_at=now)
        through.objects.bulk_create(
            [through(regression_id=new_id, bug_id=bug.pk) for bug in old.bugs.all()], ignore_conflicts=True
        )
        TriageEvent.objects.create(
            regression_id=new_id,
            from_state=new.state,
            to_state=old.state,
            note=f"carried from story #{old_id}, which this story supersedes",
        )
        new.state = old.state


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
