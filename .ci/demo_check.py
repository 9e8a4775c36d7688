"""Run the README's ``make demo`` in a checkout, as a first-time user would, and check what it serves.

``python3 .ci/demo_check.py CHECKOUT [MAKE_ARG ...]`` starts ``make demo PORT=<free port>`` in CHECKOUT
with no service configured (no DATABASE_URL, no REDIS_URL), waits for it to serve, and checks:

- the demo login is the last thing printed before "serving on", with no migration or task logs above it;
- the home page, a comparison, a microbenchmark's drill-down and (logged in with the printed password)
  the upload page answer 200 with content only the loaded data produces: with the real corpus, the
  comparison's relative QPS must be the corpus author's own ``qps.rel.all.tsv``;

then stops it by its process group. Exit status 0 when all of that holds. Standard library only, so it
runs before the checkout has a virtualenv; tests/test_demo.py drives the same code without the corpus.
"""

from __future__ import annotations

import html
import http.cookiejar
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

SERVING = "benchdash is serving on "
LOGIN_RE = re.compile(r"^demo login \([^)]*\): user '(?P<user>[^']+)', password '(?P<password>[^']+)'")
CORPUS_RE = re.compile(r"^loading the real corpus from (?P<path>.+)$")
# The base of the corpus author's relative-QPS table (sysbench-mysql-small/qps.rel.all.tsv).
REAL_BASE_RUN = "x.my5651_rel_o2nofp.z12a_c8r32.pk1"
# Service settings a developer's shell may carry; the README's demo runs without any of them.
SERVICE_VARIABLES = ("DATABASE_URL", "REDIS_URL", "REDIS_CACHE_URL", "BENCHDASH_REQUIRE_SERVICES")


class DemoFailed(AssertionError):
    pass


@dataclass
class Demo:
    process: subprocess.Popen[str]
    port: int
    lines: list[str] = field(default_factory=list)
    reader: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def output(self) -> str:
        return "\n".join(self.lines)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start(checkout: Path, make_args: list[str], env: dict[str, str], echo: bool) -> Demo:
    port = free_port()
    clean = {key: value for key, value in os.environ.items() if key not in SERVICE_VARIABLES}
    process = subprocess.Popen(
        ["make", *make_args, "demo", f"PORT={port}"],
        cwd=checkout,
        env={**clean, **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        # Its own process group: make, the Python it runs and runserver are stopped together.
        start_new_session=True,
    )
    demo = Demo(process=process, port=port)

    def read() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            demo.lines.append(line.rstrip("\n"))
            if echo:
                print(f"   | {line}", end="", flush=True)

    demo.reader = threading.Thread(target=read, daemon=True)
    demo.reader.start()
    return demo


def stop(demo: Demo, timeout: float = 20) -> None:
    if demo.process.poll() is None:
        os.killpg(demo.process.pid, signal.SIGTERM)
        try:
            demo.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(demo.process.pid, signal.SIGKILL)
            demo.process.wait()
    if demo.reader is not None:
        demo.reader.join(timeout=10)
    if demo.process.stdout is not None:
        demo.process.stdout.close()


def wait_until_serving(demo: Demo, opener: urllib.request.OpenerDirector, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    announced_open = False
    while time.monotonic() < deadline:
        if demo.process.poll() is not None:
            raise DemoFailed(f"make demo exited with {demo.process.returncode}:\n{demo.output()[-4000:]}")
        if any(line.startswith(SERVING) for line in demo.lines):
            if not announced_open:
                # "serving on" is printed once the port answers: connect at once, no retry.
                expect(port_answers(demo.port), f'"{SERVING.strip()}" was printed before port {demo.port} answered')
                announced_open = True
            try:
                if get(opener, demo, "/")[0] == 200:
                    return
            except OSError:
                pass
        time.sleep(0.5)
    raise DemoFailed(f"make demo did not serve within {seconds:.0f} s:\n{demo.output()[-4000:]}")


def port_answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2):
            return True
    except OSError:
        return False


def get(opener: urllib.request.OpenerDirector, demo: Demo, path: str, data: bytes | None = None) -> tuple[int, str]:
    try:
        with opener.open(demo.base_url + path, data=data, timeout=60) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode(errors="replace")


def expect(condition: bool, message: str) -> None:
    if not condition:
        raise DemoFailed(message)


def check_output(demo: Demo) -> tuple[str, str, Path | None]:
    """The login is the last line printed before "serving on", and the output above it is short."""
    serving = next(i for i, line in enumerate(demo.lines) if line.startswith(SERVING))
    before = [line for line in demo.lines[:serving] if line.strip()]
    expect(bool(before), "make demo printed nothing before serving")
    login = LOGIN_RE.match(before[-1])
    expect(login is not None, f"the last line before {SERVING!r} is not the demo login: {before[-1]!r}")
    assert login is not None
    # Everything from the migration on (pip may warn about the machine's own configuration before it).
    start = next((i for i, line in enumerate(before) if line.startswith("migrating the database")), 0)
    shown = before[start:]
    expect(len(shown) <= 15, f"{len(shown)} lines between the migration and the login:\n" + "\n".join(shown))
    noisy = [line for line in shown if line.startswith(("Task ", "  Applying ", "Operations to perform"))]
    expect(not noisy, f"migration or task logs bury the login: {noisy}")
    corpus = next((Path(m["path"]) for line in shown if (m := CORPUS_RE.match(line))), None)
    return login["user"], login["password"], corpus


def comparison_table(html: str) -> dict[str, dict[str, str]]:
    """The comparison's relative-QPS table: microbenchmark -> run name -> relative QPS as shown."""
    table = html[html.index('id="relative-table"') :]
    head, body = table.split("</thead>", 1)
    runs = re.findall(r'<th class="num" title="([^"]+)">', head)
    rows = {}
    for name, row in re.findall(r'<tr data-label="([^"]+)">(.*?)</tr>', body.split("</table>", 1)[0], re.S):
        cells = re.findall(r'<td class="num[^"]*" title="QPS [^"]*">([^<]+)</td>', row)
        rows[name] = dict(zip(runs, cells, strict=False))
    return rows


def reference_table(corpus: Path) -> dict[str, dict[str, str]]:
    """The corpus author's relative QPS (base x.my5651) from their own script: microbenchmark -> run -> value."""
    lines = (corpus / "sysbench-mysql-small" / "qps.rel.all.tsv").read_text().splitlines()
    columns = dict(re.findall(r"^(col-\d+) : (\S+)$", "\n".join(lines), re.M))
    header: list[str] = []
    rows = {}
    for line in lines:
        cells = line.split("\t")
        if cells[0] == "col-1":
            header = [columns[cell] for cell in cells]
        elif header and len(cells) == len(header) + 1:
            rows[cells[-1]] = dict(zip(header, cells[:-1], strict=True))
    return rows


def close(shown: str | None, reference: str) -> bool:
    return shown is not None and abs(float(shown) - float(reference)) < 0.0101


def check_pages(demo: Demo, user: str, password: str, corpus: Path | None) -> list[str]:
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    checked = []

    status, home = get(opener, demo, "/")
    expect(status == 200, f"home answered {status}")
    if corpus is None:
        expect("generated 8-core server" in home, "home does not list the generated MySQL series")
        base = re.search(r'href="/compare/\?base=(\d+)"', home)
        expect(base is not None, "home links to no comparison")
        assert base is not None
        base_id = base[1]
    else:
        expect("8-core server" in home and "48-core server" in home, "home does not list the corpus' servers")
        status, runs = get(opener, demo, f"/runs/?q={REAL_BASE_RUN}")
        found = re.search(r'href="/runs/(\d+)/"', runs)
        expect(status == 200 and found is not None, f"the run list does not find {REAL_BASE_RUN}")
        assert found is not None
        base_id = found[1]
    checked.append("/")

    compare_path = f"/compare/?base={base_id}"
    status, compare = get(opener, demo, compare_path)
    expect(status == 200, f"{compare_path} answered {status}")
    table = comparison_table(compare)
    expect(len(table) >= 10, f"{compare_path} shows {len(table)} microbenchmarks")
    if corpus is not None:
        reference = reference_table(corpus)
        expect(len(reference) >= 10, "the corpus' qps.rel.all.tsv has no rows")
        # Warm-up tests are left out of comparisons (the reference scripts keep them).
        wanted = {name: values for name, values in reference.items() if ".warm" not in name}
        # One unit in the second decimal apart at most: the page rounds the stored exact ratio, and at a
        # rounding boundary that can differ from the reference script (the CLI's tsv layout is the one the
        # test suite holds to the reference byte for byte).
        wrong = {
            name: (values, table.get(name))
            for name, values in wanted.items()
            if not all(close(table.get(name, {}).get(run), value) for run, value in values.items())
        }
        expect(not wrong, f"relative QPS differs from the corpus' qps.rel.all.tsv: {wrong}")
    checked.append(compare_path)

    # The write-up's links back to benchdash name the port the demo serves on (make demo PORT=…).
    writeup_path = f"/compare/writeup?base={base_id}"
    status, writeup = get(opener, demo, writeup_path)
    links = re.findall(r"https?://(?:127\.0\.0\.1|localhost)(?::\d+)?/", writeup)
    expect(status == 200 and bool(links), f"{writeup_path} answered {status} with no link back")
    expect(set(links) == {demo.base_url + "/"}, f"{writeup_path} links to {sorted(set(links))}, not {demo.base_url}/")
    checked.append(writeup_path)

    # The charts' script, from the page's own static files: plotly.js's cartesian bundle that make install put in
    # the clone's .venv (npm is on every machine CI runs on), not the plotly package's 4.8 MB full build.
    script = re.search(r'content="([^"]+)" id="plotly-js"', compare)
    expect(script is not None, f"{compare_path} names no plotly.js")
    assert script is not None
    status, bundle = get(opener, demo, script[1])
    cartesian = "plotly.js (cartesian - minified)" in bundle[:200]
    expect(status == 200 and cartesian, f"{script[1]} is not plotly.js's cartesian bundle")
    checked.append(script[1])

    name, row = re.search(r'<tr data-label="([^"]+)">(.*?)</tr>', compare, re.S).groups()  # type: ignore[union-attr]
    # The link carries the comparison's parameters (its concurrency at least), HTML-escaped in the attribute.
    link = re.search(r'href="(/microbenchmarks/\d+/\?base=\d+[^"]*)"', row)
    expect(link is not None, f"{name} links to no drill-down")
    assert link is not None
    drilldown_path = html.unescape(link[1])
    status, drilldown = get(opener, demo, drilldown_path)
    expect(status == 200, f"{drilldown_path} answered {status}")
    qps = re.findall(r'title="QPS ([^"]+)"', row)
    expect(bool(qps) and f"<h1>{name}" in drilldown, f"{drilldown_path} is not the drill-down of {name}")
    missing = [value for value in qps if value not in drilldown]
    expect(not missing, f"{drilldown_path} lacks the QPS the comparison shows: {missing}")
    checked.append(drilldown_path)

    status, login_page = get(opener, demo, "/account/login/")
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', login_page)
    expect(status == 200 and token is not None, f"the login page answered {status} without a CSRF token")
    assert token is not None
    form = urllib.parse.urlencode({"username": user, "password": password, "csrfmiddlewaretoken": token[1]})
    status, after = get(opener, demo, "/account/login/?next=/upload/", form.encode())
    expect(status == 200 and 'type="file"' in after, f"logging in with the printed password failed ({status})")
    status, upload = get(opener, demo, "/upload/")
    expect(status == 200 and 'enctype="multipart/form-data"' in upload, f"/upload/ answered {status}")
    checked.append("/upload/")
    return checked


def run(
    checkout: Path,
    make_args: list[str] | None = None,
    env: dict[str, str] | None = None,
    echo: bool = False,
    seconds: float = 900,
) -> list[str]:
    """Start the demo, check it, stop it; the paths checked, or DemoFailed."""
    demo = start(checkout, make_args or [], env or {}, echo)
    try:
        wait_until_serving(demo, urllib.request.build_opener(), seconds)
        user, password, corpus = check_output(demo)
        return check_pages(demo, user, password, corpus)
    finally:
        stop(demo)


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    # CI runs this in the background and stops it with SIGTERM if the run ends first: the demo's process group is
    # stopped on the way out (run's finally), not left serving.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    started = time.monotonic()
    try:
        checked = run(Path(argv[0]).resolve(), argv[1:], echo=True)
    except DemoFailed as exc:
        print(f"make demo check FAILED after {time.monotonic() - started:.0f} s: {exc}", file=sys.stderr)
        return 1
    print(f"make demo serves real content: {', '.join(checked)} (checked in {time.monotonic() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
