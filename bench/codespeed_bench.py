"""Side by side with Codespeed: the same data, the same client, interleaved requests.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres REDIS_URL=redis://127.0.0.1:6379/8 \\
        .venv/bin/python bench/codespeed_bench.py [--database bd_codespeed] [--requests 30] [--ingest-runs 20]

Codespeed (the Django dashboard behind PyPy's speed centre) is installed by name
with exact pins (``bench/codespeed-requirements.txt``) into its own virtualenv
``bench/out/codespeed-venv`` and given a small site of its own in
``bench/out/codespeed-site`` (settings, URLs, an SQLite database). benchdash uses
the database ``--database`` names (default ``bd_codespeed``; dropped and created
again) on the server of DATABASE_URL, never the database the URL names, and the Redis database
of REDIS_URL (its cache is cleared to measure pages from scratch).

Data: the M archive of ``bench/generate.py`` (34 series, 2,000 runs, 42 sysbench
microbenchmarks, 84,000 results) is imported into benchdash; the same numbers are
read back from benchdash's database and written into Codespeed's models with its
own virtualenv: a series is a Codespeed project (one executable, one branch), a
run is a revision, a microbenchmark a benchmark, and every result keeps its QPS.
The 60 revisions of the first series are tagged, so Codespeed's comparison holds
the same 60 versions × 42 microbenchmarks as benchdash's.

Both apps are served by gunicorn with 2 workers on loopback ports; benchdash's
uploads are imported by a real Celery worker. Figures (p50/p95 of the same
requests, alternating between the two servers):

a. the comparison page from scratch: Codespeed's /comparison/ and the
   /comparison/json/ its page loads (Codespeed caches nothing), against
   benchdash's /compare/ with the cache cleared before each request;
b. the all-microbenchmarks grid: Codespeed's timeline grid (its page and every
   /timeline/json/ page its script fetches, 4 benchmarks each) against
   benchdash's heatmap, from the cache and from scratch;
c. one microbenchmark over the series (Codespeed's timeline of one benchmark,
   200 revisions asked for; benchdash's drill-down), from scratch;
d. ingest over HTTP, results/s: Codespeed's /result/add/json/ one run (42
   results) per request, against benchdash's /api/bundles/ with a bundle of the
   same runs, until its worker has imported it;
e. comparison pages/s with ``--clients`` concurrent clients (benchdash serves
   its cached page, as in production; Codespeed has no cache).

Everything runs on 127.0.0.1, every loop is bounded, and the servers and the
worker are stopped by their process ids at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from run import free_port, percentile, queue_busy, run_threads  # noqa: E402

OUT = REPO / "bench" / "out"
VENV = OUT / "codespeed-venv"
SITE = OUT / "codespeed-site"
CODESPEED = "codespeed==0.13.0"
# Codespeed's sdist only builds with these: its setup.py needs setuptools-markdown
# (and pypandoc's old convert()), and its non-standard "django>=1.11<2.2" is only
# accepted by setuptools and wheel releases that still parse legacy specifiers.
BUILD_TOOLS = ("setuptools==65.5.1", "wheel==0.37.1", "pypandoc==1.5", "setuptools-markdown==0.4.1")
TARGETS_MS = {"comparison from scratch": 120.0, "drill-down from scratch": 60.0}
ENVIRONMENT = "bench-host"
INGEST_QUEUE = "codespeed-bench"
ARCHIVE_QUEUE = "codespeed-bench-archive"

SETTINGS = """\
from pathlib import Path
from codespeed.settings import *  # noqa: F401,F403  Codespeed's own defaults

BASE = Path(__file__).resolve().parent.parent
SECRET_KEY = "codespeed-bench-only"
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": str(BASE / "codespeed.sqlite3")}}
INSTALLED_APPS = [
    "django.contrib.auth", "django.contrib.contenttypes", "django.contrib.sessions",
    "django.contrib.messages", "django.contrib.staticfiles", "django.contrib.admin", "codespeed",
]
MIDDLEWARE = [
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
]
ROOT_URLCONF = "cs_site.urls"
TEMPLATES = [{
    "BACKEND": "django.template.backends.django.DjangoTemplates",
    "APP_DIRS": True,
    "OPTIONS": {"context_processors": [
        "django.template.context_processors.request",
        "django.template.context_processors.static",
        "django.contrib.auth.context_processors.auth",
        "django.contrib.messages.context_processors.messages",
    ]},
}]
STATIC_URL = "/static/"
USE_TZ = False
WEBSITE_NAME = "bench"
ALLOW_ANONYMOUS_POST = True
# 42 benchmarks are above its grid limit (30): without this its grid page answers 404.
DEF_BENCHMARK = "grid"
"""

URLS = """\
from django.conf.urls import include, url

urlpatterns = [url(r"^", include("codespeed.urls"))]
"""

WSGI = """\
import os
from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "cs_site.settings")
application = get_wsgi_application()
"""

# Run with Codespeed's interpreter: writes benchdash's numbers (a JSON file) into its models.
LOADER = """\
import datetime, json, sys
import django
django.setup()
from django.core.management import call_command
from django.db import transaction
from codespeed.models import Benchmark, Branch, Environment, Executable, Project, Result, Revision

call_command("migrate", verbosity=0)
data = json.load(open(sys.argv[1]))
start = datetime.datetime(2020, 1, 1)
with transaction.atomic():
    env = Environment.objects.create(name=data["environment"])
    benchmarks = {}
    for name in data["benchmarks"]:
        benchmarks[name] = Benchmark.objects.create(
            name=name, units_title="Throughput", units="QPS", lessisbetter=False,
            benchmark_type="C", default_on_comparison=True,
        )
    results = []
    for series in data["series"]:
        project = Project.objects.create(name=series["name"], repo_type="N", track=True, default_branch="default")
        branch = Branch.objects.create(name="default", project=project)
        exe = Executable.objects.create(name=series["executable"], project=project)
        for index, run in enumerate(series["runs"]):
            when = start + datetime.timedelta(hours=index)
            rev = Revision.objects.create(
                commitid=run["version"], tag=run["version"] if series["tagged"] else "",
                date=when, project=project, branch=branch,
            )
            for name, qps in run["results"]:
                results.append(Result(value=qps, date=when, revision=rev, executable=exe,
                                      benchmark=benchmarks[name], environment=env))
    Result.objects.bulk_create(results, batch_size=400)  # Django 2.2 on SQLite: 500 rows per statement at most
tagged = Executable.objects.get(project__name=data["series"][0]["name"])
print(json.dumps({"results": len(results), "exe": tagged.id, "env": env.id}))
"""


def cs_python() -> Path:
    return VENV / "bin" / "python"


def install_codespeed() -> None:
    """Codespeed's virtualenv, once (a marker file names what was installed)."""
    marker = VENV / "installed.txt"
    wanted = CODESPEED + "\n" + (REPO / "bench" / "codespeed-requirements.txt").read_text()
    if marker.exists() and marker.read_text() == wanted:
        return
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(VENV)], check=True)
    pip = [str(cs_python()), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    subprocess.run([*pip, *BUILD_TOOLS], check=True)
    subprocess.run([*pip, "--no-build-isolation", "--no-deps", CODESPEED], check=True)
    subprocess.run([*pip, "-r", str(REPO / "bench" / "codespeed-requirements.txt")], check=True)
    marker.write_text(wanted)


def write_site() -> dict[str, str]:
    """Codespeed's site from scratch (a fresh SQLite database); its environment variables."""
    package = SITE / "cs_site"
    package.mkdir(parents=True, exist_ok=True)
    (package / "__init__.py").write_text("")
    (package / "settings.py").write_text(SETTINGS)
    (package / "urls.py").write_text(URLS)
    (package / "wsgi.py").write_text(WSGI)
    (SITE / "loader.py").write_text(LOADER)
    (SITE / "codespeed.sqlite3").unlink(missing_ok=True)
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL", "DJANGO_SETTINGS_MODULE")}
    return {**env, "DJANGO_SETTINGS_MODULE": "cs_site.settings", "PYTHONPATH": str(SITE)}


def benchmark_name(test: str, range_size: int | None) -> str:
    return f"{test}.range{range_size}" if range_size else test


def get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=120) as response:
        body: bytes = response.read()
        if response.status != 200:
            raise RuntimeError(f"{url}: HTTP {response.status}")
        return body


def timed(fetch: Callable[[], object], before: Callable[[], object] | None = None) -> float:
    if before:
        before()
    start = time.perf_counter()
    fetch()
    return (time.perf_counter() - start) * 1000


def interleaved(
    requests: int, codespeed: Callable[[], float], benchdash: Callable[[], float]
) -> tuple[list[float], list[float]]:
    """Alternate the two servers, after 3 warm-up requests each, so load on the machine hits both alike."""
    for _ in range(3):
        codespeed()
        benchdash()
    cs, bd = [], []
    for _ in range(requests):
        cs.append(codespeed())
        bd.append(benchdash())
    return cs, bd


def wait_up(url: str, proc: subprocess.Popen[bytes]) -> None:
    for _ in range(300):
        if proc.poll() is not None:
            sys.exit(f"{url}: the server exited with status {proc.returncode}")
        try:
            get(url)
            return
        except OSError:
            time.sleep(0.2)
    sys.exit(f"{url}: not up after 60 s")


def throughput(fetch: Callable[[], object], clients: int, pages: int) -> tuple[float, int]:
    """Pages/s with ``clients`` threads sharing a fixed number of page loads; (rate, errors)."""
    lock = threading.Lock()
    left = [pages]
    errors = [0]

    def client() -> None:
        while True:
            with lock:
                if left[0] <= 0:
                    return
                left[0] -= 1
            try:
                fetch()
            except Exception:  # a failed page counts as an error, not as a crash of the measurement
                with lock:
                    errors[0] += 1

    return pages / run_threads(client, clients), errors[0]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--database", default="bd_codespeed", help="benchdash's database on DATABASE_URL's server (it is dropped)"
    )
    parser.add_argument("--requests", type=int, default=30, help="timed requests per figure and server")
    parser.add_argument("--ingest-runs", type=int, default=20, help="runs (42 results each) ingested per server")
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--pages", type=int, default=300, help="page loads per server for the concurrency figure")
    args = parser.parse_args()
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith("postgres"):
        sys.exit("benchdash is measured on PostgreSQL: set DATABASE_URL=postgres://… (its server is used)")
    if not re.fullmatch(r"[a-z0-9_]*codespeed[a-z0-9_]*", args.database):
        sys.exit(f"--database {args.database!r}: it is dropped and created again, so its name must contain codespeed")
    # The database the URL names is never touched: only the one of --database, on the same server.
    os.environ["DATABASE_URL"] = re.sub(r"/[^/]*$", f"/{args.database}", url)
    if not os.environ.get("REDIS_URL"):
        sys.exit("set REDIS_URL (e.g. redis://127.0.0.1:6379/8): gunicorn, the worker and this script share it")

    install_codespeed()
    cs_env = write_site()

    # The servers' tasks go to a queue of this script's own. The archive's after-import refreshes (a few seconds
    # of work per series) go to another one that no worker reads and that is emptied at the end: queued ahead
    # of the uploads they would make the ingest figure a measure of the backlog.
    bd_env = {**os.environ, "DEBUG": "false", "CELERY_QUEUE": INGEST_QUEUE}
    bd_env.pop("CELERY_TASK_ALWAYS_EAGER", None)
    archive_env = {**bd_env, "CELERY_QUEUE": ARCHIVE_QUEUE}
    os.environ.update({"DJANGO_SETTINGS_MODULE": "benchdash.settings", "DEBUG": "false", "CELERY_QUEUE": INGEST_QUEUE})
    import django

    django.setup()
    from django.core.cache import cache
    from django.core.management import call_command
    from django.db import connection

    db_name = connection.settings_dict["NAME"]
    assert db_name == args.database, db_name
    with connection._nodb_cursor() as cursor:
        cursor.execute(f'DROP DATABASE IF EXISTS "{db_name}"')
        cursor.execute(f'CREATE DATABASE "{db_name}"')
    connection.close()
    call_command("migrate", verbosity=0)
    cache.clear()
    purge_queues(bd_env)  # tasks left by an interrupted earlier run name rows that no longer exist

    from runs.models import Result, Run

    # The same numbers on both sides.
    archive = OUT / "M"
    subprocess.run([sys.executable, "bench/generate.py", "--scale", "M", "--out", str(archive)], cwd=REPO, check=True)
    bundles = sorted(archive.glob("*.tar.gz"))
    subprocess.run(
        [sys.executable, "manage.py", "import_bundle", *map(str, bundles)],
        cwd=REPO,
        env=archive_env,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    rows = (
        Result.objects.filter(microbenchmark__is_warmup=False)
        .order_by("run__bundle__original_name", "run__build__version__sort_key", "microbenchmark__test")
        .values_list(
            "run__bundle__original_name",
            "run__build__version__text",
            "run_id",
            "microbenchmark__test",
            "microbenchmark__range_size",
            "qps",
        )
    )
    series: dict[str, dict[int, dict[str, object]]] = {}
    names: set[str] = set()
    for bundle, version, run_id, test, range_size, qps in rows.iterator(chunk_size=10_000):
        name = benchmark_name(test, range_size)
        names.add(name)
        runs = series.setdefault(bundle.removesuffix(".tar.gz"), {})
        run = runs.setdefault(run_id, {"version": version, "results": []})
        run["results"].append((name, qps))  # type: ignore[attr-defined]
    first = min(series)
    data = {
        "environment": ENVIRONMENT,
        "benchmarks": sorted(names),
        "series": [
            {"name": s, "executable": "sysbench", "tagged": s == first, "runs": list(runs.values())}
            for s, runs in sorted(series.items())
        ],
    }
    (SITE / "data.json").write_text(json.dumps(data))
    loaded = json.loads(
        subprocess.run(
            [str(cs_python()), str(SITE / "loader.py"), str(SITE / "data.json")],
            cwd=SITE,
            env=cs_env,
            check=True,
            capture_output=True,
            text=True,
        ).stdout.splitlines()[-1]
    )
    shape = (
        f"{len(series)} series, {Run.objects.count():,} runs, {len(names)} microbenchmarks; "
        f"results: benchdash {Result.objects.filter(microbenchmark__is_warmup=False).count():,}, "
        f"Codespeed {loaded['results']:,}"
    )

    token = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", TOKEN_SCRIPT],
        cwd=REPO,
        env=bd_env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()[-1]

    cs_port, bd_port = free_port(), free_port()
    cs_url, bd_url = f"http://127.0.0.1:{cs_port}", f"http://127.0.0.1:{bd_port}"
    gunicorn = ["-m", "gunicorn", "-w", "2", "--timeout", "120"]
    codespeed = subprocess.Popen(
        [str(cs_python()), *gunicorn, "-b", f"127.0.0.1:{cs_port}", "cs_site.wsgi:application"],
        cwd=SITE,
        env=cs_env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    benchdash = subprocess.Popen(
        [sys.executable, *gunicorn, "-b", f"127.0.0.1:{bd_port}", "benchdash.wsgi:application"],
        cwd=REPO,
        env=bd_env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    worker = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "benchdash", "worker", "-c", "2", "-l", "warning", "-Q", INGEST_QUEUE],
        cwd=REPO,
        env=bd_env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    table: list[tuple[str, str, str, str, str]] = []
    try:
        wait_up(cs_url + "/comparison/", codespeed)
        wait_up(bd_url + "/healthz", benchdash)
        table = measure(args, cs_url, bd_url, token, first, (loaded["exe"], loaded["env"]), cache.clear)
    finally:
        for proc in (codespeed, benchdash, worker):
            proc.send_signal(signal.SIGTERM)
        for proc in (codespeed, benchdash, worker):
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
        purge_queues(bd_env)

    print(f"\nCodespeed 0.13.0 (SQLite) against benchdash (PostgreSQL), gunicorn 2 workers each; {shape}")
    print(f"{args.requests} requests per figure and server; load average at the end: {os.getloadavg()[0]:.1f}")
    print(f"{'figure':<38} {'Codespeed p50/p95':>18} {'benchdash p50/p95':>18} {'ratio':>7}  verdict")
    for row in table:
        print(f"{row[0]:<38} {row[1]:>18} {row[2]:>18} {row[3]:>7}  {row[4]}")
    return 0


def purge_queues(env: dict[str, str]) -> None:
    """Empty this script's two queues (only those) in the broker."""
    subprocess.run(
        [sys.executable, "-m", "celery", "-A", "benchdash", "purge", "-f", "-Q", f"{INGEST_QUEUE},{ARCHIVE_QUEUE}"],
        cwd=REPO,
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
    )


TOKEN_SCRIPT = (
    "from django.contrib.auth.models import Group, User\n"
    "from accounts.permissions import UPLOADER, create_token\n"
    "user, _ = User.objects.get_or_create(username='codespeed-bench')\n"
    "user.groups.add(Group.objects.get(name=UPLOADER))\n"
    "print(create_token(user, 'codespeed bench')[1])\n"
)


def measure(
    args: argparse.Namespace,
    cs_url: str,
    bd_url: str,
    token: str,
    first: str,
    codespeed_ids: tuple[int, int],
    clear_cache: Callable[[], None],
) -> list[tuple[str, str, str, str, str]]:
    from runs.models import Result, Run

    table: list[tuple[str, str, str, str, str]] = []

    def row(figure: str, cs: list[float], bd: list[float], note: str = "") -> None:
        cs50, bd50 = statistics.median(cs), statistics.median(bd)
        ratio = bd50 / cs50
        target = TARGETS_MS.get(figure)
        verdict = "missed (slower than Codespeed)" if ratio > 1 else "faster"
        if target is not None:
            verdict += f"; target ≤ {target:g} ms p50: {'met' if bd50 <= target else 'MISSED'}"
        table.append(
            (
                figure,
                f"{cs50:.0f} / {percentile(cs, 95):.0f}",
                f"{bd50:.0f} / {percentile(bd, 95):.0f}",
                f"{ratio:.2f}",
                verdict + (f" ({note})" if note else ""),
            )
        )

    base = Run.objects.filter(bundle__original_name=f"{first}.tar.gz").order_by("build__version__sort_key").first()
    assert base is not None
    mb = Result.objects.filter(run=base, microbenchmark__test="point-query").values_list(
        "microbenchmark_id", "microbenchmark__test", "microbenchmark__range_size"
    )[0]
    exe, env = codespeed_ids

    def cs_comparison() -> float:
        return timed(lambda: (get(cs_url + "/comparison/"), get(cs_url + "/comparison/json/")))

    def bd_comparison() -> float:
        return timed(lambda: get(f"{bd_url}/compare/?base={base.pk}"), clear_cache)

    table_cs, table_bd = interleaved(args.requests, cs_comparison, bd_comparison)
    columns = len(json.loads(get(cs_url + "/comparison/json/"))) - 1
    row("comparison from scratch", table_cs, table_bd, f"Codespeed: page + JSON of {columns} executables×revisions")

    def cs_grid() -> float:
        def load() -> None:
            get(f"{cs_url}/timeline/?exe={exe}&ben=grid&env={env}")
            query = f"{cs_url}/timeline/json/?exe={exe}&base=none&ben=grid&env={env}&revs=200"
            page = json.loads(get(query))
            for _ in range(100):  # a page per 4 benchmarks, as its script asks for them
                if not page.get("nextBenchmarks"):
                    break
                page = json.loads(get(f"{query}&nextBenchmarks={page['nextBenchmarks']}"))

        return timed(load)

    heatmap = f"{bd_url}/compare/heatmap?base={base.pk}"
    cs, bd = interleaved(args.requests, cs_grid, lambda: timed(lambda: get(heatmap)))
    row("grid, cached", cs, bd, "Codespeed has no cache: its figure is from scratch")
    cs, bd = interleaved(args.requests, cs_grid, lambda: timed(lambda: get(heatmap), clear_cache))
    row("grid from scratch", cs, bd)

    name = benchmark_name(mb[1], mb[2])
    single = f"ben={urllib.parse.quote(name)}&env={env}&revs=200"

    def cs_single() -> float:
        return timed(
            lambda: (
                get(f"{cs_url}/timeline/?exe={exe}&{single}"),
                get(f"{cs_url}/timeline/json/?exe={exe}&base=none&{single}"),
            )
        )

    drill = f"{bd_url}/microbenchmarks/{mb[0]}/?base={base.pk}"
    cs, bd = interleaved(args.requests, cs_single, lambda: timed(lambda: get(drill), clear_cache))
    row("drill-down from scratch", cs, bd, f"{name}, every run of the series")

    # d. ingest, once the worker has done the after-import refreshes of the archive's series
    drain_queue()
    cs_rates, bd_rates = [], []
    for attempt in range(3):
        cs_rates.append(ingest_codespeed(cs_url, args.ingest_runs, attempt))
        bd_rates.append(ingest_benchdash(bd_url, token, args.ingest_runs, attempt))
    table.append(
        (
            "ingest results/s (median of 3)",
            f"{statistics.median(cs_rates):,.0f}",
            f"{statistics.median(bd_rates):,.0f}",
            f"{statistics.median(bd_rates) / statistics.median(cs_rates):.2f}",
            ("faster" if statistics.median(bd_rates) >= statistics.median(cs_rates) else "missed (slower)")
            + f" ({args.ingest_runs} runs per upload; benchdash until its Celery worker has imported them)",
        )
    )

    # e. concurrency
    cs_rate, cs_errors = throughput(
        lambda: (get(cs_url + "/comparison/"), get(cs_url + "/comparison/json/")), args.clients, args.pages
    )
    bd_rate, bd_errors = throughput(lambda: get(f"{bd_url}/compare/?base={base.pk}"), args.clients, args.pages)
    table.append(
        (
            f"comparison pages/s, {args.clients} clients",
            f"{cs_rate:.1f}",
            f"{bd_rate:.1f}",
            f"{bd_rate / cs_rate:.2f}",
            ("faster" if bd_rate >= cs_rate else "missed (slower)")
            + f" ({args.pages} pages each; errors {cs_errors} / {bd_errors})",
        )
    )
    return table


def ingest_codespeed(cs_url: str, runs: int, attempt: int) -> float:
    """Results/s through /result/add/json/, one run (42 results) per request, in a project of its own."""
    names = sorted(synthetic_names())
    start = time.perf_counter()
    total = 0
    for index in range(runs):
        results = [
            {
                "project": f"ingest-{attempt}",
                "branch": "default",
                "commitid": f"9.{index}.0",
                "executable": "sysbench",
                "benchmark": name,
                "environment": ENVIRONMENT,
                "result_value": 1000.0 + index + position,
                "revision_date": f"2021-01-01 {index % 24:02d}:00:00",
            }
            for position, name in enumerate(names)
        ]
        body = urllib.parse.urlencode({"json": json.dumps(results)}).encode()
        with urllib.request.urlopen(urllib.request.Request(cs_url + "/result/add/json/", data=body), timeout=120) as r:
            if r.status != 202:
                raise RuntimeError(f"Codespeed refused the results: HTTP {r.status}")
        total += len(results)
    return total / (time.perf_counter() - start)


def drain_queue(seconds: float = 900) -> None:
    """Wait until the broker's queue is empty, so an upload is not measured waiting behind earlier work."""
    import redis
    from django.conf import settings

    broker = redis.Redis.from_url(os.environ["REDIS_URL"])
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not queue_busy(broker, settings.CELERY_TASK_DEFAULT_QUEUE):
            return
        time.sleep(1)
    raise RuntimeError(f"the worker still had queued tasks after {seconds:.0f} s")


_NAMES: list[str] = []


def synthetic_names() -> list[str]:
    if not _NAMES:
        from runs.models import Microbenchmark

        _NAMES.extend(
            benchmark_name(t, r)
            for t, r in Microbenchmark.objects.filter(is_warmup=False).values_list("test", "range_size")
        )
    return _NAMES


def ingest_benchdash(bd_url: str, token: str, runs: int, attempt: int) -> float:
    """Results/s from the upload's first byte until the worker reports the bundle imported."""
    from runs import synthetic as gen

    spec = gen.SeriesSpec(versions=tuple(f"9.{attempt}.{i}" for i in range(runs)), seed=9000 + attempt)
    bundle = gen.bundle_bytes(spec)
    boundary = "codespeedbench"
    body = (
        (
            f'--{boundary}\r\nContent-Disposition: form-data; name="server"\r\n\r\ningest-{attempt}\r\n'
            f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="ingest-{attempt}.tar.gz"\r\n'
            "Content-Type: application/gzip\r\n\r\n"
        ).encode()
        + bundle
        + f"\r\n--{boundary}--\r\n".encode()
    )
    auth = {"Authorization": f"Bearer {token}"}
    request = urllib.request.Request(
        bd_url + "/api/bundles/",
        data=body,
        headers={**auth, "Content-Type": f"multipart/form-data; boundary={boundary}"},
    )
    start = time.perf_counter()
    with urllib.request.urlopen(request, timeout=120) as response:
        answer = json.loads(response.read())
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        poll = urllib.request.Request(f"{bd_url}/api/bundles/{answer['bundle_id']}", headers=auth)
        with urllib.request.urlopen(poll, timeout=30) as response:
            state = json.loads(response.read())
        if state["status"] not in ("queued", "importing"):
            break
        time.sleep(0.05)
    seconds = time.perf_counter() - start
    if state["status"] != "imported":
        raise RuntimeError(f"benchdash did not import the upload: {state}")
    from runs.models import Result

    results = Result.objects.filter(run__bundle_id=answer["bundle_id"], microbenchmark__is_warmup=False).count()
    return results / seconds


if __name__ == "__main__":
    sys.exit(main())
