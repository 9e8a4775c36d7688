"""Starting a web process or a command loads no plotting or numerical library it does not use.

plotly.py (its import and schema decoding took most of a second), scipy, numpy and
ruptures are heavy: a page draws its figures as plain dicts and a command's start
(run by scripts, often many at once) should not pay for them. Each check runs in
a fresh interpreter, so what an earlier test imported cannot hide an import.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

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


# What a command's start must not pay for (issue 34: ``import_bundle --help`` < 0.5 s): Celery, its app with its
# broker client (the tasks' modules import it) and its signals (runner.tasks connects the worker's), beat's
# schedules (django_celery_beat, left out of such commands: benchdash.settings; its models import Celery's app and
# build every time zone), the API's schemas (pydantic), the metrics library (read when /metrics is scraped), the
# result format's schema, and the project's heavy modules, which Django's start reached through the models'
# imports, the apps' ready() hooks and the receivers they connect.
NOT_FOR_A_COMMANDS_START = (
    "benchdash.celery",
    "celery",
    "kombu",
    "django_celery_beat",
    "timezone_field",
    "cron_descriptor",
    "redis",
    "kombu.transport.redis",
    "pydantic",
    "ninja",
    "prometheus_client",
    "suites.openformat.document",
    "runs.importer",
    "reports.compare",
    "reports.tasks",
    "regressions.detection",
    "runner.benchmark",
    "runs.admin",
    "runner.admin",
    "runner.sysbench_runner",
    "cryptography",
    # The suites' parsers and descriptions: the models name suites by their stored names (suites.names).
    "suites.base",
    "suites.groups",
    "suites.sysbench.suite",
    "suites.sysbench.parse",
    # The stories' code, read when a record's evidence or figures are, or when a page asks the regressions app's
    # hooks (benchdash.hooks): markers, search, write-ups.
    "regressions.evidence",
    "regressions.figures",
    "regressions.stories",
    "regressions.changepoints",
    "regressions.markers",
    "regressions.search",
    "regressions.writeup",
    "reports.stats",
    "reports.markers",
    "reports.search",
    "reports.writeup",
    "runs.experiments",
    # The page cache (with the template and messages machinery), imported where a page is cached or a stamp bumped.
    "benchdash.pagecache",
    *HEAVY,
)

# manage.py's own entry point, then every module loaded (printed at exit, after the command's output).
_COMMAND = """
import atexit, json, os, sys
sys.argv = ["manage.py", *sys.argv[1:]]
atexit.register(lambda: print("\\n" + json.dumps(sorted(sys.modules))))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchdash.settings")
from django.core.management import execute_from_command_line
execute_from_command_line(sys.argv)
"""


def _command_run(*args: str, env: dict[str, str] | None = None, timeout: int = 120) -> tuple[str, set[str]]:
    """``manage.py *args`` in a process of its own (``_COMMAND``): what it printed, and every module it loaded."""
    out = subprocess.run(
        [sys.executable, "-c", _COMMAND, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout
    )
    assert out.returncode == 0, out.stderr
    return out.stdout, set(json.loads(out.stdout.strip().splitlines()[-1]))


def test_import_bundle_help_loads_neither_celery_nor_the_api_nor_the_import() -> None:
    printed, loaded = _command_run("import_bundle", "--help")
    assert "usage:" in printed
    assert "runs.management.commands.import_bundle" in loaded  # the probe sees the command's own imports
    assert sorted(loaded & set(NOT_FOR_A_COMMANDS_START)) == []


def _installed_apps_of(*argv: str) -> list[str]:
    code = f"""
import json, os, sys
sys.argv = {list(argv)!r}
os.environ["DJANGO_SETTINGS_MODULE"] = "benchdash.settings"
import django
django.setup()
from django.apps import apps
print(json.dumps([config.name for config in apps.get_app_configs()]))
"""
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    names: list[str] = json.loads(out.stdout.strip().splitlines()[-1])
    return names


def test_only_the_commands_that_never_read_beats_schedules_start_without_django_celery_beat() -> None:
    from django.conf import settings
    from django.core.management import get_commands, load_command_class

    ours = {name: app for name, app in get_commands().items() if not app.startswith(("django", "axes", "whitenoise"))}
    assert ours.keys() >= settings.COMMANDS_WITHOUT_BEAT, sorted(settings.COMMANDS_WITHOUT_BEAT - ours.keys())
    assert "check_beat" not in settings.COMMANDS_WITHOUT_BEAT and "load_demo" not in settings.COMMANDS_WITHOUT_BEAT
    # Without beat's app the migrations cannot load (runner's depend on its): no such command may check them first.
    checking = [
        name
        for name in settings.COMMANDS_WITHOUT_BEAT
        if load_command_class(ours[name], name).requires_migrations_checks
    ]
    assert checking == []
    assert "django_celery_beat" not in _installed_apps_of("manage.py", "import_bundle", "--help")
    for argv in (["manage.py", "migrate"], ["manage.py", "check_beat"], ["manage.py", "shell"], ["celery", "beat"]):
        assert "django_celery_beat" in _installed_apps_of(*argv), argv


def test_import_bundle_imports_a_bundle_in_a_process_without_beats_app(tmp_path: Path) -> None:
    # The database is migrated by a process with every app (as compose's migrate service does); the command then
    # stores, refreshes and detects without django_celery_beat, loading no Celery along the way (eager tasks).
    env = {
        **{k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")},
        "BENCHDASH_VAR_DIR": str(tmp_path),
    }
    bundle = ROOT / "tests" / "data" / "sysbench-mariadb-quick.tar.gz"
    migrate = [sys.executable, "manage.py", "migrate", "--verbosity", "0"]
    migrated = subprocess.run(migrate, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert migrated.returncode == 0, migrated.stderr
    printed, loaded = _command_run("import_bundle", str(bundle), env=env, timeout=600)
    assert "bundle 1, 4 runs" in printed
    assert "runs.importer" in loaded and "django_celery_beat" not in loaded


@pytest.mark.parametrize("app", ["runs", "reports", "regressions", "runner"])
def test_a_tasks_module_imported_alone_sends_through_the_projects_celery_app(app: str) -> None:
    # With benchdash/__init__.py no longer importing the app, a task must still never be sent through Celery's
    # default app (unconfigured: it would look for an AMQP broker on localhost): each tasks module imports the
    # project's first. Each in a process of its own, so that no other tasks module makes the app current.
    code = f"""
import celery, importlib
from django.conf import settings
module = importlib.import_module("{app}.tasks")
tasks = [value for value in vars(module).values() if isinstance(value, celery.Task)]
assert tasks, "no task found in {app}.tasks"
assert celery.current_app.main == "benchdash", celery.current_app.main
for task in tasks:
    assert task.app.main == "benchdash", task.name
    assert task.app.conf.broker_url == settings.CELERY_BROKER_URL, task.app.conf.broker_url
    assert task.name in task.app.tasks, task.name
"""
    out = subprocess.run([sys.executable, "-c", _SETUP + code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr


def test_the_admins_system_check_checks_every_apps_modeladmins_without_the_url_configuration() -> None:
    # Django starts without importing the admin modules (benchdash.adminsite); its check must still see them all.
    code = """
import sys
from django.contrib import admin
from django.core import checks
assert "runs.admin" not in sys.modules and not admin.site._registry
assert checks.run_checks(tags=[checks.Tags.admin]) == []
from runs.models import Bundle
from runner.models import Target
assert Bundle in admin.site._registry and Target in admin.site._registry, sorted(map(str, admin.site._registry))
"""
    out = subprocess.run([sys.executable, "-c", _SETUP + code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
