"""Parse Insert Benchmark results: step summaries, merged tables and full result directories.

Pure functions over text; no Django. What the author's scripts leave behind, and
so what a bundle may hold (any mix of them):

- step summaries ``o.sum.t.<tag>`` (tab separated) / ``o.sum.c.<tag>`` (commas):
  a header of named columns, then one row per step in the order the steps ran.
  The rows do not name their step: the row count says which layout it is
  (15 rows: l.i0 l.x l.i1 q100.1 … q1000.2; 10 rows: l.i0 l.x l.i1 l.i2 qr100 …
  qp1000). The column set changed over time (17, 19, 20 and 21 columns); they are
  mapped by name, never by position.
- merged tables ``mrg.<step>``: the same header, one row per run (``tag`` names
  it, without the rows prefix), ``-`` lines between blocks. The author's
  relative tables (``rel.<step>``) and chart inputs (``mrg.<step>.ips``) are
  outputs, not results.
- full result directories ``<dop>u.1t<yes|no>/<rows>.<build>.<config>/<step>/``
  holding ``o.res.dop<D>`` (the step's rates, iostat/vmstat tables, database
  size, response-time histograms, percentiles) and ``o.ib.dop<D>.<n>`` (client
  n's raw output: the command line, then one line per second).

A run is one build + config with one workload (clients, rows, table per client).
The same run found in several formats of one bundle is one run; per step the most
precise source wins (result directory, then summary, then merged table).
"""

from __future__ import annotations

import hashlib
import math
import re
import statistics
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from suites.naming import parse_build

SUITE = "ibench"
DEFAULT_CONFIG = "default"
SLA_FRACTION = 0.95

LOAD_STEPS = ("l.i0", "l.x")
WRITE_STEPS = ("l.i1", "l.i2")
# The summary headers the author's etl.sh has written over the years, today's first (as its echo lines spell them).
HISTORICAL_HEADERS: tuple[tuple[str, ...], ...] = tuple(
    tuple(header.split(","))
    for header in (
        "ips,qps,rps,rmbps,wps,wmbps,rpq,rkbpq,wpi,wkbpi,csps,cpups,cspq,cpupq,dbgb1,dbgb2,rss,maxop,p50,p99,tag",
        "ips,qps,rps,rkbps,wkbps,rpq,rkbpq,wkbpq,csps,cpups,cspq,cpupq,ccpupq,dbgb,vsz,rss,maxop,p50,p90,tag",
        "ips,qps,rps,rkbps,wkbps,rpq,rkbpq,wkbpi,csps,cpups,cspq,cpupq,dbgb1,dbgb2,rss,maxop,p50,p99,tag",
        "ips,qps,rps,rkbps,wkbps,rpq,rkbpq,wkbpq,csps,cpups,cspq,cpupq,dbgb,vsz,rss,maxop,p50,p99,tag",
        "ips,qps,rps,rkbps,wkbps,rpq,rkbpq,wkbpq,csps,cpups,cspq,cpupq,dbgb,maxop,p50,p99,tag",
    )
)
CURRENT_COLUMNS = HISTORICAL_HEADERS[0]
# Every metric column any summary layout has had, for reading them back by name.
KNOWN_COLUMNS = tuple(dict.fromkeys(column for header in HISTORICAL_HEADERS for column in header if column != "tag"))
TAG_COLUMN = "tag"
# The response-time buckets of iibench.py's histograms (upper bounds), then "gt" for the rest.
RT_BUCKETS = ("256us", "1ms", "4ms", "16ms", "64ms", "256ms", "1s", "4s", "16s", "gt")
# A result's per-second series is kept whole up to this many points, else averaged into buckets.
MAX_SERIES_POINTS = 3600

# The rows of a step summary, by row count: the layouts of the author's etl.sh over the years.
SUMMARY_LAYOUTS: dict[int, tuple[str, ...]] = {
    15: (
        "l.i0",
        "l.x",
        "l.i1",
        *(f"q{rate}.{n}" for rate in (100, 200, 400, 600, 800, 1000) for n in (1, 2)),
    ),
    10: ("l.i0", "l.x", "l.i1", "l.i2", "qr100", "qp100", "qr500", "qp500", "qr1000", "qp1000"),
}

_MISSING = frozenset({"", "NA", "N/A", "n/a", "nan", "-"})
_NUMBER_RE = re.compile(r"^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$")
_QUERY_STEP_RE = re.compile(r"^q(?P<kind>[rp]?)(?P<rate>\d+)(?:\.(?P<n>\d+))?$")
# Step directories and merged-table names carry the loop number the step ran in: qr100.L1, qp1000.L6.
_LOOP_RE = re.compile(r"\.L\d+$")
# Before qr/qp, query steps ran in directories q.L<loop>.ips<rate>: the k-th one at a rate is q<rate>.<k>.
_OLD_QUERY_DIR_RE = re.compile(r"^q\.L(?P<loop>\d+)\.ips(?P<rate>\d+)$")
_ROWS_RE = re.compile(r"^\d+(?:\.\d+)?[kmbg]$", re.IGNORECASE)
_CLIENTS_DIR_RE = re.compile(r"^(?P<dop>\d+)u\.1t(?P<one>yes|no)$")
_SUMMARY_NAME_RE = re.compile(r"^o\.sum\.(?P<sep>[tc])\.(?P<tag>.+)$")
_MERGED_NAME_RE = re.compile(r"^mrg\.(?P<step>.+)$")
_RES_NAME_RE = re.compile(r"^o\.res\.dop(?P<dop>\d+)$")
_CLIENT_NAME_RE = re.compile(r"^o\.ib\.dop(?P<dop>\d+)\.(?P<n>\d+)$")
_HEADER_PAIR_RE = re.compile(r"(?P<value>[-+]?\d+(?:\.\d+)?)\s+(?P<unit>[A-Za-z][A-Za-z-]*)")
_OPTION_RE = re.compile(r"--(?P<key>[A-Za-z_]+)=(?P<value>\S+)")
_PERCENTILE_RE = re.compile(
    r"^(?P<pct>\d+)th,\s*\S+\s*/\s*\S+\s*=\s*(?P<insert>\S+)\s+insert,\s*(?:(?P<query>\S+)\s+query)?"
)
_PS_LINE_RE = re.compile(r"^\S+\s+\d+\s+[\d.]+\s+[\d.]+\s+(?P<vsz>\d+)\s+(?P<rss>\d+)\s")


class ParseError(ValueError):
    """An Insert Benchmark file that cannot be read; the message names the file and line."""


# --------------------------------------------------------------------------- steps


def step_name(name: str) -> str | None:
    """The step a file or directory name stands for (``qr100.L1`` → ``qr100``), or None when it is no step."""
    name = _LOOP_RE.sub("", name)
    if name in LOAD_STEPS or name in WRITE_STEPS:
        return name
    return name if _QUERY_STEP_RE.match(name) else None


def is_step(name: str) -> bool:
    return step_name(name) == name


def is_step_dir(name: str) -> bool:
    """A directory holding one step's o.res / o.ib files."""
    return step_name(name) is not None or _OLD_QUERY_DIR_RE.match(name) is not None


def target_rate(step: str) -> int | None:
    """Inserts/s each client aims at during a query step (qr500 → 500); None for the load and write steps."""
    match = _QUERY_STEP_RE.match(step)
    return int(match["rate"]) if match else None


def is_query_step(step: str) -> bool:
    return target_rate(step) is not None


def is_excluded(step: str) -> bool:
    """No step is a warm-up: every step is measured and compared (sysbench and db_bench have warm-ups)."""
    return False


def step_kind(step: str) -> str:
    """ "load" (l.i0, l.x), "write" (l.i1, l.i2) or "query" (qr*, qp*, q<rate>.<n>)."""
    if step in LOAD_STEPS:
        return "load"
    if step in WRITE_STEPS:
        return "write"
    return "query"


def throughput_column(step: str) -> str:
    """The column that is the step's "Q": inserts/s (l.i0 l.i1 l.i2), indexed rows/s (l.x, also ``ips``), queries/s."""
    return "qps" if is_query_step(step) else "ips"


def throughput_label(step: str) -> str:
    if step == "l.x":
        return "indexed rows/s"
    return "queries/s" if is_query_step(step) else "inserts/s"


def step_sort_key(step: str) -> tuple[int, int, int, int, str]:
    """The order the steps run in: l.i0, l.x, l.i1, l.i2, then the query steps by rate (qr before qp, .1 before .2)."""
    fixed = (*LOAD_STEPS, *WRITE_STEPS)
    if step in fixed:
        return (0, fixed.index(step), 0, 0, step)
    match = _QUERY_STEP_RE.match(step)
    if match:
        kind = {"": 0, "r": 0, "p": 1}[match["kind"]]
        return (1, int(match["rate"]), kind, int(match["n"] or 0), step)
    return (2, 0, 0, 0, step)


def ordered_steps(steps: Iterable[str]) -> list[str]:
    return sorted(set(steps), key=step_sort_key)


def sla_threshold(clients: int, rate: int, fraction: float = SLA_FRACTION) -> float:
    """Inserts/s a query step must sustain: ``fraction`` × clients × the per-client target rate."""
    return fraction * clients * rate


def meets_sla(ips: float | None, clients: int, rate: int, fraction: float = SLA_FRACTION) -> bool | None:
    """Whether the background inserts kept up; None when the insert rate is missing."""
    if ips is None or (isinstance(ips, float) and math.isnan(ips)):
        return None
    return ips >= sla_threshold(clients, rate, fraction)


# --------------------------------------------------------------------------- values


def _value(column: str, text: str) -> Any:
    text = text.strip()
    if text in _MISSING:
        return None
    if column == TAG_COLUMN:
        return text
    if _NUMBER_RE.match(text):
        number = float(text)
        if not math.isfinite(number):
            return None
        if number.is_integer() and "." not in text and "e" not in text.lower():
            return int(number)
        return number
    return text


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


@dataclass(frozen=True)
class Row:
    """One step of one run as a summary or merged table wrote it: values by column name, and the line."""

    values: dict[str, Any]
    line: str
    cells: dict[str, str] = field(default_factory=dict)  # the text of each column, as written

    @property
    def tag(self) -> str | None:
        tag = self.values.get(TAG_COLUMN)
        return str(tag) if tag is not None else None


@dataclass
class Table:
    """A summary or merged table: its columns and rows (``None`` for a ``-`` break line of a merged table)."""

    name: str
    columns: list[str]
    rows: list[Row | None]
    warnings: list[str] = field(default_factory=list)


def parse_table(text: str, *, name: str) -> Table:
    """A header of named columns (tabs or commas) and its rows. Raises ParseError without an ``ips`` header."""
    columns: list[str] | None = None
    separator = "\t"
    rows: list[Row | None] = []
    warnings: list[str] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.rstrip("\r")
        where = f"{name}:{number}"
        if not line.strip():
            continue
        if columns is None:
            separator = "\t" if "\t" in line else ","
            fields = [f.strip() for f in line.split(separator)]
            if fields[0] != "ips" or TAG_COLUMN not in fields:
                raise ParseError(f"{where}: not an Insert Benchmark header (a line starting ips and naming tag)")
            columns = fields
            continue
        if line.strip() == "-":
            rows.append(None)  # the merge scripts' BREAK: a new block starts, with its own base
            continue
        fields = line.split(separator)
        if fields[0].strip() == "ips":
            # A second header: etl.sh appended the scan block (secs,mrps,…) in some versions; it is no step.
            warnings.append(f"{where}: a second header; the rest of the file is not step results and is ignored")
            break
        if len(fields) != len(columns):
            if fields[0].strip() in ("secs", "samp"):
                warnings.append(f"{where}: a scan block; ignored")
                break
            raise ParseError(f"{where}: {len(fields)} fields but the header names {len(columns)} columns")
        cells = {column: text.strip() for column, text in zip(columns, fields, strict=True)}
        rows.append(
            Row(values={column: _value(column, text) for column, text in cells.items()}, line=line, cells=cells)
        )
    if columns is None:
        raise ParseError(f"{name}: empty; no Insert Benchmark header found")
    return Table(name=name, columns=columns, rows=rows, warnings=warnings)


# --------------------------------------------------------------------------- names and paths


@dataclass(frozen=True)
class Tag:
    """``100m.my8022.cx6d``: rows loaded, the build, the config (the merged tables drop the rows)."""

    rows: str | None
    build: str
    config: str

    @property
    def text(self) -> str:
        return ".".join(p for p in (self.rows, self.build, self.config) if p)


def parse_tag(text: str) -> Tag:
    parts = [p for p in text.strip().split(".") if p]
    if not parts:
        raise ParseError(f"{text!r}: an empty tag names no build")
    rows = parts.pop(0) if len(parts) > 1 and _ROWS_RE.match(parts[0]) else None
    build = parts.pop(0)
    return Tag(rows=rows.lower() if rows else None, build=build, config=".".join(parts) or DEFAULT_CONFIG)


def _parts(path: str) -> list[str]:
    return [part for part in path.split("/") if part not in ("", ".")]


def rows_from_path(path: str) -> str | None:
    """The rows folder a merged table sits under (``100m/res.in/mrg.l.i0`` → ``100m``)."""
    for part in reversed(_parts(path)[:-1]):
        if _ROWS_RE.match(part):
            return part.lower()
    return None


def clients_from_path(path: str) -> tuple[int | None, bool | None]:
    """(clients, table per client) from a ``<dop>u.1t<yes|no>`` folder: ``8u.1tno`` is 8 clients, a table each."""
    for part in reversed(_parts(path)[:-1]):
        if match := _CLIENTS_DIR_RE.match(part):
            return int(match["dop"]), match["one"] == "no"
    return None, None


def _is_layout_folder(part: str) -> bool:
    return bool(
        _ROWS_RE.match(part)
        or _CLIENTS_DIR_RE.match(part)
        or part.startswith(("res.", "sum.", "report."))
        or is_step_dir(part)
        or _run_dir_tag(part) is not None
    )


def server_from_path(path: str) -> str | None:
    """The nearest folder above the results that is not part of the scripts' layout, if any."""
    for part in reversed(_parts(path)[:-1]):
        if not _is_layout_folder(part):
            return part
    return None


def _run_dir_tag(part: str) -> Tag | None:
    """``100m.my8022.cx6d``: a result directory is named by its full tag (rows first)."""
    pieces = part.split(".")
    if len(pieces) < 3 or not _ROWS_RE.match(pieces[0]):
        return None
    return parse_tag(part)


def file_kind(parts: Sequence[str]) -> str | None:
    """ "summary", "merged", "res" or "client" for an Insert Benchmark file (path components), else None."""
    if not parts:
        return None
    base = parts[-1]
    if _SUMMARY_NAME_RE.match(base):
        return "summary"
    if (match := _MERGED_NAME_RE.match(base)) and step_name(match["step"]) is not None:
        return "merged"
    if len(parts) >= 2 and is_step_dir(parts[-2]):
        if _RES_NAME_RE.match(base):
            return "res"
        if _CLIENT_NAME_RE.match(base):
            return "client"
    return None


# --------------------------------------------------------------------------- o.res and o.ib


@dataclass
class Histogram:
    """Response times of one kind of operation (insert, query, delete): counts per RT_BUCKETS and the max (s)."""

    counts: list[int]
    max_s: float | None

    def add(self, other: Histogram) -> Histogram:
        maxes = [m for m in (self.max_s, other.max_s) if m is not None]
        return Histogram(
            counts=[a + b for a, b in zip(self.counts, other.counts, strict=True)], max_s=max(maxes) if maxes else None
        )

    def as_json(self) -> dict[str, Any]:
        return {"counts": self.counts, "max_s": self.max_s}


def parse_histogram_line(line: str) -> tuple[str, Histogram] | None:
    """``Insert rt:  5  100 … 0.117000`` → ("insert", counts, max); the bucket-name line gives None."""
    stripped = line.strip()
    match = re.match(r"^(?P<kind>[A-Za-z]+) rt:\s+(?P<rest>.*)$", stripped)
    if not match:
        return None
    fields = match["rest"].split()
    if len(fields) != len(RT_BUCKETS) + 1 or not all(_NUMBER_RE.match(f) for f in fields):
        return None  # the header line (256us 1ms …) or a damaged one
    counts = [int(float(f)) for f in fields[:-1]]
    return match["kind"].lower(), Histogram(counts=counts, max_s=float(fields[-1]))


def _merge_histograms(found: Iterable[tuple[str, Histogram]]) -> dict[str, Histogram]:
    merged: dict[str, Histogram] = {}
    for kind, histogram in found:
        merged[kind] = merged[kind].add(histogram) if kind in merged else histogram
    return merged


@dataclass
class ResFile:
    """What ``o.res.dop<D>`` says about one step (np.sh writes it when the step ends)."""

    header: dict[str, float]  # processes, rows-per-process, seconds, rows-per-second, queries-per-second, …
    tables: dict[str, dict[str, float]]  # "insert" / "query" normalisation → column → value
    db_gb: float | None = None
    db_dir_gb: float | None = None
    rss_gb: float | None = None
    max_insert_s: float | None = None
    max_query_s: float | None = None
    percentiles: dict[str, dict[str, float | None]] = field(default_factory=dict)  # "50" → insert/query rate
    histograms: dict[str, Histogram] = field(default_factory=dict)

    @property
    def clients(self) -> int | None:
        value = self.header.get("processes")
        return int(value) if value is not None else None


def parse_res(text: str, *, name: str) -> ResFile:
    """Parse ``o.res.dop<D>``: line 1 the rates, then the iostat/vmstat tables normalised by the insert and the
    query rate, the database size, the server process, the max response times, the per-client histograms and
    rate percentiles. Sections are found by their titles, so older files with fewer of them still parse."""
    lines = [line.rstrip("\r") for line in text.splitlines()]
    if not lines or "processes" not in lines[0]:
        raise ParseError(f"{name}:1: not an o.res file (the first line names no processes)")
    header = {m["unit"].rstrip(","): float(m["value"]) for m in _HEADER_PAIR_RE.finditer(lines[0])}
    res = ResFile(header=header, tables={})
    norm = "insert"
    columns: list[str] | None = None
    histograms: list[tuple[str, Histogram]] = []
    for number, line in enumerate(lines[1:], start=2):
        stripped = line.strip()
        fields = stripped.split()
        if not stripped:
            columns = None
            continue
        lowered = stripped.lower()
        if "normalized by insert" in lowered:
            norm = "insert"
        elif "normalized by query" in lowered:
            norm = "query"
        if fields[0] in ("nsamp", "samp"):
            columns = fields
            continue
        if columns is not None:
            if len(fields) == len(columns) and all(_NUMBER_RE.match(f) for f in fields):
                values = {c: float(v) for c, v in zip(columns[1:], fields[1:], strict=True)}
                res.tables.setdefault(norm, {}).update(values)
            columns = None
            continue
        _read_res_line(res, stripped, lines[number] if number < len(lines) else "", histograms)
    res.histograms = _merge_histograms(histograms)
    return res


def _read_res_line(res: ResFile, stripped: str, following: str, histograms: list[tuple[str, Histogram]]) -> None:
    """One line of an o.res outside its tables: the database size, the server process, a max response time (its
    value on the ``following`` line), a rate percentile or a histogram line."""
    fields = stripped.split()
    if fields[0] == "dbGB" and len(fields) >= 2 and _NUMBER_RE.match(fields[1]):
        res.db_gb = float(fields[1])
    elif fields[0] == "dbdirGB" and len(fields) >= 2 and _NUMBER_RE.match(fields[1]):
        res.db_dir_gb = float(fields[1])
    elif (ps := _PS_LINE_RE.match(stripped)) and res.rss_gb is None:
        res.rss_gb = int(ps["rss"]) / (1024 * 1024)  # ps reports KB
    elif stripped in ("Max insert", "Max query"):
        value = float(following) if _NUMBER_RE.match(following.strip()) else None
        if stripped == "Max insert":
            res.max_insert_s = value
        else:
            res.max_query_s = value
    elif (pct := _PERCENTILE_RE.match(stripped)) and pct["pct"] not in res.percentiles:
        # One line per client and percentile: the author's summaries use the first client's, so do we.
        res.percentiles[pct["pct"]] = {
            "insert": _number(_value("", pct["insert"])),
            "query": _number(_value("", pct["query"] or "")),
        }
    elif (found := parse_histogram_line(stripped)) is not None:
        histograms.append(found)


@dataclass
class ClientOutput:
    """One client's ``o.ib.dop<D>.<n>``: its options and the per-report (about per-second) rates."""

    options: dict[str, str]
    seconds: list[float]  # t_sec at each report
    interval: list[float]  # i_sec
    ips: list[float]  # i_ips: inserts/s in that interval
    qps: list[float]  # i_qps
    total_ips: float | None  # t_ips of the last report: inserts/s over the whole step
    total_qps: float | None
    max_i_us: list[int]
    max_q_us: list[int]
    histograms: dict[str, Histogram]


_CLIENT_COLUMNS = ("i_sec", "t_sec", "i_ips", "t_ips", "i_qps", "t_qps", "max_i", "max_q", "t_ins", "t_query")


def parse_client_output(text: str, *, name: str) -> ClientOutput:
    """Parse iibench.py's output as np.sh saves it: line 1 the command line, then a header
    (``i_sec t_sec i_ips t_ips i_qps t_qps max_i max_q t_ins t_query retry_i retry_q``) and one line per report,
    then the response-time histograms. Lines of other shapes (notices, errors) are skipped."""
    options: dict[str, str] = {}
    columns: list[str] | None = None
    out = ClientOutput(options, [], [], [], [], None, None, [], [], {})
    histograms: list[tuple[str, Histogram]] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.rstrip("\r")
        fields = line.split()
        if not fields:
            continue
        if number == 1 and "iibench" in line:
            options = {m["key"]: m["value"] for m in _OPTION_RE.finditer(line)}
            out.options = options
            continue
        if fields[0] == "i_sec":
            columns = fields
            continue
        if columns is not None and len(fields) == len(columns) and all(_NUMBER_RE.match(f) for f in fields):
            row = dict(zip(columns, (float(f) for f in fields), strict=True))
            out.interval.append(row.get("i_sec", 1.0))
            out.seconds.append(row.get("t_sec", float(len(out.seconds) + 1)))
            out.ips.append(row.get("i_ips", 0.0))
            out.qps.append(row.get("i_qps", 0.0))
            out.total_ips = row.get("t_ips")
            out.total_qps = row.get("t_qps")
            out.max_i_us.append(int(row.get("max_i", 0)))
            out.max_q_us.append(int(row.get("max_q", 0)))
            continue
        if (found := parse_histogram_line(line)) is not None:
            histograms.append(found)
    if columns is None:
        raise ParseError(f"{name}: no iibench.py report header (a line starting i_sec)")
    out.histograms = _merge_histograms(histograms)
    return out


def per_second_series(clients: Sequence[ClientOutput], max_points: int = MAX_SERIES_POINTS) -> dict[str, Any] | None:
    """The step's insert and query rate over time, all clients added up report by report.

    Clients report about once a second and start a second apart, so the k-th
    reports of all clients are summed. Longer series are averaged into buckets
    of ``seconds_per_point`` so a result stays small (one list of ints each).
    """
    length = max((len(c.ips) for c in clients), default=0)
    if length == 0:
        return None
    ips = [sum(c.ips[i] for c in clients if i < len(c.ips)) for i in range(length)]
    qps = [sum(c.qps[i] for c in clients if i < len(c.qps)) for i in range(length)]
    intervals = [v for c in clients for v in c.interval if v > 0]
    step_seconds = statistics.median(intervals) if intervals else 1.0
    bucket = max(1, math.ceil(length / max_points))
    if bucket > 1:
        ips = [sum(ips[i : i + bucket]) / len(ips[i : i + bucket]) for i in range(0, length, bucket)]
        qps = [sum(qps[i : i + bucket]) / len(qps[i : i + bucket]) for i in range(0, length, bucket)]
    series: dict[str, Any] = {"seconds_per_point": round(step_seconds * bucket, 3), "ips": [round(v) for v in ips]}
    if any(qps):  # the load and write steps run no queries: no list of zeros
        series["qps"] = [round(v) for v in qps]
    return series


# --------------------------------------------------------------------------- steps of a run


@dataclass
class StepResult:
    """One step of one run: the summary's columns by name, and what only raw output has."""

    values: dict[str, Any]
    source: str  # the file it came from
    precision: int  # 2 result directory, 1 step summary, 0 merged table: the better source wins
    printed: dict[str, str] = field(default_factory=dict)  # each column's text in the summary or merged table
    per_second: dict[str, Any] | None = None
    histograms: dict[str, Histogram] = field(default_factory=dict)
    target_rate: int | None = None  # per client, from the command line when it was saved


def _fmt1(value: float | None) -> float | None:
    # etl.sh prints the database sizes and RSS with one decimal; keep the same precision so tables agree.
    return None if value is None else round(value, 1)


def step_from_res(step: str, res: ResFile | None, clients_output: Sequence[ClientOutput], *, source: str) -> StepResult:
    """A step's summary columns from o.res (as etl.sh derives them), falling back on the clients' own output."""
    query = is_query_step(step)
    values: dict[str, Any] = _res_values(res, query) if res is not None else {}
    histograms: dict[str, Histogram] = res.histograms if res is not None else {}
    if clients_output:
        if res is None:
            values.update(_client_totals(clients_output, query))
        # The clients' own histograms are the source; o.res only copies the insert and query lines.
        histograms = _merge_histograms((k, h) for c in clients_output for k, h in c.histograms.items()) or histograms
    targets = {int(c.options["inserts_per_second"]) for c in clients_output if c.options.get("inserts_per_second")}
    return StepResult(
        values=values,
        source=source,
        precision=2,
        per_second=per_second_series(clients_output),
        histograms=histograms,
        target_rate=targets.pop() if len(targets) == 1 else None,
    )


def _res_values(res: ResFile, query: bool) -> dict[str, Any]:
    """A step's summary columns as etl.sh derives them from its o.res."""
    ips = res.header.get("rows-per-second")
    qps = res.header.get("queries-per-second", 0.0 if not query else None)
    op = res.tables.get("query" if query else "insert", {})
    by_insert = res.tables.get("insert", {})
    suffix = "q" if query else "i"
    values: dict[str, Any] = {
        "ips": round(ips) if ips is not None else None,
        "qps": round(qps) if qps is not None else None,
        "rps": op.get("r/s", by_insert.get("r/s")),
        "rmbps": op.get("rMB/s", by_insert.get("rMB/s")),
        "wps": op.get("w/s", by_insert.get("w/s")),
        "wmbps": op.get("wMB/s", by_insert.get("wMB/s")),
        "rpq": op.get(f"r/{suffix}", op.get("r/o")),
        "rkbpq": op.get(f"rKB/{suffix}", op.get("rKB/o")),
        "wpi": by_insert.get("w/i"),
        "wkbpi": by_insert.get("wKB/i", by_insert.get("wKB/o")),
        "csps": op.get("cs/s", by_insert.get("cs/s")),
        "cpups": op.get("cpu/s", by_insert.get("cpu/s")),
        "cspq": op.get("cs/q", op.get("cs/o")),
        # CPU µs per operation needs the server's CPU count, which o.res does not record.
        "cpupq": None,
        "dbgb1": _fmt1(res.db_gb),
        "dbgb2": _fmt1(res.db_dir_gb),
        "rss": _fmt1(res.rss_gb),
        "maxop": res.max_query_s if query else res.max_insert_s,
    }
    for pct, column in (("50", "p50"), ("99", "p99")):
        rates = res.percentiles.get(pct, {})
        values[column] = rates.get("query" if query else "insert")
    values["seconds"] = res.header.get("seconds")
    return values


def _client_totals(clients_output: Sequence[ClientOutput], query: bool) -> dict[str, Any]:
    """Without an o.res: the step's rates and length from its clients' own output."""
    totals_i = [c.total_ips for c in clients_output if c.total_ips is not None]
    totals_q = [c.total_qps for c in clients_output if c.total_qps is not None]
    ends = [c.seconds[-1] for c in clients_output if c.seconds]
    return {
        "ips": round(sum(totals_i)) if totals_i else None,
        "qps": round(sum(totals_q)) if totals_q else (0 if not query else None),
        "seconds": max(ends) if ends else None,
    }


# --------------------------------------------------------------------------- runs


@dataclass
class IbenchRun:
    """One build + config in one workload, assembled from every file of the bundle that holds it."""

    tag: Tag
    steps: dict[str, StepResult] = field(default_factory=dict)
    clients: int | None = None
    clients_source: str | None = None  # "directory", "o.res", "client output", "estimated"
    table_per_client: bool | None = None
    sources: list[str] = field(default_factory=list)
    mtimes: list[float] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.tag.text

    @property
    def build(self) -> str:
        return self.tag.build

    @property
    def dbms_version_flavour(self) -> tuple[str, str, str, list[str]]:
        return parse_build(self.tag.build)

    @property
    def started_at(self) -> datetime | None:
        return datetime.fromtimestamp(min(self.mtimes), tz=UTC) if self.mtimes else None

    @property
    def content_sha256(self) -> str:
        """Hash of the run's identity and step values: the same run uploaded again is recognised."""
        hasher = hashlib.sha256(f"{SUITE}\0{self.tag.text}\0{self.clients}\0".encode())
        for step in ordered_steps(self.steps):
            result = self.steps[step]
            values = {k: v for k, v in sorted(result.values.items()) if k != TAG_COLUMN}
            hasher.update(f"{step}\0{values!r}\0{result.per_second!r}\n".encode())
        return hasher.hexdigest()

    def add_step(self, step: str, result: StepResult) -> None:
        current = self.steps.get(step)
        if current is None or result.precision > current.precision:
            self.steps[step] = result

    @property
    def dop(self) -> int:
        return self.clients or 1

    @property
    def target_rates(self) -> list[int]:
        return sorted({rate for step in self.steps if (rate := self.step_target(step)) is not None})

    def step_target(self, step: str) -> int | None:
        """Inserts/s per client of a query step: the command line's when saved, else the step's name."""
        if not is_query_step(step):
            return None  # the load and write steps insert as fast as they can: no target, no SLA
        result = self.steps.get(step)
        if result is not None and result.target_rate is not None:
            return result.target_rate
        return target_rate(step)

    @property
    def workload_name(self) -> str:
        words = [SUITE]
        if self.clients is not None and self.clients_source != "estimated":
            words.append(f"{self.clients} client{'s' if self.clients != 1 else ''}")
        if self.tag.rows:
            words.append(f"{self.tag.rows} rows")
        if self.table_per_client is not None:
            words.append("table per client" if self.table_per_client else "one table")
        if len(words) == 1:
            words.append("(parameters unknown)")
        return " ".join(words[:2]) + "".join(f", {w}" for w in words[2:])

    @property
    def workload_params(self) -> dict[str, Any]:
        return {
            "clients": self.clients,
            "clients_source": self.clients_source,
            "rows": self.tag.rows,
            "table_per_client": self.table_per_client,
            "target_rates": self.target_rates,
        }

    def result_rows(self) -> list[dict[str, Any]]:
        """Result field values per step: Q is the QPS; every summary column is kept in ``extra`` by name."""
        rows: list[dict[str, Any]] = []
        for step in ordered_steps(self.steps):
            result = self.steps[step]
            values = result.values
            q = _number(values.get(throughput_column(step)))
            if q is None:
                self.warnings.append(f"{self.name} {step}: no {throughput_column(step)}; shown as missing")
                continue
            extra: dict[str, Any] = {k: v for k, v in values.items()}
            extra["source"] = result.source
            if result.printed:
                extra["printed"] = {k: v for k, v in result.printed.items() if k != TAG_COLUMN}
            rate = self.step_target(step)
            if rate is not None:
                extra["target_rate"] = rate
                extra["clients"] = self.dop
                extra["target_ips"] = self.dop * rate
                if self.clients_source == "estimated":
                    extra["clients_estimated"] = True
            if result.per_second:
                extra["per_second"] = result.per_second
            if result.histograms:
                extra["rt_hist"] = {
                    "buckets": list(RT_BUCKETS),
                    **{kind: h.as_json() for kind, h in sorted(result.histograms.items())},
                }
            maxop = _number(values.get("maxop"))
            rows.append(
                {
                    "test": step,
                    "range_size": None,
                    "dop": self.dop,
                    "qps": q,
                    "threads": self.clients,
                    "elapsed_s": _number(values.get("seconds")),
                    "lat_max_ms": maxop * 1000.0 if maxop is not None else None,
                    # The common HW columns, so run pages and drill-downs show them like sysbench's.
                    "rps": _number(values.get("rps")),
                    "rmbps": _number(values.get("rmbps")),
                    "wps": _number(values.get("wps")),
                    "wmbps": _number(values.get("wmbps")),
                    "r_o": _number(values.get("rpq")),
                    "rkb_o": _number(values.get("rkbpq")),
                    "wkb_o": _number(values.get("wkbpi", values.get("wkbpq"))),
                    "o_s": q,
                    "cs_s": _number(values.get("csps")),
                    "cpu_s": _number(values.get("cpups")),
                    "cs_o": _number(values.get("cspq")),
                    "cpu_o": _number(values.get("cpupq")),
                    "extra": extra,
                }
            )
        return rows


def estimate_clients(steps: Mapping[str, StepResult]) -> int | None:
    """Clients of a run whose files do not say: the lowest-rate query step's insert rate over its target.

    Each client inserts at its target rate, so that step (the one most likely
    to have kept up) shows clients × rate. Marked as estimated wherever shown.
    """
    queries = [(rate, s) for s, r in steps.items() if (rate := r.target_rate or target_rate(s)) is not None]
    for rate, step in sorted(queries, key=lambda item: (item[0], step_sort_key(item[1]))):
        ips = _number(steps[step].values.get("ips"))
        if ips is not None and ips > 0:
            return max(1, round(ips / rate))
    return None


# --------------------------------------------------------------------------- a bundle's files


def summary_steps(table: Table) -> list[str]:
    """The step of each row of a step summary, from the layout its row count gives."""
    rows = [row for row in table.rows if row is not None]
    layout = SUMMARY_LAYOUTS.get(len(rows))
    if layout is None:
        known = ", ".join(f"{n} ({' '.join(s[:4])} …)" for n, s in sorted(SUMMARY_LAYOUTS.items()))
        raise ParseError(
            f"{table.name}: {len(rows)} step rows, and step summaries name no steps; known layouts: {known}. "
            "Upload the result directories or the merged mrg.<step> tables instead"
        )
    return list(layout)


# Why an Insert Benchmark file of a bundle was not read, as the bundle page and the import output say it.
COMMA_TWIN = "the comma-separated twin of the o.sum.t summary beside it, which was read instead (the same rows)"
NOT_A_STEP_RESULT = "not an Insert Benchmark result (an output of the author's scripts, such as a rel.<step> table)"


def parse_bundle_files(
    files: Iterable[tuple[str, bytes, float]],
) -> tuple[list[IbenchRun], list[str], list[tuple[str, str]]]:
    """(path, bytes, mtime) of every Insert Benchmark file of a bundle → (runs, warnings, (path, why) of each file
    not read).

    Raises ParseError naming the file when one cannot be read.
    """
    found = read_bundle_files(files)
    return found.runs_found, found.warnings, found.not_read


def read_bundle_files(files: Iterable[tuple[str, bytes, float]]) -> _Assembly:
    """(path, bytes, mtime) of every Insert Benchmark file of a bundle → what was read: the runs
    (``runs_found``), warnings, and each file as read (what it became) or not read (why)."""
    files = list(files)
    found = _Assembly()
    for path, data, mtime in files:
        parts = _parts(path)
        kind = file_kind(parts)
        if kind == "summary":
            found.read_summary(path, parts, data.decode("utf-8", errors="replace"), mtime, files)
        elif kind == "merged":
            found.merged.append((path, data, mtime))
        elif kind in ("res", "client"):
            found.read_step_file(kind, path, parts, data.decode("utf-8", errors="replace"), mtime)
        else:
            found.not_read.append((path, NOT_A_STEP_RESULT))
    for (run_dir, step_dir), slot in sorted(found.raw.items()):
        found.add_raw_step(run_dir, step_dir, slot)
    for path, data, mtime in found.merged:
        names = _read_merged(path, data, mtime, found.runs, found.run_for, found.warnings)
        found.read.append((path, f"merged table of step {_merged_step(path)}: a row for each of runs {names}"))
    runs = list(found.runs.values())
    for run in runs:
        _estimate_clients(run)
    runs.sort(key=lambda r: (r.tag.rows or "", r.tag.build, r.tag.config))
    found.runs_found = runs
    found.read.sort()
    return found


@dataclass
class _Assembly:
    """The runs of a bundle's Insert Benchmark files as they are read: a run's files may be spread over the
    bundle (summaries, merged tables, step directories), so each run is assembled once, from all of them."""

    warnings: list[str] = field(default_factory=list)
    not_read: list[tuple[str, str]] = field(default_factory=list)
    runs: dict[tuple[str | None, str, str], IbenchRun] = field(default_factory=dict)
    # (run directory path, step) → o.res and the clients' outputs
    raw: dict[tuple[str, str], dict[str, Any]] = field(
        default_factory=lambda: defaultdict(lambda: {"res": None, "clients": [], "mtime": []})
    )
    old_query_dirs: dict[str, set[tuple[int, int]]] = field(default_factory=lambda: defaultdict(set))
    merged: list[tuple[str, bytes, float]] = field(default_factory=list)
    # (path, what it became) of each file read; the runs assembled, in order, once every file is read.
    read: list[tuple[str, str]] = field(default_factory=list)
    runs_found: list[IbenchRun] = field(default_factory=list)

    def run_for(self, tag: Tag) -> IbenchRun:
        key = (tag.rows, tag.build, tag.config)
        if key not in self.runs:
            self.runs[key] = IbenchRun(tag=tag)
        return self.runs[key]

    def read_summary(
        self, path: str, parts: Sequence[str], text: str, mtime: float, files: Iterable[tuple[str, bytes, float]]
    ) -> None:
        """An o.sum.[tc].* summary: one step per row, of the run its tag names (its comma twin is not read)."""
        match = _SUMMARY_NAME_RE.match(parts[-1])
        assert match is not None
        if match["sep"] == "c" and _has_sibling(files, path, "o.sum.t."):
            self.not_read.append((path, COMMA_TWIN))
            return
        table = parse_table(text, name=path)
        self.warnings.extend(table.warnings)
        tag = parse_tag(next((r.tag for r in table.rows if r is not None and r.tag), None) or match["tag"])
        run = self.run_for(tag)
        run.sources.append(path)
        run.mtimes.append(mtime)
        steps = summary_steps(table)
        for step, row in zip(steps, (r for r in table.rows if r is not None), strict=True):
            run.add_step(step, StepResult(values=dict(row.values), source=path, precision=1, printed=row.cells))
        span = f"{steps[0]} to {steps[-1]}" if steps else "none"
        self.read.append((path, f"summary table of run {run.name}: a row for each of its {len(steps)} steps ({span})"))

    def read_step_file(self, kind: str, path: str, parts: Sequence[str], text: str, mtime: float) -> None:
        """An o.res or a client's o.ib of a step directory, kept with the step's other files."""
        step_dir = parts[-2]
        run_dir = "/".join(parts[:-2])
        slot = self.raw[(run_dir, step_dir)]
        slot["mtime"].append(mtime)
        if (old := _OLD_QUERY_DIR_RE.match(step_dir)) is not None:
            self.old_query_dirs[run_dir].add((int(old["loop"]), int(old["rate"])))
        if kind == "res":
            slot["res"] = parse_res(text, name=path)
            slot["res_path"] = path
        else:
            slot["clients"].append(parse_client_output(text, name=path))
            slot.setdefault("client_paths", []).append(path)

    def add_raw_step(self, run_dir: str, step_dir: str, slot: dict[str, Any]) -> None:
        """A step directory's files as one step of the run its result directory names, with the run's clients."""
        step = _raw_step_name(step_dir, self.old_query_dirs.get(run_dir, set()))
        run_parts = _parts(run_dir)
        run_tag = _run_dir_tag(run_parts[-1]) if run_parts else None
        if run_tag is None:
            raise ParseError(
                f"{run_dir or '(bundle root)'}/{step_dir}: step results must sit in a result directory named "
                "<rows>.<build>.<config> (100m.my8022.cx6d)"
            )
        run = self.run_for(run_tag)
        source = slot.get("res_path") or slot["client_paths"][0]
        run.sources.append(source)
        run.mtimes.extend(slot["mtime"])
        run.add_step(step, step_from_res(step, slot["res"], slot["clients"], source=source))
        _step_clients(run, run_dir, slot)
        if slot.get("res_path"):
            self.read.append((slot["res_path"], f"run {run.name}, step {step}: the step's rates and response times"))
        for path in slot.get("client_paths", []):
            self.read.append((path, f"run {run.name}, step {step}: one client's output"))


def _step_clients(run: IbenchRun, run_dir: str, slot: dict[str, Any]) -> None:
    """How many clients the run had (its folder's name, else o.res, else the client outputs), and whether each had
    a table of its own."""
    clients, per_client = clients_from_path(run_dir)
    if clients is not None:
        run.clients, run.clients_source, run.table_per_client = clients, "directory", per_client
    elif run.clients is None and slot["res"] is not None and slot["res"].clients is not None:
        run.clients, run.clients_source = slot["res"].clients, "o.res"
    elif run.clients is None and slot["clients"]:
        run.clients, run.clients_source = len(slot["clients"]), "client output"
    if run.table_per_client is None and len(slot["clients"]) > 1:
        tables = {c.options.get("table_name") for c in slot["clients"]}
        run.table_per_client = len(tables) > 1


def _estimate_clients(run: IbenchRun) -> None:
    """A run whose files do not say its clients: estimated from its steps, and said."""
    if run.clients is not None:
        return
    estimate = estimate_clients(run.steps)
    if estimate is not None:
        run.clients, run.clients_source = estimate, "estimated"
        run.warnings.append(
            f"{run.name}: the files do not record the number of clients; {estimate} estimated from the "
            "lowest-rate query step's insert rate (put the results under a <clients>u.1t<yes|no> folder)"
        )


def _has_sibling(files: Iterable[tuple[str, bytes, float]], path: str, prefix: str) -> bool:
    folder, _, base = path.rpartition("/")
    twin = f"{folder}/{prefix}{base[len(prefix) :]}" if folder else f"{prefix}{base[len(prefix) :]}"
    return any(p == twin for p, _, _ in files)


def _raw_step_name(step_dir: str, old_dirs: set[tuple[int, int]]) -> str:
    if (old := _OLD_QUERY_DIR_RE.match(step_dir)) is not None:
        rate, loop = int(old["rate"]), int(old["loop"])
        nth = sorted(lp for lp, r in old_dirs if r == rate).index(loop) + 1
        return f"q{rate}.{nth}"
    step = step_name(step_dir)
    assert step is not None  # file_kind only accepts step directories
    return step


def _read_merged(
    path: str,
    data: bytes,
    mtime: float,
    runs: dict[tuple[str | None, str, str], IbenchRun],
    run_for: Any,
    warnings: list[str],
) -> str:
    """Rows of a merged table: one run each (tag without the rows, which the folder names), for one step."""
    match = _MERGED_NAME_RE.match(path.rsplit("/", 1)[-1])
    assert match is not None
    step = step_name(match["step"])
    assert step is not None
    table = parse_table(data.decode("utf-8", errors="replace"), name=path)
    warnings.extend(table.warnings)
    rows_folder = rows_from_path(path)
    names: list[str] = []
    for row in table.rows:
        if row is None or not row.tag:
            continue
        tag = parse_tag(row.tag)
        if tag.rows is None and rows_folder is not None:
            tag = Tag(rows=rows_folder, build=tag.build, config=tag.config)
        if tag.rows is None:
            # No rows anywhere: the run of this build and config found elsewhere in the bundle, if only one.
            same = [r for (rows, build, config), r in runs.items() if (build, config) == (tag.build, tag.config)]
            if len(same) == 1:
                tag = same[0].tag
        run = run_for(tag)
        names.append(run.name)
        if path not in run.sources:
            run.sources.append(path)
            run.mtimes.append(mtime)
        run.add_step(step, StepResult(values=dict(row.values), source=path, precision=0, printed=row.cells))
    return ", ".join(names) or "(none)"


def _merged_step(path: str) -> str:
    match = _MERGED_NAME_RE.match(path.rsplit("/", 1)[-1])
    assert match is not None
    return step_name(match["step"]) or match["step"]
