"""Run sysbench against a database server and write a result directory benchdash imports.

No Django here. The caller gives connection and run parameters and a private
working directory; the runner loads the tables (``oltp_common prepare``), runs
each microbenchmark at each concurrency, and writes the layout the importer
reads, as the classic shell scripts do::

    x.<build>.<config>.pk1/
        sb.prepare.o.<first test>.range<R>.pk1    load output, ends "Load seconds is …"
        sb.o.<test>.range<R>.pk1.dop<N>           line 1 command (password ***), line 2 "<n> CPUs", output
        sb.met.<test>.range<R>.pk1.dop<N>         iostat/vmstat per operation (when the tools exist)
        sb.vm.… / sb.io.…                         raw vmstat / iostat samples
        sb.r.{qps,trx,rtavg,rtmax,rt95}.<test>.range<R>.pk1
        sb.gv.start / sb.pg.conf.start            the server's settings

The password is never put on sysbench's command line, where ``ps`` and
``/proc/<pid>/cmdline`` show it to every user of the machine: sysbench reads it
from a 0600 ``--config-file`` outside the result directory, removed when the
run ends. A password that file cannot carry is refused (``password_problem``).
The recorded command lines show ``--<driver>-password=***``, and every file
written is scrubbed of the password anyway.
Cancelling (``stop`` set) terminates sysbench (SIGTERM, then SIGKILL after a
grace period) and keeps what was written so far.
"""

from __future__ import annotations

import functools
import os
import re
import shlex
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from suites.sysbench import parse as sb

LUA_DIR = Path(__file__).resolve().parent / "lua"
KINDS = ("mysql", "mariadb", "postgres")
# How long sysbench gets to exit after SIGTERM before it is killed.
TERMINATE_GRACE_SECONDS = 5.0
# How often the wait loop looks at the stop flag and the live output.
POLL_SECONDS = 0.25
# Shorter passwords are not searched for in the output (see _Run.scrub); sysbench does not print them anyway.
MIN_SCRUBBED_PASSWORD = 6
# Device names iostat lists that are not physical disks: counting them would count IO twice.
VIRTUAL_DEVICE_RE = re.compile(r"^(loop|ram|zram|dm-|md|sr|fd|nbd)")


class RunnerError(Exception):
    """The run cannot go on; the message is for the user (it never holds the password)."""


# --------------------------------------------------------------------------- microbenchmarks


@dataclass(frozen=True)
class Microbenchmark:
    test: str
    range_size: int
    script: str
    options: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        return sb.test_label(self.test, self.range_size)

    def file_suffix(self, dop: int | None = None) -> str:
        suffix = f"{self.test}.range{self.range_size}.pk1"
        return suffix if dop is None else f"{suffix}.dop{dop}"


def _points(n: int, *, on_key: str = "pk", covered: bool = False, hot: bool = False) -> tuple[str, ...]:
    return (
        f"--points={n}",
        f"--on-key={on_key}",
        f"--covered={'on' if covered else 'off'}",
        f"--hot={'on' if hot else 'off'}",
    )


def _ranges(*, on_key: str, covered: bool = False, count: bool = False) -> tuple[str, ...]:
    return (f"--on-key={on_key}", f"--covered={'on' if covered else 'off'}", f"--count={'on' if count else 'off'}")


def _read_only_one(kind: str) -> tuple[str, ...]:
    # One kind of range query per transaction, as the classic read-only-<kind> tests run it.
    kinds = ("simple", "sum", "order", "distinct")
    return tuple(f"--{k}-ranges={1 if k == kind else 0}" for k in kinds)


# The classic list in run order: reads first, then writes (which change the data), delete and insert last.
FULL: tuple[Microbenchmark, ...] = (
    Microbenchmark("point-query", 100, "oltp_point_select", ("--skip-trx",)),
    Microbenchmark("points-covered-pk", 100, "bd_points", _points(100, on_key="pk", covered=True)),
    Microbenchmark("points-covered-si", 100, "bd_points", _points(100, on_key="si", covered=True)),
    Microbenchmark("points-notcovered-pk", 100, "bd_points", _points(100, on_key="pk")),
    Microbenchmark("points-notcovered-si", 100, "bd_points", _points(100, on_key="si")),
    Microbenchmark("random-points", 10, "bd_points", _points(10)),
    Microbenchmark("random-points", 100, "bd_points", _points(100)),
    Microbenchmark("random-points", 1000, "bd_points", _points(1000)),
    Microbenchmark("hot-points", 100, "bd_points", _points(100, hot=True)),
    Microbenchmark("range-covered-pk", 100, "bd_ranges", _ranges(on_key="pk", covered=True)),
    Microbenchmark("range-covered-si", 100, "bd_ranges", _ranges(on_key="si", covered=True)),
    Microbenchmark("range-notcovered-pk", 100, "bd_ranges", _ranges(on_key="pk")),
    Microbenchmark("range-notcovered-si", 100, "bd_ranges", _ranges(on_key="si")),
    Microbenchmark("scan", 100, "bd_scan"),
    Microbenchmark("read-only", 10, "oltp_read_only"),
    Microbenchmark("read-only", 100, "oltp_read_only"),
    Microbenchmark("read-only", 10000, "oltp_read_only"),
    Microbenchmark("read-only-count", 1000, "bd_ranges", _ranges(on_key="pk", count=True)),
    Microbenchmark("read-only-distinct", 1000, "oltp_read_only", _read_only_one("distinct")),
    Microbenchmark("read-only-order", 1000, "oltp_read_only", _read_only_one("order")),
    Microbenchmark("read-only-simple", 1000, "oltp_read_only", _read_only_one("simple")),
    Microbenchmark("read-only-sum", 1000, "oltp_read_only", _read_only_one("sum")),
    Microbenchmark("update-inlist", 100, "bd_update_inlist", ("--points=100",)),
    Microbenchmark("update-index", 100, "oltp_update_index"),
    Microbenchmark("update-nonindex", 100, "oltp_update_non_index"),
    Microbenchmark("update-one", 100, "bd_update_one"),
    Microbenchmark("update-zipf", 100, "bd_update_zipf"),
    Microbenchmark("write-only", 10000, "oltp_write_only"),
    Microbenchmark("read-write", 10, "oltp_read_write"),
    Microbenchmark("read-write", 100, "oltp_read_write"),
    Microbenchmark("delete", 100, "oltp_delete"),
    Microbenchmark("insert", 100, "oltp_insert"),
)
CATALOGUE: dict[str, Microbenchmark] = {m.label: m for m in FULL}
# One or two from each group of the current list, a few minutes at the default length.
QUICK: tuple[str, ...] = (
    "point-query_range=100",
    "random-points_range=100",
    "range-notcovered-si_range=100",
    "read-only_range=10",
    "scan_range=100",
    "update-index_range=100",
    "insert_range=100",
)
PRESETS: dict[str, tuple[str, ...]] = {"quick": QUICK, "full": tuple(CATALOGUE)}


def in_run_order(labels: Collection[str]) -> list[Microbenchmark]:
    """The chosen microbenchmarks in the classic order (writes after reads), whatever order they came in."""
    unknown = sorted(set(labels) - set(CATALOGUE))
    if unknown:
        raise RunnerError(f"unknown microbenchmarks: {', '.join(unknown)}")
    return [m for m in FULL if m.label in labels]


# --------------------------------------------------------------------------- parameters


# sysbench reads its --config-file with fgets into 256 bytes: name, quotes and newline must fit.
MAX_PASSWORD_BYTES = 200


def password_problem(password: str) -> str | None:
    """Why sysbench's config file cannot carry this password, or None when it can."""
    if len(password.encode()) > MAX_PASSWORD_BYTES:
        return f"at most {MAX_PASSWORD_BYTES} bytes"
    if any(ord(c) < 32 or ord(c) == 127 for c in password):
        return "no control characters (line breaks, tabs)"
    if "'" in password and '"' in password:
        return "not both kinds of quote (' and \")"
    return None


@dataclass(frozen=True)
class Connection:
    kind: str  # mysql, mariadb or postgres
    host: str
    port: int
    user: str
    database: str
    password: str = field(default="", repr=False)
    # The checked address of ``host`` (runner.network) that clients connect to; the host itself when empty.
    address: str = ""

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise RunnerError(f"unknown DBMS kind {self.kind!r} (known: {', '.join(KINDS)})")

    @property
    def driver(self) -> str:
        return "pgsql" if self.kind == "postgres" else "mysql"

    @property
    def connect_to(self) -> str:
        return self.address or self.host

    def options(self, *, redacted: bool) -> list[str]:
        """Connection options for sysbench's command line; the password is never among them.

        Recorded (``redacted``), a ``--<driver>-password=***`` says one was given (in the config file)."""
        d = self.driver
        opts = [f"--{d}-host={self.connect_to}", f"--{d}-port={self.port}", f"--{d}-user={self.user}"]
        if self.password and redacted:
            opts.append(f"--{d}-password=***")
        opts.append(f"--{d}-db={self.database}")
        return opts

    def config_file_text(self) -> str:
        """The password as a line of sysbench's config file, quoted so spaces, commas and # stay in it."""
        if not self.password:
            return ""
        problem = password_problem(self.password)
        if problem is not None:
            raise RunnerError(f"the target's password cannot be passed to sysbench: it must have {problem}")
        quote = '"' if "'" in self.password else "'"
        return f"{self.driver}-password={quote}{self.password}{quote}\n"


# Bounds on what a triggered run may load: beyond them the load alone takes days and fills any disk, and the
# run's time limits (derived from its size) would mean nothing. 10G rows is 1,000 tables of 10M.
MAX_TABLE_SIZE = 1_000_000_000
MAX_TOTAL_ROWS = 10_000_000_000


@dataclass(frozen=True)
class Parameters:
    microbenchmarks: tuple[str, ...]
    tables: int
    table_size: int
    threads: tuple[int, ...]
    seconds: int
    warmup_seconds: int = 0
    # Smoke tests: stop each test after this many events instead of after `seconds`.
    events: int = 0

    def __post_init__(self) -> None:
        if not self.microbenchmarks:
            raise RunnerError("no microbenchmark chosen")
        if self.tables < 1 or self.table_size < 1:
            raise RunnerError("tables and rows per table must be at least 1")
        if self.table_size > MAX_TABLE_SIZE or self.tables * self.table_size > MAX_TOTAL_ROWS:
            raise RunnerError(
                f"at most {MAX_TABLE_SIZE:,} rows per table and {MAX_TOTAL_ROWS:,} rows in all "
                f"(asked: {self.tables:,} × {self.table_size:,})"
            )
        if not self.threads or min(self.threads) < 1:
            raise RunnerError("give at least one concurrency, each at least 1")
        if self.seconds < 1 and self.events < 1:
            raise RunnerError("each test needs a length: seconds (or events) at least 1")


def estimate_seconds(params: Parameters) -> int:
    """A generous upper bound on the run's length: the task's time limits are derived from it."""
    # 20k rows/s is a slow load; real servers do 100k-1M.
    load = params.tables * params.table_size / 20_000
    steps = len(params.microbenchmarks) * len(params.threads)
    per_step = max(params.seconds, 1) + 2 * params.warmup_seconds + 10
    return int(60 + 2 * load + steps * per_step)


# --------------------------------------------------------------------------- progress


@dataclass
class Step:
    label: str
    test: str
    range_size: int
    dop: int
    state: str = "queued"  # queued, running, done, failed, cancelled
    qps: float | None = None
    seconds: float | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "test": self.test,
            "range": self.range_size,
            "dop": self.dop,
            "state": self.state,
            "qps": self.qps,
            "seconds": self.seconds,
        }


@dataclass
class Progress:
    phase: str = "queued"  # queued, prepare, tests, cleanup, complete, cancelled, failed
    steps: list[Step] = field(default_factory=list)
    load: dict[str, float] | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"phase": self.phase, "load": self.load, "steps": [s.as_dict() for s in self.steps]}


def plan(params: Parameters) -> Progress:
    """Every (microbenchmark, concurrency) step of a run, queued: what the run page shows before it starts."""
    return Progress(
        steps=[
            Step(m.label, m.test, m.range_size, dop)
            for m in in_run_order(params.microbenchmarks)
            for dop in params.threads
        ]
    )


@dataclass
class Outcome:
    run_dir: Path
    state: str  # complete, cancelled or failed
    progress: Progress
    error: str = ""


# --------------------------------------------------------------------------- tools


@dataclass(frozen=True)
class Tools:
    sysbench: str
    lua_path: str
    warmup_option: bool
    vmstat: str | None
    iostat: str | None


def find_tools(*, sample_metrics: bool = True) -> Tools:
    """sysbench, where its bundled Lua scripts are, and vmstat/iostat when installed."""
    binary = shutil.which("sysbench")
    if binary is None:
        raise RunnerError("sysbench is not installed on the worker (not found on PATH)")
    bundled = sysbench_lua_dir(binary)
    return Tools(
        sysbench=binary,
        # Ours first, so a name of ours never resolves to a bundled script; ";;" keeps Lua's defaults.
        lua_path=f"{LUA_DIR}/?.lua;{bundled}/?.lua;;",
        warmup_option=_has_warmup_option(binary),
        vmstat=shutil.which("vmstat") if sample_metrics else None,
        iostat=shutil.which("iostat") if sample_metrics else None,
    )


@functools.cache
def sysbench_lua_dir(binary: str) -> Path:
    """The directory holding sysbench's bundled ``oltp_common.lua``: from the package list, else the install prefix."""
    candidates: list[Path] = []
    if shutil.which("dpkg"):
        listing = subprocess.run(
            ["dpkg", "-L", "sysbench"], capture_output=True, text=True, check=False, timeout=30
        ).stdout
        candidates += [Path(line).parent for line in listing.splitlines() if line.endswith("/oltp_common.lua")]
    prefix = Path(binary).resolve().parent.parent
    candidates += [prefix / "share" / "sysbench", prefix / "share" / "sysbench" / "lua"]
    for directory in candidates:
        if (directory / "oltp_common.lua").is_file():
            return directory
    raise RunnerError("cannot find sysbench's bundled Lua scripts (oltp_common.lua) next to the sysbench binary")


@functools.cache
def _has_warmup_option(binary: str) -> bool:
    """sysbench 1.1 has --warmup-time; 1.0 does not, so the runner warms up with a separate, unrecorded run."""
    help_text = subprocess.run([binary, "--help"], capture_output=True, text=True, check=False, timeout=30).stdout
    return "--warmup-time" in help_text


# --------------------------------------------------------------------------- host metrics (pure)


@dataclass(frozen=True)
class CpuSample:
    samples: int
    cs_per_s: float
    cpu_per_s: float


@dataclass(frozen=True)
class IoSample:
    samples: int
    r_per_s: float
    rkb_per_s: float
    w_per_s: float
    wkb_per_s: float


def _numbers(fields: Sequence[str]) -> list[float] | None:
    try:
        return [float(f.replace(",", ".")) for f in fields]
    except ValueError:
        return None


def summarize_vmstat(text: str, *, skip: int = 0) -> CpuSample | None:
    """Averages of ``vmstat 1``: context switches/s and user+system CPU %.

    The first line describes the time since boot, not the test, so it is
    dropped, and ``skip`` more (a warm-up). Columns are found by name, so
    procps versions with more columns (``gu``) read the same.
    """
    header: list[str] | None = None
    rows: list[list[float]] = []
    for line in text.splitlines():
        fields = line.split()
        if "cs" in fields and "us" in fields and "sy" in fields:
            header = fields
            continue
        if header is None or len(fields) != len(header):
            continue
        values = _numbers(fields)
        if values is not None:
            rows.append(values)
    rows = rows[1 + skip :]
    if header is None or not rows:
        return None
    cs, us, sy = header.index("cs"), header.index("us"), header.index("sy")
    return CpuSample(
        samples=len(rows),
        cs_per_s=sum(r[cs] for r in rows) / len(rows),
        cpu_per_s=sum(r[us] + r[sy] for r in rows) / len(rows),
    )


def summarize_iostat(text: str, *, devices: Collection[str] = (), skip: int = 0) -> IoSample | None:
    """Averages of ``iostat -kx 1``, summed over ``devices`` (default: every physical disk).

    Each report starts with a ``Device`` header; the first report is the
    average since boot and is dropped, and ``skip`` more.
    """
    reports: list[tuple[float, float, float, float]] = []
    header: list[str] | None = None
    totals: list[float] | None = None

    def close() -> None:
        if totals is not None:
            reports.append((totals[0], totals[1], totals[2], totals[3]))

    for line in text.splitlines():
        fields = line.split()
        if fields and fields[0].rstrip(":") == "Device":
            close()
            header, totals = fields, [0.0, 0.0, 0.0, 0.0]
            continue
        if header is None or totals is None or len(fields) != len(header):
            continue
        name = fields[0]
        if (devices and name not in devices) or (not devices and VIRTUAL_DEVICE_RE.match(name)):
            continue
        values = _numbers(fields[1:])
        if values is None:
            continue
        row = dict(zip(header[1:], values, strict=True))
        totals[0] += row.get("r/s", 0.0)
        totals[1] += row.get("rkB/s", 0.0)
        totals[2] += row.get("w/s", 0.0)
        totals[3] += row.get("wkB/s", 0.0)
    close()
    reports = reports[1 + skip :]
    if not reports:
        return None
    n = len(reports)
    return IoSample(
        samples=n,
        r_per_s=sum(r[0] for r in reports) / n,
        rkb_per_s=sum(r[1] for r in reports) / n,
        w_per_s=sum(r[2] for r in reports) / n,
        wkb_per_s=sum(r[3] for r in reports) / n,
    )


def format_met(qps: float, cpu: CpuSample | None, io: IoSample | None) -> str | None:
    """The ``sb.met`` file: line 2-3 IO per operation, line 5-6 CPU per operation.

    Without iostat, lines 2-3 carry only the operation rate (the importer maps
    columns by name), so the CPU numbers keep their place on lines 5-6.
    Without either tool there is no file.
    """
    if cpu is None and io is None:
        return None
    per_op = 1 / qps if qps > 0 else 0.0
    lines = ["iostat, vmstat normalized by operation rate"]
    if io is not None:
        lines += [
            "samp\tr/s\trMB/s\tw/s\twMB/s\tr/o\trKB/o\twKB/o\to/s",
            f"{io.samples}\t{io.r_per_s:.1f}\t{io.rkb_per_s / 1024:.1f}\t{io.w_per_s:.1f}\t{io.wkb_per_s / 1024:.1f}"
            f"\t{io.r_per_s * per_op:.6f}\t{io.rkb_per_s * per_op:.6f}\t{io.wkb_per_s * per_op:.6f}\t{qps:.2f}",
        ]
    else:
        lines += ["samp\to/s", f"{cpu.samples if cpu else 0}\t{qps:.2f}"]
    lines.append("")
    if cpu is not None:
        lines += [
            "samp\tcs/s\tcpu/s\tcs/o\tcpu/o",
            f"{cpu.samples}\t{cpu.cs_per_s:.0f}\t{cpu.cpu_per_s:.1f}\t{cpu.cs_per_s * per_op:.3f}"
            f"\t{cpu.cpu_per_s * per_op:.6f}",
        ]
    return "\n".join(lines) + "\n"


def format_summary(values: Sequence[float | None], engine: str, mb: Microbenchmark) -> str:
    """An ``sb.r.<metric>`` line: one value per concurrency in run order, then ``<engine> <test> range=<R>``."""
    cells = ["" if v is None else f"{v:g}" for v in values]
    return "\t".join([*cells, f"{engine} {mb.test} range={mb.range_size}"]) + "\n"


# --------------------------------------------------------------------------- running


class _Cancelled(Exception):
    pass


_LIVE_QPS_RE = re.compile(r"^\[ *\d+s \].* qps: ([0-9.]+)", re.M)


class _Sampler:
    """``vmstat 1`` and ``iostat -kx 1`` writing raw samples beside a test's output while it runs."""

    def __init__(self, tools: Tools, run_dir: Path, suffix: str, env: dict[str, str], *, max_samples: int) -> None:
        self.procs: list[tuple[subprocess.Popen[bytes], Any]] = []
        self.vm_path = run_dir / f"sb.vm.{suffix}"
        self.io_path = run_dir / f"sb.io.{suffix}"
        for tool, argv, path in (
            # A sample count, so a sampler orphaned by a killed worker still ends on its own.
            (tools.vmstat, ["-n", "1", str(max_samples)], self.vm_path),
            (tools.iostat, ["-kx", "1", str(max_samples)], self.io_path),
        ):
            if tool is None:
                continue
            fh = path.open("wb")
            self.procs.append((subprocess.Popen([tool, *argv], stdout=fh, stderr=subprocess.DEVNULL, env=env), fh))

    def stop(self) -> None:
        for proc, fh in self.procs:
            if proc.poll() is None:
                proc.terminate()
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            fh.close()


class _Run:
    def __init__(
        self,
        conn: Connection,
        params: Parameters,
        *,
        build: str,
        config: str,
        workdir: Path,
        tools: Tools,
        stop: threading.Event,
        on_progress: Callable[[Progress], None] | None,
        devices: Collection[str],
    ) -> None:
        self.conn = conn
        self.params = params
        self.tools = tools
        self.stop = stop
        self.on_progress = on_progress
        self.devices = devices
        self.microbenchmarks = in_run_order(params.microbenchmarks)
        self.progress = plan(params)
        secret_text = conn.config_file_text()  # refuses a password it cannot carry before anything is written
        self.run_dir = workdir / f"x.{build}.{config}.pk1"
        self.run_dir.mkdir(mode=0o700)
        # Outside the result directory, so it is never archived; 0600 from its creation.
        self.secrets = workdir / "sysbench-connection.cfg"
        fd = os.open(self.secrets, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(secret_text)
        self.env = {**os.environ, "LUA_PATH": tools.lua_path, "LC_ALL": "C"}
        self.cpus = os.cpu_count() or 1
        self.engine = "pgsql" if conn.kind == "postgres" else "innodb"
        self.last_report = 0.0
        self.current: Step | None = None

    # ---- helpers

    def report(self, *, force: bool = True) -> None:
        now = time.monotonic()
        if self.on_progress and (force or now - self.last_report >= 1.0):
            self.last_report = now
            self.on_progress(self.progress)

    def scrub(self, text: str) -> str:
        # A very short password would match inside the numbers of the output and corrupt them.
        if len(self.conn.password) < MIN_SCRUBBED_PASSWORD:
            return text
        return text.replace(self.conn.password, "***")

    def command(self, script: str, verb: str, options: Sequence[str]) -> tuple[list[str], str]:
        """(argv, the command line as recorded): the same words, but argv reads the password from a file."""
        words = [
            f"--db-driver={self.conn.driver}",
            f"--tables={self.params.tables}",
            f"--table-size={self.params.table_size}",
            *options,
            script,
            verb,
        ]
        shown = ["sysbench", *words, *self.conn.options(redacted=True)]
        argv = [self.tools.sysbench, *words, *self.conn.options(redacted=False), f"--config-file={self.secrets}"]
        return argv, " ".join(_shell_word(w) for w in shown)

    def sysbench(
        self,
        script: str,
        verb: str,
        options: Sequence[str],
        out: Path,
        *,
        cancellable: bool = True,
        timeout: float | None = None,
        live: Step | None = None,
    ) -> tuple[str, float]:
        """Run sysbench with its output in ``out`` (line 1 the command, line 2 the CPUs); (output, seconds)."""
        argv, shown = self.command(script, verb, options)
        started = time.monotonic()
        try:
            proc = self._wait(
                argv,
                shown,
                out,
                started,
                what=f"sysbench {script} {verb}",
                cancellable=cancellable,
                timeout=timeout,
                live=live,
            )
        finally:
            # sysbench never prints the password; scrubbing anyway costs nothing and covers error messages.
            text = self.scrub(out.read_text(errors="replace")) if out.exists() else ""
            out.write_text(text)
        seconds = time.monotonic() - started
        if proc.returncode != 0:
            tail = "\n".join(text.splitlines()[-12:])
            raise RunnerError(f"sysbench {script} {verb} exited with status {proc.returncode}:\n{tail}")
        return text, seconds

    def _wait(
        self,
        argv: list[str],
        shown: str,
        out: Path,
        started: float,
        *,
        what: str,
        cancellable: bool,
        timeout: float | None,
        live: Step | None,
    ) -> subprocess.Popen[str]:
        with out.open("w") as fh:
            fh.write(f"{shown}\n{self.cpus} CPUs\n")
            fh.flush()
            proc = subprocess.Popen(
                argv, stdout=fh, stderr=subprocess.STDOUT, env=self.env, cwd=self.run_dir.parent, text=True
            )
            try:
                while True:
                    try:
                        proc.wait(timeout=POLL_SECONDS)
                        break
                    except subprocess.TimeoutExpired:
                        pass
                    if cancellable and self.stop.is_set():
                        raise _Cancelled
                    if timeout is not None and time.monotonic() - started > timeout:
                        raise RunnerError(f"{what} did not finish within {timeout:.0f} s")
                    if live is not None:
                        self._live_qps(out, live)
            finally:
                _terminate(proc)
        return proc

    def _live_qps(self, out: Path, step: Step) -> None:
        with out.open("rb") as fh:
            fh.seek(max(0, out.stat().st_size - 4096))
            found = _LIVE_QPS_RE.findall(fh.read().decode(errors="replace"))
        if found:
            step.qps = float(found[-1])
            self.report(force=False)

    # ---- phases

    def prepare(self) -> None:
        self.progress.phase = "prepare"
        self.report()
        first = self.microbenchmarks[0]
        # Leftovers of an earlier, interrupted run would make prepare fail on "table exists".
        self.cleanup(quiet=True)
        threads = max(1, min(self.params.tables, self.cpus))
        out = self.run_dir / f"sb.prepare.o.{first.file_suffix()}"
        _, seconds = self.sysbench("oltp_common", "prepare", [f"--threads={threads}"], out)
        rows = self.params.tables * self.params.table_size
        ips = rows / seconds if seconds > 0 else 0.0
        with out.open("a") as fh:
            fh.write(
                f"Load seconds is {seconds:.3f} for {self.params.tables} tables, {ips / 1e6:.6f} Mips, {ips:.0f} ips\n"
            )
        self.progress.load = {"seconds": round(seconds, 3), "inserts_per_s": round(ips)}
        self.sysbench("bd_server", "analyze", [], self.run_dir / "sb.analyze.o", cancellable=True)
        settings_name = "sb.pg.conf.start" if self.conn.kind == "postgres" else "sb.gv.start"
        settings, _ = self.sysbench("bd_server", "settings", [], self.run_dir / settings_name)
        # Only the name/value lines: the command and sysbench's banner are not settings.
        (self.run_dir / settings_name).write_text(
            "".join(line + "\n" for line in settings.splitlines()[2:] if "\t" in line)
        )

    def run_step(self, mb: Microbenchmark, step: Step) -> sb.SysbenchOutput:
        step.state = "running"
        self.report()
        length = (
            ["--time=0", f"--events={self.params.events}"]
            if self.params.events
            else [f"--time={self.params.seconds}", "--events=0"]
        )
        common = [f"--range-size={mb.range_size}", f"--threads={step.dop}", "--rand-type=uniform"]
        warmup = self.params.warmup_seconds
        skip_samples = 0
        if warmup and not self.params.events:
            if self.tools.warmup_option:
                common.append(f"--warmup-time={warmup}")
                skip_samples = warmup
            else:
                # Not an sb.o file: the importer never reads it, the archive keeps it.
                self.sysbench(
                    mb.script,
                    "run",
                    [*common, f"--time={warmup}", "--events=0", *mb.options],
                    self.run_dir / f"sb.warmup.{mb.file_suffix(step.dop)}",
                )
        suffix = mb.file_suffix(step.dop)
        longest = self.params.seconds + warmup if not self.params.events else 3600
        sampler = _Sampler(self.tools, self.run_dir, suffix, self.env, max_samples=longest + 120)
        try:
            text, seconds = self.sysbench(
                mb.script,
                "run",
                [*common, *length, "--report-interval=1", *mb.options],
                self.run_dir / f"sb.o.{suffix}",
                live=step,
            )
        finally:
            sampler.stop()
        try:
            parsed = sb.parse_output(text, test=mb.test, file_name=f"sb.o.{suffix}")
        except sb.ParseError as exc:
            raise RunnerError(str(exc)) from exc
        cpu = summarize_vmstat(sampler.vm_path.read_text(), skip=skip_samples) if sampler.vm_path.exists() else None
        io = (
            summarize_iostat(sampler.io_path.read_text(), devices=self.devices, skip=skip_samples)
            if sampler.io_path.exists()
            else None
        )
        met = format_met(parsed.qps, cpu, io)
        if met is not None:
            (self.run_dir / f"sb.met.{suffix}").write_text(met)
        step.state, step.qps, step.seconds = "done", parsed.qps, round(seconds, 2)
        self.report()
        return parsed

    def write_summaries(self, mb: Microbenchmark, outputs: list[sb.SysbenchOutput]) -> None:
        metrics: dict[str, list[float | None]] = {
            "qps": [o.qps for o in outputs],
            "trx": [o.tps for o in outputs],
            "rtavg": [o.lat_avg_ms for o in outputs],
            "rtmax": [o.lat_max_ms for o in outputs],
            "rt95": [o.lat_pct_ms for o in outputs],
        }
        for metric, values in metrics.items():
            (self.run_dir / f"sb.r.{metric}.{mb.file_suffix()}").write_text(format_summary(values, self.engine, mb))

    def cleanup(self, *, quiet: bool = False) -> None:
        out = self.run_dir.parent / "cleanup.o" if quiet else self.run_dir / "sb.cleanup.o"
        # Not cancellable: the tables must go even when the run was cancelled.
        self.sysbench("oltp_common", "cleanup", [], out, cancellable=False, timeout=600)

    def tests(self) -> tuple[str, str]:
        """Load and run every step: (state, error)."""
        steps = iter(self.progress.steps)
        try:
            self.prepare()
            self.progress.phase = "tests"
            for mb in self.microbenchmarks:
                outputs = []
                for _dop in self.params.threads:
                    if self.stop.is_set():
                        raise _Cancelled
                    self.current = next(steps)
                    outputs.append(self.run_step(mb, self.current))
                self.write_summaries(mb, outputs)
            self.current = None
        except _Cancelled:
            where = f" during {self.current.label} at {self.current.dop} threads" if self.current else ""
            return "cancelled", f"cancelled{where}"
        except RunnerError as exc:
            return "failed", self.scrub(str(exc))
        return "complete", ""

    def execute(self) -> Outcome:
        try:
            state, error = self.tests()
        finally:
            # Also when interrupted from outside (a task's soft time limit): the tables must not stay behind.
            self.settle()
            self.progress.phase = "cleanup"
            self.report()
            try:
                self.cleanup()
                cleanup_error = ""
            except RunnerError as exc:
                cleanup_error = self.scrub(str(exc))
        if cleanup_error and state == "complete":
            state, error = "failed", f"the tests finished but dropping the tables failed: {cleanup_error}"
        self.progress.phase = state
        self.report()
        return Outcome(self.run_dir, state, self.progress, error)

    def settle(self) -> None:
        """Steps that did not finish say why: the one running was interrupted, the rest never ran."""
        for step in self.progress.steps:
            if step.state == "running" or (step is self.current and step.state != "done"):
                step.state = "cancelled" if self.stop.is_set() else "failed"
            elif step.state == "queued":
                step.state = "skipped"


_PLAIN_WORD_RE = re.compile(r"[\w@%+=:,./*-]+")


def _shell_word(word: str) -> str:
    """Quote only what needs it: ``--mysql-password=***`` must stay bare for the importer's redaction check."""
    return word if _PLAIN_WORD_RE.fullmatch(word) else shlex.quote(word)


def _terminate(proc: subprocess.Popen[str]) -> None:
    """Stop a sysbench we started: SIGTERM, then SIGKILL after the grace period."""
    if proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=TERMINATE_GRACE_SECONDS)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def run(
    conn: Connection,
    params: Parameters,
    *,
    build: str,
    config: str,
    workdir: Path,
    stop: threading.Event | None = None,
    on_progress: Callable[[Progress], None] | None = None,
    sample_metrics: bool = True,
    devices: Collection[str] = (),
) -> Outcome:
    """Load, run every chosen microbenchmark at every concurrency, drop the tables.

    ``workdir`` must be a private, empty directory; the result directory is
    created inside it and survives (cancelled or failed runs keep what they
    wrote). Raises RunnerError only when nothing could start (no sysbench);
    anything later is in the returned Outcome.
    """
    tools = find_tools(sample_metrics=sample_metrics)
    runner = _Run(
        conn,
        params,
        build=build,
        config=config,
        workdir=workdir,
        tools=tools,
        stop=stop or threading.Event(),
        on_progress=on_progress,
        devices=devices,
    )
    try:
        return runner.execute()
    finally:
        runner.secrets.unlink(missing_ok=True)
