"""What apps above reports pin onto its pages: regression markers on charts, tables and heatmaps.

Reports draws comparisons and knows nothing of regression records; the regressions
app provides one at start-up (``benchdash.hooks.MARKERS``) that places its records on a
comparison's columns and says when they change (for the page cache's key). With
no provider, pages show no markers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from benchdash import hooks

if TYPE_CHECKING:
    from reports.compare import Comparison


@dataclass(frozen=True)
class Record:
    """A record as reports shows it on a timeline: what happened, in which versions, and its bugs."""

    url: str
    kind: str  # "regression" or "improvement"
    kind_display: str
    arrived: str
    fixed: str | None
    bugs: tuple[tuple[str, str], ...] = ()  # (label, url)
    summary: str = ""  # the story in one line
    state: str = ""  # its triage state, as shown
    metric: str = "qps"
    outlier: bool = False
    folded: bool = False  # told by its group's story in lists
    no_longer_detected: bool = False

    @property
    def improvement(self) -> bool:
        return self.kind == "improvement"


class Provider(Protocol):
    def markers(self, comparison: Comparison) -> dict[str, Any]:
        """``{"by_label": {label: [item]}, "by_group": {group: [item]}}``; an item has at least the column
        keys ``arrived`` and ``fixed``, ``kind`` and ``bugs`` as (key, url) pairs."""
        ...

    def stamp_sql(self) -> str:
        """An SQL expression whose text changes whenever the markers of the series would: the series is the
        outer query's ``series.server_id`` and ``series.workload_id`` (pages put it in the one query that
        makes their cache key)."""
        ...

    def records(
        self, server_id: int, workload_id: int, microbenchmark_id: int | None, group: str, every_metric: bool = False
    ) -> list[Record]:
        """The records of one microbenchmark, or of a group as a whole when ``microbenchmark_id`` is None,
        oldest arrival first: QPS stories, or with ``every_metric`` the HW and suite metrics' own too."""
        ...


def _providers() -> tuple[Provider, ...]:
    return hooks.provided(hooks.MARKERS)


def comparison_markers(comparison: Comparison) -> dict[str, Any]:
    by_label: dict[str, list[dict[str, Any]]] = {}
    by_group: dict[str, list[dict[str, Any]]] = {}
    for provider in _providers():
        found = provider.markers(comparison)
        for label, items in found.get("by_label", {}).items():
            by_label.setdefault(label, []).extend(items)
        for group, items in found.get("by_group", {}).items():
            by_group.setdefault(group, []).extend(items)
    return {"by_label": by_label, "by_group": by_group}


def stamp_sql() -> list[str]:
    return [provider.stamp_sql() for provider in _providers()]


def records(
    server_id: int, workload_id: int, microbenchmark_id: int | None, group: str = "", every_metric: bool = False
) -> list[Record]:
    found: list[Record] = []
    for provider in _providers():
        found.extend(provider.records(server_id, workload_id, microbenchmark_id, group, every_metric))
    return found


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


def bug_lines(comparison: Comparison, markers: dict[str, Any]) -> dict[str, list[str]]:
    """Per group, one Markdown line per linked bug of the group or of its microbenchmarks: what a write-up
    prints under the group's table ("[MDEV-33894](…): regression of `scan_range=100`, arrived in 10.5.6")."""
    found: dict[str, list[str]] = {}

    def add(group: str, subject: str, item: dict[str, Any]) -> None:
        fixed = f", fixed in {comparison.column(item['fixed']).version}" if item.get("fixed") else ""
        for key, url in item["bugs"]:
            line = f"[{key}]({url}): {item['kind']} of {subject}, arrived in {item['arrived_version']}{fixed}"
            if line not in found.setdefault(group, []):
                found[group].append(line)

    for group in comparison.groups:
        for item in markers.get("by_group", {}).get(group, []):
            add(group, f"the group {group}", item)
        for label in comparison.labels:
            if comparison.group_of.get(label) == group:
                for item in markers.get("by_label", {}).get(label, []):
                    add(group, f"`{label}`", item)
    return found
