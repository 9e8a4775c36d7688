"""A story's evidence: the series' points, its subject's values per point and the rule it was found by.

``Evidence`` is written by detection (``detection.find_candidates``) and read by the story page
(``views.evidence_table``) and the API: a typed value between them, stored as JSON on the record
(``Regression.stored_evidence``, the series' points kept apart in ``SharedPoints``). ``as_json`` gives the
stored form and ``from_json`` reads it back, tolerating records stored before a field existed. Pure: no
Django.

Every story of one series and release view shares one ``SeriesContext``, so the points' JSON is made once
and every story's evidence names the same list (``records.upsert`` stores it once by that identity).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from regressions.stories import backport_gap_text

# A value as JSON stores it: a float, None, or "inf"/"-inf" for a zero base's ratio (``reports.stats.json_safe``).
JsonValue = float | str | None


@dataclass(frozen=True)
class EvidencePoint:
    """One build of the series as detection saw it: a point of the story, or why not."""

    version: str
    build: str
    column: str
    used: bool = True
    unused_because: str | None = None
    long_term: bool = True
    repeats: int = 1

    def as_json(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "build": self.build,
            "column": self.column,
            "used": self.used,
            "unused_because": self.unused_because,
            "long_term": self.long_term,
            "repeats": self.repeats,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> EvidencePoint:
        return cls(
            version=str(data.get("version", "")),
            build=str(data.get("build", "")),
            column=str(data.get("column", "")),
            used=bool(data.get("used", True)),
            unused_because=data.get("unused_because"),
            long_term=bool(data.get("long_term", True)),
            repeats=int(data.get("repeats") or 1),
        )


@dataclass(frozen=True)
class SeriesContext:
    """What every story of one series and release view shows alike."""

    base: str
    dop: int | None
    group_set: str
    releases: str
    experimental: bool
    points: tuple[EvidencePoint, ...]
    # The newest release when the default view reads it only as the newest (a short-term one): provisional.
    provisional_release: str | None = None

    @cached_property
    def points_json(self) -> list[dict[str, Any]]:
        """The points as stored, made once: every story's evidence of this context names this same list."""
        return [p.as_json() for p in self.points]


@dataclass(frozen=True)
class Rule:
    """The gate the story's steps passed: a minimum change and k·σ·√2 of the subject's noise."""

    min_change: float | None = None
    k: float | None = None
    noise: float | None = None
    noise_source: str = ""
    threshold: float | None = None

    def as_json(self) -> dict[str, Any]:
        return {
            "min_change": self.min_change,
            "k": self.k,
            "noise": self.noise,
            "noise_source": self.noise_source,
            "threshold": self.threshold,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Rule:
        return cls(
            min_change=data.get("min_change"),
            k=data.get("k"),
            noise=data.get("noise"),
            noise_source=str(data.get("noise_source") or ""),
            threshold=data.get("threshold"),
        )


@dataclass(frozen=True)
class LineStatus:
    line: str
    version: str
    fixed: bool


@dataclass(frozen=True)
class Evidence:
    """One story's evidence. Point indexes (``arrived_point`` …) index ``context.points``.

    ``values`` holds per shown label its value at every point: relative QPS for a QPS story, the metric's
    value per operation for a metric's story. ``members`` is set for a group story only (its folded member
    stories' labels), ``cv`` and ``levels`` for a microbenchmark's story (``levels`` for a group's metric
    story too), ``metric`` for a metric's story.
    """

    context: SeriesContext
    subject: str
    values: dict[str, list[JsonValue]]
    arrived_point: int | None = None
    previous_point: int | None = None
    persists_point: int | None = None
    fixed_point: int | None = None
    builds: tuple[str, ...] = ()
    rule: Rule = field(default_factory=Rule)
    metric: str | None = None
    members: tuple[str, ...] | None = None
    members_total: int | None = None
    cv: list[JsonValue] | None = None
    levels: list[JsonValue] | None = None
    # A regression story per release line it reaches (``stories.line_states``): line, version, fixed.
    lines: tuple[LineStatus, ...] = ()

    @property
    def backport_gap(self) -> str:
        """ "fixed in 11.4.8, still open in 10.11.14", or "" (``stories.backport_gap_text``, as the story says it)."""
        return backport_gap_text(self.lines)

    @property
    def points(self) -> tuple[EvidencePoint, ...]:
        return self.context.points

    @property
    def is_group(self) -> bool:
        return self.members is not None

    @property
    def labels(self) -> list[str]:
        """The columns the evidence shows: a group's folded members (all its members when none is folded), or
        the microbenchmark itself."""
        return list(self.members) if self.members else list(self.values)

    def value(self, label: str, index: int) -> float | None:
        """The label's value at a point as a number (missing, and ±∞ stored as text, are None)."""
        found = self.values.get(label)
        value = found[index] if found is not None and index < len(found) else None
        return float(value) if isinstance(value, int | float) else None

    def level(self, index: int) -> float | None:
        found = self.levels[index] if self.levels is not None and index < len(self.levels) else None
        return float(found) if isinstance(found, int | float) else None

    def cv_at(self, index: int) -> float | None:
        found = self.cv[index] if self.cv is not None and index < len(self.cv) else None
        return float(found) if isinstance(found, int | float) else None

    def incomplete(self, index: int) -> tuple[int, int] | None:
        """For a group story: (n, N) when the point lacks some of the group's fixed member set (every member with
        a value somewhere in the series), else None. Such a version is no point of the group's series."""
        if not self.is_group:
            return None
        measured = [found for found in self.values.values() if any(v is not None for v in found)]
        present = sum(1 for found in measured if index < len(found) and found[index] is not None)
        return (present, len(measured)) if 0 < present < len(measured) else None

    def as_json(self) -> dict[str, Any]:
        """The stored form (the keys every story shows, then its kind's own); ``points`` is the context's list."""
        c = self.context
        out: dict[str, Any] = {
            "base": c.base,
            "dop": c.dop,
            "group_set": c.group_set,
            "releases": c.releases,
            "experimental": c.experimental,
            "provisional_release": c.provisional_release,
            "points": c.points_json,
            "subject": self.subject,
        }
        if self.members is not None:
            out["members"] = list(self.members)
            out["members_total"] = self.members_total
        if self.metric is not None and self.members is None:
            out["metric"] = self.metric
        out["values"] = self.values
        if self.metric is not None and self.members is not None:
            out["metric"] = self.metric
        if self.cv is not None:
            out["cv"] = self.cv
        if self.levels is not None:
            out["levels"] = self.levels
        if self.lines:
            out["lines"] = [{"line": x.line, "version": x.version, "fixed": x.fixed} for x in self.lines]
        return out | {
            "arrived_point": self.arrived_point,
            "previous_point": self.previous_point,
            "persists_point": self.persists_point,
            "fixed_point": self.fixed_point,
            "builds": list(self.builds),
            "rule": self.rule.as_json(),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None) -> Evidence:
        """Read a stored evidence back; keys a record lacks (entered by hand, stored by an older detection)
        take their empty value."""
        data = data or {}
        points = data.get("points") or []
        context = SeriesContext(
            base=str(data.get("base") or ""),
            dop=data.get("dop"),
            group_set=str(data.get("group_set") or ""),
            releases=str(data.get("releases") or "all"),
            experimental=bool(data.get("experimental", False)),
            points=tuple(EvidencePoint.from_json(p) for p in points if isinstance(p, Mapping)),
            provisional_release=data.get("provisional_release"),
        )
        members = data.get("members")
        return cls(
            context=context,
            subject=str(data.get("subject") or ""),
            values={str(k): v for k, v in (data.get("values") or {}).items() if isinstance(v, list)},
            arrived_point=data.get("arrived_point"),
            previous_point=data.get("previous_point"),
            persists_point=data.get("persists_point"),
            fixed_point=data.get("fixed_point"),
            builds=tuple(data.get("builds") or ()),
            rule=Rule.from_json(data.get("rule") or {}),
            metric=data.get("metric"),
            members=tuple(members) if isinstance(members, list) else None,
            members_total=data.get("members_total"),
            cv=data.get("cv"),
            levels=data.get("levels"),
            lines=tuple(
                LineStatus(str(x.get("line", "")), str(x.get("version", "")), bool(x.get("fixed")))
                for x in data.get("lines") or ()
                if isinstance(x, Mapping)
            ),
        )
