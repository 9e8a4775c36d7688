"""Hooks: what an app lends to an app below it, which must not import it (the layering contract): the regressions
app's chart markers, search section and open stories to reports, the runner's confirmations and settings split to
runs, the accounts app's page variant to the page cache, the runs and regressions apps' figures to /metrics.

An app provides each in its ready() by the dotted path of the object, not the object: ready() runs in every
process (each command's start), and neither the provider's module (the regressions' story code, the runner's, a
metric source with the metrics library) nor the module asking (the page cache, the search) need load before
something uses them. The module that asks reads ``provided(hook)``: the objects, imported on its first question.
"""

from __future__ import annotations

from typing import Any

from django.utils.module_loading import import_string

# The hooks, by what they carry (each asking module says more of the objects' shape).
MARKERS = "reports.markers"  # a MarkerProvider: records on comparisons' charts, tables and heatmaps
SEARCH_SECTIONS = "reports.search.sections"  # (kind, title, finder): a section the header's search shows first
SEARCH_GROUP_NOTES = "reports.search.group_notes"  # group name -> a note on the search's group hit
OPEN_STORIES = "reports.writeup.open_stories"  # (server id, workload id) -> the series' open stories
CONFIRMATION_HOLDERS = "runs.confirmations.holders"  # new stories' facts -> {story id: why it waits}
CONFIRMATION_NOTES = "runs.confirmations.notes"  # story ids -> {story id: its confirmation in words}
SETTINGS_SPLITS = "runs.experiments.splits"  # a pair of runs -> their "settings or code?" split, or None
PAGE_VARIANTS = "benchdash.pagecache.variants"  # request -> what else a shared page's copy depends on
METRIC_SOURCES = "benchdash.metrics.sources"  # () -> metric families /metrics reads from the database when scraped

_PATHS: dict[str, list[str]] = {}
_loaded: dict[str, tuple[Any, ...]] = {}


def provide(hook: str, path: str) -> None:
    """``path``: ``"package.module.name"`` of the object lent; once per hook, in the order provided."""
    paths = _PATHS.setdefault(hook, [])
    if path not in paths:
        paths.append(path)
        _loaded.pop(hook, None)


def provided(hook: str) -> tuple[Any, ...]:
    """The objects provided for ``hook``, imported the first time it is asked."""
    found = _loaded.get(hook)
    if found is None:
        found = _loaded[hook] = tuple(import_string(path) for path in _PATHS.get(hook, ()))
    return found


def paths() -> dict[str, tuple[str, ...]]:
    """Every hook's dotted paths, for checking that each imports."""
    return {hook: tuple(found) for hook, found in _PATHS.items()}
