"""Side by side with Codespeed: the same data, both on PostgreSQL, requests interleaved.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres REDIS_URL=redis://127.0.0.1:6379/8 \\
        .venv/bin/python bench/codespeed_bench.py [--database bd_peer] [--reuse] [--requests 30]

Codespeed 0.13 (the Django dashboard behind PyPy's speed centre) is installed by
name with exact pins (``bench/codespeed-requirements.txt``) into its own
virtualenv ``bench/out/codespeed-venv`` and given a small site of its own in
``bench/out/codespeed-site`` whose database is ``<--database>_codespeed`` on the
PostgreSQL server of DATABASE_URL. benchdash uses the database ``--database``
(both are dropped and created again unless ``--reuse``; the database the URL
names is never touched) and REDIS_URL's Redis database.

Data: the two generated series of ``bench/peers.py`` (60 and 200 versions of
42 sysbench microbenchmarks, one client), imported into benchdash and refreshed,
then read back and written into Codespeed's models: a series is a Codespeed
project (one executable, one branch), a run a revision, a microbenchmark a
benchmark. The 60 revisions of the first are tagged, so Codespeed's comparison
holds the same 60 versions × 42 microbenchmarks as benchdash's.

Both apps run under gunicorn with 2 sync workers. benchdash runs twice: as
deployed (``BENCHDASH_MODE=production``, its page cache on) and with a cache that
keeps nothing (``bench/computing_settings.py``), which serves every "from
scratch" and "both computing" figure; Codespeed caches nothing. Figures (wall and
server CPU, medians of requests alternating between servers, each beside the
load average):

a. the comparison: Codespeed's /comparison/ and the /comparison/json/ its page
   loads, against benchdash's /compare/: from scratch, from benchdash's cache
   (labelled), pages/s with ``--clients`` clients both computing, HTML bytes;
b. one benchmark over the 200 revisions: Codespeed's timeline of one benchmark
   (its page and its JSON, 200 revisions) against benchdash's drill-down, the
   same four ways;
c. ingest: Codespeed's /result/add/json/, one run (42 results) per request (it
   updates its reports in the request), against benchdash's upload of the same
   runs as a bundle until its worker has imported them and refreshed the series;
d. process-tree RSS of each server;
e. first chart in Chromium, cold, on the pages of a and b, with the script bytes
   the network carried before it.

Everything runs on 127.0.0.1, loops are bounded, and the servers and the worker
are stopped by their process ids.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

import peers
from peers import REPO, Benchdash, Server, Table, get, interleaved, load, sent_bytes, throughputs

OUT = peers.OUT
VENV = OUT / "codespeed-venv"
SITE = OUT / "codespeed-site"
CODESPEED = "codespeed==0.13.0"
# Codespeed's sdist only builds with these: its setup.py needs setuptools-markdown
# (and pypandoc's old convert()), and its non-standard "django>=1.11<2.2" is only
# accepted by setuptools and wheel releases that still parse legacy specifiers.
BUILD_TOOLS = ("setuptools==65.5.1", "wheel==0.37.1", "pypandoc==1.5", "setuptools-markdown==0.4.1")
ENVIRONMENT = "bench-host"

SETTINGS = """\
import os
from codespeed.settings import *  # noqa: F401,F403  Codespeed's own defaults

SECRET_KEY = "codespeed-bench-only"
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
DATABASES = {"default": {
    "ENGINE": "django.db.backends.postgresql", "NAME": os.environ["CS_DATABASE"],
    "HOST": os.environ["CS_HOST"], "PORT": os.environ["CS_PORT"], "USER": os.environ["CS_USER"],
}}
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
STATIC_ROOT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "static")
USE_TZ = False
WEBSITE_NAME = "bench"
ALLOW_ANONYMOUS_POST = True
# 42 benchmarks are above its grid limit (30): without this its grid page answers 404.
DEF_BENCHMARK = "grid"
"""

# Its scripts and styles from its own server, as benchdash's (whitenoise): Django serves them only with DEBUG.
URLS = """\
from django.conf import settings
from django.conf.urls import include, url
from django.views.static import serve

urlpatterns = [
    url(r"^static/(?P<path>.*)$", serve, {"document_root": settings.STATIC_ROOT}),
    url(r"^", include("codespeed.urls")),
]
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
executables = {}
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
        exe = Executable.objects.create(name=series["name"], project=project)
        executables[series["name"]] = exe.id
        for index, run in enumerate(series["runs"]):
            when = start + datetime.timedelta(hours=index)
            rev = Revision.objects.create(
                commitid=run["version"], tag=run["version"] if series["tagged"] else "",
                date=when, project=project, branch=branch,
            )
            for name, qps in run["results"]:
                results.append(Result(value=qps, date=when, revision=rev, executable=exe,
                                      benchmark=benchmarks[name], environment=env))
    Result.objects.bulk_create(results, batch_size=2000)
print(json.dumps({"results": len(results), "executables": executables, "env": env.id}))
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


def write_site(database: str) -> dict[str, str]:
    """Codespeed's site; its environment variables (its database on DATABASE_URL's PostgreSQL server)."""
    package = SITE / "cs_site"
    package.mkdir(parents=True, exist_ok=True)
    (package / "__init__.py").write_text("")
    (package / "settings.py").write_text(SETTINGS)
    (package / "urls.py").write_text(URLS)
    (package / "wsgi.py").write_text(WSGI)
    (SITE / "loader.py").write_text(LOADER)
    server = urllib.parse.urlsplit(os.environ["DATABASE_URL"])
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL", "DJANGO_SETTINGS_MODULE")}
    return {
        **env,
        "DJANGO_SETTINGS_MODULE": "cs_site.settings",
        "PYTHONPATH": str(SITE),
        "CS_DATABASE": database,
        "CS_HOST": server.hostname or "127.0.0.1",
        "CS_PORT": str(server.port or 5432),
        "CS_USER": server.username or "postgres",
    }


def load_codespeed(cs_env: dict[str, str], database: str) -> dict[str, object]:
    """Codespeed's database created again and filled with benchdash's series; its ids (kept for --reuse)."""
    import psycopg

    server_url = re.sub(r"/[^/]*$", "", os.environ["DATABASE_URL"])
    with psycopg.connect(f"{server_url}/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{database}"')
        conn.execute(f'CREATE DATABASE "{database}"')
    names: set[str] = set()
    series = []
    for found in peers.read_series():
        runs = [{"version": version, "results": values} for _id, version, values in found.runs]
        names.update(name for run in runs for name, _ in run["results"])  # type: ignore[attr-defined]
        series.append({"name": found.name, "tagged": found.name == "s60", "runs": runs})
    data = {"environment": ENVIRONMENT, "benchmarks": sorted(names), "series": series}
    (SITE / "data.json").write_text(json.dumps(data))
    answer = subprocess.run(
        [str(cs_python()), str(SITE / "loader.py"), str(SITE / "data.json")],
        cwd=SITE,
        env=cs_env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.splitlines()[-1]
    loaded: dict[str, object] = json.loads(answer)
    return loaded


def codespeed_ids(database: str) -> dict[str, object] | None:
    """What the pages ask Codespeed for, read from its database as a previous run (from any checkout) loaded it;
    None when it does not hold the bench's series in full (then it is loaded again)."""
    import psycopg

    server_url = re.sub(r"/[^/]*$", "", os.environ["DATABASE_URL"])
    try:
        conn = psycopg.connect(f"{server_url}/{database}")
    except psycopg.OperationalError:
        return None  # no such database yet
    with conn:
        try:
            executables = dict(conn.execute("SELECT name, id FROM codespeed_executable").fetchall())
            env = conn.execute("SELECT id FROM codespeed_environment WHERE name = %s", [ENVIRONMENT]).fetchone()
            results = conn.execute(
                "SELECT count(*) FROM codespeed_result r JOIN codespeed_executable e ON e.id = r.executable_id"
                " WHERE e.name = ANY(%s)",
                [[name for name, *_ in peers.SERIES]],
            ).fetchone()
        except psycopg.errors.UndefinedTable:
            return None
    expected = sum(len(versions) for _name, versions, _seed in peers.SERIES) * len(benchmark_names())
    if env is None or results is None or results[0] != expected or not all(n in executables for n, *_ in peers.SERIES):
        return None
    return {"results": results[0], "executables": executables, "env": env[0]}


def forget_ingested(database: str) -> int:
    """Delete from Codespeed every project but the bench's series (what its ingest figure added, in this run or an
    earlier one on the same database); how many. Its comparison shows every project's latest revision: left there,
    they would add columns to its page and JSON with every run."""
    import psycopg

    server_url = re.sub(r"/[^/]*$", "", os.environ["DATABASE_URL"])
    keep = [name for name, *_ in peers.SERIES]
    with psycopg.connect(f"{server_url}/{database}") as conn:
        projects = [row[0] for row in conn.execute("SELECT id FROM codespeed_project WHERE name <> ALL(%s)", [keep])]
        if projects:
            executables = "SELECT id FROM codespeed_executable WHERE project_id = ANY(%(p)s)"
            revisions = "SELECT id FROM codespeed_revision WHERE project_id = ANY(%(p)s)"
            for statement in (
                f"DELETE FROM codespeed_report WHERE executable_id IN ({executables}) OR revision_id IN ({revisions})",
                f"DELETE FROM codespeed_result WHERE executable_id IN ({executables}) OR revision_id IN ({revisions})",
                "DELETE FROM codespeed_revision WHERE project_id = ANY(%(p)s)",
                "DELETE FROM codespeed_executable WHERE project_id = ANY(%(p)s)",
                "DELETE FROM codespeed_branch WHERE project_id = ANY(%(p)s)",
                "DELETE FROM codespeed_project WHERE id = ANY(%(p)s)",
            ):
                conn.execute(statement, {"p": projects})
    return len(projects)


def benchmark_names() -> list[str]:
    from runs import synthetic

    return [peers.benchmark_name(test, size) for test, size, _ in synthetic.TESTS]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database", default="bd_peer", help="benchdash's database (dropped and created)")
    parser.add_argument(
        "--reuse", action="store_true", help="measure the databases a previous run built (this bench or lnt_bench.py)"
    )
    parser.add_argument("--requests", type=int, default=30, help="timed requests per figure and server")
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--pages", type=int, default=200, help="page loads per server for pages/s")
    parser.add_argument("--ingest-runs", type=int, default=20, help="runs (42 results each) ingested per server")
    parser.add_argument("--browser-repeat", type=int, default=5)
    parser.add_argument("--markdown", type=Path, default=OUT / "codespeed-figures.md")
    args = parser.parse_args()
    if not re.fullmatch(r"[a-z0-9_]*peer[a-z0-9_]*", args.database):
        sys.exit(f"--database {args.database!r}: it is dropped and created again, so its name must contain peer")
    work = OUT / "codespeed"
    work.mkdir(parents=True, exist_ok=True)
    install_codespeed()
    cs_database = args.database + "_codespeed"
    cs_env = write_site(cs_database)
    bd = Benchdash(args.database, work)
    bd.setup_django()
    if args.reuse:
        # benchdash's database as a previous run (of this bench or of lnt_bench.py) built it; Codespeed's too if
        # it has one.
        bd.collect_static()
        ids = codespeed_ids(cs_database) or load_codespeed(cs_env, cs_database)
    else:
        print(f"building both sides ({load()})", flush=True)
        bd.create()
        bundles = []
        for name, versions, seed in peers.SERIES:
            path = work / f"{name}.tar.gz"
            path.write_bytes(peers.series_bundle(name, versions, seed))
            bundles.append(path)
        bd.import_bundles(bundles)
        ids = load_codespeed(cs_env, cs_database)
    print(f"Codespeed holds {ids['results']:,} results", flush=True)
    if dropped := forget_ingested(cs_database):
        print(f"deleted {dropped} projects an earlier ingest figure left in Codespeed", flush=True)

    from runs.models import Result, Run

    s60 = Run.objects.filter(server__name="s60").order_by("build__version__sort_key").first()
    s200 = Run.objects.filter(server__name="s200").order_by("build__version__sort_key").first()
    assert s60 is not None and s200 is not None
    mb = Result.objects.filter(run=s200, microbenchmark__test="point-query").values_list(
        "microbenchmark_id", "microbenchmark__test", "microbenchmark__range_size"
    )[0]
    token = bd.token()

    subprocess.run(
        [str(cs_python()), "-m", "django", "collectstatic", "--noinput", "-v0"], cwd=SITE, env=cs_env, check=True
    )
    codespeed = Server("Codespeed", cs_python(), "cs_site.wsgi:application", SITE, cs_env, "/comparison/")
    cached = bd.server()
    computing = bd.computing_server()
    worker = bd.worker()
    table = Table("Codespeed")
    single = f"ben={urllib.parse.quote(peers.benchmark_name(mb[1], mb[2]))}&env={ids['env']}&revs=200"
    exe200 = ids["executables"]["s200"]
    try:
        for server in (codespeed, cached, computing):
            server.start()
        pages = {
            "comparison, 60 versions × 42": (
                [f"{codespeed.url}/comparison/", f"{codespeed.url}/comparison/json/"],
                f"/compare/?base={s60.pk}",
            ),
            "one benchmark over 200 revisions": (
                [
                    f"{codespeed.url}/timeline/?exe={exe200}&{single}",
                    f"{codespeed.url}/timeline/json/?exe={exe200}&base=none&{single}",
                ],
                f"/microbenchmarks/{mb[0]}/?base={s200.pk}",
            ),
        }
        for figure, (peer_urls, ours) in pages.items():
            measure_page(args, table, figure, codespeed, peer_urls, cached, computing, ours)
        measure_ingest(args, table, codespeed, cached, token, bd.ingest_queue)
        forget_ingested(cs_database)  # the first charts below show the comparison as measured above
        table.rss(codespeed, cached, computing)
        measure_first_charts(args, table, pages, codespeed, computing)
    finally:
        peers.finish((codespeed, cached, computing), worker, bd)
    table.report("Codespeed 0.13 against benchdash, both on PostgreSQL, gunicorn 2 sync workers each", args.markdown)
    return 0


def measure_page(
    args: argparse.Namespace,
    table: Table,
    figure: str,
    peer: Server,
    peer_urls: list[str],
    cached: Server,
    computing: Server,
    ours: str,
) -> None:
    """From scratch, from benchdash's cache, pages/s both computing, HTML bytes: Codespeed's page is its HTML
    and the JSON its script then asks for."""
    print(f"{figure} ({load()})", flush=True)

    def peer_page() -> None:
        for url in peer_urls:
            get(url)

    scratch = interleaved(
        args.requests, [(peer, peer_page, None), (computing, lambda: get(computing.url + ours), None)]
    )
    table.timings(f"{figure}, from scratch", scratch[0], scratch[1], "Codespeed: page + JSON")
    warm = interleaved(args.requests, [(peer, peer_page, None), (cached, lambda: get(cached.url + ours), None)])
    table.timings(f"{figure}, benchdash from its page cache", warm[0], warm[1], "Codespeed has no cache: it computes")
    (peer_rate, peer_errors), (our_rate, our_errors) = throughputs(
        peer_page, lambda: get(computing.url + ours), args.clients, args.pages
    )
    table.add(
        f"{figure}, pages/s with {args.clients} clients, both computing",
        f"{peer_rate:.1f}",
        f"{our_rate:.1f}",
        our_rate / peer_rate,
        f"higher is better; errors {peer_errors} / {our_errors}",
    )
    peer_sizes = [sent_bytes(url) for url in peer_urls]
    our_html, our_sent = sent_bytes(cached.url + ours)
    table.add(
        f"{figure}, HTML (+ JSON) KB (raw / as sent)",
        f"{sum(h for h, _ in peer_sizes) / 1024:.0f} / {sum(s for _, s in peer_sizes) / 1024:.0f}",
        f"{our_html / 1024:.0f} / {our_sent / 1024:.0f}",
        our_sent / sum(s for _, s in peer_sizes),
    )


def measure_ingest(
    args: argparse.Namespace, table: Table, codespeed: Server, bd: Server, token: str, queue: str
) -> None:
    print(f"ingest ({load()})", flush=True)
    names = benchmark_names()
    # New projects and servers each time: a rerun on the same databases, or another bench at once, adds, never merges.
    stamp = f"{int(time.time())}-{os.getpid()}"
    peer_rates, our_rates = [], []
    for attempt in range(3):
        start = time.perf_counter()
        for index in range(args.ingest_runs):
            results = [
                {
                    "project": f"ingest-{stamp}-{attempt}",
                    "branch": "default",
                    "commitid": f"9.{5 + attempt}.{index}",
                    "executable": "sysbench",
                    "benchmark": name,
                    "environment": ENVIRONMENT,
                    "result_value": 1000.0 + index + position,
                    "revision_date": f"2021-01-01 {index % 24:02d}:00:00",
                }
                for position, name in enumerate(names)
            ]
            body = urllib.parse.urlencode({"json": json.dumps(results)}).encode()
            request = urllib.request.Request(codespeed.url + "/result/add/json/", data=body)
            with urllib.request.urlopen(request, timeout=120) as response:
                if response.status != 202:
                    raise RuntimeError(f"Codespeed refused the results: HTTP {response.status}")
        peer_rates.append(args.ingest_runs * len(names) / (time.perf_counter() - start))
        versions = tuple(f"9.{5 + attempt}.{i}" for i in range(args.ingest_runs))
        server = f"ingest-{stamp}-{attempt}"
        bundle = peers.ingest_bundle(server, versions)
        seconds = peers.upload_until_refreshed(bd.url, token, bundle, server, queue)
        our_rates.append(args.ingest_runs * len(names) / seconds)
    peer, ours = statistics.median(peer_rates), statistics.median(our_rates)
    table.add(
        f"ingest results/s, {args.ingest_runs} runs × {len(names)}, until its reports are updated (median of 3)",
        f"{peer:,.0f}",
        f"{ours:,.0f}",
        ours / peer,
        "higher is better; Codespeed one run per request, benchdash one bundle until imported and refreshed",
    )


def measure_first_charts(
    args: argparse.Namespace,
    table: Table,
    pages: dict[str, tuple[list[str], str]],
    codespeed: Server,
    computing: Server,
) -> None:
    print(f"first chart in Chromium ({load()})", flush=True)
    jqplot = "document.querySelector('canvas.jqplot-series-canvas') !== null"
    urls = []
    for peer_urls, ours in pages.values():
        urls += [(peer_urls[0], jqplot), (computing.url + ours, peers.BENCHDASH_FIRST_CHART)]
    drawn = peers.first_chart(urls, args.browser_repeat)
    for index, figure in enumerate(pages):
        peer, ours = drawn[2 * index], drawn[2 * index + 1]
        peer_ms, our_ms = statistics.median(c.ms for c in peer), statistics.median(c.ms for c in ours)
        table.add(
            f"{figure}: first chart in Chromium, cold (ms)",
            f"{peer_ms:.0f}",
            f"{our_ms:.0f}",
            our_ms / peer_ms,
            f"median of {args.browser_repeat}; benchdash computing the page",
        )
        peers.script_rows(table, f"{figure}: ", peer, ours)


if __name__ == "__main__":
    sys.exit(main())
