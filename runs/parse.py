"""A bundle's runs as plain values: the pure half of the import, with no database behind it.

``parse_bundle`` reads an archive (``runs.bundle``) and turns what it holds into
``ParsedRun``s: sysbench run directories through ``parse_run``, every other
suite's files through that suite's own ``parse_files`` (``suites.base.Suite``),
each with the bundle's manifests and the upload's overrides applied over what
the files say (``run_meta``). ``runs.importer`` stores the result. Safe in a
worker process without a database (``pre_parse``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import IO, Any

from django.conf import settings

import suites
from runs import bundle, summaries
from runs.bundle import BundleContents, BundleError, KeptFile, Limits, RunDir, manifest_path, read_bundle
from runs.manifest import MANIFEST_NAME, Manifest, ManifestError, RunMeta, parse_manifest
from suites.base import STARTED_CONTENT, STARTED_FILE_TIME, Suite, SuiteRun
from suites.naming import parse_run_dir
from suites.sysbench import parse as sysbench


class ImportFailed(Exception):
    """The bundle could not be imported; the message says why and nothing was written."""


# The sysbench ``.met`` values a result keeps (the names of its columns).
METRIC_FIELDS = ("rps", "rmbps", "wps", "wmbps", "r_o", "rkb_o", "wkb_o", "o_s", "cs_s", "cpu_s", "cs_o", "cpu_o")
_METRIC_FIELD_SET = frozenset(METRIC_FIELDS)  # membership, once per value of every result

# What each settings file of a run directory is kept as (the values of ``runs.models.RunFile.Kind``).
CONFIG, VARIABLES, PG_SETTINGS, HUGEPAGES = "config", "variables", "pg_settings", "hugepages"

# --------------------------------------------------------------------------- what the bundle holds

_KEEP_PREFIXES = ("sb.o.", "sb.met.", "sb.r.", "sb.prepare.o.", "sb.prepare.met.", "sb.gv.", "sb.pg.conf.", "sb.hp.")
_KEEP_NAMES = ("my.cnf", "conf.diff", MANIFEST_NAME)
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
# What someone reading the list should see first: files that look like results but could not be used, then
# the routine ones (raw samples, copies, other output) that every bundle has by the hundred.
_NEEDS_A_LOOK = (
    NO_SB_O,
    NO_PREPARE_O,
    LOAD_UNFINISHED,
    SECOND_LOAD,
    SUMMARY_MISMATCH,
    NO_SB_R_QPS,
    bundle.OUTSIDE_RUN_DIR,
    bundle.UNNAMED_FOLDER,
)
# How many ignored files a bundle lists (the rest are counted): enough to see what was left out.
IGNORED_SHOWN = 200

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


def bundle_limits() -> Limits:
    return Limits(
        max_bytes=settings.BUNDLE_MAX_BYTES,
        max_members=settings.BUNDLE_MAX_MEMBERS,
        max_unpacked_bytes=settings.BUNDLE_MAX_UNPACKED_BYTES,
        max_member_bytes=settings.BUNDLE_MAX_MEMBER_BYTES,
    )


@dataclass
class SysbenchDetail:
    """What only a sysbench run directory holds: its command lines, load phase, settings files."""

    pk: int
    cpus: int | None
    load_seconds: float | None
    load_inserts_per_s: float | None
    sysbench_version: str
    commands: dict[str, str]
    scan_formula: str  # the formula of the directory's own sb.r.qps.scan ("" when it has none)
    config_text: str | KeptFile  # decoded when its Config row is made: configs are not all in memory at once
    # (name, kind, contents): decoded only when stored, so a bundle's settings files are never all in memory at once
    files: list[tuple[str, str, KeptFile]]


@dataclass
class ParsedRun:
    """One run of any suite: what every suite has, plus the payload only its own suite fills in."""

    suite: str
    name: str
    path: str
    content_sha256: str
    meta: RunMeta
    dbms: str
    version: str
    build: str
    flavour: str
    config: str
    server: str
    workload: str
    workload_params: dict[str, Any]
    started_at: datetime | None
    started_from: str  # suites.base.STARTED_CONTENT or STARTED_FILE_TIME, "" when there is no start at all
    results: list[dict[str, Any]]
    warnings: list[str] = field(default_factory=list)
    ignored_files: int = 0
    # (path in the bundle, why it was not read) for the files of this run that were not used.
    ignored: list[tuple[str, str]] = field(default_factory=list)
    sysbench: SysbenchDetail | None = None
    # What another suite's files said of the configuration's text and the server's CPUs.
    suite_config_text: str = ""
    suite_cpus: int | None = None
    suite_server: dict[str, Any] = field(default_factory=dict)  # the server's RAM, storage, OS the files said
    notes: str = ""
    from_summary: bool = False  # read from the scripts' summary tables, not from a result directory
    # Of a run read from a summary: where its concurrency, server and workload came from (what → where).
    summary_sources: dict[str, str] = field(default_factory=dict)
    summary_table: str = ""  # Run.summary_table
    summary_layout: dict[str, Any] = field(default_factory=dict)  # Run.summary_layout

    @property
    def dops(self) -> frozenset[int]:
        return frozenset(row["dop"] for row in self.results)

    @property
    def server_named(self) -> bool:
        """The manifest or the upload named the server (rather than the files, or nothing)."""
        return bool(self.meta.server)

    @property
    def tests(self) -> int:
        """Microbenchmarks measured; the load step is a result but not a test."""
        load = sysbench.LOAD_TEST if self.suite == suites.SYSBENCH.name else None
        return len({(r["test"], r["range_size"]) for r in self.results if r["test"] != load})

    @property
    def attach_existing(self) -> bool:
        """Results already imported for another series are added to this one too (the manifest says so)."""
        return bool(self.meta.attach_existing)

    @property
    def cpus(self) -> int | None:
        return self.sysbench.cpus if self.sysbench else self.suite_cpus

    @property
    def config_text(self) -> str | KeptFile:
        return self.sysbench.config_text if self.sysbench else self.suite_config_text

    @property
    def files(self) -> list[tuple[str, str, KeptFile]]:
        return self.sysbench.files if self.sysbench else []

    def run_fields(self) -> dict[str, Any]:
        """The Run model's fields only a sysbench run directory gives values to (the others keep their defaults)."""
        detail = self.sysbench
        if detail is None:
            if not self.from_summary:
                return {}
            return {
                "from_summary": True,
                "summary_sources": self.summary_sources,
                "summary_table": self.summary_table,
                "summary_layout": self.summary_layout,
            }
        return {
            "pk_mode": detail.pk,
            "load_seconds": detail.load_seconds,
            "load_inserts_per_s": detail.load_inserts_per_s,
            "commands": detail.commands,
            "sysbench_version": detail.sysbench_version,
            "scan_formula": detail.scan_formula,
        }


@dataclass
class ParsedBundle:
    format: str
    runs: list[ParsedRun]
    members: int
    ignored_files: int
    warnings: list[str]
    server_info: dict[str, Any] = field(default_factory=dict)
    # (path in the bundle, why it was not read): the first IGNORED_SHOWN of the ignored_files.
    ignored: list[tuple[str, str]] = field(default_factory=list)
    # (path in the bundle, what was read of it): each run directory, and each file of the other suites that
    # list theirs (the summary tables), the first IGNORED_SHOWN.
    read: list[tuple[str, str]] = field(default_factory=list)


def _text(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


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


def parse_run(run_dir: RunDir, meta: RunMeta, *, bundle_name: str) -> ParsedRun:
    """One result directory → a ParsedRun; raises sysbench.ParseError naming the file at fault."""
    where = f"{bundle_name}:{run_dir.path}" if run_dir.path else f"{bundle_name}:{run_dir.name}"
    name = parse_run_dir(run_dir.name)
    warnings = [f"{run_dir.name}: {w}" for w in name.warnings]
    dbms = meta.dbms or name.dbms
    if meta.dbms and name.warnings:
        warnings = []  # the manifest said which DBMS it is

    outputs: dict[tuple[str, int, int], sysbench.SysbenchOutput] = {}
    mets: dict[tuple[str, int, int], dict[str, float]] = {}
    summaries: dict[tuple[str, int], dict[str, list[float]]] = {}
    load: tuple[sysbench.ResultFileName, sysbench.LoadResult] | None = None
    load_mets: dict[tuple[str, int], tuple[str, dict[str, float]]] = {}
    inside = run_dir.path or run_dir.name  # where a file is in the bundle, as the ignored list names it
    ignored: list[tuple[str, str]] = [(f"{inside}/{n}", why_not_read(n)) for n in run_dir.ignored]
    files: list[tuple[str, str, KeptFile]] = []
    seen_kinds: set[str] = set()
    hasher = hashlib.sha256()
    mtimes: list[float] = []
    # Each name parsed once (in the order of the loop below, so a bad name is reported where it was before), then
    # looked up by the passes over the files that follow.
    file_names: dict[str, sysbench.ResultFileName | None] = {}

    for file_name in sorted(run_dir.files):
        fn = file_names[file_name] = sysbench.parse_file_name(file_name)
        if fn is None:
            kind = _file_kind(file_name)
            if kind and run_dir.files[file_name].contains_byte(b"\0"):
                # Kept as text, and PostgreSQL text holds no NUL: refused here with the file named, not by the
                # database half-way through the import.
                raise sysbench.ParseError(f"{where}: NUL byte in {file_name} of run {run_dir.name}")
            if kind and kind not in seen_kinds:
                # One copy per kind: the test-by-test copies of settings are the same text.
                seen_kinds.add(kind)
                files.append((file_name, kind, run_dir.files[file_name]))
            elif kind:
                ignored.append((f"{inside}/{file_name}", SECOND_COPY))
            elif file_name != MANIFEST_NAME:
                ignored.append((f"{inside}/{file_name}", NOT_A_RESULT))
            continue
        # One result file in memory at a time; the others stay in the bundle's spill store.
        data = run_dir.files[file_name].read()
        hasher.update(file_name.encode() + b"\0" + data + b"\0")
        path = f"{where}/{file_name}"
        if fn.kind == "o":
            dop = fn.dop
            out = sysbench.parse_output(_text(data), test=fn.test, file_name=path)
            dop = dop or out.threads or 1
            outputs[(fn.test, fn.range_size, dop)] = out
            if file_name in run_dir.mtimes:
                mtimes.append(run_dir.mtimes[file_name])
        elif fn.kind == "met":
            dop = fn.dop or 1
            mets[(fn.test, fn.range_size, dop)] = sysbench.parse_met(_text(data), file_name=path)
        elif fn.kind.startswith("r."):
            summaries.setdefault((fn.test, fn.range_size), {})[fn.kind[2:]] = sysbench.parse_summary(
                _text(data), file_name=path
            )
        elif fn.kind == "prepare.o":
            done = sysbench.parse_prepare(_text(data), file_name=path)
            if done is None:
                ignored.append((f"{inside}/{file_name}", LOAD_UNFINISHED))
            elif load is not None:
                ignored.append((f"{inside}/{file_name}", SECOND_LOAD))
            else:
                load = (fn, done)
        elif fn.kind == "prepare.met":
            load_mets[(fn.test, fn.range_size)] = (file_name, sysbench.parse_met(_text(data), file_name=path))

    results: list[dict[str, Any]] = []
    commands: dict[str, str] = {}
    used_mets: set[tuple[str, int, int]] = set()
    for (test, range_size, dop), out in outputs.items():
        met = mets.get((test, range_size, dop), {})
        used_mets.add((test, range_size, dop))
        results.append(_result_row(test, range_size, dop, out, met))
        if out.command:
            commands.setdefault(sysbench.test_label(test, range_size), out.command)

    # Tests with only sb.r summaries: their concurrencies are the run's others, in run order.
    dops = sorted({dop for (_, _, dop) in outputs})
    for (test, range_size), metrics in sorted(summaries.items()):
        if any(k[0] == test and k[1] == range_size for k in outputs) or "qps" not in metrics:
            continue
        values = metrics["qps"]
        if len(values) != len(dops):
            ignored.append((f"{inside}/sb.r.qps.{test}.range{range_size}.pk{name.pk}", SUMMARY_MISMATCH))
            warnings.append(
                f"{run_dir.name}: sb.r.qps.{test}.range{range_size} has {len(values)} values but the run's "
                f"sb.o files show {len(dops)} concurrencies; skipped"
            )
            continue
        for i, dop in enumerate(dops):
            results.append(
                {
                    "test": test,
                    "range_size": range_size,
                    "dop": dop,
                    "qps": values[i],
                    "tps": _at(metrics.get("trx"), i),
                    "lat_avg_ms": _at(metrics.get("rtavg"), i),
                    "lat_max_ms": _at(metrics.get("rtmax"), i),
                    "lat_pct_ms": _at(metrics.get("rt95"), i),
                    "lat_pct": 95.0 if metrics.get("rt95") else None,
                    **{k: v for k, v in mets.get((test, range_size, dop), {}).items() if k in _METRIC_FIELD_SET},
                }
            )
            used_mets.add((test, range_size, dop))
            hasher.update(f"{test}.{range_size}.{dop}".encode())

    if not results:
        raise sysbench.ParseError(f"{where}: no result files (sb.o.<test>.range<R>.pk<P>.dop<N>) in this run directory")
    ignored.extend(_unread_summaries(inside, file_names, outputs, summaries))
    ignored.extend(
        (f"{inside}/{file_name}", NO_SB_O)
        for file_name, fn in file_names.items()
        if fn is not None and fn.kind == "met" and (fn.test, fn.range_size, fn.dop or 1) not in used_mets
    )
    if load is not None:
        load_file, done = load
        _, load_met = load_mets.pop((load_file.test, load_file.range_size), ("", {}))
        results.append(_load_row(load_file, done, load_met))
        if done.command:
            commands.setdefault(sysbench.test_label(sysbench.LOAD_TEST, load_file.range_size), done.command)
    ignored.extend((f"{inside}/{met_file}", NO_PREPARE_O) for met_file, _ in load_mets.values())
    warnings.extend(_zero_qps_warnings(run_dir.name, results))
    reported = {key: metrics["qps"] for key, metrics in summaries.items() if "qps" in metrics}
    scan_formula, scan_warnings = sysbench.run_scan_formula(outputs, reported)
    warnings.extend(f"{run_dir.name}: {w}" for w in scan_warnings)

    outs = list(outputs.values())
    workload, params = _workload(outs)
    cpus = next((o.cpus for o in outs if o.cpus), None)
    config_text: str | KeptFile = next((kept for (n, kind, kept) in files if kind == CONFIG), "")
    server = meta.server or (f"{cpus}-CPU server" if cpus else "unknown server")
    if not meta.server:
        warnings.append(f"{run_dir.name}: no server named (manifest or upload form); using {server!r}")
    started = sysbench.started_from_samples(run_dir.first_lines)
    started_from = STARTED_CONTENT if started else STARTED_FILE_TIME if mtimes else ""
    if started is None and mtimes:
        started = datetime.fromtimestamp(min(mtimes), tz=UTC)
    return ParsedRun(
        suite=suites.SYSBENCH.name,
        name=run_dir.name,
        path=run_dir.path,
        content_sha256=hasher.hexdigest(),
        meta=meta,
        dbms=dbms,
        version=meta.version or name.version,
        build=meta.build or name.build,
        flavour=meta.flavour if meta.flavour is not None else name.flavour,
        config=meta.config or name.config,
        server=server,
        workload=meta.workload or workload,
        workload_params=params,
        started_at=started,
        started_from=started_from,
        results=results,
        warnings=warnings,
        ignored_files=len(ignored),
        ignored=sorted(ignored),
        sysbench=SysbenchDetail(
            pk=name.pk,
            cpus=cpus,
            load_seconds=load[1].seconds if load else None,
            load_inserts_per_s=load[1].inserts_per_s if load else None,
            sysbench_version=next((o.sysbench_version for o in outs if o.sysbench_version), ""),
            commands=commands,
            scan_formula=scan_formula,
            config_text=config_text,
            files=files,
        ),
    )


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


def parse_bundle(
    data: bytes | IO[bytes],
    *,
    name: str,
    overrides: Mapping[str, Any] | None = None,
    on_file: Callable[[], None] | None = None,
) -> ParsedBundle:
    """Archive bytes (or an open archive file) → parsed runs. Raises what ``bad_input`` lists.

    ``on_file`` is called for each result file read (the import's progress).
    """

    def keep(name: str) -> bool:
        if not wanted(name):
            return False
        if on_file is not None:
            on_file()
        return True

    contents: BundleContents = read_bundle(data, name=name, limits=bundle_limits(), wanted=keep)
    manifests: dict[str, Manifest] = {
        path: parse_manifest(raw, where=f"{name}:{path + '/' if path else ''}{MANIFEST_NAME}")
        for path, raw in contents.manifests.items()
    }
    given = RunMeta(**{k: v for k, v in (overrides or {}).items() if k in RunMeta.model_fields and v})
    runs: list[ParsedRun] = []
    warnings: list[str] = []
    for run_dir in contents.runs:
        # A run directory's own folder is the last a manifest can sit in (a bare run directory is its own folder).
        folder = manifest_path(run_dir.path, run_dir.origin) if run_dir.path else run_dir.name
        parsed = parse_run(run_dir, run_meta(manifests, folder, run_dir.name, given), bundle_name=name)
        runs.append(parsed)
        warnings.extend(parsed.warnings)
    read = [(run.path, f"run directory: {run.tests} microbenchmarks, {len(run.results)} results") for run in runs]
    ignored = contents.ignored_count + sum(r.ignored_files for r in runs)
    listed = [(path, contents.ignored_reasons.get(path, NOT_A_RESULT)) for path in contents.ignored]
    for parsed_run in runs:
        listed.extend(parsed_run.ignored)
    for suite in suites.all():
        files = contents.files_of(suite.name)
        if not files or suite.parse_files is None:
            continue
        found = suite.parse_files(files, bundle=name, required=not runs)
        warnings.extend(found.warnings)
        origins = {f.path: f.origin for f in files}
        # Listed like the files of run directories that were not read: each with its path (in the nested archive
        # it came from, if any) and why.
        ignored += len(found.not_read)
        read.extend((f"{origins[path]}/{path}" if origins.get(path) else path, what) for path, what in found.read)
        listed.extend((f"{origins[path]}/{path}" if origins.get(path) else path, why) for path, why in found.not_read)
        for run in found.runs:
            folder = manifest_path(run.source, origins.get(run.source, "")).rpartition("/")[0]
            parsed = _suite_parsed_run(suite, run, run_meta(manifests, folder, run.name, given), bundle_name=name)
            runs.append(parsed)
            warnings.extend(parsed.warnings)
    runs, duplicates, stale = summaries.keep_raw_over_summary(runs)
    # Once each: the runs of one summary table share what it does not say.
    warnings = list(dict.fromkeys([w for w in warnings if w not in stale] + duplicates))
    root = manifests.get("")
    info = root.server_info.model_dump(exclude_none=True) if root is not None and root.server_info else {}
    return ParsedBundle(
        format=contents.format,
        runs=runs,
        members=contents.members,
        ignored_files=ignored,
        warnings=warnings,
        server_info=info,
        ignored=sorted(listed, key=lambda item: item[1] not in _NEEDS_A_LOOK)[:IGNORED_SHOWN],
        read=read[:IGNORED_SHOWN],
    )


def run_meta(manifests: Mapping[str, Manifest], folder: str, run_name: str, given: RunMeta) -> RunMeta:
    """What the bundle's manifests say about one run, then what the upload gives (the form, the command's
    options), key by key: manifests from the root down to ``folder`` (the nearest one wins), the upload last."""
    merged: dict[str, Any] = {}
    parts = folder.split("/") if folder else []
    for depth in range(len(parts) + 1):
        manifest = manifests.get("/".join(parts[:depth]))
        if manifest is not None:
            merged.update(manifest.for_run(run_name).model_dump(exclude_none=True))
    merged.update(given.model_dump(exclude_none=True))
    return RunMeta(**merged)


# Where a summary run's server, workload or concurrency came from, when not from the files (``SuiteRun.sources``).
MANIFEST_SAYS = "from benchdash.toml or the upload form"
NOTHING_SAYS = "not said by the tables, benchdash.toml or the upload form"


def _suite_parsed_run(suite: Suite, run: SuiteRun, meta: RunMeta, *, bundle_name: str) -> ParsedRun:
    """A run another suite found, with what the manifests and the upload say put over what its files say."""
    warnings = list(run.warnings)
    server = meta.server or run.server
    if server is None:
        server = "unknown server"
        warnings.append(
            f"{bundle_name}:{run.source}: no server named (manifest, upload form or a folder); using {server!r}"
        )
    if not meta.dbms:
        warnings.extend(run.name_warnings)
    if not meta.workload:
        warnings.extend(run.workload_warnings)
    results, content_sha256, sources = run.results, run.content_sha256, dict(run.sources)
    if run.dop_warnings and meta.concurrency:
        # The files did not say the concurrency; the manifest does: the results are stored at it, and are not
        # the same results as the tables imported at another concurrency.
        results = [{**row, "dop": meta.concurrency} for row in run.results]
        content_sha256 = hashlib.sha256(f"{run.content_sha256} dop{meta.concurrency}".encode()).hexdigest()
        sources["concurrency"] = MANIFEST_SAYS
    elif run.dop_warnings:
        warnings.extend(run.dop_warnings)
    elif meta.concurrency and sources.get("concurrency"):
        warnings.append(
            f"{bundle_name}:{run.source}: concurrency {meta.concurrency} of the manifest or upload not used for "
            f"{run.name}, whose concurrency comes {sources['concurrency']}"
        )
    summary_table, summary_layout = "", {}
    if suite.summary_of is not None:
        summary_table = table_identity(run.table, results)
        summary_layout = dict(run.layout)
    if sources:
        if meta.server or not sources.get("server"):
            sources["server"] = MANIFEST_SAYS if meta.server else NOTHING_SAYS
        if meta.workload:
            sources["workload"] = MANIFEST_SAYS
    return ParsedRun(
        # A document names its own suite; summary tables' runs are their suite's runs (sysbench's), only
        # marked as read from a summary.
        suite=suites.get(run.suite).name if run.suite else (suite.summary_of or suite.name),
        from_summary=suite.summary_of is not None,
        summary_sources=sources if suite.summary_of is not None else {},
        summary_table=summary_table,
        summary_layout=summary_layout,
        name=run.name,
        path=run.source,
        content_sha256=content_sha256,
        meta=meta,
        dbms=meta.dbms or run.dbms,
        version=meta.version or run.version,
        build=meta.build or run.build,
        flavour=meta.flavour if meta.flavour is not None else run.flavour,
        config=meta.config or run.config,
        server=server,
        workload=meta.workload or run.workload,
        workload_params=run.workload_params,
        started_at=run.started_at,
        started_from=run.started_from if run.started_at else "",
        results=results,
        warnings=warnings,
        suite_config_text=run.config_text,
        suite_cpus=run.cpus,
        suite_server=run.server_details,
        notes=run.notes,
    )


def table_identity(variant: str, results: list[dict[str, Any]]) -> str:
    """A summary run's table: its variant and the concurrency of its QPS cells (``in.dop8``; ``dop1`` for a
    table without a variant; ``dop1-4`` for a December 2020 table with a column per concurrency)."""
    dops = sorted({row["dop"] for row in results if "qps_from" not in (row.get("extra") or {})})
    said = f"dop{dops[0]}" if len(dops) == 1 else f"dop{dops[0]}-{dops[-1]}" if dops else "dop?"
    return f"{variant}.{said}" if variant else said


# What a bundle that cannot be imported raises: recorded on the bundle as its error, never retried.
def bad_input() -> tuple[type[Exception], ...]:
    """The exceptions that mean a bad bundle: the archive's, the manifest's, and every registered suite's."""
    return (BundleError, ManifestError, ImportFailed, *suites.parse_errors())


# How much the check before queueing unpacks at most: a web request must not spend minutes on one upload.
CHECK_UNPACKED_BYTES = 256 * 1024**2


class _LooksLikeABundle(Exception):
    """Raised by the quick check at the first result file: enough is known, the import reads the rest."""


def check_bundle(data: bytes | IO[bytes], *, name: str) -> None:
    """A quick structural look at an upload before it is queued, so a bad one is refused at once.

    The archive reader's own checks (format, limits, names, member types) run
    up to the first result file of a run directory and stop there: the worker
    then reads the archive once, as it would anyway. An archive without one is
    read to its end (at most CHECK_UNPACKED_BYTES unpacked), and must hold
    something the importer reads; its manifests must parse. Raises what
    ``parse_bundle`` raises.
    """

    def stop_at_a_result(base: str) -> bool:
        if wanted(base) and sysbench.parse_file_name(base) is not None:
            raise _LooksLikeABundle
        return False

    limits = bundle_limits()
    budget = min(limits.max_unpacked_bytes, CHECK_UNPACKED_BYTES)
    try:
        checked = dataclasses.replace(limits, max_unpacked_bytes=budget)
        contents = read_bundle(data, name=name[:255], limits=checked, wanted=stop_at_a_result)
    except _LooksLikeABundle:
        return
    except BundleError as exc:
        if budget < limits.max_unpacked_bytes and f"{budget:,}-byte" in str(exc):
            return  # past the check's budget, not the bundle's limit: the import reads on (bounded by the limit)
        raise
    for path, raw in contents.manifests.items():
        parse_manifest(raw, where=f"{name[:255]}:{path + '/' if path else ''}{MANIFEST_NAME}")
    if contents.runs and not any(contents.suite_files.values()):
        first = contents.runs[0]
        raise sysbench.ParseError(
            f"{name[:255]}:{first.path or first.name}: no result files (sb.o.<test>.range<R>.pk<P>.dop<N>) "
            "in this run directory"
        )
