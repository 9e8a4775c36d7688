"""plotly.js served from benchdash's own static files: the cartesian bundle, pinned, at the plotly package's version."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from django.contrib.staticfiles import finders

from reports import staticfiles

ROOT = Path(__file__).resolve().parent.parent


def test_package_json_pins_the_cartesian_bundle_of_the_plotly_package_s_plotly_js() -> None:
    pinned = json.loads((ROOT / "package.json").read_text())["dependencies"]
    assert pinned == {staticfiles.CARTESIAN_PACKAGE: staticfiles.bundle_version(staticfiles.full_bundle())}
    lock = json.loads((ROOT / "package-lock.json").read_text())
    entry = lock["packages"][f"node_modules/{staticfiles.CARTESIAN_PACKAGE}"]
    assert entry["version"] == pinned[staticfiles.CARTESIAN_PACKAGE] and entry["integrity"].startswith("sha512-")
    assert "resolved" not in entry  # the lock names no download address: npm's configured registry serves it


def test_the_image_puts_the_bundle_where_the_finder_looks_under_its_python_prefix() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()
    copied = re.search(r"^COPY --from=plotly \S+ (\S+)$", dockerfile, re.MULTILINE)
    assert copied is not None
    assert Path(copied.group(1)) / staticfiles.CARTESIAN_FILE == staticfiles.cartesian_bundle("/usr/local")


@pytest.mark.skipif(shutil.which("npm") is None, reason="make install installs the cartesian bundle only with npm")
def test_make_install_s_cartesian_bundle_is_what_the_pages_get() -> None:
    found = Path(finders.find(staticfiles.PLOTLY_PATH))
    assert found == staticfiles.cartesian_bundle() and found.is_file()
    assert found.stat().st_size < staticfiles.full_bundle().stat().st_size / 3
    assert staticfiles.bundle_version(found) == staticfiles.bundle_version(staticfiles.full_bundle())
    assert staticfiles.PlotlyFinder().check() == []


def test_without_the_cartesian_bundle_the_full_plotly_js_is_served_and_check_says_so(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(staticfiles.sys, "prefix", str(tmp_path))  # a virtualenv where npm never ran
    finder = staticfiles.PlotlyFinder()
    assert Path(finder.find(staticfiles.PLOTLY_PATH)) == staticfiles.full_bundle()
    assert [w.id for w in finder.check()] == ["benchdash.W001"]
    ((name, storage),) = list(finder.list([]))
    assert (storage.prefix, name, storage.path(name)) == ("vendor", "plotly.min.js", str(staticfiles.full_bundle()))
