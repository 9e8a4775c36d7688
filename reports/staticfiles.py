"""Serve plotly.js from the plotly package itself, so no CDN and no copy in the repo."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

from django.contrib.staticfiles.finders import BaseFinder
from django.core.files.storage import FileSystemStorage

PLOTLY_PATH = "vendor/plotly.min.js"


def _plotly_package_data() -> Path:
    # Found without importing plotly: its import costs a web process's start-up time and memory, and only one of
    # its files is wanted here.
    spec = importlib.util.find_spec("plotly")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("the plotly package is not installed: plotly.min.js cannot be served")
    return Path(next(iter(spec.submodule_search_locations))).resolve() / "package_data"


_PACKAGE_DATA = _plotly_package_data()


class PlotlyFinder(BaseFinder):
    """Finds exactly one file: ``vendor/plotly.min.js`` → plotly's bundled ``plotly.min.js``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.storage = FileSystemStorage(location=str(_PACKAGE_DATA))

    def check(self, **kwargs: Any) -> list[Any]:
        return []

    def find(self, path: str, find_all: bool = False, **kwargs: Any) -> Any:  # str, or a list with find_all
        if path == PLOTLY_PATH:
            found = str(_PACKAGE_DATA / "plotly.min.js")
            return [found] if find_all else found
        return [] if find_all else ""

    def list(self, ignore_patterns: Any) -> Any:
        yield "plotly.min.js", _PrefixedStorage(self.storage)


class _PrefixedStorage(FileSystemStorage):
    """collectstatic copies the file to ``vendor/plotly.min.js``."""

    def __init__(self, base: FileSystemStorage) -> None:
        super().__init__(location=base.location)
        self.prefix = "vendor"
