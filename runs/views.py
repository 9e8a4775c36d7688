"""Pages to see what was imported: runs, one run, bundles, and the upload page."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.core.paginator import Paginator
from django.db.models import Count, Q
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.utils import timezone
from django.views.decorators.http import require_http_methods
from django_htmx.http import HttpResponseClientRedirect

from accounts.permissions import UPLOAD, permission_required
from benchdash import pagecache
from benchdash.http import HtmxHttpRequest
from runs.attach import AttachError, attach_run, attachable
from runs.forms import RunFilterForm, UploadForm
from runs.importer import ImportFailed, StorageFull, claim_stale_after
from runs.models import Bundle, Dbms, Result, Run, RunFile, Server
from runs.signals import runs_stamp
from runs.submit import submit_bundle
from suites.sysbench import parse as sysbench


def run_list(request: HttpRequest) -> HttpResponse:
    return pagecache.page(
        request,
        f"runs|{runs_stamp()}",
        lambda shared: _run_list_page(request, shared),
        params=("dbms", "server", "q", "page"),
    )


def _run_list_page(request: HttpRequest, shared: dict[str, Any]) -> str:
    form = RunFilterForm(request.GET or None)
    runs = Run.objects.select_related("build__version__dbms", "config", "server", "workload").only(
        "name",
        "status",
        "started_at",
        "started_from",
        "commit_time",
        "build__flavour",
        "build__version__text",
        "build__version__dbms__name",
        "config__name",
        "server__name",
        "workload__name",
    )
    if form.is_valid():
        if dbms := form.cleaned_data["dbms"]:
            runs = runs.filter(build__version__dbms__name=dbms)
        if server := form.cleaned_data["server"]:
            runs = runs.filter(server__name=server)
        if q := form.cleaned_data["q"]:
            runs = runs.filter(Q(name__icontains=q) | Q(build__version__text__icontains=q))
    runs = runs.order_by(
        "server__name", "workload__name", "build__version__dbms__name", "build__version__sort_key", "name"
    )
    page = Paginator(runs, 100).get_page(request.GET.get("page"))
    # Result counts of this page's runs only: counting over every run's results grows with the archive.
    counts = dict(
        Result.objects.filter(run__in=[run.pk for run in page]).values_list("run").annotate(n=Count("id")).order_by()
    )
    for run in page:
        run.n_results = counts.get(run.pk, 0)  # type: ignore[attr-defined]
    context = {
        "form": form,
        "page": page,
        "dbms_names": Dbms.objects.values_list("name", flat=True),
        "server_names": Server.objects.values_list("name", flat=True),
        **shared,
    }
    return render_to_string("runs/run_list.html", context, request)


def run_detail(request: HttpRequest, pk: int) -> HttpResponse:
    run = get_object_or_404(
        Run.objects.select_related("build__version__dbms", "config", "server", "workload", "bundle"), pk=pk
    )
    results = (
        Result.objects.filter(run=run)
        .select_related("microbenchmark")
        .order_by("microbenchmark__is_warmup", "microbenchmark__test", "microbenchmark__range_size", "dop")
    )
    files = RunFile.objects.filter(run=run).only("name", "kind", "text")
    # The load step is a result like the tests, but not a test: shown apart, with what it loaded.
    rows = list(results)
    loads = [r for r in rows if sysbench.is_load(r.microbenchmark.test)]
    context = {
        "run": run,
        "results": [r for r in rows if not sysbench.is_load(r.microbenchmark.test)],
        "loads": loads,
        "files": files,
        # A run from a summary says where its concurrency came from: these are the values it gave.
        "dops": sorted({r.dop for r in rows}),
    }
    return render(request, "runs/run_detail.html", context)


@permission_required(UPLOAD)
@require_http_methods(["GET", "POST"])
def upload(request: HtmxHttpRequest) -> HttpResponse:
    # Bound on every POST: an empty one (no file chosen) must say what is missing, not show a blank form.
    form = UploadForm(request.POST, request.FILES) if request.method == "POST" else UploadForm()
    duplicate = None
    status = 200
    if request.method == "POST" and form.is_valid():
        uploaded = form.cleaned_data["bundle"]
        try:
            submission = submit_bundle(
                uploaded,  # its temporary file, stored a chunk at a time: never read whole into memory
                name=uploaded.name,
                source=Bundle.Source.UPLOAD,
                user=request.user,
                overrides=form.overrides(),
            )
        except StorageFull as exc:
            form.add_error("bundle", str(exc))
            status = 507  # the server's disk, not the bundle: it may be sent again once there is room
        except ImportFailed as exc:
            form.add_error("bundle", str(exc))
        else:
            if submission.already_imported:
                duplicate, form = submission.bundle, UploadForm()
            elif request.htmx:
                # A full page load of the bundle's page: the form's request must not swap a fragment in.
                return HttpResponseClientRedirect(submission.bundle.get_absolute_url())
            else:
                return redirect(submission.bundle)
    recent = Bundle.objects.select_related("uploaded_by")[:10]
    context = {"form": form, "recent": recent, "duplicate": duplicate}
    if request.htmx:
        # htmx swaps in only a 2xx answer: the panel with its error comes as 200 (the page's own form says 507).
        return render(request, "runs/upload.html#panel", context)
    return render(request, "runs/upload.html", context, status=status)


def bundle_list(request: HttpRequest) -> HttpResponse:
    bundles = Bundle.objects.select_related("uploaded_by").order_by("-uploaded_at", "-pk")
    page = Paginator(bundles, 50).get_page(request.GET.get("page"))
    return render(request, "runs/bundle_list.html", {"page": page})


def bundle_detail(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    bundle = get_object_or_404(Bundle.objects.select_related("uploaded_by"), pk=pk)
    runs = (
        Run.objects.filter(bundle=bundle)
        .select_related("build__version__dbms", "server", "workload")
        .annotate(n_results=Count("results"))
        .order_by("build__version__sort_key", "name", "summary_table")
    )
    context = {
        "bundle": bundle,
        "runs": runs,
        "pending": bundle.status in (Bundle.Status.QUEUED, Bundle.Status.IMPORTING),
        "progress": bundle.progress,
        "stalled": bundle.status == Bundle.Status.IMPORTING
        and bundle.heartbeat_at is not None
        and bundle.heartbeat_at < timezone.now() - claim_stale_after(),
        "skipped": _skipped(bundle),
        "ignored_more": max(0, bundle.stats.get("ignored_files", 0) - len(bundle.stats.get("ignored", []))),
    }
    if request.htmx and request.htmx.target == "bundle-status":
        return render(request, "runs/bundle_detail.html#status", context)
    return render(request, "runs/bundle_detail.html", context)


def _skipped(bundle: Bundle) -> list[dict[str, Any]]:
    """The bundle's runs imported before; those held under another series carry ``attach`` (runs.attach)."""
    entries = bundle.stats.get("skipped_runs", [])
    held = attachable(bundle) if any("attach_to" in entry for entry in entries) else {}
    return [{**entry, "attach": held.get(entry.get("id"))} for entry in entries]  # type: ignore[arg-type]


@permission_required(UPLOAD)
@require_http_methods(["POST"])
def bundle_attach(request: HttpRequest, pk: int) -> HttpResponse:
    """Store a run of this bundle, imported before under another series, for the series the bundle meant."""
    bundle = get_object_or_404(Bundle, pk=pk)
    try:
        run, created = attach_run(bundle, int(request.POST.get("run", "")))
    except (AttachError, ValueError):
        messages.error(request, "That run cannot be attached from this bundle: choose one of the runs listed below.")
    else:
        where = f"server {run.server.name}, workload {run.workload.name}"
        if created:
            messages.success(request, f"{run.name} is now in the series {where} as run {run.pk}.")
        else:
            messages.info(request, f"{run.name} was already attached to the series {where} as run {run.pk}.")
    return redirect(bundle)
