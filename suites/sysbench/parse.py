"""Parse the files of one sysbench result directory.

Pure functions over text; no Django. File names drive everything: the test,
range, pk and concurrency come from ``sb.<kind>.<test>.range<R>.pk<P>[.dop<N>]``,
never from a fixed list of tests.

Numbers are measurements: every one read must be finite and not negative, and
counts must fit the database's 64-bit (concurrency and range: 32-bit) columns.
A NaN, an infinity, a negative rate, a number that does not parse ("1.2.3") or a
NUL byte (a file damaged on disk) is a ``ParseError`` naming the file and the
value, never a crash, a silent 0 or a value stored as if it were measured.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

SUITE = "sysbench"


class ParseError(ValueError):
    """A result file that does not hold what its name promises."""


# The widest values the result columns hold: BigIntegerField for counts, PositiveIntegerField for the rest.
MAX_COUNT = 2**63 - 1
MAX_SMALL = 2**31 - 1


def _number(text: str, what: str, file_name: str) -> float:
    """A measured value: finite and not negative, else a ParseError that says which value of which file."""
    try:
        value = float(text)
    except ValueError:
        raise ParseError(f"{file_name}: {what} is {text[:40]!r}, not a number") from None
    if not math.isfinite(value) or value < 0:
        raise ParseError(f"{file_name}: {what} is {text[:40]!r}; a measurement must be a finite number ≥ 0")
    return value


def _count(text: str, what: str, file_name: str, limit: int = MAX_COUNT) -> int:
    value = int(text)  # the patterns only let digits through
    if value > limit:
        raise ParseError(f"{file_name}: {what} is {text[:40]}, more than any run can have (at most {limit:,})")
    return value


def _no_nul(text: str, file_name: str) -> None:
    # sysbench and the scripts write text; NUL bytes mean a damaged file (e.g. blocks zero-filled after a crash).
    if "\x00" in text:
        raise ParseError(f"{file_name}: contains NUL bytes, so it is damaged (not text as sysbench writes it)")


# --------------------------------------------------------------------------- file names

_RESULT_NAME_RE = re.compile(
    r"^sb\.(?P<kind>o|met|prepare\.o|prepare\.met)\.(?P<test>.+)\.range(?P<range>\d+)\.pk(?P<pk>[01])"
    r"(?:\.dop(?P<dop>\d+))?$"
)
_SUMMARY_NAME_RE = re.compile(
    r"^sb\.r\.(?P<metric>qps|trx|rtavg|rtmax|rt95)\.(?P<test>.+)\.range(?P<range>\d+)\.pk(?P<pk>[01])$"
)

WARMUP_SUFFIXES = (".warm", ".warmpre")


@dataclass(frozen=True)
class ResultFileName:
    kind: str  # "o", "met", "prepare.o", "prepare.met", or "r.<metric>"
    test: str  # may hold dots: "point-query.pre", "scan.warmpre"
    range_size: int
    pk: int
    dop: int | None


@functools.lru_cache(maxsize=8192)
def parse_file_name(name: str) -> ResultFileName | None:
    """The parts of a result file name, or None when it is not a result file.

    Raises ParseError for a result file name whose range or concurrency no run can have. Cached: every run
    of a series has the same file names, and the answer is immutable.
    """
    match = _RESULT_NAME_RE.match(name)
    if match:
        return ResultFileName(
            kind=match["kind"],
            test=match["test"],
            range_size=_count(match["range"], "the range in the name", name, MAX_SMALL),
            pk=int(match["pk"]),
            dop=_count(match["dop"], "the concurrency in the name", name, MAX_SMALL) if match["dop"] else None,
        )
    match = _SUMMARY_NAME_RE.match(name)
    if match:
        return ResultFileName(
            kind=f"r.{match['metric']}",
            test=match["test"],
            range_size=_count(match["range"], "the range in the name", name, MAX_SMALL),
            pk=int(match["pk"]),
            dop=None,
        )
    return None


def is_warmup(test: str) -> bool:
    """A pass run only to warm the server up: ``point-query.warm``, ``points-covered-si.warm``, ``scan.warmpre``.

    ``scan.warm`` is none: the scripts run it as a measured scan between the write phases and the author's
    tables list it (``scan.warm_range=100``); it counts everywhere a scan counts."""
    return test.endswith(WARMUP_SUFFIXES) and test != MEASURED_SCAN


# The one test with a warm-up's suffix that is measured (see ``is_warmup``).
MEASURED_SCAN = "scan.warm"


def base_test(test: str) -> str:
    """The test without its phase suffix: ``scan.warmpre`` → ``scan``, ``point-query.pre`` → ``point-query``."""
    return test.split(".", 1)[0]


def test_label(test: str, range_size: int) -> str:
    """The label the reference tables use: ``point-query_range=100``."""
    return f"{test}_range={range_size}"


# --------------------------------------------------------------------------- sb.o


@dataclass
class SysbenchOutput:
    qps: float
    """Queries per second; for scan, thousands of rows scanned per second."""
    queries_per_s: float
    queries: int
    tps: float | None = None
    transactions: int | None = None
    errors: int | None = None
    errors_per_s: float | None = None
    reconnects: int | None = None
    reconnects_per_s: float | None = None
    elapsed_s: float | None = None
    events: int | None = None
    lat_min_ms: float | None = None
    lat_avg_ms: float | None = None
    lat_max_ms: float | None = None
    lat_pct_ms: float | None = None
    lat_pct: float | None = None
    lat_sum_ms: float | None = None
    threads: int | None = None
    cpus: int | None = None
    command: str = ""
    sysbench_version: str = ""
    options: dict[str, str] = field(default_factory=dict)

    @property
    def table_size(self) -> int | None:
        return _int_option(self.options, "table-size")

    @property
    def tables(self) -> int | None:
        return _int_option(self.options, "tables")


def _int_option(options: dict[str, str], name: str) -> int | None:
    value = options.get(name)
    if value is None:
        return None
    try:
        return int(value)
    except ValueError:
        return None


# The rate is any word, not only digits: "(nan per sec.)" or "(-3 per sec.)" must be reported, not overlooked.
_COUNT_RATE_RE = re.compile(r"\s+(\d+)\s+\(\s*(\S+)\s+per sec\.\s*\)")
_COUNT_KEYS = frozenset(("queries", "transactions", "ignored errors", "reconnects"))
_ELAPSED_KEYS = frozenset(("total time", "time elapsed"))
_ELAPSED_RE = re.compile(r"\s+(\S+?)s\s*$")
_EVENTS_RE = re.compile(r"\s+(\d+)")
_THREADS_RE = re.compile(r"^Number of threads:\s+(\d+)", re.M)
_RUN_VERB_RE = re.compile(r"\srun(?:\s|$)")
_CPUS_RE = re.compile(r"^(\d+) CPUs\s*$")
# A version is short; the column holds 64 characters, and a longer word here is not a version.
_VERSION_RE = re.compile(r"^sysbench (\d\S{0,63})(?:\s|$)", re.M)
_LATENCY_LINE_RE = re.compile(r"^\s*(min|avg|max|sum|(\d+(?:\.\d+)?)(?:st|nd|rd|th) percentile):\s+(\S+)")


_PASSWORD_RE = re.compile(r"(--[\w-]*password=)(\S+)")


def redact_command(line: str) -> str:
    """The command line with every ``--…password=`` value hidden: command lines are shown in the UI."""
    return _PASSWORD_RE.sub(r"\1***", line) if "password=" in line else line


@functools.lru_cache(maxsize=4096)
def _command(line: str) -> tuple[str, tuple[tuple[str, str], ...]]:
    """The redacted command line and its options; a test's command line repeats in every run of a series."""
    redacted = redact_command(line)
    return redacted, tuple(parse_command(redacted).items())


def _statistics(stats: str) -> dict[str, Any]:
    """The statistics lines of sysbench's report, one pass over the lines: the first of each kind wins.

    Keys: the counted lines (``queries``, ``transactions``, ``ignored errors``,
    ``reconnects``: match groups count and rate), ``elapsed``, ``total number of
    events``, and ``latency``: the match of every line of the ``Latency (ms):``
    block (groups name, percentile, value).
    """
    found: dict[str, Any] = {}
    lines = stats.split("\n")
    for i, line in enumerate(lines):
        key, colon, rest = line.partition(":")
        if not colon:
            continue
        name = key.strip()
        if name in _COUNT_KEYS:
            if name not in found and (m := _COUNT_RATE_RE.match(rest)):
                found[name] = m
        elif name in _ELAPSED_KEYS:
            if "elapsed" not in found and (m := _ELAPSED_RE.match(rest)):
                found["elapsed"] = m
        elif name == "total number of events":
            if name not in found and (m := _EVENTS_RE.match(rest)):
                found[name] = m
        elif key == "Latency (ms)" and not rest.strip() and "latency" not in found:
            block = []
            for inner in lines[i + 1 :]:
                # The block: the indented lines that follow, up to the first blank or unindented one.
                if not inner[:1].isspace() or not inner.strip():
                    break
                if m := _LATENCY_LINE_RE.match(inner):
                    block.append(m)
            found["latency"] = block
    return found


_OPTION_RE = re.compile(r"""(?:^|\s)--([\w.-]+)(?:=("[^"]*"|'[^']*'|\S*))?""")


def parse_command(line: str) -> dict[str, str]:
    """``--key=value`` options of a sysbench command line (the sb.o file's line 1).

    A regular expression rather than shlex: shlex costs ~0.7 ms a line, which was
    most of an import's time; sysbench options are single words, quotes are rare.
    """
    options: dict[str, str] = {}
    for key, value in _OPTION_RE.findall(line):
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        options[key] = value
    return options


def parse_output(text: str, *, test: str = "", file_name: str = "sb.o") -> SysbenchOutput:
    """Parse one ``sb.o.*`` file: line 1 the command, line 2 ``<n> CPUs``, then sysbench output.

    Stock sysbench output without those two lines parses too. Unknown lines
    (explain output, NOTICEs, intermediate reports) are ignored.
    """
    _no_nul(text, file_name)
    # Explain output before the statistics can be hundreds of KB: search only the statistics part.
    stats_at = text.rfind("SQL statistics:")
    stats = text[stats_at:] if stats_at >= 0 else text
    found = _statistics(stats)
    match = found.get("queries")
    if not match:
        raise ParseError(f"{file_name}: no 'queries:' line, so no QPS (is the run complete?)")
    queries = _count(match[1], "the query count", file_name)
    queries_per_s = _number(match[2], "the queries per second (QPS)", file_name)

    lines = text.split("\n", 2)
    command = ""
    options: tuple[tuple[str, str], ...] = ()
    cpus = None
    # Line 1 is the command line when the run scripts wrote one: it has options and the "run" verb.
    if lines and "sysbench" in lines[0] and " --" in lines[0] and _RUN_VERB_RE.search(lines[0]):
        command, options = _command(lines[0].strip())
        if len(lines) > 1:
            cpu_match = _CPUS_RE.match(lines[1].strip())
            cpus = _count(cpu_match[1], "the CPU count (line 2)", file_name, MAX_SMALL) if cpu_match else None

    out = SysbenchOutput(qps=queries_per_s, queries_per_s=queries_per_s, queries=queries)
    out.command = command
    out.cpus = cpus
    out.options = dict(options)
    if m := _VERSION_RE.search(text):
        out.sysbench_version = m[1]
    if m := _THREADS_RE.search(text):
        out.threads = _count(m[1], "the number of threads", file_name, MAX_SMALL)
    elif "threads" in out.options:
        threads = _int_option(out.options, "threads")
        out.threads = threads if threads is not None and 0 <= threads <= MAX_SMALL else None
    if m := found.get("transactions"):
        out.transactions = _count(m[1], "the transaction count", file_name)
        out.tps = _number(m[2], "the transactions per second", file_name)
    if m := found.get("ignored errors"):
        out.errors = _count(m[1], "the ignored error count", file_name)
        out.errors_per_s = _number(m[2], "the ignored errors per second", file_name)
    if m := found.get("reconnects"):
        out.reconnects = _count(m[1], "the reconnect count", file_name)
        out.reconnects_per_s = _number(m[2], "the reconnects per second", file_name)
    if m := found.get("elapsed"):
        out.elapsed_s = _number(m[1], "the elapsed time", file_name)
    if m := found.get("total number of events"):
        out.events = _count(m[1], "the number of events", file_name)
    for lm in found.get("latency", ()):
        value = _number(lm[3], f"the latency {lm[1]}", file_name)
        if lm[1] == "min":
            out.lat_min_ms = value
        elif lm[1] == "avg":
            out.lat_avg_ms = value
        elif lm[1] == "max":
            out.lat_max_ms = value
        elif lm[1] == "sum":
            out.lat_sum_ms = value
        else:
            out.lat_pct, out.lat_pct_ms = _number(lm[2], "the latency percentile", file_name), value

    if base_test(test) == "scan":
        out.qps = scan_qps(out, file_name)
    return out


def scan_qps(out: SysbenchOutput, file_name: str = "sb.o") -> float:
    """Scan's "QPS": thousands of rows scanned per second = (table_size / 1000) / (avg latency s)."""
    if out.table_size is None:
        raise ParseError(f"{file_name}: scan needs --table-size on the command line (line 1)")
    if not 0 < out.table_size <= MAX_COUNT:
        raise ParseError(
            f"{file_name}: scan needs a --table-size from 1 to {MAX_COUNT:,}, not {str(out.table_size)[:30]}"
        )
    if not out.lat_avg_ms:
        raise ParseError(f"{file_name}: scan needs a non-zero average latency")
    qps = (out.table_size / 1000) / (out.lat_avg_ms / 1000)
    if not math.isfinite(qps):
        raise ParseError(f"{file_name}: scan's rows per second overflow (an average latency of {out.lat_avg_ms} ms)")
    return qps


# The two formulas the author's scripts used for scan's reported value (its sb.r.qps file): the spec's, and,
# between mid-March and mid-April 2025, transactions/s × table size / 1000. Values of the two are not comparable.
SCAN_SPEC = "spec"
SCAN_TPS_ROWS = "tps×rows/1000"
SCAN_FORMULAS = (SCAN_SPEC, SCAN_TPS_ROWS)
# Stored for a run imported before benchdash recorded the formula, until its archive is read again to decide it
# (``manage.py fill_scan_formula``). Read as the spec's, like a run that reported no scan value of its own.
SCAN_UNKNOWN = "unknown"
# sb.r.qps holds what the scripts printed from sysbench's rounded "(X per sec.)": agreement within 2% is a match.
SCAN_MATCH_TOLERANCE = 0.02


def scan_value(formula: str, *, table_size: int | None, tps: float | None, lat_avg_ms: float | None) -> float | None:
    """Scan's value under one of the two formulas, or None when the numbers it needs are missing."""
    if not table_size:
        return None
    if formula == SCAN_SPEC:
        return (table_size / 1000) / (lat_avg_ms / 1000) if lat_avg_ms else None
    if formula == SCAN_TPS_ROWS:
        return tps * table_size / 1000 if tps is not None else None
    raise ValueError(f"unknown scan formula {formula!r}; known: {', '.join(SCAN_FORMULAS)}")


def scan_formula(reported: float, out: SysbenchOutput) -> str | None:
    """Which formula gave a scan value the scripts reported (sb.r.qps), from its sb.o; None when neither did.

    With one client both formulas give the same value: that is the spec's.
    """
    best: tuple[float, str] | None = None
    for formula in SCAN_FORMULAS:
        value = scan_value(formula, table_size=out.table_size, tps=out.tps, lat_avg_ms=out.lat_avg_ms)
        if value is None or not value:
            continue
        off = abs(reported - value) / value
        if off <= SCAN_MATCH_TOLERANCE and (best is None or off < best[0]):
            best = (off, formula)
    return best[1] if best else None


def run_scan_formula(
    outputs: Mapping[tuple[str, int, int], SysbenchOutput], reported: Mapping[tuple[str, int], list[float]]
) -> tuple[str, list[str]]:
    """The scan formula of a run directory's own sb.r.qps.scan values, checked against its sb.o files.

    ``outputs``: sb.o by (test, range, concurrency); ``reported``: sb.r.qps values by (test, range), one per
    concurrency in run order. Returns the formula ("" when the directory has no sb.r.qps for a scan test that
    also has sb.o) and what to warn about: a value that is not the spec's.
    """
    found: set[str] = set()
    warnings: list[str] = []
    for (test, range_size), values in sorted(reported.items()):
        if base_test(test) != "scan" or is_warmup(test):
            continue
        dops = sorted(dop for (t, r, dop) in outputs if t == test and r == range_size)
        if not dops or len(dops) != len(values):
            continue
        where = f"sb.r.qps.{test}.range{range_size}"
        for dop, value in zip(dops, values, strict=True):
            out = outputs[(test, range_size, dop)]
            formula = scan_formula(value, out)
            spec = scan_value(SCAN_SPEC, table_size=out.table_size, tps=out.tps, lat_avg_ms=out.lat_avg_ms)
            if formula is not None:
                found.add(formula)
            if formula == SCAN_SPEC or spec is None:
                continue
            said = f"{where} gives scan at {dop} clients as {value:,g} QPS"
            stored = f"Stored: {spec:,.6g} QPS, by the usual formula, (table size / 1000) / average latency"
            if formula == SCAN_TPS_ROWS:
                warnings.append(
                    f"{said}: transactions/s × table size / 1000, as the benchmark scripts computed it from "
                    f"mid-March to mid-April 2025. {stored}, as for every other run; comparisons show either "
                    "(their Scan QPS choice) and warn when runs of the two formulas meet"
                )
            else:
                era = scan_value(SCAN_TPS_ROWS, table_size=out.table_size, tps=out.tps, lat_avg_ms=out.lat_avg_ms)
                other = f"; transactions/s × table size / 1000 gives {era:,.6g}" if era is not None else ""
                warnings.append(f"{said}, which no known formula gives{other}. {stored}, from the sysbench output")
    if len(found) > 1:
        warnings.append(f"sb.r.qps.scan values of both formulas in one run ({', '.join(sorted(found))})")
    # One value of the older formula makes the run's reported scan numbers that era's.
    formula = SCAN_TPS_ROWS if SCAN_TPS_ROWS in found else SCAN_SPEC if found else ""
    return formula, warnings


# --------------------------------------------------------------------------- sb.met

MET_FIELDS = {
    "r/s": "rps",
    "rMB/s": "rmbps",
    "w/s": "wps",
    "wMB/s": "wmbps",
    "r/o": "r_o",
    "rKB/o": "rkb_o",
    "wKB/o": "wkb_o",
    "o/s": "o_s",
    "cs/s": "cs_s",
    "cpu/s": "cpu_s",
    "cs/o": "cs_o",
    "cpu/o": "cpu_o",
}


def parse_met(text: str, *, file_name: str = "sb.met") -> dict[str, float]:
    """HW efficiency from ``sb.met.*``: each ``samp …`` header line and the values line under it.

    Columns are mapped by name, so the older layouts without ``r/o`` or ``cs/o``
    parse too; the result holds only the metrics the file has.
    """
    _no_nul(text, file_name)
    lines = text.splitlines()
    metrics: dict[str, float] = {}
    found = False
    for i, line in enumerate(lines):
        header = line.split()
        if not header or header[0] != "samp" or i + 1 >= len(lines):
            continue
        values = lines[i + 1].split()
        if len(values) != len(header):
            raise ParseError(f"{file_name}: line {i + 2} has {len(values)} values for {len(header)} columns")
        found = True
        for name, value in zip(header[1:], values[1:], strict=True):
            key = MET_FIELDS.get(name)
            if key is None:
                continue
            metrics[key] = _number(value, name, file_name)
    if not found:
        raise ParseError(f"{file_name}: no 'samp' header line")
    return metrics


# --------------------------------------------------------------------------- sb.r.*


def parse_summary(text: str, *, file_name: str = "sb.r") -> list[float]:
    """``sb.r.<metric>.*``: one value per concurrency in run order, then ``<engine> <test> range=<R>``."""
    _no_nul(text, file_name)
    line = text.strip().splitlines()[0] if text.strip() else ""
    fields = line.split("\t")
    values: list[float] = []
    for value in fields:
        try:
            float(value)
        except ValueError:
            break  # the label after the values: "<engine> <test> range=<R>"
        values.append(_number(value, f"value {len(values) + 1}", file_name))
    if not values:
        raise ParseError(f"{file_name}: no values on its line")
    return values


# --------------------------------------------------------------------------- sb.prepare.o

# The microbenchmark a run's load step is stored as: its QPS is the load's inserts/s, its HW metrics are the
# sb.prepare.met file's. Not a test of any group: the relative-QPS tables and group summaries leave it out.
LOAD_TEST = "load"

_LOAD_RE = re.compile(
    r"Load seconds is (?P<secs>[0-9.]+) for (?P<tables>\d+) tables, (?P<mips>[0-9.]+) Mips, (?P<ips>[0-9.]+) ips"
)
_PREPARE_COMMAND_RE = re.compile(r"^\S*sysbench\s.*\sprepare(\s|$)")


def is_load(test: str) -> bool:
    return test == LOAD_TEST


@dataclass(frozen=True)
class LoadResult:
    seconds: float
    tables: int
    inserts_per_s: float
    # sysbench's prepare runs one client thread unless its command line says --threads.
    threads: int = 1
    command: str = ""


def parse_prepare(text: str, *, file_name: str = "sb.prepare.o") -> LoadResult | None:
    """The load rate from ``sb.prepare.o.*`` (its last line), or None when the load did not finish."""
    matches = list(_LOAD_RE.finditer(text))
    if not matches:
        return None
    match = matches[-1]
    command = ""
    threads = 1
    for line in text.split("\n"):
        if " --" in line and _PREPARE_COMMAND_RE.match(line.strip()):
            command, options = _command(line.strip())
            given = dict(options).get("threads", "")
            if given.isdigit():
                threads = _count(given, "the --threads of the prepare command", file_name, MAX_SMALL) or 1
            break
    return LoadResult(
        seconds=_number(match["secs"], "the load seconds", file_name),
        tables=_count(match["tables"], "the table count", file_name, MAX_SMALL),
        inserts_per_s=_number(match["ips"], "the inserts per second", file_name),
        threads=threads,
        command=command,
    )


# --------------------------------------------------------------------------- sb.ps / sb.prepare.ps

# The run scripts' ps sampler writes `date` before its first sample, when the step it watches begins: the load
# step's file (sb.prepare.ps.*) says when the run began, each test's (sb.ps.*) when that test did. sysbench's own
# output, sb.met and sb.r carry no clock time.
SAMPLE_CLOCK_RE = re.compile(r"^sb\.(prepare\.)?ps\.")
# `date` in the C locale and in English 12-hour locales; only UTC, so no zone database is needed to place it.
_DATE_FORMATS = ("%a %b %d %H:%M:%S %Z %Y", "%a %b %d %I:%M:%S %p %Z %Y")


def sample_clock(first_line: str) -> datetime | None:
    """The UTC time a ``date`` line gives, or None when it is not one (another zone, another locale, garbage)."""
    text = " ".join(first_line.split())
    if " UTC " not in f" {text} " and " GMT " not in f" {text} ":
        return None
    for form in _DATE_FORMATS:
        try:
            return datetime.strptime(text.replace(" GMT ", " UTC "), form).replace(tzinfo=UTC)
        except ValueError:
            continue
    return None


def started_from_samples(first_lines: Mapping[str, str]) -> datetime | None:
    """When a run began, from the first lines of its ps sample files (name → line): the earliest clock time they
    record, or None when none records one."""
    times = [
        at
        for name, line in first_lines.items()
        if SAMPLE_CLOCK_RE.match(name) and (at := sample_clock(line)) is not None
    ]
    return min(times) if times else None
