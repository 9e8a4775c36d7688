"""Side by side with LLVM's LNT: the same data, both on PostgreSQL, requests interleaved.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres REDIS_URL=redis://127.0.0.1:6379/8 \\
        .venv/bin/python bench/lnt_bench.py [--database bd_peer] [--reuse] [--peer-dir DIR] [--requests 30]

LNT 0.4.20 (the package ``llvm-lnt``, with the exact pins of
``bench/lnt-requirements.txt``) is installed into its own virtualenv under
``--peer-dir`` (default ``~/.cache/benchdash-bench``, outside the repository), and
given an instance there whose database is ``<--database>_lnt`` on the PostgreSQL
server of DATABASE_URL, with a test suite of one metric, ``qps`` (bigger is
better), its order field the version. benchdash uses the database ``--database``
(both are dropped and created again; the one DATABASE_URL names is never
touched) and REDIS_URL's Redis database.

Data: two generated sysbench series (42 microbenchmarks, one client) of 60 and
200 versions, imported into benchdash and refreshed, then read back and imported
into LNT with ``lnt import``: a series is an LNT machine, a run an LNT run whose
order is its version, a microbenchmark a test.

Both apps run under gunicorn with 2 sync workers (``--no-control-socket``).
benchdash runs twice: as deployed (``BENCHDASH_MODE=production``, its page
cache on) and with a cache that keeps nothing (``bench/computing_settings.py``),
which serves every "from scratch" and "both computing" figure; LNT has no cache.
Figures (wall and server CPU, medians of requests alternating between servers):

a. one microbenchmark over the 200 versions: LNT's graph page of one test
   against benchdash's drill-down, from scratch, cached (benchdash only,
   labelled), pages/s with ``--clients`` clients, HTML bytes;
b. one run against its baseline (the 60-version series' last run against its
   first, 42 microbenchmarks): LNT's run page with ``compare_to`` against
   benchdash's comparison of the two runs, likewise;
c. ingest: LNT's ``submitRun``, one run per request (it imports and finds the
   run's changes in the request), against benchdash's upload of the same runs as
   one bundle until its worker has imported it and refreshed the series;
d. process-tree RSS of each server after the pages;
e. first chart in Chromium, cold (a fresh browser context each load), for the
   page of a, and the bytes of HTML and script the network carried before it.

Everything runs on 127.0.0.1, loops are bounded, and the servers and the worker
are stopped by their process ids.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import urllib.parse
import urllib.request
from pathlib import Path

import peers
from peers import REPO, Benchdash, Server, Table, get, interleaved, load, sent_bytes, throughputs

LNT_REQUIREMENTS = REPO / "bench" / "lnt-requirements.txt"
SUITE = "sysbench"
SCHEMA = f"""\
format_version: "2"
name: {SUITE}
metrics:
- name: qps
  bigger_is_better: true
  type: Real
run_fields:
# LNT's baseline code reads this order field by name: the version goes in it.
- name: llvm_project_revision
  order: true
machine_fields:
- name: hardware
"""


def install_lnt(venv: Path) -> Path:
    """LNT's virtualenv, once (a marker file names what was installed); its python."""
    marker = venv / "installed.txt"
    wanted = LNT_REQUIREMENTS.read_text()
    if not (marker.exists() and marker.read_text() == wanted):
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
        pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
        subprocess.run([*pip, "-r", str(LNT_REQUIREMENTS)], check=True)
        marker.write_text(wanted)
    return venv / "bin" / "python"


def create_instance(python: Path, instance: Path, db_url: str, database: str) -> None:
    """A fresh LNT instance on PostgreSQL with the sysbench suite; its database dropped and created again."""
    import psycopg

    with psycopg.connect(f"{db_url}/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{database}"')
        conn.execute(f'CREATE DATABASE "{database}"')
    subprocess.run(["rm", "-rf", str(instance)], check=True)
    lnt = python.parent / "lnt"
    subprocess.run(
        [str(lnt), "create", str(instance), "--db-dir", db_url, "--default-db", database],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    (instance / "schemas" / f"{SUITE}.yaml").write_text(SCHEMA)
    # gunicorn takes a module, not lnt.wsgi's file name.
    (instance / "lnt_app.py").write_text((instance / "lnt.wsgi").read_text())


def report(machine: str, version: str, index: int, results: list[tuple[str, float]]) -> dict[str, object]:
    hour = f"2020-01-{1 + index // 24:02d} {index % 24:02d}"
    return {
        "format_version": "2",
        "machine": {"name": machine, "hardware": "bench-host"},
        "run": {"llvm_project_revision": version, "start_time": f"{hour}:00:00", "end_time": f"{hour}:10:00"},
        "tests": [{"name": name, "qps": qps} for name, qps in results],
    }


def load_lnt(python: Path, instance: Path, work: Path) -> int:
    """Every series benchdash holds, imported into LNT; the number of results."""
    reports = work / "lnt-reports"
    subprocess.run(["rm", "-rf", str(reports)], check=True)
    reports.mkdir(parents=True)
    files, results = [], 0
    for series in peers.read_series():
        for index, (_run_id, version, values) in enumerate(series.runs):
            path = reports / f"{series.name}-{index:04d}.json"
            path.write_text(json.dumps(report(series.name, version, index, values)))
            files.append(str(path))
            results += len(values)
    lnt = python.parent / "lnt"
    for start in range(0, len(files), 100):
        subprocess.run(
            [
                str(lnt),
                "import",
                str(instance),
                "-s",
                SUITE,
                "--no-email",
                "--no-report",
                "-q",
                *files[start : start + 100],
            ],
            check=True,
            stdout=subprocess.DEVNULL,
        )
    return results


def lnt_ids(db_url: str, database: str) -> dict[str, int]:
    """LNT's ids of what the pages ask for: the 200-version machine, point-query's test, the 60-version series'
    first and last runs."""
    import psycopg

    t = f'"{SUITE}_'
    with psycopg.connect(f"{db_url}/{database}") as conn:
        machine = conn.execute(f"""SELECT "ID" FROM {t}Machine" WHERE "Name" = 's200'""").fetchone()
        test = conn.execute(f"""SELECT "ID" FROM {t}Test" WHERE "Name" = 'point-query.range100'""").fetchone()
        runs = conn.execute(
            f'SELECT r."ID", o.llvm_project_revision FROM {t}Run" r JOIN {t}Order" o ON o."ID" = r."OrderID"'
            f""" JOIN {t}Machine" m ON m."ID" = r."MachineID" WHERE m."Name" = 's60'"""
        ).fetchall()
    by_version = {version: run_id for run_id, version in runs}
    assert machine and test and len(by_version) == len(peers.SERIES_60), (machine, test, len(by_version))
    return {
        "machine": machine[0],
        "test": test[0],
        "base": by_version[peers.SERIES_60[0]],
        "run": by_version[peers.SERIES_60[-1]],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database", default="bd_peer", help="benchdash's database (dropped and created)")
    parser.add_argument("--peer-dir", type=Path, default=Path.home() / ".cache" / "benchdash-bench")
    parser.add_argument("--requests", type=int, default=30, help="timed requests per figure and server")
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--pages", type=int, default=200, help="page loads per server for pages/s")
    parser.add_argument("--ingest-runs", type=int, default=20, help="runs (42 results each) ingested per server")
    parser.add_argument("--browser-repeat", type=int, default=5)
    parser.add_argument(
        "--reuse", action="store_true", help="measure the databases a previous run built (same code, same data)"
    )
    parser.add_argument("--markdown", type=Path, default=peers.OUT / "lnt-figures.md")
    args = parser.parse_args()
    if not re.fullmatch(r"[a-z0-9_]*peer[a-z0-9_]*", args.database):
        sys.exit(f"--database {args.database!r}: it is dropped and created again, so its name must contain peer")
    server_url = re.sub(r"/[^/]*$", "", os.environ.get("DATABASE_URL", ""))
    lnt_database = args.database + "_lnt"
    work = peers.OUT / "lnt"
    work.mkdir(parents=True, exist_ok=True)

    python = install_lnt(args.peer_dir / "lnt-venv")
    instance = args.peer_dir / "lnt-instance"
    bd = Benchdash(args.database, work)
    bd.setup_django()
    if args.reuse:
        bd.collect_static()
    else:
        print(f"building both sides ({load()})", flush=True)
        bd.create()
        bundles = []
        for name, versions, seed in peers.SERIES:
            path = work / f"{name}.tar.gz"
            path.write_bytes(peers.series_bundle(name, versions, seed))
            bundles.append(path)
        bd.import_bundles(bundles)
        create_instance(python, instance, server_url, lnt_database)
        print(f"LNT holds {load_lnt(python, instance, work):,} results", flush=True)
    ids = lnt_ids(server_url, lnt_database)

    from runs.models import Result, Run

    s60 = list(Run.objects.filter(server__name="s60").order_by("build__version__sort_key").values_list("pk", flat=True))
    s200 = Run.objects.filter(server__name="s200").order_by("build__version__sort_key").first()
    assert s200 is not None
    mb = Result.objects.filter(run=s200, microbenchmark__test="point-query").values_list("microbenchmark_id")[0][0]
    token = bd.token()

    lnt = Server("LNT", python, "lnt_app:application", instance, {**os.environ}, f"/db_default/v4/{SUITE}/")
    lnt.env.pop("DATABASE_URL", None)
    cached = bd.server()
    computing = bd.computing_server()
    worker = bd.worker()
    table = Table("LNT")
    try:
        for server in (lnt, cached, computing):
            server.start()
        pages = {
            "one microbenchmark over 200 versions": (
                f"{lnt.url}/db_default/v4/{SUITE}/graph?plot.0={ids['machine']}.{ids['test']}.0",
                f"/microbenchmarks/{mb}/?base={s200.pk}",
            ),
            "a run against its baseline (2 runs × 42)": (
                f"{lnt.url}/db_default/v4/{SUITE}/{ids['run']}?compare_to={ids['base']}",
                f"/compare/?base={s60[0]}&runs={s60[-1]}",
            ),
        }
        for figure, (lnt_page, ours) in pages.items():
            measure_page(args, table, figure, lnt, lnt_page, cached, computing, ours)
        measure_ingest(args, table, lnt, cached, token, bd.ingest_queue)
        table.rss(lnt, cached, computing)
        drill_url = f"{computing.url}/microbenchmarks/{mb}/?base={s200.pk}"
        measure_first_chart(args, table, pages["one microbenchmark over 200 versions"][0], drill_url)
    finally:
        peers.finish((lnt, cached, computing), worker, bd)
    table.report("LNT 0.4.20 against benchdash, both on PostgreSQL, gunicorn 2 sync workers each", args.markdown)
    return 0


def measure_page(
    args: argparse.Namespace,
    table: Table,
    figure: str,
    peer: Server,
    peer_url: str,
    cached: Server,
    computing: Server,
    ours: str,
) -> None:
    print(f"{figure} ({load()})", flush=True)
    scratch = interleaved(
        args.requests, [(peer, lambda: get(peer_url), None), (computing, lambda: get(computing.url + ours), None)]
    )
    table.timings(f"{figure}, from scratch", scratch[0], scratch[1])
    warm = interleaved(
        args.requests, [(peer, lambda: get(peer_url), None), (cached, lambda: get(cached.url + ours), None)]
    )
    table.timings(f"{figure}, benchdash from its page cache", warm[0], warm[1], "LNT has no cache: it computes")
    (peer_rate, peer_errors), (our_rate, our_errors) = throughputs(
        lambda: get(peer_url), lambda: get(computing.url + ours), args.clients, args.pages
    )
    table.add(
        f"{figure}, pages/s with {args.clients} clients, both computing",
        f"{peer_rate:.1f}",
        f"{our_rate:.1f}",
        our_rate / peer_rate,
        f"higher is better; errors {peer_errors} / {our_errors}",
    )
    peer_html, peer_sent = sent_bytes(peer_url)
    our_html, our_sent = sent_bytes(cached.url + ours)
    table.add(
        f"{figure}, HTML KB (raw / as sent)",
        f"{peer_html / 1024:.0f} / {peer_sent / 1024:.0f}",
        f"{our_html / 1024:.0f} / {our_sent / 1024:.0f}",
        our_sent / peer_sent,
    )


def measure_ingest(args: argparse.Namespace, table: Table, lnt: Server, bd: Server, token: str, queue: str) -> None:
    """Results/s until shown with the run's changes found: LNT in the request, benchdash after its refresh."""
    import time

    print(f"ingest ({load()})", flush=True)
    from runs.synthetic import TESTS

    names = [peers.benchmark_name(test, size) for test, size, _ in TESTS]
    peer_rates, our_rates = [], []
    # New machines and servers each time: a rerun on the same databases, or another bench at once, adds, never merges.
    stamp = f"{int(time.time())}-{os.getpid()}"
    for attempt in range(3):
        start = time.perf_counter()
        for index in range(args.ingest_runs):
            values = [(name, 1000.0 + index + position) for position, name in enumerate(names)]
            body = json.dumps(report(f"ingest-{stamp}-{attempt}", f"9.{5 + attempt}.{index}", index, values))
            data = urllib.parse.urlencode({"input_data": body}).encode()
            url = f"{lnt.url}/db_default/v4/{SUITE}/submitRun"
            with urllib.request.urlopen(urllib.request.Request(url, data=data), timeout=120) as response:
                answer = json.loads(response.read())
                if answer.get("error"):
                    raise RuntimeError(f"LNT refused the run: {answer}")
        peer_rates.append(args.ingest_runs * len(names) / (time.perf_counter() - start))

        versions = tuple(f"9.{5 + attempt}.{i}" for i in range(args.ingest_runs))
        server = f"ingest-{stamp}-{attempt}"
        bundle = peers.ingest_bundle(server, versions)
        seconds = peers.upload_until_refreshed(bd.url, token, bundle, server, queue)
        our_rates.append(args.ingest_runs * len(names) / seconds)
    import statistics

    peer, ours = statistics.median(peer_rates), statistics.median(our_rates)
    table.add(
        f"ingest results/s, {args.ingest_runs} runs × {len(names)}, until changes found (median of 3)",
        f"{peer:,.0f}",
        f"{ours:,.0f}",
        ours / peer,
        "higher is better; LNT one run per request, benchdash one bundle until imported and its series refreshed",
    )


def measure_first_chart(args: argparse.Namespace, table: Table, peer_url: str, our_url: str) -> None:
    print(f"first chart in Chromium ({load()})", flush=True)
    drawn = peers.first_chart(
        [
            (peer_url, "document.querySelector('#graph .scatterlayer .trace') !== null"),
            (our_url, peers.BENCHDASH_FIRST_CHART),
        ],
        args.browser_repeat,
    )
    import statistics

    peer, ours = (statistics.median(c.ms for c in loads) for loads in drawn)
    table.add(
        "first chart in Chromium, cold, one microbenchmark over 200 versions (ms)",
        f"{peer:.0f}",
        f"{ours:.0f}",
        ours / peer,
        f"median of {args.browser_repeat}; requests to other hosts refused",
    )
    peers.script_rows(table, "", drawn[0], drawn[1])


if __name__ == "__main__":
    sys.exit(main())
