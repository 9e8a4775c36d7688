"""Serve plotly.js from the plotly package itself, so no CDN and no copy in the repo."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import plotly
from django.contrib.staticfiles.finders import BaseFinder
from django.core.files.storage import FileSystemStorage

PLOTLY_PATH = "vendor/plotly.min.js"
_PACKAGE_DATA = Path(plotly.__file__).resolve().parent / "package_data"


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
