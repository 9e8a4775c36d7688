"""Two checkouts of benchdash side by side, both computing every page: a change's CPU, like for like.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/<db> REDIS_URL=redis://127.0.0.1:6379/<n> \\
        .venv/bin/python bench/checkout_ab.py --before <dir> [--after .] [--build] [--port 25010] \\
        [--requests 20] [--pages 60]

``--before`` is another checkout of the project (``git archive <commit> | tar -x -C <dir>``, with a ``.venv``
link to this one's); ``--after`` this one. Both serve DATABASE_URL's database under gunicorn (2 sync workers,
``BENCHDASH_MODE=production``, ``bench/computing_settings.py``: a cache that keeps nothing, so every page is
computed as Codespeed and LNT compute theirs; what a refresh stored is read). ``--build`` first imports the
peer benches' two series (``peers.SERIES_60`` on server ``s60``, ``peers.SERIES_200`` on ``s200``) into that
database and refreshes them, as the worker does after an import; otherwise it must hold them already (the
peer benches' ``bd_peer`` does).

Requests alternate between the two servers one by one, so the machine's load hits them alike; each is timed at
the client and by the CPU time the server's process tree spent on it. Pages: the 60 × 42 comparison (the series'
default), the 200 × 42 comparison with a base never asked before (a new base per request), a run against its
baseline (2 runs × 42, the page LNT's run page with ``compare_to`` is measured against), and one microbenchmark
over 200 versions (the drill-down of point-query on ``s200``, the page LNT's graph of one test is measured
against): its first response, and apart from it, labelled, each part the page loads after it (``--parts``: the
after side's, asked as htmx asks; a checkout without them answers 404, printed as "none"); then pages/s with 20
clients on the first and last; with ``--first-chart N``, the drill-down's first chart in Chromium, cold, N loads a
side. Printed with the load average.
"""

from __future__ import annotations

import argparse
import os
import secrets
import statistics
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import peers
from peers import REPO, Server, Timing, get, interleaved, load, sent_bytes, throughputs, timed

# What the drill-down loads after its first response, as htmx asks for it: (label, path under the page's).
PARTS = (("stories, why it changed, suite metrics", "details"),)


def server(name: str, tree: Path, port: int, static: Path) -> Server:
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "bench.computing_settings",
        "BENCHDASH_MODE": "production",
        "SECRET_KEY": secrets.token_urlsafe(50),
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "BENCHDASH_PUBLIC_BROWSING": "true",
        "SECURE_COOKIES": "false",
        "BENCHDASH_STATIC_ROOT": str(static),
        "LOG_LEVEL": "WARNING",
    }
    env.pop("DEBUG", None)
    python = tree / ".venv" / "bin" / "python"
    subprocess.run([str(python), "manage.py", "collectstatic", "--noinput", "-v0"], cwd=tree, env=env, check=True)
    return Server(name, python, "benchdash.wsgi:application", tree, env, "/runs/", port=port)


def build(work: Path) -> None:
    """The two series imported through the command and refreshed, as the peer benches do."""
    from django.core.management import call_command

    from reports.series import refresh_series
    from runs.models import Run

    call_command("migrate", verbosity=0)
    bundles = []
    for name, versions, seed in (("s60", peers.SERIES_60, 1), ("s200", peers.SERIES_200, 2)):
        path = work / f"{name}.tgz"
        path.write_bytes(peers.series_bundle(name, versions, seed))
        bundles.append(str(path))
    call_command("import_bundle", *bundles, verbosity=0)
    for server_id, workload_id in Run.objects.values_list("server_id", "workload_id").distinct():
        refresh_series(server_id, workload_id)


def drilldown() -> str:
    """The drill-down of one microbenchmark over 200 versions: point-query on the 200-version series, from its
    first run (as bench/lnt_bench.py picks it)."""
    from runs.models import Result, Run

    s200 = Run.objects.filter(server__name="s200").order_by("build__version__sort_key").first()
    assert s200 is not None
    mb = Result.objects.filter(run=s200, microbenchmark__test="point-query").values_list("microbenchmark_id")[0][0]
    return f"/microbenchmarks/{mb}/?base={s200.pk}"


def pages() -> list[tuple[str, Callable[[], str]]]:
    from runs.models import Run

    def series(name: str) -> list[int]:
        return list(
            Run.objects.filter(server__name=name).order_by("build__version__sort_key").values_list("pk", flat=True)
        )

    s60, s200 = series("s60"), series("s200")
    if len(s60) != len(peers.SERIES_60) or len(s200) != len(peers.SERIES_200):
        sys.exit("the database does not hold the two series (s60, s200): build them with --build")
    fresh: Iterator[int] = iter(s200[2:])  # never the default base (the first), nor asked twice
    return [
        ("comparison 60 × 42", lambda: f"/compare/?base={s60[0]}"),
        ("comparison 200 × 42, a base never asked before", lambda: f"/compare/?base={next(fresh)}"),
        ("a run against its baseline (2 × 42)", lambda: f"/compare/?base={s60[0]}&runs={s60[-1]}"),
        ("one microbenchmark × 200, first response", drilldown),
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", type=Path, required=True)
    parser.add_argument("--after", type=Path, default=REPO)
    parser.add_argument("--build", action="store_true")
    parser.add_argument("--port", type=int, default=25010, help="the two servers listen on this port and the next")
    parser.add_argument("--requests", type=int, default=20)
    parser.add_argument("--pages", type=int, default=60, help="page loads per pages/s figure (0: none)")
    parser.add_argument(
        "--first-chart", type=int, default=0, help="cold loads of the drill-down in Chromium per side (0: none)"
    )
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchdash.settings")
    import django

    django.setup()
    with tempfile.TemporaryDirectory(prefix="benchdash-ab-") as work:
        if args.build:
            build(Path(work))
        asked = pages()
        servers = [
            server(name, tree.resolve(), args.port + i, Path(work) / f"static-{name}")
            for i, (name, tree) in enumerate((("before", args.before), ("after", args.after)))
        ]
        try:
            for side in servers:
                side.start()
            measure(servers, asked, args.requests, args.pages)
            if args.first_chart:
                first_chart(servers, asked[-1][1](), args.first_chart)
        finally:
            for side in servers:
                side.stop()
    return 0


def measure(servers: list[Server], asked: list[tuple[str, Callable[[], str]]], requests: int, count: int) -> None:
    print(f"{'page':48} {'CPU before':>10} {'after':>8} {'ratio':>6}   wall p50 before / after   HTML KB raw/sent")
    for title, url in asked:
        sides = [(side, (lambda side=side, url=url: get(side.url + url())), None) for side in servers]
        before, after = interleaved(requests, sides, warmup=2)
        sizes = [sent_bytes(side.url + url()) for side in servers]
        print(
            f"{title:48} {before.cpu50():8.1f}ms {after.cpu50():6.1f}ms {after.cpu50() / before.cpu50():6.2f}"
            f"   {before.p50():6.0f} / {after.p50():4.0f} ms"
            f"   {sizes[0][0] // 1024}/{sizes[0][1] // 1024} → {sizes[1][0] // 1024}/{sizes[1][1] // 1024}"
            f"   (load {min(before.loads + after.loads):.1f}-{max(before.loads + after.loads):.1f})",
            flush=True,
        )
    parts(servers, asked[-1][1](), requests)
    if count:
        for title, url in (asked[0], asked[2]):
            fetches = [lambda side=side, url=url: get(side.url + url()) for side in servers]  # type: ignore[misc]
            rates = [
                f"{rate:.1f}" + (f" ({errors} failed)" if errors else "")
                for rate, errors in throughputs(fetches[0], fetches[1], 20, count)
            ]
            print(f"pages/s, 20 clients, {title}: before {rates[0]}, after {rates[1]} ({load()})", flush=True)


def part_url(page: str, part: str) -> str:
    path, _, query = page.partition("?")
    return f"{path}{part}?{query}"


def fetch_part(url: str) -> bytes | None:
    """The part as htmx asks for it (a fragment), or None when this checkout has no such part (404)."""
    request = urllib.request.Request(url, headers={"HX-Request": "true", "Accept-Encoding": "gzip"})
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            return bytes(response.read())
    except urllib.error.HTTPError as exc:
        if exc.code == 404:
            return None
        raise


def parts(servers: list[Server], page: str, requests: int) -> None:
    """Each part the drill-down loads after its first response, on each side that has it: its CPU apart, labelled,
    interleaved like the pages (the deferred parts are work too); then first response + parts."""
    for title, part in PARTS:
        url = part_url(page, part)
        present = [side for side in servers if fetch_part(side.url + url) is not None]
        timings: dict[str, Timing] = {side.name: Timing() for side in servers}
        for _ in range(requests):
            for side in present:
                timed(side, lambda side=side, url=url: fetch_part(side.url + url), None, timings[side.name])  # type: ignore[misc]
        cells = []
        for side in servers:
            found = timings[side.name]
            if side in present:
                sent = len(fetch_part(side.url + url) or b"")
                cells.append(
                    f"{side.name} CPU {found.cpu50():.1f} ms, wall p50 {found.p50():.0f} ms, {sent // 1024} KB sent"
                )
            else:
                cells.append(f"{side.name}: none (in its first response)")
        loads = [x for t in timings.values() for x in t.loads] or [os.getloadavg()[0]]
        print(f"  deferred part, {title}: {'; '.join(cells)} (load {min(loads):.1f}-{max(loads):.1f})", flush=True)


def first_chart(servers: list[Server], page: str, repeat: int) -> None:
    """The drill-down's first chart in Chromium, cold, on each side (``peers.first_chart``: loads interleaved, a
    fresh context each), with what its deferred part does to it: asked for with the page, it held one of the two
    workers while the page's scripts came."""
    drawn = peers.first_chart([(side.url + page, peers.BENCHDASH_FIRST_CHART) for side in servers], repeat)
    medians = [statistics.median(load.ms for load in loads) for loads in drawn]
    cells = [f"{side.name} {ms:.0f} ms" for side, ms in zip(servers, medians, strict=True)]
    print(
        f"first chart in Chromium, cold, one microbenchmark × 200 (median of {repeat}): {', '.join(cells)},"
        f" ratio {medians[1] / medians[0]:.2f} ({load()})",
        flush=True,
    )


if __name__ == "__main__":
    sys.exit(main())
