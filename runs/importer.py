"""Import result bundles: the one code path behind the upload page, the API, the command and the task.

``store_bundle`` keeps the uploaded bytes (deduplicated by content hash);
``import_bundle`` turns a stored bundle into runs and results in one
transaction: an error part-way leaves no run, no result. ``parse_bundle`` is the
pure part (archive → parsed runs) and touches no database: sysbench run
directories go through ``parse_run``, RocksDB db_bench files through
``parse_dbbench_bundle``, Insert Benchmark files through ``parse_ibench_bundle``;
all give ParsedRuns, stored the same way.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import gzip
import hashlib
import io
import logging
import os
import tarfile
import threading
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import IO, Any

from django.conf import settings
from django.db import DatabaseError, connection, transaction
from django.db.models import Count, Q
from django.utils import timezone

import suites
from runs import archive_store, attach
from runs.bulk import find_or_create, insert_rows
from runs.bundle import (
    BundleContents,
    BundleError,
    DbBenchFile,
    IbenchFile,
    KeptFile,
    Limits,
    RunDir,
    manifest_path,
    read_bundle,
)
from runs.manifest import MANIFEST_NAME, Manifest, ManifestError, RunMeta, parse_manifest
from runs.models import (
    METRIC_FIELDS,
    Build,
    Bundle,
    Config,
    Dbms,
    Microbenchmark,
    Result,
    Run,
    RunFile,
    Server,
    Suite,
    Version,
    Workload,
)
from runs.versions import sort_key
from suites.dbbench import parse as dbbench
from suites.ibench import parse as ibench
from suites.naming import parse_build, parse_run_dir
from suites.sysbench import parse as sysbench

log = logging.getLogger(__name__)


class ImportFailed(Exception):
    """The bundle could not be imported; the message says why and nothing was written."""


# --------------------------------------------------------------------------- what the bundle holds

_KEEP_PREFIXES = ("sb.o.", "sb.met.", "sb.r.", "sb.prepare.o.", "sb.prepare.met.", "sb.gv.", "sb.pg.conf.", "sb.hp.")
_KEEP_NAMES = ("my.cnf", "conf.diff", MANIFEST_NAME)
# Helper output that shares the sb.o. prefix but is not a result (vacuum/analyze logs).
_SKIP_PREFIXES = ("sb.o.myvac", "sb.o.pgvac")


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
class ParsedRun:
    name: str
    path: str
    content_sha256: str
    meta: RunMeta
    dbms: str
    version: str
    build: str
    flavour: str
    config: str
    config_text: str | KeptFile  # decoded when its Config row is made: configs are not all in memory at once
    pk: int
    server: str
    cpus: int | None
    workload: str
    workload_params: dict[str, Any]
    started_at: datetime | None
    load_seconds: float | None
    load_inserts_per_s: float | None
    sysbench_version: str
    commands: dict[str, str]
    results: list[dict[str, Any]]
    # (name, kind, contents): decoded only when stored, so a bundle's settings files are never all in memory at once
    files: list[tuple[str, str, KeptFile]]
    warnings: list[str] = field(default_factory=list)
    ignored_files: int = 0
    suite: str = Suite.SYSBENCH

    @property
    def tests(self) -> int:
        return len({(r["test"], r["range_size"]) for r in self.results})

    @property
    def attach_existing(self) -> bool:
        """Results already imported for another series are added to this one too (the manifest says so)."""
        return bool(self.meta.attach_existing)


@dataclass
class ParsedBundle:
    format: str
    runs: list[ParsedRun]
    members: int
    ignored_files: int
    warnings: list[str]
    server_info: dict[str, Any] = field(default_factory=dict)


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
    load = None
    files: list[tuple[str, str, KeptFile]] = []
    seen_kinds: set[str] = set()
    hasher = hashlib.sha256()
    mtimes: list[float] = []

    for file_name in sorted(run_dir.files):
        fn = sysbench.parse_file_name(file_name)
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
            load = sysbench.parse_prepare(_text(data)) or load

    results: list[dict[str, Any]] = []
    commands: dict[str, str] = {}
    for (test, range_size, dop), out in outputs.items():
        met = mets.get((test, range_size, dop), {})
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
                    **{k: v for k, v in mets.get((test, range_size, dop), {}).items() if k in METRIC_FIELDS},
                }
            )
            hasher.update(f"{test}.{range_size}.{dop}".encode())

    if not results:
        raise sysbench.ParseError(f"{where}: no result files (sb.o.<test>.range<R>.pk<P>.dop<N>) in this run directory")
    warnings.extend(_zero_qps_warnings(run_dir.name, results))

    outs = list(outputs.values())
    workload, params = _workload(outs)
    cpus = next((o.cpus for o in outs if o.cpus), None)
    config_text: str | KeptFile = next((kept for (n, kind, kept) in files if kind == RunFile.Kind.CONFIG), "")
    server = meta.server or (f"{cpus}-CPU server" if cpus else "unknown server")
    if not meta.server:
        warnings.append(f"{run_dir.name}: no server named (manifest or upload form); using {server!r}")
    started = datetime.fromtimestamp(min(mtimes), tz=UTC) if mtimes else None
    return ParsedRun(
        name=run_dir.name,
        path=run_dir.path,
        content_sha256=hasher.hexdigest(),
        meta=meta,
        dbms=dbms,
        version=meta.version or name.version,
        build=meta.build or name.build,
        flavour=meta.flavour if meta.flavour is not None else name.flavour,
        config=meta.config or name.config,
        config_text=config_text,
        pk=name.pk,
        server=server,
        cpus=cpus,
        workload=meta.workload or workload,
        workload_params=params,
        started_at=started,
        load_seconds=load.seconds if load else None,
        load_inserts_per_s=load.inserts_per_s if load else None,
        sysbench_version=next((o.sysbench_version for o in outs if o.sysbench_version), ""),
        commands=commands,
        results=results,
        files=files,
        warnings=warnings,
        ignored_files=len(run_dir.ignored),
    )


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
        return RunFile.Kind.CONFIG
    if name.startswith("sb.gv.") or name == "sb.o.myvac.show.1":
        return RunFile.Kind.VARIABLES
    if name.startswith("sb.pg.conf."):
        return RunFile.Kind.PG_SETTINGS
    if name.startswith("sb.hp."):
        return RunFile.Kind.HUGEPAGES
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
    row.update({k: v for k, v in met.items() if k in METRIC_FIELDS})
    return row


def parse_bundle(
    data: bytes | IO[bytes],
    *,
    name: str,
    overrides: Mapping[str, Any] | None = None,
    on_file: Callable[[], None] | None = None,
) -> ParsedBundle:
    """Archive bytes (or an open archive file) → parsed runs. Raises BundleError, ManifestError or
    sysbench.ParseError.

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
    override_meta = RunMeta(**{k: v for k, v in (overrides or {}).items() if k in RunMeta.model_fields and v})
    runs: list[ParsedRun] = []
    warnings: list[str] = []
    for run_dir in contents.runs:
        meta = _meta_for(run_dir, manifests)
        meta = RunMeta(**{**meta.model_dump(exclude_none=True), **override_meta.model_dump(exclude_none=True)})
        parsed = parse_run(run_dir, meta, bundle_name=name)
        runs.append(parsed)
        warnings.extend(parsed.warnings)
    ignored = contents.ignored_count + sum(r.ignored_files for r in runs)
    if contents.dbbench:
        dbbench_runs, dbbench_warnings, not_read = parse_dbbench_bundle(
            contents.dbbench, manifests, override_meta, bundle_name=name, required=not runs
        )
        runs.extend(dbbench_runs)
        warnings.extend(dbbench_warnings)
        ignored += not_read
    if contents.ibench:
        ibench_runs, ibench_warnings, not_read = parse_ibench_bundle(
            contents.ibench, manifests, override_meta, bundle_name=name, required=not runs
        )
        runs.extend(ibench_runs)
        warnings.extend(ibench_warnings)
        ignored += not_read
    root = manifests.get("")
    info = root.server_info.model_dump(exclude_none=True) if root is not None and root.server_info else {}
    return ParsedBundle(
        format=contents.format,
        runs=runs,
        members=contents.members,
        ignored_files=ignored,
        warnings=warnings,
        server_info=info,
    )


def _meta_for(run_dir: RunDir, manifests: Mapping[str, Manifest]) -> RunMeta:
    """Manifests from the root down to the run directory; the nearest one wins key by key."""
    merged: dict[str, Any] = {}
    parts = manifest_path(run_dir.path, run_dir.origin).split("/") if run_dir.path else [run_dir.name]
    for depth in range(len(parts) + 1):
        manifest = manifests.get("/".join(parts[:depth]))
        if manifest is not None:
            merged.update(manifest.for_run(run_dir.name).model_dump(exclude_none=True))
    return RunMeta(**merged)


# --------------------------------------------------------------------------- db_bench


def parse_dbbench_bundle(
    files: Sequence[DbBenchFile],
    manifests: Mapping[str, Manifest],
    overrides: RunMeta,
    *,
    bundle_name: str,
    required: bool,
) -> tuple[list[ParsedRun], list[str], int]:
    """db_bench files → (parsed runs, warnings, files not read). Raises dbbench.ParseError.

    A file named like a summary but without a db_bench header is someone's notes: it
    is skipped with a warning, unless it is all the bundle has (``required``).
    """
    paths = {file.path for file in files}
    runs: list[ParsedRun] = []
    warnings: list[str] = []
    not_read = 0
    for file in files:
        where = f"{bundle_name}:{file.path}"
        if file.path + ".sdev" in paths:
            # The .sdev copy holds the same rows plus the mean/stddev of the repeats: read only that one.
            not_read += 1
            continue
        try:
            found, file_warnings = dbbench.parse_result_file(file.data, path=file.path, name=where)
        except dbbench.NotDbBench as exc:
            not_read += 1
            warnings.append(f"{exc}; not read")
            continue
        warnings.extend(file_warnings)
        for run in found:
            meta = _dbbench_meta(manifest_path(file.path, file.origin), run.name, manifests)
            meta = RunMeta(**{**meta.model_dump(exclude_none=True), **overrides.model_dump(exclude_none=True)})
            runs.append(_dbbench_parsed_run(run, meta, where))
            warnings.extend(runs[-1].warnings)
    if required and not runs:
        names = ", ".join(sorted(paths)[:5])
        raise dbbench.ParseError(f"{bundle_name}: no db_bench results (a header line starting ops_sec) in {names}")
    return runs, warnings, not_read


def _dbbench_meta(path: str, run_name: str, manifests: Mapping[str, Manifest]) -> RunMeta:
    """Manifests from the root down to the file's folder; the nearest one wins key by key."""
    merged: dict[str, Any] = {}
    folders = path.split("/")[:-1]
    for depth in range(len(folders) + 1):
        manifest = manifests.get("/".join(folders[:depth]))
        if manifest is not None:
            merged.update(manifest.for_run(run_name).model_dump(exclude_none=True))
    return RunMeta(**merged)


def _not_sysbench() -> dict[str, Any]:
    """What a run of another suite than sysbench has none of: sb.o command lines, a load phase, config files."""
    return {
        "config_text": "",
        "pk": 1,
        "cpus": None,
        "load_seconds": None,
        "load_inserts_per_s": None,
        "sysbench_version": "",
        "commands": {},
        "files": [],
    }


def _dbbench_parsed_run(run: dbbench.DbBenchRun, meta: RunMeta, where: str) -> ParsedRun:
    warnings: list[str] = []
    server = meta.server or dbbench.server_from_path(run.source)
    if server is None:
        server = "unknown server"
        warnings.append(f"{where}: no server named (manifest, upload form or a folder); using {server!r}")
    if run.workload is None and not meta.workload:
        warnings.append(f"{where}: the path names no workload (byrx, iobuf, iodir); using {run.workload_name!r}")
    return ParsedRun(
        name=run.name,
        path=run.source,
        content_sha256=run.content_sha256,
        meta=meta,
        dbms=meta.dbms or dbbench.DBMS,
        version=meta.version or run.version,
        build=meta.build or run.build,
        flavour=meta.flavour if meta.flavour is not None else run.flavour,
        config=meta.config or run.config,
        server=server,
        workload=meta.workload or run.workload_name,
        workload_params=run.workload_params,
        started_at=run.started_at,
        results=run.result_rows(),
        **_not_sysbench(),
        warnings=warnings,
        suite=Suite.DBBENCH,
    )


# --------------------------------------------------------------------------- Insert Benchmark


def parse_ibench_bundle(
    files: Sequence[IbenchFile],
    manifests: Mapping[str, Manifest],
    overrides: RunMeta,
    *,
    bundle_name: str,
    required: bool,
) -> tuple[list[ParsedRun], list[str], int]:
    """Insert Benchmark files → (parsed runs, warnings, files not read). Raises ibench.ParseError.

    The files of one run may be spread over the bundle (summaries, merged tables,
    step directories): they are read together, so each run is assembled once.
    """
    # The files themselves, not their bytes: the parser decodes each when it reads it, so they are never all in
    # memory at once (a KeptFile decodes like bytes).
    found, warnings, not_read = ibench.parse_bundle_files((f.path, f.kept, f.mtime) for f in files)  # type: ignore[misc]
    origins = {f.path: f.origin for f in files}
    runs: list[ParsedRun] = []
    for run in found:
        where = f"{bundle_name}:{run.sources[0]}"
        meta = _dbbench_meta(manifest_path(run.sources[0], origins.get(run.sources[0], "")), run.name, manifests)
        meta = RunMeta(**{**meta.model_dump(exclude_none=True), **overrides.model_dump(exclude_none=True)})
        runs.append(_ibench_parsed_run(run, meta, where))
        warnings.extend(runs[-1].warnings)
    if required and not runs:
        names = ", ".join(sorted(f.path for f in files)[:5])
        raise ibench.ParseError(f"{bundle_name}: no Insert Benchmark results (an ips … tag header) in {names}")
    return runs, warnings, not_read


def _ibench_parsed_run(run: ibench.IbenchRun, meta: RunMeta, where: str) -> ParsedRun:
    results = run.result_rows()  # before the warnings: missing throughputs are reported there
    warnings = list(run.warnings)
    server = meta.server or ibench.server_from_path(run.sources[0])
    if server is None:
        server = "unknown server"
        warnings.append(f"{where}: no server named (manifest, upload form or a folder); using {server!r}")
    dbms, version, flavour, build_warnings = parse_build(run.build)
    warnings.extend(f"{run.name}: {w}" for w in build_warnings if not meta.dbms)
    return ParsedRun(
        name=run.name,
        path=run.sources[0],
        content_sha256=run.content_sha256,
        meta=meta,
        dbms=meta.dbms or dbms,
        version=meta.version or version,
        build=meta.build or run.build,
        flavour=meta.flavour if meta.flavour is not None else flavour,
        config=meta.config or run.tag.config,
        server=server,
        workload=meta.workload or run.workload_name,
        workload_params=run.workload_params,
        started_at=run.started_at,
        results=results,
        **_not_sysbench(),
        warnings=warnings,
        suite=Suite.IBENCH,
    )


# --------------------------------------------------------------------------- storing


@dataclass
class ImportedRun:
    id: int | None
    name: str
    dbms: str
    version: str
    server: str
    tests: int
    results: int
    skipped: bool = False  # the same run was already imported (from another bundle)
    existing: dict[str, Any] | None = None  # when skipped: the run that holds these results (id, name, server, …)

    def line(self) -> str:
        if self.skipped and self.existing:
            held = self.existing
            where = f" on {held['server']}" if held["server"] != self.server else ""
            return f"{self.name}: already imported as run {held['id']} (bundle {held['bundle_id']}){where}, skipped"
        if self.skipped:
            return f"{self.name}: twice in this bundle, skipped"
        return f"{self.name}: {self.dbms} {self.version} on {self.server}, {self.tests} tests, {self.results} results"


@dataclass
class ImportReport:
    bundle_id: int
    bundle_name: str
    already_imported: bool
    runs: list[ImportedRun]
    ignored_files: int = 0
    warnings: list[str] = field(default_factory=list)
    imported_at: datetime | None = None

    @property
    def nothing_new(self) -> bool:
        """Every run of the bundle was imported before, from other bundles."""
        return bool(self.runs) and all(run.skipped for run in self.runs)

    def as_dict(self) -> dict[str, Any]:
        return {
            "bundle_id": self.bundle_id,
            "bundle": self.bundle_name,
            "already_imported": self.already_imported,
            "imported_at": self.imported_at.isoformat() if self.imported_at else None,
            "ignored_files": self.ignored_files,
            "warnings": self.warnings,
            "runs": [
                {
                    "id": r.id,
                    "name": r.name,
                    "dbms": r.dbms,
                    "version": r.version,
                    "server": r.server,
                    "tests": r.tests,
                    "results": r.results,
                    "skipped": r.skipped,
                    "existing_run": r.existing,
                }
                for r in self.runs
            ],
        }


def archive_directory(path: Path) -> bytes:
    """A directory as a deterministic .tar.gz, so it is stored and hashed like an uploaded bundle."""
    buffer = io.BytesIO()
    # mtime=0 in the gzip header: the same tree gives the same bytes, so the same hash.
    with (
        gzip.GzipFile(fileobj=buffer, mode="wb", compresslevel=6, mtime=0) as gz,
        tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar,
    ):
        base = path.resolve()
        for root, dirs, files in os.walk(base, followlinks=False):
            dirs.sort()
            for file_name in sorted(files):
                full = Path(root) / file_name
                arcname = str(Path(base.name) / full.relative_to(base))
                info = tar.gettarinfo(str(full), arcname=arcname)
                info.uid = info.gid = 0
                info.uname = info.gname = ""
                if info.isreg():
                    with full.open("rb") as fh:
                        tar.addfile(info, fh)
                else:
                    tar.addfile(info)  # the reader refuses links and devices with a clear error
    return buffer.getvalue()


def read_source(path: Path) -> tuple[bytes | IO[bytes], str]:
    """The archive (an open file, or a directory's archive as bytes) and its display name, of a path given on
    the command line; the caller closes the file."""
    if path.is_dir():
        return archive_directory(path), path.resolve().name + ".tar.gz"
    if not path.exists():
        raise ImportFailed(f"{path}: no such file or directory")
    size = path.stat().st_size
    if size > settings.BUNDLE_MAX_BYTES:
        raise ImportFailed(f"{path.name}: {size} bytes is over the bundle limit of {settings.BUNDLE_MAX_BYTES}")
    return path.open("rb"), path.name


def store_bundle(
    data: archive_store.Source,
    *,
    name: str,
    source: str,
    user: Any = None,
    overrides: Mapping[str, Any] | None = None,
) -> tuple[Bundle, bool]:
    """Keep the uploaded archive (bytes, an open file, or an iterator of pieces) a chunk at a time;
    (bundle, created). The same bytes twice give the same bundle (runs.archive_store)."""
    try:
        return archive_store.store(data, name=name, kind=source, user=user, overrides=overrides)
    except (archive_store.TooLarge, archive_store.ChangedWhileRead) as exc:
        raise ImportFailed(str(exc)) from exc


# What a bundle that cannot be imported raises: recorded on the bundle as its error, never retried.
def bad_input() -> tuple[type[Exception], ...]:
    """The exceptions that mean a bad bundle: the archive's, the manifest's, and every registered suite's."""
    return (BundleError, ManifestError, ImportFailed, *suites.parse_errors())


@dataclass(frozen=True)
class PreParsed:
    """A bundle parsed ahead (in another process) for ``import_bundle``: used only for the same bytes and inputs.

    ``error`` is set when it did not parse: the import records it without parsing again.
    """

    sha256: str
    name: str
    overrides: dict[str, Any]
    parsed: ParsedBundle | None
    error: str = ""


def pre_parse(data: bytes | IO[bytes], *, name: str, overrides: Mapping[str, Any] | None = None) -> PreParsed:
    """Parse a bundle without the database (safe in a worker process); a bad bundle's reason is kept."""
    kept = {k: v for k, v in (overrides or {}).items() if v}
    digest = archive_store.sha256_of(data)[0]
    try:
        parsed = parse_bundle(data, name=name[:255], overrides=kept)
    except bad_input() as exc:
        return PreParsed(digest, name[:255], kept, None, str(exc))
    return PreParsed(digest, name[:255], kept, parsed)


@dataclass
class Progress:
    """What an import has done so far, shown while it runs (kept on the bundle by the heartbeat)."""

    phase: str = "reading"  # reading the archive, then storing the runs
    files_read: int = 0  # result files read into memory
    runs_found: int = 0
    runs_new: int = 0  # runs not imported before: the ones being stored
    runs_stored: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "phase": self.phase,
            "files_read": self.files_read,
            "runs_found": self.runs_found,
            "runs_new": self.runs_new,
            "runs_stored": self.runs_stored,
        }


class BundleBusy(Exception):
    """Another worker holds this bundle's import and is alive (its heartbeat is fresh)."""

    def __init__(self, bundle_id: int, retry_in: float) -> None:
        super().__init__(f"bundle {bundle_id} is being imported by another worker")
        self.retry_in = retry_in


def claim_stale_after() -> timedelta:
    return timedelta(seconds=settings.BUNDLE_CLAIM_STALE_SECONDS)


def claim_bundle(bundle_id: int) -> str | None:
    """Take a bundle's import: a queued bundle, or one whose importer's heartbeat went stale (it died).

    One conditional update, so of two workers only one gets it; the other is
    told at once instead of waiting on a lock. Returns the claim's token.
    """
    token = uuid.uuid4().hex
    now = timezone.now()
    dead = Q(status=Bundle.Status.IMPORTING) & (Q(heartbeat_at__lt=now - claim_stale_after()) | Q(heartbeat_at=None))
    taken = Bundle.objects.filter(Q(status=Bundle.Status.QUEUED) | dead, pk=bundle_id).update(
        status=Bundle.Status.IMPORTING, claim=token, heartbeat_at=now, progress=Progress().as_dict()
    )
    return token if taken else None


class Heartbeat(threading.Thread):
    """Keeps a claimed bundle's heartbeat fresh and its progress visible, on a connection of its own.

    The import's transaction is invisible to others until it commits; this
    thread's updates commit at once, so the page sees the progress and other
    workers see the import is alive, however long one COPY takes.
    """

    def __init__(self, bundle_id: int, token: str, progress: Progress) -> None:
        super().__init__(name=f"bundle-heartbeat-{bundle_id}", daemon=True)
        self.bundle_id = bundle_id
        self.token = token
        self.progress = progress
        self.interval = min(1.0, settings.BUNDLE_CLAIM_STALE_SECONDS / 3)
        self.done = threading.Event()

    def run(self) -> None:
        try:
            while not self.done.wait(self.interval):
                try:
                    Bundle.objects.filter(pk=self.bundle_id, claim=self.token, status=Bundle.Status.IMPORTING).update(
                        heartbeat_at=timezone.now(), progress=self.progress.as_dict()
                    )
                except DatabaseError:
                    # A blip must not end the import; a heartbeat missed for long lets another worker take over,
                    # and this import then fails its final check and rolls back.
                    log.warning("heartbeat of bundle %s not saved", self.bundle_id, exc_info=True)
        finally:
            connection.close()  # this thread's own connection

    def finish(self) -> None:
        self.done.set()
        self.join(timeout=30)


class ClaimLost(Exception):
    """Another worker took this import over (this one's heartbeat went stale): its work is rolled back."""


def import_bundle(bundle_id: int, *, pre_parsed: PreParsed | None = None) -> ImportReport:
    """Import a stored bundle; idempotent: an imported bundle is reported, not imported again.

    The bundle is claimed first (``claim_bundle``) and stored in one
    transaction, so a crash part-way leaves no run, and a second delivery of
    the same task raises BundleBusy at once while the first is alive. Inside a
    caller's transaction (the command, a triggered run) the claim is that
    transaction's, and nobody else can see the bundle until it commits.
    ``pre_parsed`` saves the parse when it was made from this bundle's bytes,
    name and overrides.
    """
    bundle = Bundle.objects.get(pk=bundle_id)
    if bundle.status == Bundle.Status.IMPORTED:
        return _report_existing(bundle)
    token = claim_bundle(bundle_id)
    if token is None:
        bundle.refresh_from_db()
        if bundle.status == Bundle.Status.IMPORTED:
            return _report_existing(bundle)
        if bundle.status == Bundle.Status.FAILED:
            raise ImportFailed(bundle.error)
        beat = bundle.heartbeat_at or timezone.now()
        raise BundleBusy(bundle_id, max(1.0, (beat + claim_stale_after() - timezone.now()).total_seconds() + 1))
    progress = Progress()
    own_transaction = not connection.in_atomic_block
    heartbeat = Heartbeat(bundle_id, token, progress) if own_transaction else None
    if heartbeat is not None:
        heartbeat.start()
    try:
        if pre_parsed is not None and (pre_parsed.sha256, pre_parsed.name, pre_parsed.overrides) == (
            bundle.sha256,
            bundle.original_name,
            bundle.overrides,
        ):
            if pre_parsed.parsed is None:
                raise ImportFailed(pre_parsed.error)
            parsed = pre_parsed.parsed
        else:

            def read_one() -> None:
                progress.files_read += 1

            with _archive_file(bundle) as archive:
                parsed = parse_bundle(archive, name=bundle.original_name, overrides=bundle.overrides, on_file=read_one)
        progress.runs_found = len(parsed.runs)
        with transaction.atomic():
            report = _store(bundle, parsed, parsed.server_info, progress=progress)
            done = Bundle.objects.filter(pk=bundle_id, claim=token, status=Bundle.Status.IMPORTING).update(
                status=Bundle.Status.IMPORTED,
                error="",
                imported_at=timezone.now(),
                claim="",
                heartbeat_at=None,
                progress=progress.as_dict(),
                stats={
                    "format": parsed.format,
                    "members": parsed.members,
                    "ignored_files": parsed.ignored_files,
                    "runs": len(report.runs),
                    "results": sum(r.results for r in report.runs),
                    "warnings": report.warnings[:200],
                    # Runs of this bundle that were imported before, from another bundle: where they are.
                    "skipped_runs": [
                        {
                            "id": (r.existing or {}).get("id"),
                            "name": r.name,
                            "bundle_id": (r.existing or {}).get("bundle_id", bundle_id),
                            **(
                                {"attach_to": r.existing["attach_to"]}
                                if r.existing and "attach_to" in r.existing
                                else {}
                            ),
                        }
                        for r in report.runs
                        if r.skipped
                    ][:1000],
                },
            )
            if not done:
                raise ClaimLost(f"bundle {bundle_id}: another worker took over this import")
        report.imported_at = timezone.now()
        return report
    except bad_input() as exc:
        _mark_failed(bundle_id, str(exc))
        raise ImportFailed(str(exc)) from exc
    except BaseException:
        if own_transaction:
            _release(bundle_id, token)
        raise
    finally:
        if heartbeat is not None:
            heartbeat.finish()


def _release(bundle_id: int, token: str) -> None:
    """Give an interrupted import back to the queue at once (a retry need not wait for the claim to go stale)."""
    try:
        Bundle.objects.filter(pk=bundle_id, claim=token, status=Bundle.Status.IMPORTING).update(
            status=Bundle.Status.QUEUED, claim="", heartbeat_at=None
        )
    except DatabaseError:
        # The database is away: the claim goes stale and a retry or requeue_bundles takes it then.
        log.warning("could not release the claim of bundle %s", bundle_id, exc_info=True)


def _archive_file(bundle: Bundle) -> contextlib.AbstractContextManager[IO[bytes]]:
    """The stored archive in a temporary file, copied out of the database a chunk at a time."""
    return archive_store.archive_file(bundle)


def _mark_failed(bundle_id: int, error: str) -> None:
    Bundle.objects.filter(pk=bundle_id).exclude(status=Bundle.Status.IMPORTED).update(
        status=Bundle.Status.FAILED, error=error[:10_000], claim="", heartbeat_at=None
    )


def _report_existing(bundle: Bundle) -> ImportReport:
    runs = (
        Run.objects.filter(bundle=bundle)
        .select_related("build__version__dbms", "server")
        .order_by("build__version__sort_key", "name")
    )
    counts = dict(Result.objects.filter(run__bundle=bundle).values_list("run").annotate(n=Count("id")).order_by())
    tests = dict(
        Result.objects.filter(run__bundle=bundle)
        .values_list("run")
        .annotate(n=Count("microbenchmark", distinct=True))
        .order_by()
    )
    skipped = [
        ImportedRun(s.get("id"), s.get("name", ""), "", "", "", 0, 0, True, s.get("bundle_id"))
        for s in bundle.stats.get("skipped_runs", [])
    ]
    return ImportReport(
        bundle_id=bundle.pk,
        bundle_name=bundle.original_name,
        already_imported=True,
        imported_at=bundle.imported_at,
        runs=skipped
        + [
            ImportedRun(
                id=run.pk,
                name=run.name,
                dbms=run.build.version.dbms.name,
                version=run.build.version.text,
                server=run.server.name,
                tests=tests.get(run.pk, 0),
                results=counts.get(run.pk, 0),
            )
            for run in runs
        ],
        ignored_files=bundle.stats.get("ignored_files", 0),
        warnings=list(bundle.stats.get("warnings", [])),
    )


RESULT_FIELDS = tuple(
    f.attname for f in Result._meta.concrete_fields if f.attname not in ("id", "run_id", "microbenchmark_id")
)


def _store(
    bundle: Bundle,
    parsed: ParsedBundle,
    info: Mapping[str, Any],
    *,
    progress: Progress | None,
) -> ImportReport:
    report = ImportReport(
        bundle_id=bundle.pk,
        bundle_name=bundle.original_name,
        already_imported=False,
        runs=[],
        ignored_files=parsed.ignored_files,
        warnings=list(parsed.warnings),
    )
    new = _new_runs(parsed.runs, report)
    if not new:
        return report
    if progress:
        progress.phase = "storing"
        progress.runs_new = len(new)
    microbenchmarks = {
        suite: _microbenchmarks(
            {(row["test"], row["range_size"]) for r in new if r.suite == suite for row in r.results}, suite
        )
        for suite in {r.suite for r in new}
    }
    runs = _create_runs(bundle, new, info)

    fields = ("run_id", "microbenchmark_id", *RESULT_FIELDS)
    defaults = {f.attname: f.get_default() for f in Result._meta.concrete_fields if f.attname in RESULT_FIELDS}

    def result_rows() -> Iterator[tuple[Any, ...]]:
        for run, parsed_run in zip(runs, new, strict=True):
            ids = microbenchmarks[parsed_run.suite]
            for row in parsed_run.results:
                yield (run.pk, ids[(row["test"], row["range_size"])], *[row.get(n, defaults[n]) for n in RESULT_FIELDS])
            if progress:
                progress.runs_stored += 1  # its results are in the COPY stream: what the page counts as stored

    insert_rows(Result, fields, result_rows())
    insert_rows(
        RunFile,
        ("run_id", "name", "kind", "text"),
        (
            (run.pk, n, kind, _text(kept.read()))
            for run, parsed_run in zip(runs, new, strict=True)
            for (n, kind, kept) in parsed_run.files
        ),
    )
    for run, parsed_run in zip(runs, new, strict=True):
        report.runs.append(
            ImportedRun(
                run.pk,
                parsed_run.name,
                parsed_run.dbms,
                parsed_run.version,
                parsed_run.server,
                parsed_run.tests,
                len(parsed_run.results),
            )
        )
    return report


def _attached_sha256(run: ParsedRun) -> str:
    """The identity of results attached to one more series: the content's hash bound to that series, so the
    same attachment twice is one run, like any re-import."""
    return attach.attached_identity(run.content_sha256, run.server, run.workload)


def _new_runs(parsed: Sequence[ParsedRun], report: ImportReport) -> list[ParsedRun]:
    """The runs to store; the others are listed in ``report`` as skipped, with the run that holds their results.

    Results imported before under another server or workload are said in a warning (that series would
    otherwise silently lack the run, e.g. its base); with ``attach_existing`` they are stored for this
    series too, under an identity of their own.
    """
    wanted = {r.content_sha256 for r in parsed} | {_attached_sha256(r) for r in parsed if r.attach_existing}
    holders = {
        run.content_sha256: run
        for run in Run.objects.filter(content_sha256__in=wanted).select_related("server", "workload")
    }
    seen: set[str] = set()
    new: list[ParsedRun] = []
    for parsed_run in parsed:
        holder = holders.get(parsed_run.content_sha256)
        elsewhere = holder is not None and (holder.server.name, holder.workload.name) != (
            parsed_run.server,
            parsed_run.workload,
        )
        if elsewhere and parsed_run.attach_existing:
            parsed_run = dataclasses.replace(parsed_run, content_sha256=_attached_sha256(parsed_run))
            holder = holders.get(parsed_run.content_sha256)
            elsewhere = False
        if holder is None and parsed_run.content_sha256 not in seen:
            seen.add(parsed_run.content_sha256)
            new.append(parsed_run)
            continue
        existing = None
        if holder is not None:
            existing = {
                "id": holder.pk,
                "name": holder.name,
                "server": holder.server.name,
                "workload": holder.workload.name,
                "bundle_id": holder.bundle_id,
            }
            if elsewhere:
                # What the bundle page's "attach it to this series" needs (runs.attach).
                existing["attach_to"] = {
                    "server": parsed_run.server,
                    "workload": parsed_run.workload,
                    "content_sha256": parsed_run.content_sha256,
                }
        skipped = ImportedRun(
            None, parsed_run.name, parsed_run.dbms, parsed_run.version, parsed_run.server, 0, 0, True, existing
        )
        report.runs.append(skipped)
        if elsewhere and holder is not None:
            report.warnings.append(
                f"{parsed_run.name}: its results are already imported as run {holder.pk} ({holder.name}) on server "
                f"{holder.server.name!r}, workload {holder.workload.name!r}, so server {parsed_run.server!r} does "
                "not get it; set attach_existing = true in benchdash.toml to add it to this series too, or attach it "
                "with the button on the bundle's page"
            )
    return new


def _microbenchmarks(
    keys: set[tuple[str, int | None]], suite: str = Suite.SYSBENCH
) -> dict[tuple[str, int | None], int]:
    """Ids of the microbenchmarks, creating the missing ones in one statement."""
    by_suite: dict[str, Callable[[str], bool]] = {Suite.DBBENCH: dbbench.is_excluded, Suite.IBENCH: ibench.is_excluded}
    excluded = by_suite.get(suite, sysbench.is_warmup)
    tests = {test for test, _ in keys}

    def existing() -> dict[tuple[str, int | None], int]:
        found: dict[tuple[str, int | None], int] = {}
        rows = Microbenchmark.objects.filter(suite=suite, test__in=tests).order_by("pk")
        for m in rows.only("id", "test", "range_size"):
            if (m.test, m.range_size) in keys:
                found.setdefault((m.test, m.range_size), m.pk)
        return found

    # A unique constraint never sees two NULL range sizes as equal, so ignore_conflicts cannot stop a
    # second db_bench row: those are created only when missing.
    known = existing() if any(range_size is None for _, range_size in keys) else {}
    Microbenchmark.objects.bulk_create(
        [
            Microbenchmark(suite=suite, test=test, range_size=range_size, is_warmup=excluded(test))
            for test, range_size in keys
            if (test, range_size) not in known
        ],
        ignore_conflicts=True,
    )
    return existing()


def _create_runs(bundle: Bundle, parsed: Sequence[ParsedRun], info: Mapping[str, Any]) -> list[Run]:
    """The runs' rows, in ``parsed``'s order, with what they point at found or created in bulk.

    The first run that names a server, workload, build or config supplies its
    details (like ``get_or_create``'s defaults); a build already recorded as
    another version is refused.
    """
    dbms = find_or_create(
        Dbms,
        {p.dbms: functools.partial(Dbms, name=p.dbms) for p in reversed(parsed)},
        fetch=lambda names: ((d.name, d) for d in Dbms.objects.filter(name__in=names)),
    )
    version_keys = {(dbms[p.dbms].pk, p.version) for p in parsed}
    versions = find_or_create(
        Version,
        {
            key: functools.partial(Version, dbms_id=key[0], text=key[1], sort_key=sort_key(key[1]))
            for key in version_keys
        },
        fetch=lambda keys: (
            ((v.dbms_id, v.text), v)
            for v in Version.objects.filter(
                dbms_id__in={k[0] for k in keys}, text__in={k[1] for k in keys}
            ).select_related("dbms")
        ),
    )
    builds = find_or_create(
        Build,
        {
            p.build: functools.partial(
                Build,
                name=p.build,
                version=versions[(dbms[p.dbms].pk, p.version)],
                flavour=p.flavour,
                notes=p.meta.notes or "",
            )
            for p in reversed(parsed)  # reversed: the first run's details win
        },
        fetch=lambda names: ((b.name, b) for b in Build.objects.filter(name__in=names).select_related("version__dbms")),
    )
    for p in parsed:
        build = builds[p.build]
        version = versions[(dbms[p.dbms].pk, p.version)]
        if build.version_id != version.pk:
            raise ImportFailed(
                f"{p.name}: build {p.build!r} is already recorded as {build.version}, not "
                f"{p.dbms} {p.version}; fix the manifest or the build name"
            )
    config_keys = [(p.config, hashlib.sha256(_config_str(p).encode()).hexdigest()) for p in parsed]
    config_of = dict(zip(config_keys, parsed, strict=True))
    configs: dict[tuple[str, str], Config] = {}
    # Created in batches of bounded text: a bundle's config files can add up to gigabytes.
    for batch in _batches(list(config_of), lambda key: _config_size(config_of[key]), CONFIG_BATCH_BYTES):
        configs |= find_or_create(
            Config,
            {key: functools.partial(_new_config, key, config_of[key]) for key in batch},
            fetch=lambda keys: (
                ((c.name, c.text_sha256), c)
                for c in Config.objects.filter(
                    name__in={k[0] for k in keys}, text_sha256__in={k[1] for k in keys}
                ).defer("text")
            ),
        )

    servers = find_or_create(
        Server,
        # The CPUs a run reported, unless the manifest's server details say otherwise.
        {p.server: functools.partial(Server, name=p.server, **{"cpus": p.cpus, **info}) for p in reversed(parsed)},
        fetch=lambda names: ((s.name, s) for s in Server.objects.filter(name__in=names)),
    )
    workloads = find_or_create(
        Workload,
        {
            (p.suite, p.workload): functools.partial(Workload, suite=p.suite, name=p.workload, params=p.workload_params)
            for p in reversed(parsed)
        },
        fetch=lambda keys: (
            ((w.suite, w.name), w)
            for w in Workload.objects.filter(suite__in={k[0] for k in keys}, name__in={k[1] for k in keys})
        ),
    )
    return Run.objects.bulk_create(
        [
            Run(
                name=p.name,
                bundle=bundle,
                path=p.path,
                build=builds[p.build],
                config=configs[key],
                server=servers[p.server],
                workload=workloads[(p.suite, p.workload)],
                pk_mode=p.pk,
                content_sha256=p.content_sha256,
                cpus=p.cpus,
                started_at=p.started_at,
                load_seconds=p.load_seconds,
                load_inserts_per_s=p.load_inserts_per_s,
                commands=p.commands,
                sysbench_version=p.sysbench_version,
                warnings=p.warnings,
            )
            for p, key in zip(parsed, config_keys, strict=True)
        ]
    )


CONFIG_BATCH_BYTES = 64 * 1024 * 1024


def _config_str(parsed: ParsedRun) -> str:
    text = parsed.config_text
    return text if isinstance(text, str) else _text(text.read())


def _config_size(parsed: ParsedRun) -> int:
    text = parsed.config_text
    return len(text) if isinstance(text, str) else text.size


def _new_config(key: tuple[str, str], parsed: ParsedRun) -> Config:
    return Config(name=key[0], text_sha256=key[1], text=_config_str(parsed))


def _batches(keys: list[Any], size: Callable[[Any], int], budget: int) -> Iterator[list[Any]]:
    """``keys`` in order, in runs whose sizes add up to at most ``budget`` (a bigger one alone)."""
    batch: list[Any] = []
    total = 0
    for key in keys:
        if batch and total + size(key) > budget:
            yield batch
            batch, total = [], 0
        batch.append(key)
        total += size(key)
    if batch:
        yield batch


def submit_and_import(
    data: bytes | IO[bytes],
    *,
    name: str,
    source: str,
    user: Any = None,
    overrides: Mapping[str, Any] | None = None,
    pre_parsed: PreParsed | None = None,
) -> ImportReport:
    """Store and import at once, all or nothing: the command line's path (nothing is kept on failure)."""
    with transaction.atomic():
        bundle, _created = store_bundle(data, name=name, source=source, user=user, overrides=overrides)
        if bundle.status == Bundle.Status.IMPORTED:
            return _report_existing(bundle)
        try:
            return import_bundle(bundle.pk, pre_parsed=pre_parsed)
        except ImportFailed:
            transaction.set_rollback(True)
            raise


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
    if contents.runs and not contents.dbbench and not contents.ibench:
        first = contents.runs[0]
        raise sysbench.ParseError(
            f"{name[:255]}:{first.path or first.name}: no result files (sb.o.<test>.range<R>.pk<P>.dop<N>) "
            "in this run directory"
        )


@dataclass(frozen=True)
class Submission:
    bundle: Bundle
    # These bytes were imported before this upload: nothing was queued, the bundle is the earlier one.
    already_imported: bool


def submit_bundle(
    data: bytes | IO[bytes],
    *,
    name: str,
    source: str,
    user: Any = None,
    overrides: Mapping[str, Any] | None = None,
) -> Submission:
    """Check and store the bundle and queue its import (the upload page's and the API's path).

    A bundle that fails ``check_bundle`` is kept as failed with the reason, as
    a failed import would be, and is not queued. The task is sent after the
    commit, so a worker never looks for a bundle row that is not there yet. If
    the broker is down the bundle stays queued; the periodic
    ``requeue_bundles`` task sends it again once the broker is back.
    """
    from runs.tasks import import_bundle_task

    earlier = Bundle.objects.filter(sha256=archive_store.sha256_of(data)[0]).only("status").first()
    if earlier is None or earlier.status == Bundle.Status.FAILED:
        try:
            check_bundle(data, name=name)
        except bad_input() as exc:
            with transaction.atomic():
                bundle, _created = store_bundle(data, name=name, source=source, user=user, overrides=overrides)
                _mark_failed(bundle.pk, str(exc))
            bundle.refresh_from_db()
            return Submission(bundle, already_imported=False)
    bundle, created = store_bundle(data, name=name, source=source, user=user, overrides=overrides)
    already_imported = not created and bundle.status == Bundle.Status.IMPORTED
    abandoned = (
        bundle.status == Bundle.Status.IMPORTING
        and bundle.heartbeat_at is not None
        and bundle.heartbeat_at < timezone.now() - claim_stale_after()
    )
    if bundle.status == Bundle.Status.QUEUED or abandoned:
        bundle_id = bundle.pk

        def enqueue() -> None:
            try:
                import_bundle_task.delay(bundle_id)
            except ImportFailed:
                pass  # eager mode: the failure is already recorded on the bundle
            except Exception:  # the broker is unreachable: the bundle is kept and requeued later
                log.exception("could not queue the import of bundle %s; it stays queued", bundle_id)

        transaction.on_commit(enqueue)
    bundle.refresh_from_db()
    return Submission(bundle, already_imported=already_imported)
