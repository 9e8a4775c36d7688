"""What the side-by-side benches (``codespeed_bench.py``, ``lnt_bench.py``) share.

One honest rule for every figure: the same data on both sides, both servers under
gunicorn with 2 sync workers on PostgreSQL, requests interleaved one by one in one
run, and beside every figure the load average of the machine while it was taken.
Each request is timed twice: its wall time at the client, and the CPU time the
server's process tree spent on it (``/proc/<pid>/task/<tid>/schedstat``, in ns:
fine enough for a 5 ms page, where the 10 ms ticks of ``/proc/<pid>/stat`` are not).

benchdash's side is built here too: a fresh database, the generated series
imported through ``manage.py import_bundle``, every series refreshed (what its
worker does after an import, so the pages are measured as a user meets them),
served with ``BENCHDASH_MODE=production`` and its static files collected.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import secrets
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
import zlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "bench" / "out"
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from run import free_port, percentile  # noqa: E402

# The two series every peer bench compares on: the comparison is 60 versions × 42 microbenchmarks, the
# one-microbenchmark page and the long comparison read a 200-version series (unambiguous version names).
SERIES_60 = tuple(f"8.{i // 100}.{i % 100}" for i in range(60))
SERIES_200 = tuple(f"9.{i // 100}.{i % 100}" for i in range(200))
# Each series: its server's name in benchdash (a Codespeed project, an LNT machine), its versions, its seed.
SERIES = (("s60", SERIES_60, 1), ("s200", SERIES_200, 2))


def load() -> str:
    """The load average (1, 5, 15 minutes): printed beside every figure, since the machine is shared."""
    return "load {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())


# --- process trees ---------------------------------------------------------------------------------------------


def tree(pid: int) -> list[int]:
    """``pid`` and every process below it."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        todo.extend(children.get(current, []))
    return found


def tree_cpu_ns(pids: Sequence[int]) -> int:
    """CPU time, in ns, the threads of ``pids`` have run so far."""
    total = 0
    for pid in pids:
        try:
            tasks = list(Path(f"/proc/{pid}/task").iterdir())
        except OSError:
            continue
        for task in tasks:
            try:
                total += int((task / "schedstat").read_text().split()[0])
            except (OSError, ValueError, IndexError):
                continue
    return total


def tree_rss(pid: int) -> int:
    """Resident memory of ``pid``'s process tree, in bytes (the sum of every process's VmRSS)."""
    total = 0
    for member in tree(pid):
        try:
            status = Path(f"/proc/{member}/status").read_text()
        except OSError:
            continue
        found = re.search(r"^VmRSS:\s+(\d+) kB", status, re.M)
        total += int(found[1]) * 1024 if found else 0
    return total


class PeakRss:
    """Samples a process tree's resident memory every 50 ms while a ``with`` block runs; ``peak``: bytes."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, tree_rss(self.pid))
            self._stop.wait(0.05)

    def __enter__(self) -> PeakRss:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


# --- servers ---------------------------------------------------------------------------------------------------


@dataclass
class Server:
    """A gunicorn (2 sync workers, its control socket off) on a free loopback port."""

    name: str
    python: Path
    app: str
    cwd: Path
    env: dict[str, str]
    health: str
    port: int = field(default_factory=free_port)
    proc: subprocess.Popen[bytes] | None = None
    pids: list[int] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        command = [str(self.python), "-m", "gunicorn", "-w", "2", "--timeout", "120", "--no-control-socket"]
        self.proc = subprocess.Popen(
            [*command, "-b", f"127.0.0.1:{self.port}", self.app],
            cwd=self.cwd,
            env=self.env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for _ in range(600):
            if self.proc.poll() is not None:
                sys.exit(f"{self.name}: gunicorn exited with status {self.proc.returncode}")
            try:
                get(self.url + self.health)
                break
            except OSError:
                time.sleep(0.2)
        else:
            sys.exit(f"{self.name}: not up after 120 s")
        self.pids = tree(self.proc.pid)

    def cpu_ns(self) -> int:
        return tree_cpu_ns(self.pids)

    def rss(self) -> int:
        assert self.proc is not None
        return tree_rss(self.proc.pid)

    def stop(self) -> None:
        if self.proc is None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.proc = None


def get(url: str, *, gzip_ok: bool = False) -> bytes:
    """The body of a 200 answer (as sent: still compressed when ``gzip_ok`` and the server compressed it)."""
    headers = {"Accept-Encoding": "gzip"} if gzip_ok else {}
    with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=120) as response:
        body: bytes = response.read()
        if response.status != 200:
            raise RuntimeError(f"{url}: HTTP {response.status}")
        return body


def sent_bytes(url: str) -> tuple[int, int]:
    """(bytes of the page's HTML, bytes as sent to a browser that accepts gzip)."""
    with urllib.request.urlopen(urllib.request.Request(url, headers={"Accept-Encoding": "gzip"}), timeout=120) as r:
        body = r.read()
        compressed = r.headers.get("Content-Encoding") == "gzip"
    return (len(gzip.decompress(body)) if compressed else len(body)), len(body)


# --- timing ----------------------------------------------------------------------------------------------------


@dataclass
class Timing:
    wall_ms: list[float] = field(default_factory=list)
    cpu_ms: list[float] = field(default_factory=list)
    loads: list[float] = field(default_factory=list)

    def p50(self) -> float:
        return statistics.median(self.wall_ms)

    def cpu50(self) -> float:
        return statistics.median(self.cpu_ms)

    def text(self) -> str:
        return f"{self.p50():.1f} / {percentile(self.wall_ms, 95):.1f} ms, CPU {self.cpu50():.1f} ms"


def timed(server: Server, fetch: Callable[[], object], before: Callable[[], object] | None, into: Timing) -> None:
    """One request: its wall time and the server tree's CPU time. ``before`` (e.g. clearing benchdash's cache) is
    not timed."""
    if before is not None:
        before()
    cpu = server.cpu_ns()
    start = time.perf_counter()
    fetch()
    into.wall_ms.append((time.perf_counter() - start) * 1000)
    # A sync worker has answered once the client has the body; its last accounting lands within a tick.
    into.cpu_ms.append((server.cpu_ns() - cpu) / 1e6)
    into.loads.append(os.getloadavg()[0])


def interleaved(
    requests: int,
    sides: Sequence[tuple[Server, Callable[[], object], Callable[[], object] | None]],
    warmup: int = 3,
) -> list[Timing]:
    """Alternate the servers request by request (after ``warmup`` each), so the machine's load hits them alike."""
    timings = [Timing() for _ in sides]
    for _ in range(warmup):
        for server, fetch, before in sides:
            timed(server, fetch, before, Timing())
    for _ in range(requests):
        for (server, fetch, before), into in zip(sides, timings, strict=True):
            timed(server, fetch, before, into)
    return timings


def throughputs(
    peer: Callable[[], object], ours: Callable[[], object], clients: int, pages: int
) -> tuple[tuple[float, int], tuple[float, int]]:
    """Pages/s of the peer and of benchdash, each as (rate, errors): ``pages`` loads each with ``clients`` threads,
    in four rounds of half of them, peer, benchdash, benchdash, peer, so a load rising or falling meanwhile weighs on
    both alike."""
    seconds = {"peer": 0.0, "ours": 0.0}
    errors = {"peer": 0, "ours": 0}
    half = max(1, pages // 2)
    for side in ("peer", "ours", "ours", "peer"):
        took, failed = timed_loads(peer if side == "peer" else ours, clients, half)
        seconds[side] += took
        errors[side] += failed
    return (2 * half / seconds["peer"], errors["peer"]), (2 * half / seconds["ours"], errors["ours"])


def timed_loads(fetch: Callable[[], object], clients: int, pages: int) -> tuple[float, int]:
    """Seconds ``clients`` threads took to share ``pages`` page loads, and how many failed."""
    from run import run_threads

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

    return run_threads(client, clients), errors[0]


# --- the table -------------------------------------------------------------------------------------------------


@dataclass
class Table:
    """Figures of benchdash against one peer: a row per figure, with its ratio and the load while it was taken."""

    peer: str
    rows: list[tuple[str, str, str, str, str]] = field(default_factory=list)

    def add(self, figure: str, peer: str, ours: str, ratio: float | None, note: str = "") -> None:
        ratio_text = f"{ratio:.2f}" if ratio is not None else "–"
        self.rows.append((figure, peer, ours, ratio_text, f"{note}; {load()}" if note else load()))
        print(f"  {figure}: {self.peer} {peer} | benchdash {ours} | ratio {ratio_text} ({self.rows[-1][4]})")

    def timings(self, figure: str, peer: Timing, ours: Timing, note: str = "") -> None:
        """A from-scratch figure: ratio of the wall medians (and of the CPU medians in the note)."""
        cpu = ours.cpu50() / peer.cpu50() if peer.cpu50() > 0 else float("nan")
        self.add(figure, peer.text(), ours.text(), ours.p50() / peer.p50(), f"CPU ratio {cpu:.2f}; {note}".rstrip("; "))

    def rss(self, peer: Server, cached: Server, computing: Server) -> None:
        """Each server's process tree (gunicorn master + 2 workers) after the pages, benchdash's two ways."""
        self.add(
            "server process-tree RSS after the pages (MB)",
            f"{peer.rss() / 1e6:.0f}",
            f"{computing.rss() / 1e6:.0f} computing, {cached.rss() / 1e6:.0f} as deployed",
            computing.rss() / peer.rss(),
            "gunicorn master + 2 workers",
        )

    def report(self, title: str, path: Path) -> None:
        """Print the table under its title, with the load now, and write it to ``path``."""
        print(f"\n{title}; {load()}")
        print(self.markdown())
        path.write_text(self.markdown() + "\n")

    def markdown(self) -> str:
        head = f"| figure | {self.peer} | benchdash | ratio (benchdash / {self.peer}) | note, load average |\n"
        head += "|---|---|---|---|---|\n"
        return head + "\n".join(f"| {' | '.join(row)} |" for row in self.rows)


# --- browsers --------------------------------------------------------------------------------------------------


# benchdash's first chart has data on screen: plotly.js has drawn a trace, or the server-drawn first paint is there.
BENCHDASH_FIRST_CHART = (
    "document.querySelector('.chart .scatterlayer .trace, .chart .barlayer .trace, .chart svg.first-paint') !== null"
)


@dataclass
class FirstChart:
    """One cold page load in Chromium: from navigation start until ``drawn`` is true, and what was fetched: before
    the chart (``script_bytes``), and in all once the page is loaded and its network quiet (``all_script_bytes``:
    a script asked for after the first chart, plotly.js say, is sent to every visitor all the same)."""

    ms: float
    html_bytes: int
    script_bytes: int
    all_script_bytes: int


def first_chart(urls: Sequence[tuple[str, str]], repeat: int) -> list[list[FirstChart]]:
    """Each (url, JavaScript condition that holds once the first chart shows data) loaded ``repeat`` times,
    interleaved, each time in a fresh browser context (nothing cached). The bytes are what the network carried
    (resource timing's transferSize) before the chart was drawn, and the script it carried in all once the page's
    network was quiet."""
    from playwright.sync_api import sync_playwright

    from tests.browser.chromium import CHROMIUM, CHROMIUM_ARGS

    # The condition is put into the probe's text: a page's Content-Security-Policy forbids eval().
    probe = """() => new Promise((done) => {
      (function frame() {
        if (CONDITION) {
          const at = performance.now();
          const nav = performance.getEntriesByType("navigation")[0];
          done([at, nav.transferSize, SCRIPTS()]);
          return;
        }
        requestAnimationFrame(frame);
      })();
    })"""
    scripts = """() => {
      let scripts = 0;
      for (const r of performance.getEntriesByType("resource")) {
        if (new URL(r.name).pathname.endsWith(".js")) scripts += r.transferSize;
      }
      return scripts;
    }"""
    probe = probe.replace("SCRIPTS", f"({scripts})")
    found: list[list[FirstChart]] = [[] for _ in urls]
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        for _ in range(repeat):
            for index, (url, condition) in enumerate(urls):
                context = browser.new_context(viewport={"width": 1400, "height": 900})
                # The machine is offline: a script from another host (LNT's pages name two CDNs) fails at once
                # rather than after a DNS timeout, alike for every app.
                context.route(re.compile(r"^https?://(?!127\.0\.0\.1[:/]).*"), lambda route: route.abort())
                page = context.new_page()
                page.goto(url, wait_until="commit", timeout=120_000)
                at, html, before = page.evaluate(probe.replace("CONDITION", condition))
                settle(page)
                found[index].append(FirstChart(at, html, before, page.evaluate(scripts)))
                context.close()
        browser.close()
    return found


def settle(page: Any, quiet_s: float = 2.0, limit_s: float = 30.0) -> None:
    """Wait until ``page`` has loaded and asked for nothing more for ``quiet_s`` seconds (at most ``limit_s``).

    Playwright's "networkidle" (500 ms without a request) comes too early on a loaded machine: a script a page
    asks for once its first chart is drawn (benchdash's plotly.js, from an idle callback) can come later."""
    page.wait_for_load_state("networkidle", timeout=120_000)
    count = "() => performance.getEntriesByType('resource').length"
    seen, quiet_since, start = page.evaluate(count), time.monotonic(), time.monotonic()
    while time.monotonic() - quiet_since < quiet_s and time.monotonic() - start < limit_s:
        page.wait_for_timeout(250)
        now = page.evaluate(count)
        if now != seen:
            seen, quiet_since = now, time.monotonic()


def script_rows(table: Table, figure: str, peer: Sequence[FirstChart], ours: Sequence[FirstChart]) -> None:
    """The script the network carried (medians of the cold loads): before the first chart, and in all."""
    for label, bytes_of in (
        ("script KB carried before the first chart", lambda load: load.script_bytes),
        ("script KB carried in all (page loaded, network quiet)", lambda load: load.all_script_bytes),
    ):
        peer_kb = statistics.median(bytes_of(load) for load in peer) / 1024
        our_kb = statistics.median(bytes_of(load) for load in ours) / 1024
        table.add(f"{figure}{label}", f"{peer_kb:.0f}", f"{our_kb:.0f}", our_kb / peer_kb if peer_kb else None)


# --- benchdash's side ------------------------------------------------------------------------------------------

INGEST_QUEUE_SUFFIX = "-ingest"
ARCHIVE_QUEUE_SUFFIX = "-archive"


@dataclass
class Benchdash:
    """benchdash on a fresh PostgreSQL database named ``database`` (dropped and created again), production mode."""

    database: str
    work: Path

    def __post_init__(self) -> None:
        url = os.environ.get("DATABASE_URL", "")
        if not url.startswith("postgres"):
            sys.exit("benchdash is measured on PostgreSQL: set DATABASE_URL=postgres://… (its server is used)")
        if not os.environ.get("REDIS_URL"):
            sys.exit("set REDIS_URL (e.g. redis://127.0.0.1:6379/8): gunicorn, the worker and this script share it")
        self.database_url = re.sub(r"/[^/]*$", f"/{self.database}", url)
        # Queues of this process's own: two benches on one database (lnt_bench and codespeed_bench --reuse) never
        # take, or empty, each other's tasks.
        self.ingest_queue = f"{self.database}-{os.getpid()}{INGEST_QUEUE_SUFFIX}"
        self.archive_queue = f"{self.database}-{os.getpid()}{ARCHIVE_QUEUE_SUFFIX}"
        # Static files of this process's own too: a bench collecting them again never empties another's served ones.
        self.static_root = self.work / f"benchdash-static-{os.getpid()}"
        self.env = {
            **os.environ,
            "DATABASE_URL": self.database_url,
            "BENCHDASH_MODE": "production",
            "SECRET_KEY": secrets.token_urlsafe(50),
            "ALLOWED_HOSTS": "127.0.0.1,localhost",
            # Codespeed and LNT show their pages to anyone: so does benchdash here.
            "BENCHDASH_PUBLIC_BROWSING": "true",
            "SECURE_COOKIES": "false",
            "BENCHDASH_STATIC_ROOT": str(self.static_root),
            "CELERY_QUEUE": self.ingest_queue,
            "LOG_LEVEL": "WARNING",
        }
        self.env.pop("CELERY_TASK_ALWAYS_EAGER", None)
        self.env.pop("DEBUG", None)

    def setup_django(self) -> None:
        """This process as a benchdash process on the bench's database (it reads results, clears the cache)."""
        os.environ.update({k: v for k, v in self.env.items() if k not in ("CELERY_QUEUE",)})
        os.environ["DJANGO_SETTINGS_MODULE"] = "benchdash.settings"
        os.environ["CELERY_QUEUE"] = self.archive_queue
        import django

        django.setup()

    def create(self) -> None:
        from django.core.cache import cache
        from django.core.management import call_command
        from django.db import connection

        db_name = connection.settings_dict["NAME"]
        assert db_name == self.database, db_name
        with connection._nodb_cursor() as cursor:
            cursor.execute(f'DROP DATABASE IF EXISTS "{db_name}"')
            cursor.execute(f'CREATE DATABASE "{db_name}"')
        connection.close()
        call_command("migrate", verbosity=0)
        cache.clear()
        self.purge_queues()
        self.collect_static()

    def collect_static(self) -> None:
        """The static files as production serves them (hashed names, compressed copies), from this checkout."""
        shutil.rmtree(self.static_root, ignore_errors=True)
        subprocess.run(
            [sys.executable, "manage.py", "collectstatic", "--noinput", "-v0"], cwd=REPO, env=self.env, check=True
        )

    def import_bundles(self, bundles: Sequence[Path]) -> None:
        """Import through the command, then refresh every series as the worker does after an import."""
        env = {**self.env, "CELERY_QUEUE": self.archive_queue}
        for start in range(0, len(bundles), 200):
            subprocess.run(
                [sys.executable, "manage.py", "import_bundle", *map(str, bundles[start : start + 200])],
                cwd=REPO,
                env=env,
                check=True,
                stdout=subprocess.DEVNULL,
            )
        self.purge_queues()
        from reports.series import refresh_series
        from runs.models import Run

        for server_id, workload_id in Run.objects.values_list("server_id", "workload_id").distinct():
            refresh_series(server_id, workload_id)

    def server(self) -> Server:
        return Server("benchdash", Path(sys.executable), "benchdash.wsgi:application", REPO, self.env, "/healthz")

    def computing_server(self) -> Server:
        """benchdash with a cache that keeps nothing: every page is computed, as the peers compute theirs."""
        return Server(
            "benchdash (computing)",
            Path(sys.executable),
            "benchdash.wsgi:application",
            REPO,
            {**self.env, "DJANGO_SETTINGS_MODULE": "bench.computing_settings"},
            "/runs/",  # not /healthz: that one reports a cache that keeps nothing as down
        )

    def worker(self) -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "benchdash",
                "worker",
                "-c",
                "2",
                "-l",
                "warning",
                "-Q",
                self.ingest_queue,
            ],
            cwd=REPO,
            env=self.env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    def purge_queues(self) -> None:
        """Empty this bench's two queues (only those) in the broker."""
        subprocess.run(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "benchdash",
                "purge",
                "-f",
                "-Q",
                f"{self.ingest_queue},{self.archive_queue}",
            ],
            cwd=REPO,
            env=self.env,
            check=True,
            stdout=subprocess.DEVNULL,
        )

    def token(self) -> str:
        from django.contrib.auth.models import Group, User

        from accounts.permissions import UPLOADER, create_token

        user, _ = User.objects.get_or_create(username="peer-bench")
        user.groups.add(Group.objects.get(name=UPLOADER))
        return create_token(user, "peer bench")[1]


def series_bundle(name: str, versions: Sequence[str], seed: int) -> bytes:
    """A generated sysbench series (42 microbenchmarks, one client) on a server of its own name."""
    from runs import synthetic

    spec = synthetic.SeriesSpec(versions=tuple(versions), seed=seed)
    return synthetic.bundle_bytes(spec, extra_files={"benchdash.toml": f'server = "{name}"\n'.encode()})


@dataclass
class SeriesData:
    """One series as benchdash stored it, for a peer to load: its runs in version order, each with its QPS."""

    name: str
    runs: list[tuple[int, str, list[tuple[str, float]]]]  # (run id, version, [(microbenchmark, QPS)])


def benchmark_name(test: str, range_size: int | None) -> str:
    return f"{test}.range{range_size}" if range_size else test


def read_series() -> Iterator[SeriesData]:
    """The bench's series (``SERIES``), read back from benchdash's database in version order; the ingest figures'
    series, which a previous run on the same database left there, are not read."""
    for found in _read_series():
        wanted = dict((name, versions) for name, versions, _seed in SERIES)[found.name]
        if tuple(version for _id, version, _values in found.runs) != wanted:
            raise RuntimeError(f"benchdash's series {found.name} does not hold the {len(wanted)} versions generated")
        yield found


def _read_series() -> Iterator[SeriesData]:
    from runs.models import Result

    rows = (
        Result.objects.filter(microbenchmark__is_warmup=False, run__server__name__in=[name for name, *_ in SERIES])
        .order_by("run__server__name", "run__build__version__sort_key", "run_id", "microbenchmark__test")
        .values_list(
            "run__server__name",
            "run_id",
            "run__build__version__text",
            "microbenchmark__test",
            "microbenchmark__range_size",
            "qps",
        )
    )
    current: SeriesData | None = None
    for server, run_id, version, test, range_size, qps in rows.iterator(chunk_size=10_000):
        if current is None or current.name != server:
            if current is not None:
                yield current
            current = SeriesData(server, [])
        if not current.runs or current.runs[-1][0] != run_id:
            current.runs.append((run_id, version, []))
        current.runs[-1][2].append((benchmark_name(test, range_size), float(qps)))
    if current is not None:
        yield current


def ingest_bundle(server: str, versions: Sequence[str]) -> bytes:
    """A generated series for the ingest figure, new to benchdash however often the bench runs.

    benchdash keeps an upload whose exact bytes it imported before as that earlier bundle, and skips a run whose
    content it holds already: the same series uploaded again under another server name (a rerun on the same
    databases) would import nothing. Its seed comes from ``server`` (a new name each time), and the name is
    written into the bundle."""
    from runs import synthetic

    spec = synthetic.SeriesSpec(versions=tuple(versions), seed=zlib.crc32(server.encode()))
    return synthetic.bundle_bytes(spec, extra_files={"benchdash.toml": f'server = "{server}"\n'.encode()})


def upload_until_refreshed(url: str, token: str, bundle: bytes, server: str, queue: str) -> float:
    """Seconds from an upload's first byte until benchdash shows it everywhere: imported, its series refreshed
    (comparisons, summary, detection) and nothing left in the worker's queue."""
    import redis
    from run import queue_busy

    from reports.models import SeriesSummary
    from runs.models import Bundle, Run

    boundary = "peerbench"
    body = (
        (
            f'--{boundary}\r\nContent-Disposition: form-data; name="server"\r\n\r\n{server}\r\n'
            f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{server}.tar.gz"\r\n'
            "Content-Type: application/gzip\r\n\r\n"
        ).encode()
        + bundle
        + f"\r\n--{boundary}--\r\n".encode()
    )
    broker = redis.Redis.from_url(os.environ["REDIS_URL"])
    request = urllib.request.Request(
        url + "/api/bundles/",
        data=body,
        headers={"Authorization": f"Bearer {token}", "Content-Type": f"multipart/form-data; boundary={boundary}"},
    )
    start = time.perf_counter()
    with urllib.request.urlopen(request, timeout=120) as response:
        answer = json.loads(response.read())
    if answer.get("already_imported"):
        raise RuntimeError(f"these bytes were imported before, as bundle {answer['bundle_id']}: nothing to time")
    quiet = 0
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        status = Bundle.objects.filter(pk=answer["bundle_id"]).values_list("status", flat=True).first()
        if status == Bundle.Status.FAILED:
            raise RuntimeError(f"the upload failed to import: {answer}")
        if status == Bundle.Status.IMPORTED and not Run.objects.filter(server__name=server).exists():
            raise RuntimeError(f"the upload imported no run under {server!r}: each was one benchdash held already")
        done = (
            status == Bundle.Status.IMPORTED
            and not queue_busy(broker, queue)
            and SeriesSummary.objects.filter(server__name=server).exists()
        )
        quiet = quiet + 1 if done else 0
        if quiet >= 3:  # three quiet looks in a row: a task between the queue and "unacked" is not missed
            return time.perf_counter() - start - 0.1
        time.sleep(0.05)
    raise RuntimeError("the upload was not refreshed within 10 minutes")


def dump(path: Path, value: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value))


def finish(servers: Sequence[Server], worker: subprocess.Popen[bytes], bd: Benchdash) -> None:
    """Stop the servers and the bench's worker, and empty the bench's own queues."""
    for server in servers:
        server.stop()
    worker.terminate()
    worker.wait(timeout=30)
    bd.purge_queues()
    shutil.rmtree(bd.static_root, ignore_errors=True)
