"""Start-up benchmark: how long a command or a web process takes to start, before it does any work.

    .venv/bin/python bench/startup_bench.py [--repeat 7] [--target 0.5]

Runs each command ``--repeat`` times in a fresh interpreter (SQLite in a
throwaway folder, no broker) and prints the median and worst wall time and the
median CPU time (user + system of the child: less disturbed than wall time on a
busy machine), and which heavy libraries the start loaded. The commands: a few
``manage.py … --help`` (Django set up, the command's modules imported, its
parser built, nothing run), ``manage.py check`` (which loads every URL and
view), and a web process's start (``django.setup()``, the URL configuration and
every view module, as the first request loads them). Then the first pages of a
fresh web process as gunicorn's worker serves them (the WSGI module, then its
application): the comparison and drill-down of a small real series (our
MariaDB bundle in tests/data), each rendered from scratch twice in one new
process, so what the first visitor after a worker's start pays shows beside
what the next one pays. Exits 1 when
``import_bundle --help`` misses ``--target`` seconds of CPU time (median): on a busy
machine wall time measures the queue for the cores, while a single-threaded
start's CPU time is close to its wall time on an idle one.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# Libraries a start should load only if it uses them (Celery's core always loads: django_celery_beat's models
# import it; its app, with the Redis client, loads where tasks are).
HEAVY = (
    "plotly",
    "scipy",
    "ruptures",
    "numpy",
    "pandas",
    "pydantic",
    "ninja",
    "prometheus_client",
    "redis",
    "cryptography",
)

# A web process: settings, apps, URL configuration (every view module with it), then what loaded.
WEB_START = f"""
import json, os, sys
os.environ["DJANGO_SETTINGS_MODULE"] = "benchdash.settings"
import django
django.setup()
from django.urls import get_resolver
get_resolver().url_patterns
print(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r}))), file=sys.stderr)
"""

# Run a command through manage.py's own entry point, then say what it loaded (on stderr, after its output).
COMMAND = f"""
import atexit, json, os, sys
sys.argv = ["manage.py", *sys.argv[1:]]
def loaded():
    print(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r}))), file=sys.stderr)
atexit.register(loaded)
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchdash.settings")
from django.core.management import execute_from_command_line
execute_from_command_line(sys.argv)
"""

# A web process's first pages, as gunicorn's worker serves them: the WSGI module imported (Django set up, the
# worker's warm-up), then the comparison and the drill-down of a small real series through the WSGI application,
# each twice (the second time from scratch again, the cache cleared): what the first visitor after a worker's
# start pays beyond what the next one does. Milliseconds on stderr.
FIRST_PAGES = """
import json, os, sys, time
from wsgiref.util import setup_testing_defaults
os.environ["DJANGO_SETTINGS_MODULE"] = "benchdash.settings"
start = time.perf_counter()
from benchdash.wsgi import application
timings = {"worker start": (time.perf_counter() - start) * 1000}
from django.core.cache import cache
from runs.models import Result, Run
base = Run.objects.order_by("pk").first()
microbenchmark = Result.objects.filter(run=base).order_by("pk").first().microbenchmark_id
pages = {"comparison": ("/compare/", f"base={base.pk}"),
         "drill-down": (f"/microbenchmarks/{microbenchmark}/", f"base={base.pk}")}
for name, (path, query) in pages.items():
    for attempt in ("first", "again"):
        cache.clear()
        environ = {"PATH_INFO": path, "QUERY_STRING": query}
        setup_testing_defaults(environ)
        status = []
        start = time.perf_counter()
        body = b"".join(application(environ, lambda s, h, *a: status.append(s)))
        timings[f"{name} {attempt}"] = (time.perf_counter() - start) * 1000
        assert status[0].startswith("200") and body, (path, status)
print(json.dumps(timings), file=sys.stderr)
"""
# The series of the first pages: our own sysbench bundle of four runs against MariaDB (tests/data/README.md).
FIRST_PAGES_BUNDLE = REPO / "tests" / "data" / "sysbench-mariadb-quick.tar.gz"

CASES: tuple[tuple[str, list[str]], ...] = (
    ("manage.py import_bundle --help", ["-c", COMMAND, "import_bundle", "--help"]),
    ("manage.py compare --help", ["-c", COMMAND, "compare", "--help"]),
    ("manage.py detect_regressions --help", ["-c", COMMAND, "detect_regressions", "--help"]),
    ("manage.py load_demo --help", ["-c", COMMAND, "load_demo", "--help"]),
    ("manage.py check", ["-c", COMMAND, "check"]),
    ("web process: setup + URLs + views", ["-c", WEB_START]),
)


def run_once(args: list[str], env: dict[str, str]) -> tuple[float, float, list[str]]:
    """(wall seconds, CPU seconds, heavy libraries loaded) of one run in a fresh interpreter."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    out = subprocess.run([sys.executable, *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode != 0:
        sys.exit(f"{' '.join(args[2:]) or 'web start'} failed:\n{out.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    heavy: list[str] = json.loads(out.stderr.strip().splitlines()[-1])
    return wall, cpu, heavy


def first_page_times(env: dict[str, str]) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, "-c", FIRST_PAGES], cwd=REPO, env=env, capture_output=True, text=True, timeout=120
    )
    if out.returncode != 0:
        sys.exit(f"first pages failed:\n{out.stderr}")
    times: dict[str, float] = json.loads(out.stderr.strip().splitlines()[-1])
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--target", type=float, default=0.5, help="CPU seconds for import_bundle --help (median)")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="benchdash-startup-") as var_dir:
        # PYTHONDONTWRITEBYTECODE would make every start compile the project's modules again (about 0.2 s here),
        # which a user's machine pays once and the Docker image never (it compiles them when it is built).
        drop = ("DATABASE_URL", "REDIS_URL", "PYTHONDONTWRITEBYTECODE")
        env = {k: v for k, v in os.environ.items() if k not in drop}
        env.update(BENCHDASH_VAR_DIR=var_dir, DEBUG="false")
        run_once(list(CASES[0][1]), env)  # compiles the .pyc files once, so no row pays for it
        rows = []
        for name, case in CASES:
            runs = [run_once(list(case), env) for _ in range(args.repeat)]
            walls = [r[0] for r in runs]
            cpus = [r[1] for r in runs]
            rows.append((name, statistics.median(walls), max(walls), statistics.median(cpus), runs[-1][2]))

        # The first pages: a database with one real series, then fresh processes rendering its pages.
        for prepare in (["migrate", "--verbosity", "0"], ["import_bundle", str(FIRST_PAGES_BUNDLE)]):
            subprocess.run(
                [sys.executable, "manage.py", *prepare], cwd=REPO, env=env, check=True, capture_output=True, timeout=300
            )
        first_pages = [first_page_times(env) for _ in range(args.repeat)]

    load = os.getloadavg()[0]
    print(f"Start-up benchmark: Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average {load:.1f}")
    print(f"{'command':<40} {'n':>3} {'median s':>9} {'worst s':>8} {'CPU s':>6}  heavy libraries loaded")
    for name, median, worst, cpu, heavy in rows:
        print(f"{name:<40} {args.repeat:>3} {median:>9.2f} {worst:>8.2f} {cpu:>6.2f}  {', '.join(heavy) or '-'}")
    print()
    print("a fresh web worker (ms, median / worst; 'again' is the same page from scratch once more)")
    for name in first_pages[0]:
        values = [times[name] for times in first_pages]
        print(f"  {name:<24} {statistics.median(values):>7.0f} {max(values):>7.0f}")
    met = rows[0][3] < args.target
    print(f"target import_bundle --help < {args.target:g} s of CPU time: {'met' if met else 'MISSED'}")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
