"""HTTP API for bundles: ``POST /api/bundles/`` (multipart) and ``GET /api/bundles/{id}``."""

from __future__ import annotations

import hashlib

from django.db.models import Count
from django.http import HttpRequest
from django.shortcuts import get_object_or_404
from ninja import File, Form, Router, Schema, Status
from ninja.files import UploadedFile

from runs.api_errors import ErrorOut, ValidationErrorOut, responses
from runs.importer import ImportFailed, submit_bundle
from runs.models import Bundle, Run, Server
from runs.permissions import UPLOAD, api_auth

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


class BundleOut(Schema):
    bundle_id: int
    name: str
    status: str
    already_imported: bool = False
    error: str
    url: str
    runs: list[RunOut]
    warnings: list[str] = []  # what the import noticed: 0 QPS results, runs already imported for another server


def bundle_out(request: HttpRequest, bundle: Bundle, *, already_imported: bool = False) -> BundleOut:
    runs = (
        Run.objects.filter(bundle=bundle)
        .select_related("build__version__dbms", "server", "workload")
        .annotate(n_results=Count("results"))
        .order_by("build__version__sort_key", "name")
    )
    return BundleOut(
        bundle_id=bundle.pk,
        name=bundle.original_name,
        status=bundle.status,
        already_imported=already_imported,
        error=bundle.error,
        warnings=list((bundle.stats or {}).get("warnings", [])),
        url=request.build_absolute_uri(bundle.get_absolute_url()),
        runs=[
            RunOut(
                id=run.pk,
                name=run.name,
                dbms=run.build.version.dbms.name,
                version=run.build.version.text,
                server=run.server.name,
                workload=run.workload.name,
                results=run.n_results,  # type: ignore[attr-defined]
                url=request.build_absolute_uri(run.get_absolute_url()),
            )
            for run in runs
        ],
    )


@router.post(
    "/bundles/",
    auth=api_auth(UPLOAD),
    # 422: a bad bundle (BundleOut, its error says why) or a request without the form's fields.
    response=responses({201: BundleOut, 200: BundleOut, 202: BundleOut, 422: BundleOut | ValidationErrorOut}),
)
def upload_bundle(
    request: HttpRequest,
    file: File[UploadedFile],
    server: Form[str] = "",
    workload: Form[str] = "",
) -> tuple[int, BundleOut | ErrorOut]:
    """Upload a result bundle. 201: imported now; 200: these bytes were imported before (nothing new);
    202: queued for a worker (poll the bundle); 422: the bundle is bad (``error`` says why; no run was stored).
    Needs the uploader role: ``Authorization: Bearer <token>`` (tokens at /account/tokens/) or a logged-in session."""
    longest = Server._meta.get_field("name").max_length or 200
    if len(server) > longest or len(workload) > longest or "\x00" in server + workload:
        return Status(400, ErrorOut(detail=f"server and workload: at most {longest} characters each, no NUL"))
    try:
        data = file.read()
        already = Bundle.objects.filter(status=Bundle.Status.IMPORTED, sha256=hashlib.sha256(data).hexdigest()).exists()
        bundle = submit_bundle(
            data,
            name=file.name or "bundle",
            source=Bundle.Source.API,
            user=request.user,
            overrides={"server": server, "workload": workload},
        )
    except ImportFailed as exc:
        return Status(400, ErrorOut(detail=str(exc)))
    if already:
        return Status(200, bundle_out(request, bundle, already_imported=True))
    status = {Bundle.Status.IMPORTED: 201, Bundle.Status.FAILED: 422}.get(bundle.status, 202)  # type: ignore[call-overload]
    return Status(status, bundle_out(request, bundle))


@router.get("/bundles/{int:bundle_id}", response=responses({200: BundleOut}, not_found=True))
def get_bundle(request: HttpRequest, bundle_id: int) -> BundleOut:
    """A bundle's import status and the runs it created."""
    return bundle_out(request, get_object_or_404(Bundle, pk=bundle_id))
