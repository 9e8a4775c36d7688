"""Start-up benchmark: how long a command or a web process takes to start, before it does any work.

    .venv/bin/python bench/startup_bench.py [--repeat 7] [--target 0.5] [--before DIR] [--instructions]

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

``--before DIR``: another checkout of the project (``git archive <commit> | tar -x -C DIR``, with a ``.venv``
link to this one's), measured in the same run, its runs alternating one by one with this checkout's so the
machine's load hits both alike; each row then shows both. ``--instructions``: the instructions one
``import_bundle --help`` executes (valgrind's callgrind; about a minute each): unlike times, the same on a busy
machine, so a change shows even when the load swamps it.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# Libraries a start should load only if it uses them (Celery, with django_celery_beat's models, loads in the web,
# the worker and beat, not in the commands that never read beat's schedules; its app, with the Redis client, loads
# where tasks are).
HEAVY = (
    "celery",
    "django_celery_beat",
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


def run_once(tree: Path, args: list[str], env: dict[str, str]) -> tuple[float, float, list[str]]:
    """(wall seconds, CPU seconds, heavy libraries loaded) of one run in a fresh interpreter."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    out = subprocess.run(
        [str(tree / ".venv" / "bin" / "python"), *args],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode != 0:
        sys.exit(f"{' '.join(args[2:]) or 'web start'} failed in {tree}:\n{out.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    heavy: list[str] = json.loads(out.stderr.strip().splitlines()[-1])
    return wall, cpu, heavy


def _checked(what: str, tree: Path, command: list[str], env: dict[str, str], seconds: int) -> str:
    """What ``command`` (run in ``tree``) printed on stderr; the bench stops, saying so, when it fails."""
    out = subprocess.run(command, cwd=tree, env=env, capture_output=True, text=True, timeout=seconds)
    if out.returncode != 0:
        sys.exit(f"{what} failed in {tree}:\n{out.stderr}")
    return out.stderr


def first_page_times(tree: Path, env: dict[str, str]) -> dict[str, float]:
    printed = _checked("first pages", tree, [str(tree / ".venv" / "bin" / "python"), "-c", FIRST_PAGES], env, 120)
    times: dict[str, float] = json.loads(printed.strip().splitlines()[-1])
    return times


def instructions(tree: Path, env: dict[str, str]) -> int:
    """Instructions executed by one ``manage.py import_bundle --help`` (callgrind's count)."""
    with tempfile.TemporaryDirectory(prefix="benchdash-callgrind-") as folder:
        python = str(tree / ".venv" / "bin" / "python")
        command = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={folder}/out", python]
        printed = _checked("callgrind", tree, [*command, "manage.py", "import_bundle", "--help"], env, 900)
    return int(re.findall(r"Collected : (\d+)", printed)[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--target", type=float, default=0.5, help="CPU seconds for import_bundle --help (median)")
    parser.add_argument("--before", type=Path, help="another checkout, measured alternately in the same run")
    parser.add_argument("--instructions", action="store_true", help="count import_bundle --help's (callgrind)")
    args = parser.parse_args()
    trees = {"before": args.before.resolve(), "after": REPO} if args.before else {"this": REPO}

    with tempfile.TemporaryDirectory(prefix="benchdash-startup-") as var_root:
        # PYTHONDONTWRITEBYTECODE would make every start compile the project's modules again (about 0.2 s here),
        # which a user's machine pays once and the Docker image never (it compiles them when it is built).
        drop = ("DATABASE_URL", "REDIS_URL", "PYTHONDONTWRITEBYTECODE")
        base_env = {k: v for k, v in os.environ.items() if k not in drop}
        envs = {}
        for label in trees:  # a database of its own for each checkout: their migrations may differ
            (Path(var_root) / label).mkdir()
            envs[label] = {**base_env, "BENCHDASH_VAR_DIR": str(Path(var_root) / label), "DEBUG": "false"}
        for label, tree in trees.items():
            run_once(tree, list(CASES[0][1]), envs[label])  # compiles the .pyc files once, so no row pays for it
        rows = []
        for name, case in CASES:
            runs: dict[str, list[tuple[float, float, list[str]]]] = {label: [] for label in trees}
            for _ in range(args.repeat):
                for label, tree in trees.items():
                    runs[label].append(run_once(tree, list(case), envs[label]))
            for label in trees:
                walls = [r[0] for r in runs[label]]
                cpus = [r[1] for r in runs[label]]
                rows.append(
                    (name, label, statistics.median(walls), max(walls), statistics.median(cpus), runs[label][-1][2])
                )
        counts = {label: instructions(tree, envs[label]) for label, tree in trees.items()} if args.instructions else {}

        # The first pages: a database with one real series, then fresh processes rendering its pages.
        for label, tree in trees.items():
            for prepare in (["migrate", "--verbosity", "0"], ["import_bundle", str(FIRST_PAGES_BUNDLE)]):
                subprocess.run(
                    [str(tree / ".venv" / "bin" / "python"), "manage.py", *prepare],
                    cwd=tree,
                    env=envs[label],
                    check=True,
                    capture_output=True,
                    timeout=300,
                )
        first_pages: dict[str, list[dict[str, float]]] = {label: [] for label in trees}
        for _ in range(args.repeat):
            for label, tree in trees.items():
                first_pages[label].append(first_page_times(tree, envs[label]))

    load = os.getloadavg()
    print(
        f"Start-up benchmark: Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, "
        f"load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f} (1, 5, 15 min)"
    )
    print(f"{'command':<40} {'tree':<7} {'n':>3} {'median s':>9} {'worst s':>8} {'CPU s':>6}  heavy libraries loaded")
    for name, label, median, worst, cpu, heavy in rows:
        figures = f"{args.repeat:>3} {median:>9.2f} {worst:>8.2f} {cpu:>6.2f}"
        print(f"{name:<40} {label:<7} {figures}  {', '.join(heavy) or '-'}")
    for label, count in counts.items():
        print(f"instructions, import_bundle --help, {label}: {count / 1e9:.3f} G (callgrind)")
    print()
    print("a fresh web worker (ms, median / worst; 'again' is the same page from scratch once more)")
    for label in trees:
        for name in first_pages[label][0]:
            values = [times[name] for times in first_pages[label]]
            print(f"  {name:<24} {label:<7} {statistics.median(values):>7.0f} {max(values):>7.0f}")
    ours = next(row for row in rows if row[1] == ("after" if args.before else "this"))
    met = ours[4] < args.target
    print(f"target import_bundle --help < {args.target:g} s of CPU time: {'met' if met else 'MISSED'}")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
