"""Import result bundles: the one code path behind the upload page, the API, the command and the task.

``store_bundle`` keeps the uploaded bytes (deduplicated by content hash);
``import_bundle`` claims a stored bundle (one conditional update, kept alive by
a heartbeat), parses it (``runs.parse``, no database) and stores its runs and
results in one transaction: an error part-way leaves no run, no result.
``submit_and_import`` does both at once for the command line; the upload page
and the API queue the import instead (``runs.submit``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import logging
import operator
import threading
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import IO, Any

from django.conf import settings
from django.db import DatabaseError, connection, transaction
from django.db.models import Count, Q
from django.utils import timezone

import suites
from runs import archive_store, attach, summary_store
from runs.bulk import create_rows, find_or_create, insert_rows
from runs.bundle import archive_directory
from runs.manifest import RunMeta
from runs.models import (
    Build,
    Bundle,
    Config,
    Dbms,
    Microbenchmark,
    Result,
    Run,
    RunFile,
    Server,
    Version,
    Workload,
)
from runs.parse import ImportFailed, ParsedBundle, ParsedRun, bad_input, parse_bundle
from runs.versions import sort_key
from suites.openformat import parse as openformat
from suites.sysbench import parse as sysbench

# Callers import the import path's names from here, whichever module defines them.
__all__ = [
    "BundleBusy",
    "ClaimLost",
    "ImportFailed",
    "ImportReport",
    "PreParsed",
    "StorageFull",
    "archive_directory",
    "bad_input",
    "claim_bundle",
    "import_bundle",
    "parse_bundle",
    "pre_parse",
    "store_bundle",
    "submit_and_import",
]

log = logging.getLogger(__name__)


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
    # {"path", "reason"} of the first files not read (``ignored_files`` counts them all).
    ignored: list[dict[str, str]] = field(default_factory=list)
    # {"path", "what"} of the files (run directories, summary tables) read, and what was read of each.
    read: list[dict[str, str]] = field(default_factory=list)

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
            "ignored": self.ignored,
            "read": self.read,
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


class StorageFull(ImportFailed):
    """The server's disk for archives is full: nothing was stored, and the same bundle may be sent again later.
    A failure of the server, not of the bundle: the doors answer 507, not 4xx."""


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
    except archive_store.StorageFull as exc:
        raise StorageFull(str(exc)) from exc


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
                    "ignored": report.ignored,
                    "read": report.read,
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
        mark_failed(bundle_id, str(exc))
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


def mark_failed(bundle_id: int, error: str) -> None:
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
        .exclude(microbenchmark__suite=suites.SYSBENCH.name, microbenchmark__test=sysbench.LOAD_TEST)  # not a test
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
        ignored=list(bundle.stats.get("ignored", [])),
        read=list(bundle.stats.get("read", [])),
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
        ignored=[{"path": path, "reason": reason} for path, reason in parsed.ignored],
        read=[{"path": path, "what": what} for path, what in parsed.read],
    )
    summary_plan = summary_store.plan(parsed.runs)
    for parsed_run, holder in summary_plan.skipped:
        report.runs.append(
            ImportedRun(
                None,
                parsed_run.name,
                parsed_run.dbms,
                parsed_run.version,
                parsed_run.server,
                0,
                0,
                True,
                summary_store.holder_details(holder),
            )
        )
        report.warnings.append(summary_store.skipped_warning(parsed_run, holder))
    new = _new_runs(summary_plan.remaining, report)
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
    values = operator.itemgetter(*RESULT_FIELDS)  # of a row over the defaults: a million times at scale L

    def result_rows() -> Iterator[tuple[Any, ...]]:
        for run, parsed_run in zip(runs, new, strict=True):
            ids = microbenchmarks[parsed_run.suite]
            for row in parsed_run.results:
                yield (run.pk, ids[(row["test"], row["range_size"])], *values({**defaults, **row}))
            if progress:
                progress.runs_stored += 1  # its results are in the COPY stream: what the page counts as stored

    insert_rows(Result, fields, result_rows())
    insert_rows(
        RunFile,
        ("run_id", "name", "kind", "text"),
        (
            (run.pk, n, kind, kept.read().decode("utf-8", errors="replace"))
            for run, parsed_run in zip(runs, new, strict=True)
            for (n, kind, kept) in parsed_run.files
        ),
    )
    report.warnings.extend(summary_store.replace_copies(list(zip(new, runs, strict=True)), summary_plan))
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


def _microbenchmarks(keys: set[tuple[str, int | None]], suite: str) -> dict[tuple[str, int | None], int]:
    """Ids of the microbenchmarks, creating the missing ones in one statement."""
    excluded = suites.get(suite).excluded
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
    builds = _builds(parsed)
    config_keys = [(p.config, hashlib.sha256(_config_str(p).encode()).hexdigest()) for p in parsed]
    configs = _configs(dict(zip(config_keys, parsed, strict=True)))

    servers = find_or_create(
        Server,
        # The CPUs (and RAM, storage, OS) a run's files reported, unless the manifest's server details say otherwise.
        {
            p.server: functools.partial(Server, name=p.server, **{"cpus": p.cpus, **p.suite_server, **info})
            for p in reversed(parsed)
        },
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
    _carry_document_groups(workloads, parsed)
    return create_rows(
        Run,
        [
            Run(
                name=p.name,
                bundle=bundle,
                path=p.path,
                build=builds[p.build],
                config=configs[key],
                server=servers[p.server],
                workload=workloads[(p.suite, p.workload)],
                content_sha256=p.content_sha256,
                cpus=p.cpus,
                started_at=p.started_at,
                started_from=p.started_from,
                warnings=p.warnings,
                notes=p.notes,
                **p.run_fields(),
                **commit_fields(p.meta),
            )
            for p, key in zip(parsed, config_keys, strict=True)
        ],
    )


def _builds(parsed: Sequence[ParsedRun]) -> dict[str, Build]:
    """The runs' DBMSs, versions and builds, found or created; a build already recorded as another version is
    refused."""
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
    return builds


def _configs(config_of: dict[tuple[str, str], ParsedRun]) -> dict[tuple[str, str], Config]:
    """The runs' configs by (name, text hash), found or created."""
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
    return configs


def commit_fields(meta: RunMeta) -> dict[str, Any]:
    """The Run's commit fields from what the manifest and the upload say (blank where they say nothing)."""
    return {
        "commit": meta.commit or "",
        "branch": meta.branch or "",
        "pull_request": meta.pull_request,
        "repository": meta.repository or "",
        "commit_time": meta.commit_time,
    }


def _carry_document_groups(workloads: Mapping[tuple[str, str], Workload], parsed: Sequence[ParsedRun]) -> None:
    """A series' groups are those its newest documents brought: a later upload may add or change them."""
    carried = {
        (p.suite, p.workload): p.workload_params[openformat.DOCUMENT_KEY]
        for p in parsed
        if openformat.DOCUMENT_KEY in p.workload_params
    }
    for key, value in carried.items():
        workload = workloads[key]
        if workload.params.get(openformat.DOCUMENT_KEY) != value:
            workload.params = {**workload.params, openformat.DOCUMENT_KEY: value}
            workload.save(update_fields=["params"])


CONFIG_BATCH_BYTES = 64 * 1024 * 1024


def _config_str(parsed: ParsedRun) -> str:
    text = parsed.config_text
    return text if isinstance(text, str) else text.read().decode("utf-8", errors="replace")


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
