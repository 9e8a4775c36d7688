"""HTTP API for bundles: ``POST /api/bundles/`` (multipart), ``GET /api/bundles/{id}`` and
``POST /api/bundles/{id}/attach`` (a skipped run held under another series, added to the bundle's)."""

from __future__ import annotations

from datetime import datetime

from django.db.models import Count
from django.http import HttpRequest
from django.shortcuts import get_object_or_404
from django.urls import reverse
from ninja import Field, File, Form, Router, Schema, Status
from ninja.files import UploadedFile

from accounts.permissions import UPLOAD, api_auth
from benchdash.api_errors import ErrorOut, ValidationErrorOut, responses
from runs.attach import AttachError, attach_run, attachable
from runs.importer import ImportFailed, StorageFull
from runs.manifest import ManifestError, check_upload_fields
from runs.models import Bundle, Run, Server
from runs.submit import submit_bundle

router = Router(tags=["bundles"])


class RunOut(Schema):
    id: int
    name: str
    dbms: str
    version: str
    server: str
    workload: str
    results: int
    url: str
    commit: str = Field("", description="git commit id the build was made from")
    branch: str = ""
    pull_request: int | None = None
    repository: str = Field("", description="owner/name or the repository's URL")
    commit_time: datetime | None = None
    commit_url: str = Field("", description="the commit's page at its repository, when the repository is known")
    pull_request_url: str = ""


class ProgressOut(Schema):
    """What the import has done so far; all zero until a worker takes the bundle."""

    phase: str = Field(description="reading (the archive) or storing (the runs); empty before a worker took it")
    files_read: int = Field(description="result files read from the archive so far")
    runs_found: int = Field(description="runs the archive holds (known once it is read)")
    runs_new: int = Field(description="of those, runs not imported before: the ones being stored")
    runs_stored: int = Field(description="of the new runs, how many are stored so far")


class SkippedRunOut(Schema):
    id: int | None = Field(description="the run already stored (from another bundle)")
    name: str
    bundle_id: int | None = Field(description="the bundle it was imported from")
    url: str | None
    attachable: bool = Field(
        False,
        description="it is held under another server or workload than this bundle meant, so this series lacks "
        "it: POST its id to the bundle's attach endpoint to add it",
    )
    attached_run_id: int | None = Field(None, description="the run it was attached as, to this bundle's series")


class IgnoredFileOut(Schema):
    path: str = Field(description="where the file is in the bundle")
    reason: str = Field(description="why it was not read, e.g. no sb.o beside this sb.met")


class ReadFileOut(Schema):
    path: str = Field(description="where the file (or run directory) is in the bundle")
    what: str = Field(description="what was read of it, e.g. QPS of 6 runs × 27 microbenchmarks at concurrency 8")


class BundleOut(Schema):
    bundle_id: int
    name: str
    status: str = Field(description="queued → importing → imported, or failed (then error says why)")
    already_imported: bool = Field(False, description="these exact bytes were imported before, as this bundle")
    uploaded_at: datetime
    imported_at: datetime | None
    note: str = Field(description="what an upload that stored nothing new means, for people; empty otherwise")
    error: str
    url: str
    progress: ProgressOut
    runs: list[RunOut]
    skipped_runs: list[SkippedRunOut] = Field(description="runs of the bundle imported before, from other bundles")
    warnings: list[str] = Field(
        [], description="what the import noticed: 0 QPS results, runs already imported for another server"
    )
    ignored_files: int = Field(0, description="how many files of the bundle were not read")
    ignored: list[IgnoredFileOut] = Field([], description="those files (up to 20,000), each with why it was not read")
    read: list[ReadFileOut] = Field(
        [], description="every file read (up to 20,000), each with what it became (which run, which results)"
    )


def _run_out(request: HttpRequest, run: Run) -> RunOut:
    """``run`` annotated with ``n_results`` and its build, version, DBMS, server and workload selected."""
    return RunOut(
        id=run.pk,
        name=run.name,
        dbms=run.build.version.dbms.name,
        version=run.build.version.text,
        server=run.server.name,
        workload=run.workload.name,
        results=run.n_results,  # type: ignore[attr-defined]
        url=request.build_absolute_uri(run.get_absolute_url()),
        commit=run.commit,
        branch=run.branch,
        pull_request=run.pull_request,
        repository=run.repository,
        commit_time=run.commit_time,
        commit_url=run.commit_links.commit_url,
        pull_request_url=run.commit_links.pull_request_url,
    )


def bundle_out(request: HttpRequest, bundle: Bundle, *, already_imported: bool = False) -> BundleOut:
    runs = (
        Run.objects.filter(bundle=bundle)
        .select_related("build__version__dbms", "server", "workload")
        .annotate(n_results=Count("results"))
        .order_by("build__version__sort_key", "name")
    )
    skipped = bundle.stats.get("skipped_runs", []) if bundle.status == Bundle.Status.IMPORTED else []
    held = attachable(bundle) if any("attach_to" in entry for entry in skipped) else {}
    progress = {"phase": "", "files_read": 0, "runs_found": 0, "runs_new": 0, "runs_stored": 0, **bundle.progress}
    run_rows = [_run_out(request, run) for run in runs]
    return BundleOut(
        bundle_id=bundle.pk,
        name=bundle.original_name,
        status=bundle.status,
        already_imported=already_imported,
        uploaded_at=bundle.uploaded_at,
        imported_at=bundle.imported_at,
        note=_note(bundle, already_imported=already_imported, new_runs=len(run_rows), skipped=len(skipped)),
        error=bundle.error,
        warnings=list((bundle.stats or {}).get("warnings", [])),
        ignored_files=(bundle.stats or {}).get("ignored_files", 0),
        ignored=[IgnoredFileOut(**item) for item in (bundle.stats or {}).get("ignored", [])],
        read=[ReadFileOut(**item) for item in (bundle.stats or {}).get("read", [])],
        url=request.build_absolute_uri(bundle.get_absolute_url()),
        progress=ProgressOut(**progress),
        runs=run_rows,
        skipped_runs=[
            SkippedRunOut(
                id=item.get("id"),
                name=item.get("name", ""),
                bundle_id=item.get("bundle_id"),
                url=request.build_absolute_uri(reverse("runs:run", args=[item["id"]])) if item.get("id") else None,
                attachable=item.get("id") in held,
                attached_run_id=held[item["id"]].attached_run_id if item.get("id") in held else None,
            )
            for item in skipped
        ],
    )


def _note(bundle: Bundle, *, already_imported: bool, new_runs: int, skipped: int) -> str:
    if already_imported:
        when = bundle.imported_at.strftime("%Y-%m-%d %H:%M") if bundle.imported_at else "earlier"
        return f"already imported on {when} UTC as bundle {bundle.pk}; nothing new was stored"
    if skipped and not new_runs:
        return f"all {skipped} runs of this bundle were imported before, from other bundles (skipped_runs); nothing new"
    return ""


@router.post(
    "/bundles/",
    auth=api_auth(UPLOAD),
    # 422: a bad bundle (BundleOut, its error says why) or a request without the form's fields; 507: the server's
    # disk is full (the upload spool, or the archives' storage), nothing was stored.
    response=responses(
        {201: BundleOut, 200: BundleOut, 202: BundleOut, 422: BundleOut | ValidationErrorOut, 507: ErrorOut}
    ),
)
def upload_bundle(
    request: HttpRequest,
    file: File[UploadedFile],
    server: Form[str] = "",
    workload: Form[str] = "",
    commit: Form[str] = "",
    branch: Form[str] = "",
    pull_request: Form[int | None] = None,
    repository: Form[str] = "",
    commit_time: Form[str] = "",
) -> Status[BundleOut] | Status[ErrorOut]:
    """Upload a result bundle. 201: imported now; 200: nothing new (these bytes were imported before, or every
    run they hold was: ``note`` says which); 202: queued for a worker (poll the bundle's ``url``: ``status``
    and ``progress``); 422: the bundle is bad (``error`` says why; no run was stored), found before queueing;
    507: the server's disk is full (``detail`` says so; nothing was stored: send it again later).
    ``commit``, ``branch``, ``pull_request``, ``repository`` (owner/name or its URL) and ``commit_time`` (ISO 8601)
    say where the build's code came from, for every run of the bundle (over its manifest's); the CI verdict
    (``/api/verdict/{bundle_id}``) compares by them.
    Needs the uploader role: ``Authorization: Bearer <token>`` (tokens at /account/tokens/) or a logged-in session."""
    longest = Server._meta.get_field("name").max_length or 200
    if len(server) > longest or len(workload) > longest or "\x00" in server + workload:
        return Status(400, ErrorOut(detail=f"server and workload: at most {longest} characters each, no NUL"))
    try:
        origin = check_upload_fields(
            {
                "commit": commit,
                "branch": branch,
                "pull_request": pull_request,
                "repository": repository,
                "commit_time": commit_time,
            }
        )
    except ManifestError as exc:
        return Status(400, ErrorOut(detail=str(exc)))
    try:
        submission = submit_bundle(
            file,  # its temporary file, stored a chunk at a time: never read whole into memory
            name=file.name or "bundle",
            source=Bundle.Source.API,
            user=request.user,
            overrides={"server": server, "workload": workload, **origin},
        )
    except StorageFull as exc:
        return Status(507, ErrorOut(detail=str(exc)))
    except ImportFailed as exc:
        return Status(400, ErrorOut(detail=str(exc)))
    bundle = submission.bundle
    out = bundle_out(request, bundle, already_imported=submission.already_imported)
    if submission.already_imported or (bundle.status == Bundle.Status.IMPORTED and out.skipped_runs and not out.runs):
        return Status(200, out)
    status = {Bundle.Status.IMPORTED: 201, Bundle.Status.FAILED: 422}.get(bundle.status, 202)  # type: ignore[call-overload]
    return Status(status, out)


@router.get("/bundles/{int:bundle_id}", response=responses({200: BundleOut}, not_found=True))
def get_bundle(request: HttpRequest, bundle_id: int) -> BundleOut:
    """A bundle's import status (queued → importing → imported, or failed), its progress, and its runs."""
    return bundle_out(request, get_object_or_404(Bundle, pk=bundle_id))


class AttachIn(Schema):
    run: int = Field(description="the id of the skipped run to attach (an attachable entry of skipped_runs)")


class AttachOut(Schema):
    created: bool = Field(description="true: attached now; false: it had been attached before, as this run")
    run: RunOut = Field(description="the run of this bundle's series holding the results")
    bundle_url: str


@router.post(
    "/bundles/{int:bundle_id}/attach",
    auth=api_auth(UPLOAD),
    response=responses({201: AttachOut, 200: AttachOut}, not_found=True),
)
def attach_bundle_run(request: HttpRequest, bundle_id: int, body: AttachIn) -> Status[AttachOut] | Status[ErrorOut]:
    """Attach a run this bundle held under another series to the series the bundle meant (its server and
    workload): the results are stored once more, as a run of this bundle. 201: attached now; 200: attached
    before (the same run again, nothing stored); 400: ``run`` is not an attachable skipped run of this bundle;
    404: no such bundle. Needs the uploader role, as uploading does."""
    bundle = get_object_or_404(Bundle, pk=bundle_id)
    try:
        run, created = attach_run(bundle, body.run)
    except AttachError as exc:
        return Status(400, ErrorOut(detail=f"{exc}; the bundle's skipped_runs say which are attachable"))
    counted = (
        Run.objects.filter(pk=run.pk)
        .select_related("build__version__dbms", "server", "workload")
        .annotate(n_results=Count("results"))
        .get()
    )
    out = AttachOut(
        created=created,
        run=_run_out(request, counted),
        bundle_url=request.build_absolute_uri(bundle.get_absolute_url()),
    )
    return Status(201 if created else 200, out)
