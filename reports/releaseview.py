"""A comparison read along release lines: every release, or the long-term release lines and the newest release.

A series that mixes long-term and short-term releases (MariaDB 10.11, 11.0–11.3,
11.4) reads as a zigzag when drawn in semantic order: the short-term releases
do not carry the long-term lines' later fixes. Charts therefore show the
long-term lines and the newest release of each DBMS by default (the newest
marked provisional when it is short-term: ``runs.releases``); tables and the reference exports keep every
version unless the reader switches (``releases=long-term|all``), so the
reference tables still match the author's files. Which lines are long-term is
``runs.releases`` (the vendors' table, with the ``BENCHDASH_RELEASE_LINES``
overrides).

No database: the view is cut from a computed comparison.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeVar, cast

from reports.compare import Comparison
from runs import releases
from runs.releases import RELEASE_VIEWS, ReleaseView

# What the page says for each view.
VIEW_NAMES: dict[str, str] = releases.VIEW_TEXT
V = TypeVar("V")


@dataclass(frozen=True)
class InView:
    """A comparison cut to the versions of one release view, and what was left out of it."""

    comparison: Comparison
    view: ReleaseView
    left_out: tuple[str, ...]  # column keys, in column order


def parse_view(value: str | None, default: ReleaseView) -> ReleaseView:
    """``releases`` from a request: empty means ``default``; anything else must be a known view."""
    if not value:
        return default
    if value not in RELEASE_VIEWS:
        raise ValueError(f"releases must be one of {', '.join(RELEASE_VIEWS)}, not {value!r}")
    return cast("ReleaseView", value)


def kept_columns(comparison: Comparison, view: ReleaseView, overrides: Mapping[str, Any] | None = None) -> list[str]:
    """The column keys that are points of ``view``, in column order; the base always is.

    Each DBMS of the comparison is read along its own lines (an explicit pick of runs may mix DBMSs on one
    server). Raises ValueError for a malformed override, as detection does.
    """
    by_dbms: dict[str, list[int]] = {}
    for i, column in enumerate(comparison.columns):
        by_dbms.setdefault(column.dbms, []).append(i)
    kept: set[int] = set()
    for dbms, indices in by_dbms.items():
        policy = releases.policy_for(dbms, comparison.server, overrides)
        keys = [comparison.columns[i].key for i in indices]
        base = keys.index(comparison.base) if comparison.base in keys else None
        points = releases.points_in_view([comparison.columns[i].version for i in indices], policy, view, keep=base)
        kept.update(i for i, point in zip(indices, points, strict=True) if point)
    return [column.key for i, column in enumerate(comparison.columns) if i in kept]


def in_view(comparison: Comparison, view: ReleaseView, overrides: Mapping[str, Any] | None = None) -> InView:
    """The comparison with only the versions of ``view`` (the same object when nothing is left out)."""
    keys = kept_columns(comparison, view, overrides)
    left_out = tuple(c.key for c in comparison.columns if c.key not in keys)
    if not left_out:
        return InView(comparison, view, ())
    return InView(_restricted(comparison, set(keys), view), view, left_out)


def provisional_labels(comparison: Comparison, overrides: Mapping[str, Any] | None = None) -> list[str]:
    """The newest release of each DBMS of the comparison when the default view reads it only because it is the
    newest (a short-term release: provisional until a newer one arrives), named as the comparison names it."""
    found = []
    for dbms in dict.fromkeys(c.dbms for c in comparison.columns):
        policy = releases.policy_for(dbms, comparison.server, overrides)
        newest = releases.provisional_release([c.version for c in comparison.columns if c.dbms == dbms], policy)
        key = next((c.key for c in comparison.columns if c.dbms == dbms and c.version == newest), None)
        if key is not None:
            found.append(comparison.version_label(key))
    return found


def left_out_labels(comparison: Comparison, cut: InView) -> list[str]:
    """The versions a view left out, named as the full comparison names them."""
    return [comparison.version_label(key) for key in cut.left_out]


def _only(by_key: Mapping[str, V], keys: set[str]) -> dict[str, V]:
    return {key: value for key, value in by_key.items() if key in keys}


def _restricted(comparison: Comparison, keys: set[str], view: str) -> Comparison:
    """The comparison's columns in ``keys`` only. Each column is divided by the base alone, so the remaining
    cells, flags and group summaries are those of the full comparison, not recomputed."""
    result = comparison.result
    cut_result = dataclasses.replace(
        result,
        runs=[key for key in result.runs if key in keys],
        relative=_only(result.relative, keys),
        flags=_only(result.flags, keys),
        summaries={(group, key): s for (group, key), s in result.summaries.items() if key in keys},
    )
    return dataclasses.replace(
        comparison,
        columns=[c for c in comparison.columns if c.key in keys],
        cells={cell: value for cell, value in comparison.cells.items() if cell[0] in keys},
        summaries={group: _only(by_key, keys) for group, by_key in comparison.summaries.items()},
        result=cut_result,
        sla_missed={cell for cell in comparison.sla_missed if cell[0] in keys},
        # Charts built from it are cached under this key: never under the full comparison's.
        cache_key=f"{comparison.cache_key}:releases={view}" if comparison.cache_key else "",
    )
