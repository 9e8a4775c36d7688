"""A sysbench run directory (``x.<build>.<config>.pk<P>``) as plain values: the suite's own file reader.

``read_run_dir`` reads the result files of one directory (``sb.o``, ``sb.met``,
``sb.r.*``, ``sb.prepare.*``) and the settings files kept beside them, in named
steps: the files one by one, the measured rows, the rows only the ``sb.r``
summaries give, the load step, the run's start. What the bundle's manifests and
the upload say over it is the import's business (``runs.parse.parse_run``).
Pure: no Django, no database.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol

from suites.base import STARTED_CONTENT, STARTED_FILE_TIME
from suites.naming import RunName, parse_run_dir
from suites.sysbench import parse as sysbench


class RunDirFile(Protocol):
    """One file of a run directory, kept by the bundle reader until it is read."""

    def read(self) -> bytes: ...

    def contains_byte(self, byte: bytes) -> bool: ...


class RunDirectory(Protocol):
    """A run directory as the bundle reader found it."""

    @property
    def name(self) -> str: ...

    @property
    def path(self) -> str: ...

    @property
    def files(self) -> Mapping[str, RunDirFile]: ...

    @property
    def mtimes(self) -> Mapping[str, float]: ...

    @property
    def ignored(self) -> Collection[str]: ...

    @property
    def first_lines(self) -> Mapping[str, str]: ...


# The sysbench ``.met`` values a result keeps (the names of its columns).
METRIC_FIELDS = ("rps", "rmbps", "wps", "wmbps", "r_o", "rkb_o", "wkb_o", "o_s", "cs_s", "cpu_s", "cs_o", "cpu_o")
_METRIC_FIELD_SET = frozenset(METRIC_FIELDS)  # membership, once per value of every result

# What each settings file of a run directory is kept as (the values of ``runs.models.RunFile.Kind``).
CONFIG, VARIABLES, PG_SETTINGS, HUGEPAGES = "config", "variables", "pg_settings", "hugepages"

_KEEP_PREFIXES = ("sb.o.", "sb.met.", "sb.r.", "sb.prepare.o.", "sb.prepare.met.", "sb.gv.", "sb.pg.conf.", "sb.hp.")
_KEEP_NAMES = ("my.cnf", "conf.diff")
# Helper output that shares the sb.o. prefix but is not a result (vacuum/analyze logs).
_SKIP_PREFIXES = ("sb.o.myvac", "sb.o.pgvac")


# Why a file of a run directory was not read, in the words the bundle page and the import output show.
NO_SB_O = "no sb.o beside this sb.met"
NO_PREPARE_O = "no sb.prepare.o beside this sb.prepare.met"
LOAD_UNFINISHED = "the load did not finish (no 'Load seconds is' line)"
SECOND_LOAD = "a second load step in this run directory; the first one is imported"
SUMMARY_OF_SB_O = "summary of the sb.o files, which were read instead"
NO_SB_R_QPS = "no sb.o and no sb.r.qps for this test: a summary without its QPS"
SUMMARY_MISMATCH = "its values do not match the run's concurrencies (see the warnings)"
IN_SUBFOLDER = "in a folder inside a run directory"
RAW_SAMPLES = "raw vmstat/iostat/ps samples: kept in the archive, not parsed"
HELPER_LOG = "a vacuum/analyze log of the run scripts, not a result"
NOT_A_RESULT = "not a result file of any suite"
SCRIPT_OUTPUT = "other output of the run scripts (ls, sizes, DBMS statistics): kept in the archive, not parsed"
SECOND_COPY = "settings already kept from another file of the same kind"
_RAW_SAMPLE_RE = re.compile(r"^sb\.(prepare\.)?(vm|io|ps)\.")


def why_not_read(name: str) -> str:
    """Why a file of a run directory that ``wanted`` turns down is not read."""
    if "/" in name:
        return IN_SUBFOLDER
    if _RAW_SAMPLE_RE.match(name):
        return RAW_SAMPLES
    if name.startswith(_SKIP_PREFIXES):
        return HELPER_LOG
    if name.startswith("sb."):
        return SCRIPT_OUTPUT
    return NOT_A_RESULT


def wanted(name: str) -> bool:
    """Files worth reading into memory; raw samples (sb.vm, sb.io, sb.ps, …) are left in the archive."""
    if name in _KEEP_NAMES or name == "sb.o.myvac.show.1":
        return True
    return name.startswith(_KEEP_PREFIXES) and not name.startswith(_SKIP_PREFIXES)


Key = tuple[str, int, int]  # (test, range size, concurrency)


@dataclass
class _Found:
    """What the pass over a run directory's files found, for the steps after it."""

    inside: str  # where its files are in the bundle, as the ignored list names them
    outputs: dict[Key, sysbench.SysbenchOutput] = field(default_factory=dict)
    mets: dict[Key, dict[str, float]] = field(default_factory=dict)
    summaries: dict[tuple[str, int], dict[str, list[float]]] = field(default_factory=dict)
    load: tuple[sysbench.ResultFileName, sysbench.LoadResult] | None = None
    load_mets: dict[tuple[str, int], tuple[str, dict[str, float]]] = field(default_factory=dict)
    ignored: list[tuple[str, str]] = field(default_factory=list)
    files: list[tuple[str, str, RunDirFile]] = field(default_factory=list)
    mtimes: list[float] = field(default_factory=list)
    # Each name parsed once (in file order, so a bad name is reported where it is met), then looked up.
    file_names: dict[str, sysbench.ResultFileName | None] = field(default_factory=dict)
    hasher: Any = field(default_factory=hashlib.sha256)

    def ignore(self, file_name: str, why: str) -> None:
        self.ignored.append((f"{self.inside}/{file_name}", why))


@dataclass
class RunDirRead:
    """One run directory's results and what its files say of the run, before any manifest is applied."""

    run_name: RunName
    content_sha256: str
    results: list[dict[str, Any]]
    warnings: list[str]  # about its files (the name's own warnings are in ``run_name``)
    ignored: list[tuple[str, str]]  # (path in the bundle, why), sorted
    workload: str
    workload_params: dict[str, Any]
    started_at: datetime | None
    started_from: str
    cpus: int | None
    sysbench_version: str
    commands: dict[str, str]
    scan_formula: str
    load_seconds: float | None
    load_inserts_per_s: float | None
    config_text: str | RunDirFile
    files: list[tuple[str, str, RunDirFile]]  # (name, kind, file) of the settings files kept
    # (path in the bundle, what it became) of each file read: every file of the directory is here or in ``ignored``.
    read: list[tuple[str, str]] = field(default_factory=list)


def read_run_dir(run_dir: RunDirectory, *, where: str, skip: Collection[str] = ()) -> RunDirRead:
    """One result directory → its results; raises sysbench.ParseError naming the file at fault. ``where`` names
    the directory in messages; ``skip`` are names of files that are the bundle's, not the run's (its manifest)."""
    run_name = parse_run_dir(run_dir.name)
    found = _read_files(run_dir, where, skip)
    results, commands, used_mets = _measured_rows(found)
    warnings: list[str] = []
    results.extend(_summary_rows(found, run_dir.name, run_name.pk, used_mets, warnings))
    if not results:
        raise sysbench.ParseError(f"{where}: no result files (sb.o.<test>.range<R>.pk<P>.dop<N>) in this run directory")
    found.ignored.extend(_unread_summaries(found.inside, found.file_names, found.outputs, found.summaries))
    found.ignored.extend(
        (f"{found.inside}/{file_name}", NO_SB_O)
        for file_name, fn in found.file_names.items()
        if fn is not None and fn.kind == "met" and (fn.test, fn.range_size, fn.dop or 1) not in used_mets
    )
    load = _load_step(found, results, commands)
    read = _read_files_list(found, run_dir.name)
    warnings.extend(_zero_qps_warnings(run_dir.name, results))
    reported = {key: metrics["qps"] for key, metrics in found.summaries.items() if "qps" in metrics}
    scan_formula, scan_warnings = sysbench.run_scan_formula(found.outputs, reported)
    warnings.extend(f"{run_dir.name}: {w}" for w in scan_warnings)
    outs = list(found.outputs.values())
    workload, params = _workload(outs)
    started_at, started_from = _started(run_dir, found.mtimes)
    return RunDirRead(
        run_name=run_name,
        content_sha256=found.hasher.hexdigest(),
        results=results,
        warnings=warnings,
        ignored=sorted(found.ignored),
        workload=workload,
        workload_params=params,
        started_at=started_at,
        started_from=started_from,
        cpus=next((o.cpus for o in outs if o.cpus), None),
        sysbench_version=next((o.sysbench_version for o in outs if o.sysbench_version), ""),
        commands=commands,
        scan_formula=scan_formula,
        load_seconds=load.seconds if load else None,
        load_inserts_per_s=load.inserts_per_s if load else None,
        config_text=next((kept for (_, kind, kept) in found.files if kind == CONFIG), ""),
        files=found.files,
        read=read,
    )


def _read_files_list(found: _Found, run: str) -> list[tuple[str, str]]:
    """(path, what it became) of each file of the directory that was read: its result files not listed as not
    read, and the settings files kept."""
    not_read = {path for path, _ in found.ignored}
    read = [
        (f"{found.inside}/{file_name}", f"run {run}: {_what_became(fn)}")
        for file_name, fn in found.file_names.items()
        if fn is not None and f"{found.inside}/{file_name}" not in not_read
    ]
    read.extend((f"{found.inside}/{name}", f"run {run}: kept as its {kind} settings") for name, kind, _ in found.files)
    return sorted(read)


def _what_became(fn: sysbench.ResultFileName) -> str:
    """What a result file of a run directory became, in the words of the bundle page."""
    label = sysbench.test_label(fn.test, fn.range_size)
    at = f" at {fn.dop} client{'s' if fn.dop != 1 else ''}" if fn.dop else ""
    if fn.kind == "o":
        return f"{label}{at}: QPS, transactions/s and latency (its result)"
    if fn.kind == "met":
        return f"{label}{at}: HW metrics of that result (cpu/o, cs/o, r/o, rKB/o, wKB/o, …)"
    if fn.kind == "prepare.o":
        return "the load step: rows loaded and how long it took"
    if fn.kind == "prepare.met":
        return "HW metrics of the load step"
    return f"{label}: {fn.kind[2:]} at each of the run's concurrencies (the scripts' summary; this test has no sb.o)"


def _read_files(run_dir: RunDirectory, where: str, skip: Collection[str]) -> _Found:
    """Every file of the directory once, in name order: results parsed, settings files kept, the rest listed."""
    found = _Found(inside=run_dir.path or run_dir.name)
    found.ignored.extend((f"{found.inside}/{n}", why_not_read(n)) for n in run_dir.ignored)
    seen_kinds: set[str] = set()
    for file_name in sorted(run_dir.files):
        fn = found.file_names[file_name] = sysbench.parse_file_name(file_name)
        if fn is None:
            _keep_other_file(found, run_dir, file_name, seen_kinds, where, skip)
            continue
        # One result file in memory at a time; the others stay in the bundle's spill store.
        data = run_dir.files[file_name].read()
        found.hasher.update(file_name.encode() + b"\0" + data + b"\0")
        _read_result_file(found, fn, file_name, data.decode("utf-8", errors="replace"), f"{where}/{file_name}")
        if fn.kind == "o" and file_name in run_dir.mtimes:
            found.mtimes.append(run_dir.mtimes[file_name])
    return found


def _keep_other_file(
    found: _Found, run_dir: RunDirectory, file_name: str, seen_kinds: set[str], where: str, skip: Collection[str]
) -> None:
    """A file that is no result: a settings file is kept (one copy per kind), anything else listed as not read."""
    kind = _file_kind(file_name)
    if kind and run_dir.files[file_name].contains_byte(b"\0"):
        # Kept as text, and PostgreSQL text holds no NUL: refused here with the file named, not by the
        # database half-way through the import.
        raise sysbench.ParseError(f"{where}: NUL byte in {file_name} of run {run_dir.name}")
    if kind and kind not in seen_kinds:
        # One copy per kind: the test-by-test copies of settings are the same text.
        seen_kinds.add(kind)
        found.files.append((file_name, kind, run_dir.files[file_name]))
    elif kind:
        found.ignore(file_name, SECOND_COPY)
    elif file_name not in skip:
        found.ignore(file_name, NOT_A_RESULT)


def _read_result_file(found: _Found, fn: sysbench.ResultFileName, file_name: str, text: str, path: str) -> None:
    """One result file into what the directory found so far, by its kind."""
    if fn.kind == "o":
        out = sysbench.parse_output(text, test=fn.test, file_name=path)
        found.outputs[(fn.test, fn.range_size, fn.dop or out.threads or 1)] = out
    elif fn.kind == "met":
        found.mets[(fn.test, fn.range_size, fn.dop or 1)] = sysbench.parse_met(text, file_name=path)
    elif fn.kind.startswith("r."):
        summary = found.summaries.setdefault((fn.test, fn.range_size), {})
        summary[fn.kind[2:]] = sysbench.parse_summary(text, file_name=path)
    elif fn.kind == "prepare.o":
        done = sysbench.parse_prepare(text, file_name=path)
        if done is None:
            found.ignore(file_name, LOAD_UNFINISHED)
        elif found.load is not None:
            found.ignore(file_name, SECOND_LOAD)
        else:
            found.load = (fn, done)
    elif fn.kind == "prepare.met":
        found.load_mets[(fn.test, fn.range_size)] = (file_name, sysbench.parse_met(text, file_name=path))


def _measured_rows(found: _Found) -> tuple[list[dict[str, Any]], dict[str, str], set[Key]]:
    """A row per sb.o file (with its sb.met metrics), the command line of each test, the sb.met files used."""
    results: list[dict[str, Any]] = []
    commands: dict[str, str] = {}
    used_mets: set[Key] = set()
    for (test, range_size, dop), out in found.outputs.items():
        met = found.mets.get((test, range_size, dop), {})
        used_mets.add((test, range_size, dop))
        results.append(_result_row(test, range_size, dop, out, met))
        if out.command:
            commands.setdefault(sysbench.test_label(test, range_size), out.command)
    return results, commands, used_mets


def _summary_rows(found: _Found, run: str, pk: int, used_mets: set[Key], warnings: list[str]) -> list[dict[str, Any]]:
    """Tests with only sb.r summaries: their concurrencies are the run's others, in run order."""
    rows: list[dict[str, Any]] = []
    dops = sorted({dop for (_, _, dop) in found.outputs})
    for (test, range_size), metrics in sorted(found.summaries.items()):
        if any(k[0] == test and k[1] == range_size for k in found.outputs) or "qps" not in metrics:
            continue
        values = metrics["qps"]
        if len(values) != len(dops):
            found.ignore(f"sb.r.qps.{test}.range{range_size}.pk{pk}", SUMMARY_MISMATCH)
            warnings.append(
                f"{run}: sb.r.qps.{test}.range{range_size} has {len(values)} values but the run's "
                f"sb.o files show {len(dops)} concurrencies; skipped"
            )
            continue
        for i, dop in enumerate(dops):
            met = found.mets.get((test, range_size, dop), {})
            rows.append(_summary_row(test, range_size, dop, metrics, i, met))
            used_mets.add((test, range_size, dop))
            found.hasher.update(f"{test}.{range_size}.{dop}".encode())
    return rows


def _summary_row(
    test: str, range_size: int, dop: int, metrics: Mapping[str, list[float]], i: int, met: Mapping[str, float]
) -> dict[str, Any]:
    return {
        "test": test,
        "range_size": range_size,
        "dop": dop,
        "qps": metrics["qps"][i],
        "tps": _at(metrics.get("trx"), i),
        "lat_avg_ms": _at(metrics.get("rtavg"), i),
        "lat_max_ms": _at(metrics.get("rtmax"), i),
        "lat_pct_ms": _at(metrics.get("rt95"), i),
        "lat_pct": 95.0 if metrics.get("rt95") else None,
        **{k: v for k, v in met.items() if k in _METRIC_FIELD_SET},
    }


def _load_step(found: _Found, results: list[dict[str, Any]], commands: dict[str, str]) -> sysbench.LoadResult | None:
    """The load step as a result row (with its sb.prepare.met metrics and command); its sb.prepare.met files
    without a finished load are listed as not read."""
    done = None
    if found.load is not None:
        load_file, done = found.load
        _, load_met = found.load_mets.pop((load_file.test, load_file.range_size), ("", {}))
        results.append(_load_row(load_file, done, load_met))
        if done.command:
            commands.setdefault(sysbench.test_label(sysbench.LOAD_TEST, load_file.range_size), done.command)
    found.ignored.extend((f"{found.inside}/{met_file}", NO_PREPARE_O) for met_file, _ in found.load_mets.values())
    return done


def _started(run_dir: RunDirectory, mtimes: list[float]) -> tuple[datetime | None, str]:
    """When the run began: the clock time its ps samples record, else its oldest sb.o file's time."""
    started = sysbench.started_from_samples(run_dir.first_lines)
    started_from = STARTED_CONTENT if started else STARTED_FILE_TIME if mtimes else ""
    if started is None and mtimes:
        started = datetime.fromtimestamp(min(mtimes), tz=UTC)
    return started, started_from


def _workload(outputs: list[sysbench.SysbenchOutput]) -> tuple[str, dict[str, Any]]:
    """Workload label and parameters from the command lines: tables × rows must match to compare."""
    tables = next((o.tables for o in outputs if o.tables is not None), None)
    rows = next((o.table_size for o in outputs if o.table_size is not None), None)
    secs = sorted({int(o.options["time"]) for o in outputs if o.options.get("time", "").isdigit()})
    driver = next((o.options["db-driver"] for o in outputs if "db-driver" in o.options), "")
    params: dict[str, Any] = {"tables": tables, "table_size": rows, "seconds": secs, "driver": driver}
    if tables is None or rows is None:
        return "sysbench (parameters unknown)", params
    return f"sysbench {tables} table{'s' if tables != 1 else ''} × {_human(rows)} rows", params


def _human(n: int) -> str:
    for unit, size in (("G", 10**9), ("M", 10**6), ("k", 10**3)):
        if n >= size and n % (size // 10) == 0:
            value = n / size
            return f"{value:g}{unit}"
    return str(n)


def _load_row(
    load_file: sysbench.ResultFileName, load: sysbench.LoadResult, met: Mapping[str, float]
) -> dict[str, Any]:
    """The load step as a result: inserts/s as its QPS, the sb.prepare.met metrics as its HW metrics."""
    row: dict[str, Any] = {
        "test": sysbench.LOAD_TEST,
        "range_size": load_file.range_size,
        "dop": load.threads,
        "qps": load.inserts_per_s,
        "elapsed_s": load.seconds,
        "threads": load.threads,
        # The test whose prepare step it was names the reference o.met block: sb.prepare.met.<test>.range<R>.pk<P>.
        "extra": {"prepared_for": load_file.test, "tables": load.tables},
    }
    row.update({k: v for k, v in met.items() if k in _METRIC_FIELD_SET})
    return row


def _unread_summaries(
    inside: str,
    file_names: Mapping[str, sysbench.ResultFileName | None],
    outputs: Mapping[tuple[str, int, int], sysbench.SysbenchOutput],
    summaries: Mapping[tuple[str, int], dict[str, list[float]]],
) -> list[tuple[str, str]]:
    """sb.r files of tests whose sb.o files were read: the same numbers, so they are listed, not used."""
    with_outputs = {(test, range_size) for (test, range_size, _) in outputs}
    unread = []
    for file_name, fn in file_names.items():
        if fn is None or not fn.kind.startswith("r."):
            continue
        if (fn.test, fn.range_size) in with_outputs:
            unread.append((f"{inside}/{file_name}", SUMMARY_OF_SB_O))
        elif "qps" not in summaries.get((fn.test, fn.range_size), {}):
            unread.append((f"{inside}/{file_name}", NO_SB_R_QPS))
    return unread


def _zero_qps_warnings(run_name: str, results: list[dict[str, Any]]) -> list[str]:
    """A result of 0 QPS (or -0.0) is kept as measured, as 0.0, but said: it is a failed test far more often
    than a real measurement, and anything compared against it is infinitely faster."""
    zero = []
    for row in results:
        if row["qps"] == 0:
            row["qps"] = 0.0
            zero.append(f"{sysbench.test_label(row['test'], row['range_size'])} at {row['dop']} threads")
    if not zero:
        return []
    shown = ", ".join(sorted(zero)[:10]) + (f" and {len(zero) - 10} more" if len(zero) > 10 else "")
    return [f"{run_name}: 0 QPS for {shown}; imported as measured (a failed test?)"]


def _at(values: list[float] | None, i: int) -> float | None:
    return values[i] if values and i < len(values) else None


def _file_kind(name: str) -> str | None:
    if name in ("my.cnf", "conf.diff"):
        return CONFIG
    if name.startswith("sb.gv.") or name == "sb.o.myvac.show.1":
        return VARIABLES
    if name.startswith("sb.pg.conf."):
        return PG_SETTINGS
    if name.startswith("sb.hp."):
        return HUGEPAGES
    return None


def _result_row(
    test: str, range_size: int, dop: int, out: sysbench.SysbenchOutput, met: Mapping[str, float]
) -> dict[str, Any]:
    row: dict[str, Any] = {
        "test": test,
        "range_size": range_size,
        "dop": dop,
        "qps": out.qps,
        "tps": out.tps,
        "queries": out.queries,
        "transactions": out.transactions,
        "errors_per_s": out.errors_per_s,
        "reconnects_per_s": out.reconnects_per_s,
        "elapsed_s": out.elapsed_s,
        "events": out.events,
        "threads": out.threads,
        "lat_min_ms": out.lat_min_ms,
        "lat_avg_ms": out.lat_avg_ms,
        "lat_max_ms": out.lat_max_ms,
        "lat_pct": out.lat_pct,
        "lat_pct_ms": out.lat_pct_ms,
    }
    row.update({k: v for k, v in met.items() if k in _METRIC_FIELD_SET})
    return row
