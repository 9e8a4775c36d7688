"""Serve plotly.js as ``vendor/plotly.min.js`` from an installed package, so no CDN and no copy in the repo.

The smallest official build that has every trace the pages draw (scatter, bar, heatmap) is plotly.js's cartesian
bundle: ``make install`` puts it, pinned by package.json and package-lock.json, under ``<virtualenv>/js`` (the
Docker image under its Python prefix). Where it is absent (a machine without npm) the full plotly.js the plotly
Python package ships is served instead: the same charts from a 4.8 MB script rather than 1.5 MB, and
``manage.py check`` says so.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

from django.contrib.staticfiles.finders import BaseFinder
from django.core import checks
from django.core.files.storage import FileSystemStorage

PLOTLY_PATH = "vendor/plotly.min.js"
CARTESIAN_PACKAGE = "plotly.js-cartesian-dist-min"
CARTESIAN_FILE = "plotly-cartesian.min.js"


def cartesian_bundle(prefix: str | None = None) -> Path:
    """Where ``make install`` (or the image) puts plotly.js's cartesian bundle, whether or not it is there."""
    return Path(prefix or sys.prefix) / "js" / "node_modules" / CARTESIAN_PACKAGE / CARTESIAN_FILE


def full_bundle() -> Path:
    # Found without importing plotly: its import costs a web process's start-up time and memory, and only one of
    # its files is wanted here.
    spec = importlib.util.find_spec("plotly")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("the plotly package is not installed: plotly.min.js cannot be served")
    return Path(next(iter(spec.submodule_search_locations))).resolve() / "package_data" / "plotly.min.js"


def served_bundle() -> Path:
    """The plotly.js file served as ``vendor/plotly.min.js``: the cartesian bundle when installed, else the full one."""
    cartesian = cartesian_bundle()
    return cartesian if cartesian.is_file() else full_bundle()


def bundle_version(path: Path) -> str:
    """The plotly.js version a bundle names in its banner ("plotly.js (cartesian - minified) v4.1.1" → "4.1.1")."""
    with path.open("rb") as handle:
        head = handle.read(4096).decode("utf-8", "replace")
    for line in head.splitlines():
        if "plotly.js" in line and " v" in line:
            return line.rsplit(" v", 1)[1].strip()
    raise ValueError(f"no plotly.js version in the banner of {path.name}")


class PlotlyFinder(BaseFinder):
    """Finds exactly one file: ``vendor/plotly.min.js`` → the bundle ``served_bundle`` picks."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.bundle = served_bundle()
        self.storage = FileSystemStorage(location=str(self.bundle.parent))

    def check(self, **kwargs: Any) -> list[Any]:
        if self.bundle.name == CARTESIAN_FILE:
            return []
        return [
            checks.Warning(
                "serving the full plotly.js (4.8 MB): plotly.js's cartesian bundle (1.5 MB) is not installed",
                hint="run `make install` on a machine with npm; it installs package-lock.json's bundle into .venv/js",
                id="benchdash.W001",
            )
        ]

    def find(self, path: str, find_all: bool = False, **kwargs: Any) -> Any:  # str, or a list with find_all
        if path == PLOTLY_PATH:
            found = str(self.bundle)
            return [found] if find_all else found
        return [] if find_all else ""

    def list(self, ignore_patterns: Any) -> Any:
        yield "plotly.min.js", _BundleStorage(self.bundle)


class _BundleStorage(FileSystemStorage):
    """collectstatic copies the bundle, whichever it is, to ``vendor/plotly.min.js``."""

    def __init__(self, bundle: Path) -> None:
        super().__init__(location=str(bundle.parent))
        self.bundle = bundle
        self.prefix = "vendor"

    def path(self, name: str) -> str:
        return str(self.bundle) if name == "plotly.min.js" else super().path(name)
