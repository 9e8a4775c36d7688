"""Starting a web process or a command loads no plotting or numerical library it does not use.

plotly.py (its import and schema decoding took most of a second), scipy, numpy and
ruptures are heavy: a page draws its figures as plain dicts and a command's start
(run by scripts, often many at once) should not pay for them. Each check runs in
a fresh interpreter, so what an earlier test imported cannot hide an import.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("plotly", "_plotly_utils", "scipy", "ruptures", "numpy")

_LOADED = f"""
import json, sys
print(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r}))))
"""

_SETUP = """
import os
os.environ["DJANGO_SETTINGS_MODULE"] = "benchdash.settings"
import benchdash.settings
import django
django.setup()
"""


def _heavy_modules_after(code: str) -> list[str]:
    out = subprocess.run(
        [sys.executable, "-c", _SETUP + code + _LOADED], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    loaded: list[str] = json.loads(out.stdout.strip().splitlines()[-1])
    return loaded


def test_django_setup_with_every_apps_urls_and_views_imports_no_plotly_scipy_or_ruptures() -> None:
    code = """
import importlib
from django.apps import apps
from django.urls import get_resolver
get_resolver().url_patterns  # the whole URL configuration, as the first request loads it
names = []
for config in apps.get_app_configs():
    folder = __import__("pathlib").Path(config.path)
    if not str(folder).startswith(os.getcwd()):
        continue  # Django's and third-party apps
    for path in sorted(folder.glob("*.py")):
        if path.stem in ("urls", "views", "api") or path.stem.endswith("_views"):
            names.append(f"{config.name}.{path.stem}")
for name in names:
    importlib.import_module(name)
assert len(names) >= 10, names
"""
    assert _heavy_modules_after(code) == []


def test_loading_every_management_command_of_the_project_imports_no_plotly_scipy_or_ruptures() -> None:
    code = """
from django.core.management import get_commands, load_command_class
ours = {name: app for name, app in get_commands().items() if not app.startswith("django")}
for name, app in ours.items():
    load_command_class(app, name).create_parser("manage.py", name)
assert "import_bundle" in ours and "compare" in ours, ours
"""
    assert _heavy_modules_after(code) == []


def test_the_check_sees_a_heavy_import() -> None:
    # The check itself works: importing plotly.graph_objects is reported.
    assert "plotly" in _heavy_modules_after("import plotly.graph_objects")
