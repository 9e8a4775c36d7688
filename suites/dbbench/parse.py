"""Parse RocksDB db_bench results: per-build ``report.tsv`` files and merged ``sum.*.txt`` summaries.

Pure functions over text; no Django. What the benchmark scripts write:

- ``res.<workload>/bm.<...>.nt<N>.d<0|1>/<build>/report.tsv``: ``#`` comment
  lines, a header of named columns, one row per test, in the order the tests ran.
- ``sum.<workload>[...].txt``: optionally the list of the report.tsv paths it
  merges and a blank line, then blocks (header + the k-th row of every report,
  in the order of the list): one test per block while every build ran the same
  tests, mixed tests when some ran fewer (may25 dell32). Archived sets carry
  extras: a bare ratio line after a block (aug23), ``mean=… stddev=…
  sdev/mean=…`` after a block of repeated runs of one build (``*.txt.sdev`` of
  the variance study).

Columns are mapped by name, never by position: the header changed from 17
(``ops/sec … Test``) to 20 (``… Date Version Job-ID`` / ``… test_name test_date
rocksdb_version job_id``) to 27 and 28 (``… version job_id githash``) columns.
``NA`` and empty fields are missing values (None), never 0.

A run is one build on one workload. Without a path list, a merged summary only
says which version each row is; rows are then matched to builds by position,
then by version and start time, and a version that occurs twice stays two runs.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

SUITE = "db_bench"
DBMS = "RocksDB"
WORKLOADS = ("byrx", "iobuf", "iodir")
REPORT_NAME = "report.tsv"
UNKNOWN_WORKLOAD = "(workload unknown)"
DEFAULT_CONFIG = "default"

# The scripts' run order of the standard tests (by benchmark, the name before the first dot); the reference
# tables list their rows in this order. Tests not listed here follow, by name.
TEST_ORDER = (
    "fillseq",
    "bulkload",
    "fillrandom",
    "filluniquerandom",
    "revrange",
    "readrandom",
    "fwdrange",
    "multireadrandom",
    "overwritesome",
    "overwrite",
    "updaterandom",
    "mergerandom",
    "revrangewhilewriting",
    "fwdrangewhilewriting",
    "readwhilewriting",
    "revrangewhilemerging",
    "fwdrangewhilemerging",
    "readwhilemerging",
    "overwriteandwait",
)

# Historical header spellings → today's names. Columns with no counterpart today keep their own (lowercased) name.
_COLUMN_ALIASES = {
    "ops/sec": "ops_sec",
    "mb/sec": "mb_sec",
    "usec/op": "usec_op",
    "size-gb": "size_gb",
    "total_size_gb": "size_gb",
    "l0_gb": "l0_gb",
    "l0_mb": "l0_mb",
    "level0_size_gb": "l0_gb",
    "sum_gb": "c_wgb",
    "w-amp": "w_amp",
    "write_amplification": "w_amp",
    "w-mb/s": "c_mbps",
    "write_mbps": "c_mbps",
    "percentile_50": "p50",
    "percentile_75": "p75",
    "percentile_99": "p99",
    "percentile_99.9": "p99.9",
    "percentile_99.99": "p99.99",
    "stall-time": "stall_time",
    "uptime": "uptime",
    "test": "test",
    "date": "date",
    "version": "version",
    "stall_percent": "stall%",
    "test_name": "test",
    "test_date": "date",
    "rocksdb_version": "version",
    "job-id": "job_id",
}
# Text columns: kept as written. Every other column is a number or missing.
_TEXT_COLUMNS = frozenset({"test", "date", "version", "job_id", "githash", "lsm_sz", "blob_sz"})
_MISSING = frozenset({"", "NA", "N/A", "n/a", "nan", "-"})

_THREADS_RE = re.compile(r"\.t(?P<n>\d+)(?:\.|$)")
_BM_DIR_RE = re.compile(r"^bm\.")
_NT_RE = re.compile(r"^nt(?P<n>\d+)$")
_DIRECT_RE = re.compile(r"^d(?P<d>[01])$")
_BUILD_DIR_RE = re.compile(r"^(?P<version>\d+(?:\.\d+)*)(?:\.(?P<flavour>[A-Za-z].*))?$")
_DATE_RE = re.compile(
    r"^(?P<y>\d{4})-(?P<mo>\d{1,2})-(?P<d>\d{1,2})T(?P<h>\d{1,2}):(?P<mi>\d{2}):(?P<s>\d{2})(?:\.\d+)?"
    r"(?P<tz>Z|[+-]\d{2}:?\d{2})?$"
)
_STATS_RE = re.compile(r"(?P<key>mean|stddev|sdev/mean)=(?P<value>\S+)")
_NUMBER_RE = re.compile(r"^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$")
# Build-flavour words a summary's file name may carry (sum.byrx.lru.txt): compilers, LTO, block cache types.
_FLAVOUR_WORDS = ("fb", "gcc", "clang", "lto", "lru", "hcc")
_SUMMARY_WORDS = frozenset({"sum", "summary", "txt", "tsv", "sdev"})


class ParseError(ValueError):
    """A db_bench result file that cannot be read; the message names the file and line."""


class NotDbBench(ParseError):
    """A file named like a summary that holds no db_bench header: not a result file at all."""


# --------------------------------------------------------------------------- test names


def benchmark_of(test: str) -> str:
    """The db_bench benchmark of a test: ``readrandom.t8`` → ``readrandom``."""
    return test.split(".", 1)[0]


def test_threads(test: str) -> int | None:
    """Client threads of a test from its ``.t<N>`` part; fillseq has none (it is single-threaded)."""
    match = _THREADS_RE.search(test)
    return int(match["n"]) if match else None


def is_warmup(test: str) -> bool:
    """``revrange.t1`` only warms the block cache before the read-only tests."""
    return test == "revrange.t1"


def is_excluded(test: str) -> bool:
    """Stored but left out of comparisons: the warm-up, and overwritesome (it prepares the write-heavy phase)."""
    return is_warmup(test) or benchmark_of(test) == "overwritesome"


def is_dbbench_test(name: str) -> bool:
    """Whether a test name looks like one of db_bench's (known benchmark, or ``….t<N>[.s<N>]`` threads suffix)."""
    return benchmark_of(name) in TEST_ORDER or bool(re.search(r"\.t\d+(?:\.s\d+)?$", name))


def test_sort_key(test: str) -> tuple[int, str]:
    benchmark = benchmark_of(test)
    return (TEST_ORDER.index(benchmark) if benchmark in TEST_ORDER else len(TEST_ORDER), test)


def table_tests(tests: Iterable[str]) -> list[str]:
    """The rows of the author's tables: excluded tests dropped, the rest in the scripts' run order."""
    return sorted({t for t in tests if not is_excluded(t)}, key=test_sort_key)


# --------------------------------------------------------------------------- rows and files


def normalize_column(name: str) -> str:
    """Today's name of a header column (``ops/sec`` → ``ops_sec``); a current name is kept as written (Nstall)."""
    key = name.strip()
    return _COLUMN_ALIASES.get(key.lower(), key)


def _value(column: str, text: str) -> Any:
    text = text.strip()
    if text in _MISSING:
        return None
    if column in _TEXT_COLUMNS:
        return text
    if _NUMBER_RE.match(text):
        number = float(text)
        if math.isfinite(number) and number.is_integer() and "." not in text and "e" not in text.lower():
            return int(number)
        return number if math.isfinite(number) else None
    return text  # e.g. "16GB" in an old size column: kept as written


def parse_date(text: str | None) -> datetime | None:
    """The ``date`` column (``2025-12-22T22:23:46``, ``2023-11-9T16:54:47``, older ones with a zone).

    The scripts write local time without a zone; such times are taken as UTC.
    """
    if not text:
        return None
    match = _DATE_RE.match(text.strip())
    if not match:
        return None
    tz: timezone = UTC
    if match["tz"] and match["tz"] != "Z":
        sign = -1 if match["tz"][0] == "-" else 1
        digits = match["tz"][1:].replace(":", "")
        tz = timezone(sign * timedelta(hours=int(digits[:2]), minutes=int(digits[2:])))
    try:
        day = (int(match["y"]), int(match["mo"]), int(match["d"]))
        return datetime(*day, int(match["h"]), int(match["mi"]), int(match["s"]), tzinfo=tz)
    except ValueError:
        return None


@dataclass(frozen=True)
class Row:
    """One test of one run: the values by (today's) column name, and the line as written."""

    values: dict[str, Any]
    line: str

    @property
    def test(self) -> str:
        return str(self.values["test"])

    @property
    def version(self) -> str | None:
        version = self.values.get("version")
        return str(version) if version is not None else None

    @property
    def ops_sec(self) -> float | None:
        value = self.values.get("ops_sec")
        return float(value) if isinstance(value, int | float) else None

    @property
    def started_at(self) -> datetime | None:
        return parse_date(self.values.get("date"))


@dataclass
class Block:
    """The rows under one header; ``stats`` holds the mean/stddev line written after repeated runs."""

    columns: list[str]
    rows: list[Row] = field(default_factory=list)
    stats: dict[str, float] = field(default_factory=dict)


@dataclass
class ResultFile:
    """A report.tsv or a merged summary, parsed: the listed report.tsv paths (summaries only) and the blocks."""

    name: str
    paths: list[str]
    blocks: list[Block]
    warnings: list[str] = field(default_factory=list)

    @property
    def rows(self) -> list[Row]:
        return [row for block in self.blocks for row in block.rows]


def _is_header(fields: list[str]) -> bool:
    return normalize_column(fields[0]) == "ops_sec"


def parse_file(text: str, *, name: str) -> ResultFile:
    """Parse a report.tsv or a merged summary. Raises ParseError when it holds no db_bench header or a bad row."""
    paths: list[str] = []
    blocks: list[Block] = []
    warnings: list[str] = []
    block: Block | None = None
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.rstrip("\r")
        stripped = line.strip()
        where = f"{name}:{number}"
        if not stripped:
            block = None
            continue
        if stripped.startswith("#"):
            continue
        fields = line.split("\t")
        if block is not None and stripped.startswith("mean="):
            # The variance study's "mean=…<TAB>stddev=…<TAB>sdev/mean=…" line closes a block of repeated runs.
            stats = dict(_STATS_RE.findall(stripped))
            block.stats = {key: float(value) for key, value in stats.items() if _NUMBER_RE.match(value)}
            continue
        if _is_header(fields):
            columns = [normalize_column(f) for f in fields]
            if "test" not in columns:
                raise ParseError(f"{where}: the header has no test column (test, Test or test_name)")
            block = Block(columns=columns)
            blocks.append(block)
            continue
        if block is None:
            if stripped.endswith(REPORT_NAME) and "\t" not in stripped and not blocks:
                paths.append(stripped)
            else:
                warnings.append(f"{where}: not a header, row or report.tsv path; ignored")
            continue
        if "\t" not in line:
            if not _NUMBER_RE.match(stripped):  # a bare number is the ratio line some summaries end a block with
                warnings.append(f"{where}: unexpected line after the rows; ignored")
            continue
        if len(fields) > len(block.columns):
            raise ParseError(f"{where}: {len(fields)} fields but the header names {len(block.columns)} columns")
        fields += [""] * (len(block.columns) - len(fields))
        values = {column: _value(column, text) for column, text in zip(block.columns, fields, strict=True)}
        if not values.get("test"):
            raise ParseError(f"{where}: a row without a test name")
        block.rows.append(Row(values=values, line=line))
    if not blocks:
        raise NotDbBench(f"{name}: no db_bench header (a line starting ops_sec) found")
    return ResultFile(name=name, paths=paths, blocks=blocks, warnings=warnings)


# --------------------------------------------------------------------------- paths


def _parts(path: str) -> list[str]:
    return [part for part in path.split("/") if part not in ("", ".")]


def _workload_word(word: str) -> str | None:
    if word in WORKLOADS:
        return word
    if word.startswith("res.") and word[4:] in WORKLOADS:
        return word[4:]
    return None


def workload_from_path(path: str) -> str | None:
    """byrx / iobuf / iodir from ``res.<workload>`` or a folder named so, else from the file name's words."""
    parts = _parts(path)
    for part in reversed(parts[:-1]):
        if (word := _workload_word(part)) is not None:
            return word
    return next((word for word in parts[-1].split(".") if word in WORKLOADS), None) if parts else None


def server_from_path(path: str) -> str | None:
    """The nearest folder above the results that is not part of the scripts' layout (``8core``, ``ser7``)."""
    for part in reversed(_parts(path)[:-1]):
        if _workload_word(part) or _BM_DIR_RE.match(part) or _BUILD_DIR_RE.match(part):
            continue
        return part
    return None


@dataclass(frozen=True)
class BenchDir:
    """What ``bm.lc.nt1.d0`` says: threads, O_DIRECT, and the rest (``lc``: leveled compaction) as the config."""

    name: str
    threads: int | None
    o_direct: bool | None
    config: str


def parse_bench_dir(name: str) -> BenchDir:
    threads: int | None = None
    direct: bool | None = None
    rest: list[str] = []
    for word in name.split(".")[1:]:
        if match := _NT_RE.match(word):
            threads = int(match["n"])
        elif match := _DIRECT_RE.match(word):
            direct = match["d"] == "1"
        else:
            rest.append(word)
    return BenchDir(name=name, threads=threads, o_direct=direct, config=".".join(rest) or DEFAULT_CONFIG)


def flavour_of_build_dir(build_dir: str) -> tuple[str, str]:
    """``10.2.clang.lto`` → (``10.2``, ``clang.lto``): the version prefix and the build flavour."""
    match = _BUILD_DIR_RE.match(build_dir)
    if not match:
        return "", build_dir
    return match["version"], match["flavour"] or ""


def flavour_of_file_name(name: str) -> str:
    """Flavour words in a summary's name (``sum.byrx.lru.txt`` → ``lru``); "" when it names none."""
    words = [w for w in name.rsplit("/", 1)[-1].split(".") if w not in _SUMMARY_WORDS]
    return ".".join(w for w in words if w in _FLAVOUR_WORDS)


# --------------------------------------------------------------------------- runs


@dataclass
class DbBenchRun:
    """One build on one workload, as found in one file."""

    name: str  # the build dir (9.8.clang) when known, else the build name
    build: str  # version.flavour (9.8.4.clang), unique per binary; ``#k`` tells same-named builds of a file apart
    version: str
    flavour: str
    build_dir: str | None
    source: str  # the file it came from, inside the bundle
    workload: str | None  # byrx, iobuf, iodir
    threads: int | None
    o_direct: bool | None
    config: str
    bench_dir: str | None
    rows: list[Row] = field(default_factory=list)
    stats: dict[str, dict[str, float]] = field(default_factory=dict)  # test → mean/stddev the file reports
    warnings: list[str] = field(default_factory=list)

    @property
    def started_at(self) -> datetime | None:
        dates = [d for d in (row.started_at for row in self.rows) if d is not None]
        return min(dates) if dates else None

    @property
    def content_sha256(self) -> str:
        """Hash of the run's rows as written: the same run in a report.tsv and in a summary is one run."""
        hasher = hashlib.sha256(f"{SUITE}\0".encode())
        for line in sorted(row.line for row in self.rows):
            hasher.update(line.encode() + b"\n")
        return hasher.hexdigest()

    @property
    def workload_name(self) -> str:
        words = [SUITE, self.workload or UNKNOWN_WORKLOAD]
        if self.threads is not None:
            words.append(f"nt{self.threads}")
        if self.o_direct is not None:
            words.append(f"d{int(self.o_direct)}")
        return " ".join(words)

    @property
    def workload_params(self) -> dict[str, Any]:
        return {
            "workload": self.workload,
            "threads": self.threads,
            "o_direct": self.o_direct,
            "cached": self.workload == "byrx" if self.workload else None,
            "bench_dir": self.bench_dir,
        }

    def result_rows(self) -> list[dict[str, Any]]:
        """Result field values per test: ops_sec is the QPS; every column is kept in ``extra`` by name."""
        dop = self.threads or 1
        rows: list[dict[str, Any]] = []
        for row in self.rows:
            ops_sec = row.ops_sec
            if ops_sec is None:
                continue  # missing, never 0: the caller has already warned
            values = row.values
            extra = dict(values)
            extra.update({f"ops_sec_{key.replace('/', '_')}": v for key, v in self.stats.get(row.test, {}).items()})
            rows.append(
                {
                    "test": row.test,
                    "range_size": None,
                    "dop": dop,
                    "qps": ops_sec,
                    "threads": test_threads(row.test) or 1,
                    "elapsed_s": _number(values.get("uptime")),
                    "lat_avg_ms": _ms(values.get("usec_op")),
                    "lat_max_ms": _ms(values.get("pmax")),
                    "lat_pct": 99.0 if _number(values.get("p99")) is not None else None,
                    "lat_pct_ms": _ms(values.get("p99")),
                    "extra": extra,
                }
            )
        return rows


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) else None


def _ms(usecs: Any) -> float | None:
    value = _number(usecs)
    return value / 1000.0 if value is not None else None


@dataclass
class _Slot:
    """A run being assembled: from a listed report.tsv path, or from a row of the widest block."""

    path: str | None = None
    build_dir: str | None = None
    bench: BenchDir | None = None
    version: str | None = None
    rows: list[Row] = field(default_factory=list)
    tests: set[str] = field(default_factory=set)

    @property
    def started_at(self) -> datetime | None:
        dates = [d for d in (row.started_at for row in self.rows) if d is not None]
        return min(dates) if dates else None

    def accepts(self, row: Row) -> bool:
        if row.version is None:
            return True
        if self.version is not None:
            return row.version == self.version
        if self.build_dir:
            prefix, _ = flavour_of_build_dir(self.build_dir)
            return not prefix or row.version == prefix or row.version.startswith(prefix + ".")
        return True

    def add(self, row: Row, warnings: list[str], where: str) -> None:
        if row.test in self.tests:
            warnings.append(f"{where}: {row.test} appears twice for {self.build_dir or row.version}; kept the first")
            return
        self.tests.add(row.test)
        self.rows.append(row)
        if self.version is None and row.version is not None:
            self.version = row.version


def _slot_from_path(path: str) -> _Slot:
    parts = _parts(path)
    build_dir = parts[-2] if len(parts) >= 2 else None
    bench_dir = next((p for p in reversed(parts[:-2]) if _BM_DIR_RE.match(p)), None)
    return _Slot(path=path, build_dir=build_dir, bench=parse_bench_dir(bench_dir) if bench_dir else None)


def _assign(slots: list[_Slot], block: Block, file: ResultFile) -> None:
    """Give each row of a block to its run: by position when the block is complete, else by version and time."""
    where = f"{file.name} ({block.rows[0].test})"
    if len(block.rows) == len(slots) and all(s.accepts(r) for s, r in zip(slots, block.rows, strict=True)):
        for slot, row in zip(slots, block.rows, strict=True):
            slot.add(row, file.warnings, where)
        return
    seen: Counter[str] = Counter()
    for row in block.rows:
        candidates = [s for s in slots if s.accepts(row)]
        if not candidates:
            raise ParseError(f"{where}: a row of version {row.version} matches none of the builds")
        occurrence = seen[row.version or ""]
        seen[row.version or ""] += 1
        at = row.started_at
        starts = [s.started_at for s in candidates]
        if at is not None and all(start is not None for start in starts):
            # A run's tests follow its load: the row belongs to the latest run of its version started before it.
            before = [s for s in candidates if s.started_at is not None and s.started_at <= at]
            if before:
                max(before, key=lambda s: s.started_at or at).add(row, file.warnings, where)
                continue
        if occurrence >= len(candidates):
            raise ParseError(f"{where}: more rows of version {row.version} than builds of that version")
        candidates[occurrence].add(row, file.warnings, where)


def runs_from_file(file: ResultFile, *, path: str) -> list[DbBenchRun]:
    """The runs of one parsed file; ``path`` is where the file sits in the bundle (it names the workload, build…)."""
    blocks = [block for block in file.blocks if block.rows]
    if not blocks:
        raise ParseError(f"{file.name}: a db_bench header but no rows")
    parts = _parts(path)
    is_report = bool(parts) and parts[-1] == REPORT_NAME
    slots, repeats = _slots(file, blocks, path, is_report)
    _fill(slots, file, blocks, is_report)
    workload = workload_from_path(path)
    file_flavour = flavour_of_file_name(path)
    runs: list[DbBenchRun] = []
    for slot in slots:
        if not slot.rows:
            file.warnings.append(f"{file.name}: no rows for {slot.path or slot.version}; skipped")
            continue
        runs.append(_run_of_slot(slot, file, path, workload, file_flavour))
    _tell_apart(runs, repeats, file)
    if repeats:
        stats = {block.rows[0].test: block.stats for block in blocks}
        for run in runs:
            run.stats = stats
    for run in runs:
        for row in run.rows:
            if row.ops_sec is None:
                run.warnings.append(f"{file.name}: {run.name} {row.test} has no ops_sec; shown as missing")
    return runs


def _slots(file: ResultFile, blocks: Sequence[Block], path: str, is_report: bool) -> tuple[list[_Slot], bool]:
    """A slot per run of the file (its own folder's, the listed paths', or one per row of the widest block),
    and whether its runs are repeats of one build (mean/stddev after every block)."""
    if is_report:
        return [_slot_from_path(path)], False
    if file.paths:
        return [_slot_from_path(p) for p in file.paths], False
    widest = max(blocks, key=lambda block: len(block.rows))
    slots = [_Slot(version=row.version) for row in widest.rows]
    versions = {row.version for row in file.rows}
    # mean/stddev after every block: the author measured the spread of repeated runs of one build.
    return slots, len(slots) > 1 and len(versions) == 1 and all(block.stats for block in blocks)


def _fill(slots: list[_Slot], file: ResultFile, blocks: Sequence[Block], is_report: bool) -> None:
    """Every row into its run's slot."""
    if is_report:
        for row in file.rows:
            slots[0].add(row, file.warnings, file.name)
        return
    # Complete blocks first: they set each run's start time, which places the rows of incomplete blocks.
    for block in sorted(blocks, key=lambda block: len(block.rows) != len(slots)):
        if len(block.rows) > len(slots):
            raise ParseError(
                f"{file.name}: {len(block.rows)} rows of {block.rows[0].test} but {len(slots)} builds listed"
            )
        _assign(slots, block, file)


def _run_of_slot(slot: _Slot, file: ResultFile, path: str, workload: str | None, file_flavour: str) -> DbBenchRun:
    """One filled slot as a run: its version and flavour (from the rows, else the build directory or the file's
    name), threads, O_DIRECT and config (from its bm.* folder, else the rows and the workload)."""
    version = slot.version
    if version is None and slot.build_dir:
        version = flavour_of_build_dir(slot.build_dir)[0] or None
    if version is None:
        raise ParseError(f"{file.name}: no version column and no build directory to tell the version")
    flavour = flavour_of_build_dir(slot.build_dir)[1] if slot.build_dir else file_flavour
    if slot.build_dir and not _Slot(build_dir=slot.build_dir).accepts(slot.rows[0]):
        file.warnings.append(f"{file.name}: build directory {slot.build_dir} holds version {version}")
    threads = slot.bench.threads if slot.bench and slot.bench.threads else _run_threads(slot.rows)
    o_direct = slot.bench.o_direct if slot.bench and slot.bench.o_direct is not None else None
    if o_direct is None and workload is not None:
        o_direct = workload == "iodir"
    build = f"{version}.{flavour}" if flavour else version
    return DbBenchRun(
        name=slot.build_dir or build,
        build=build,
        version=version,
        flavour=flavour,
        build_dir=slot.build_dir,
        source=path,
        workload=workload,
        threads=threads,
        o_direct=o_direct,
        config=slot.bench.config if slot.bench else DEFAULT_CONFIG,
        bench_dir=slot.bench.name if slot.bench else None,
        rows=slot.rows,
    )


def _run_threads(rows: Sequence[Row]) -> int | None:
    """Without a bm.*.nt<N> folder: the most common ``.t<N>`` of the run's measured tests."""
    counts = Counter(n for row in rows if not is_excluded(row.test) and (n := test_threads(row.test)) is not None)
    if not counts:
        return None
    return max(counts, key=lambda n: (counts[n], n))


def _tell_apart(runs: list[DbBenchRun], repeats: bool, file: ResultFile) -> None:
    """Same-named runs of one file: repeats share their build; other duplicates become builds ``name#1``, ``#2``…"""
    counts = Counter((run.bench_dir, run.name) for run in runs)
    seen: Counter[tuple[str | None, str]] = Counter()
    duplicated: dict[str, int] = {}
    for run in runs:
        key = (run.bench_dir, run.name)
        if counts[key] == 1:
            continue
        seen[key] += 1
        base = run.name
        run.name = f"{base}#{seen[key]}"
        if not repeats:
            run.build = f"{run.build}#{seen[key]}"
            duplicated[base] = counts[key]
    for name, count in sorted(duplicated.items()):
        file.warnings.append(
            f"{file.name}: {name} appears {count} times; imported as separate builds {name}#1 … {name}#{count} "
            "(name them in benchdash.toml when you know which is which)"
        )


def parse_result_file(data: bytes, *, path: str, name: str) -> tuple[list[DbBenchRun], list[str]]:
    """Bytes of one file → its runs and warnings. ``name`` is how messages call the file."""
    file = parse_file(data.decode("utf-8", errors="replace"), name=name)
    runs = runs_from_file(file, path=path)
    return runs, file.warnings + [w for run in runs for w in run.warnings]
