"""The figures /metrics reads when scraped, beyond those counted as they happen (``benchdash.metrics``).

An app registers each source in its ready() by the dotted path of a callable giving metric families. Paths, not
the callables: a source's module needs the metrics library, which a process that is never scraped (a command,
a migration) should not import just to start.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from django.utils.module_loading import import_string

_PATHS: list[str] = []


def register(path: str) -> None:
    """``path``: ``"package.module.function"``, a callable with no arguments giving metric families."""
    if path not in _PATHS:
        _PATHS.append(path)


def sources() -> list[Callable[[], Iterable[Any]]]:
    return [import_string(path) for path in _PATHS]
