"""A bundle's runs as plain values: the pure half of the import, with no database behind it.

``parse_bundle`` reads an archive (``runs.bundle``) and turns what it holds into
``ParsedRun``s: sysbench run directories through the suite's reader
(``suites.sysbench.rundir``), every other
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
from datetime import datetime
from typing import IO, Any, cast

from django.conf import settings

import suites
from runs import bundle, summaries
from runs.bundle import BundleContents, BundleError, KeptFile, Limits, RunDir, manifest_path, read_bundle
from runs.manifest import MANIFEST_NAME, Manifest, ManifestError, RunMeta, parse_manifest
from suites.base import Suite, SuiteRun
from suites.sysbench import parse as sysbench
from suites.sysbench import rundir


class ImportFailed(Exception):
    """The bundle could not be imported; the message says why and nothing was written."""


# What someone reading the list should see first: files that look like results but could not be used, then
# the routine ones (raw samples, copies, other output) that every bundle has by the hundred.
_NEEDS_A_LOOK = (
    rundir.NO_SB_O,
    rundir.NO_PREPARE_O,
    rundir.LOAD_UNFINISHED,
    rundir.SECOND_LOAD,
    rundir.SUMMARY_MISMATCH,
    rundir.NO_SB_R_QPS,
    bundle.OUTSIDE_RUN_DIR,
    bundle.UNNAMED_FOLDER,
)
# How many files a bundle lists as read, and as not read (the rest are counted): every file of any real archive,
# so the two lists account for each; a bound all the same on what a bundle's stats hold.
IGNORED_SHOWN = 20_000
MANIFEST_READ = "manifest: what it says of the runs below it (server, workload, build) put over what their files say"


def manifest_file(folder: str) -> str:
    """The path of the manifest of ``folder`` in the bundle."""
    return f"{folder}/{MANIFEST_NAME}" if folder else MANIFEST_NAME


def wanted(name: str) -> bool:
    """Files worth reading into memory: a run directory's result and settings files (raw samples, sb.vm, sb.io,
    sb.ps, … are left in the archive) and the bundle's manifests."""
    return name == MANIFEST_NAME or rundir.wanted(name)


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
    # (path in the bundle, what it became) for the files of this run that were read.
    read: list[tuple[str, str]] = field(default_factory=list)
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
    # (path in the bundle, what it became): each file read (of run directories, manifests, the other suites'
    # files), the first IGNORED_SHOWN.
    read: list[tuple[str, str]] = field(default_factory=list)


def parse_run(run_dir: RunDir, meta: RunMeta, *, bundle_name: str) -> ParsedRun:
    """One result directory → a ParsedRun, with what the manifests and the upload say put over what its files
    say; raises sysbench.ParseError naming the file at fault."""
    where = f"{bundle_name}:{run_dir.path}" if run_dir.path else f"{bundle_name}:{run_dir.name}"
    read = rundir.read_run_dir(run_dir, where=where, skip=(MANIFEST_NAME,))
    name = read.run_name
    # The name's warnings (which DBMS a build code means) are moot when the manifest says which DBMS it is.
    warnings = [] if meta.dbms else [f"{run_dir.name}: {w}" for w in name.warnings]
    warnings.extend(read.warnings)
    server = meta.server or (f"{read.cpus}-CPU server" if read.cpus else "unknown server")
    if not meta.server:
        warnings.append(f"{run_dir.name}: no server named (manifest or upload form); using {server!r}")
    return ParsedRun(
        suite=suites.SYSBENCH.name,
        name=run_dir.name,
        path=run_dir.path,
        content_sha256=read.content_sha256,
        meta=meta,
        dbms=meta.dbms or name.dbms,
        version=meta.version or name.version,
        build=meta.build or name.build,
        flavour=meta.flavour if meta.flavour is not None else name.flavour,
        config=meta.config or name.config,
        server=server,
        workload=meta.workload or read.workload,
        workload_params=read.workload_params,
        started_at=read.started_at,
        started_from=read.started_from,
        results=read.results,
        warnings=warnings,
        ignored_files=len(read.ignored),
        ignored=read.ignored,
        read=read.read,
        sysbench=SysbenchDetail(
            pk=name.pk,
            cpus=read.cpus,
            load_seconds=read.load_seconds,
            load_inserts_per_s=read.load_inserts_per_s,
            sysbench_version=read.sysbench_version,
            commands=read.commands,
            scan_formula=read.scan_formula,
            config_text=cast("str | KeptFile", read.config_text),
            files=cast("list[tuple[str, str, KeptFile]]", read.files),
        ),
    )


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
    read = [item for run in runs for item in run.read]
    read.extend((manifest_file(folder), MANIFEST_READ) for folder in contents.manifests)
    ignored = contents.ignored_count + sum(r.ignored_files for r in runs)
    listed = [(path, contents.ignored_reasons.get(path, rundir.NOT_A_RESULT)) for path in contents.ignored]
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
        read.extend((_in_origin(origins, path), what) for path, what in found.read)
        listed.extend((_in_origin(origins, path), why) for path, why in found.not_read)
        for run in found.runs:
            folder = manifest_path(run.source, origins.get(run.source, "")).rpartition("/")[0]
            parsed = _suite_parsed_run(suite, run, run_meta(manifests, folder, run.name, given), bundle_name=name)
            runs.append(parsed)
            warnings.extend(parsed.warnings)
    refuse_control_characters(runs, bundle_name=name)
    runs, duplicates, stale = summaries.keep_raw_over_summary(runs)
    # Once each: the runs of one summary table share what it does not say.
    warnings = list(dict.fromkeys([w for w in warnings if w not in stale] + duplicates))
    return ParsedBundle(
        format=contents.format,
        runs=runs,
        members=contents.members,
        ignored_files=ignored,
        warnings=warnings,
        server_info=_server_info(manifests),
        ignored=sorted(listed, key=lambda item: item[1] not in _NEEDS_A_LOOK)[:IGNORED_SHOWN],
        read=read[:IGNORED_SHOWN],
    )


def _in_origin(origins: Mapping[str, str], path: str) -> str:
    """A suite file's path in the bundle: inside the nested archive it came from, if any."""
    return f"{origins[path]}/{path}" if origins.get(path) else path


def _server_info(manifests: Mapping[str, Manifest]) -> dict[str, Any]:
    """The server details the bundle's root manifest gives."""
    root = manifests.get("")
    return root.server_info.model_dump(exclude_none=True) if root is not None and root.server_info else {}


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
    results, content_sha256, sources = _concurrency(run, meta, warnings, bundle_name)
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


def _concurrency(
    run: SuiteRun, meta: RunMeta, warnings: list[str], bundle_name: str
) -> tuple[list[dict[str, Any]], str, dict[str, str]]:
    """A suite run's results, content hash and sources with the manifest's concurrency applied where the files
    did not say theirs; said when they did not and nothing does, or when the manifest's is not used."""
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
    return results, content_sha256, sources


# Characters no imported name may hold: a terminal or a spreadsheet showing the name would run or hide them.
_CONTROL_RE = re.compile(r"[\x00-\x1f\x7f-\x9f]")
# The names of a run that pages, exports and commands show, as the refusal calls them.
_NAMED_FIELDS = (
    ("name", "run name"),
    ("build", "build"),
    ("config", "config"),
    ("server", "server"),
    ("workload", "workload"),
    ("dbms", "DBMS"),
    ("version", "version"),
    ("flavour", "flavour"),
)


def refuse_control_characters(runs: list[ParsedRun], *, bundle_name: str) -> None:
    """Refuse a bundle any of whose runs' names (run, build, config, server, workload, DBMS, version, flavour,
    microbenchmark) holds a control character, naming the file and the field: whether it came from a file, a
    manifest or the upload form, such a name would rewrite what a terminal or a spreadsheet shows."""
    for run in runs:
        named = [(what, getattr(run, attr)) for attr, what in _NAMED_FIELDS]
        named.extend(("microbenchmark", row["test"]) for row in run.results)
        for what, value in named:
            match = _CONTROL_RE.search(value or "")
            if match:
                raise ImportFailed(
                    f"{bundle_name}:{run.path}: the {what} {value[:60]!r} holds the control character "
                    f"U+{ord(match.group()):04X}; names must be printable (fix the file, benchdash.toml or the form)"
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
