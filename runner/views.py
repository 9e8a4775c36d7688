"""Pages to trigger benchmark runs: targets, starting and following a run, schedules.

Reading them follows the site's read rule like every page; changes need a role (accounts.permissions):
starting and cancelling runs the uploader's, targets and schedules the admin's.
"""

from __future__ import annotations

from django import forms
from django.conf import settings
from django.contrib import messages
from django.core.paginator import Paginator
from django.db import transaction
from django.db.models import Count, Max
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_http_methods, require_POST

from accounts.permissions import MANAGE_SCHEDULES, MANAGE_TARGETS, RUN_BENCHMARKS, permission_required
from benchdash import disposition
from benchdash.http import ROW_ID_LIMIT, HtmxHttpRequest
from runner import benchmark, experiments, hosts, sysbench_runner
from runner.forms import ProposeBuildForm, ScheduleForm, StartRunForm, TargetForm
from runner.models import BenchmarkHost, BenchmarkOutput, BenchmarkRun, Schedule, Target
from runner.server_version import VersionError, ask_server_version, propose_build_label
from runner.tasks import enqueue
from runs.experiments import RunPair
from runs.models import Run

# --------------------------------------------------------------------------- targets


def target_list(request: HttpRequest) -> HttpResponse:
    targets = Target.objects.annotate(n_runs=Count("benchmark_runs"), last_run=Max("benchmark_runs__created_at"))
    return render(request, "runner/target_list.html", {"targets": targets})


@permission_required(MANAGE_TARGETS)
@require_http_methods(["GET", "POST"])
def target_create(request: HttpRequest) -> HttpResponse:
    return _target_form(request, Target())


@permission_required(MANAGE_TARGETS)
@require_http_methods(["GET", "POST"])
def target_edit(request: HttpRequest, pk: int) -> HttpResponse:
    return _target_form(request, get_object_or_404(Target, pk=pk))


def _target_form(request: HttpRequest, target: Target) -> HttpResponse:
    form = TargetForm(request.POST or None, instance=target)
    if request.method == "POST" and form.is_valid():
        target = form.save(commit=False)
        if target.pk is None and request.user.is_authenticated:
            target.created_by = request.user
        target.save()
        if form.proposed_from:
            messages.info(
                request,
                f"Build label {target.build_label} proposed from the server's version {form.proposed_from}; "
                "edit the target to change it.",
            )
        messages.success(request, f"Target {target.name} saved.")
        return redirect("runner:target_list")
    return render(request, "runner/target_form.html", {"form": form, "target": target})


@permission_required(MANAGE_TARGETS)
@require_POST
def target_propose_build(request: HttpRequest) -> HttpResponse:
    """HTMX: ask the server typed into the target form for its version and fill in the build label.

    Editing, the stored password is used on the server side (never sent to the page), and only for the
    host, port, user and database it was entered with (ProposeBuildForm)."""
    form = ProposeBuildForm(request.POST)
    context: dict[str, object] = {"value": request.POST.get("build_label", "")}
    if not form.is_valid():
        errors = form.errors.get("host") or form.non_field_errors()
        context["note"] = errors[0] if errors else "Fill in DBMS, host, port, user and database first."
    else:
        try:
            version = ask_server_version(form.connection())
            context["value"] = propose_build_label(form.cleaned_data["kind"], version)
            context["note"] = f"Proposed from the server's version {version}."
        except (VersionError, sysbench_runner.RunnerError) as exc:
            context["note"] = str(exc)
    return render(request, "runner/build_label_field.html", context)


# --------------------------------------------------------------------------- runs


@permission_required(RUN_BENCHMARKS)
@require_http_methods(["GET", "POST"])
def benchmark_start(request: HttpRequest, pk: int) -> HttpResponse:
    target = get_object_or_404(Target, pk=pk)
    form = StartRunForm(request.POST or None, target=target, preset=request.GET.get("preset"))
    if request.method == "POST" and form.is_valid():
        with transaction.atomic():
            run = benchmark.create_run(
                target,
                requested_by=request.user,
                base_run=form.cleaned_data["base_run"],
                host=form.cleaned_data.get("host"),
                **form.parameter_fields(),
            )
            enqueue(run)
        return redirect(run)
    context = {"form": form, "target": target, "eager": settings.CELERY_TASK_ALWAYS_EAGER}
    return render(request, "runner/benchmark_start.html", context)


class SettingsExperimentForm(forms.Form):
    old_run = forms.IntegerField(min_value=1, max_value=ROW_ID_LIMIT - 1)
    new_run = forms.IntegerField(min_value=1, max_value=ROW_ID_LIMIT - 1)
    story = forms.IntegerField(min_value=1, max_value=ROW_ID_LIMIT - 1, required=False)
    labels = forms.CharField(max_length=5000)

    def pair(self) -> RunPair:
        data = self.cleaned_data
        labels = tuple(label.strip() for label in data["labels"].split(",") if label.strip())
        return RunPair(data["old_run"], data["new_run"], labels, story_id=data["story"])


@permission_required(RUN_BENCHMARKS)
@require_POST
def settings_experiment_start(request: HttpRequest) -> HttpResponse:
    """Re-run a new version with an old version's settings, from a story or a run diff: back to that page."""
    form = SettingsExperimentForm(request.POST)
    back = request.POST.get("next", "")
    if not back or not url_has_allowed_host_and_scheme(back, allowed_hosts={request.get_host()}):
        back = ""
    if not form.is_valid():
        # Only a hand-made post lacks the fields the pages' forms carry.
        messages.error(request, f"No settings experiment: the request named no two runs ({form.errors.as_text()})")
        return redirect(back or "runner:benchmark_list")
    try:
        with transaction.atomic():
            run, created = experiments.start(form.pair(), requested_by=request.user)
            if created:
                enqueue(run)
    except experiments.ExperimentRefused as exc:
        messages.error(request, f"No settings experiment: {exc}")
        return redirect(back or "runner:benchmark_list")
    where = f"on {run.host.name}" if run.host else "on the general workers"
    if created:
        messages.success(request, f"Settings experiment queued {where} as benchmark run #{run.pk}")
    else:
        messages.info(request, f"That settings experiment is already under way as benchmark run #{run.pk}")
    return redirect(back or run.get_absolute_url())


# Benchmark runs per page: scheduled runs pile up forever, the page must not.
BENCHMARK_PAGE_SIZE = 50


def benchmark_list(request: HttpRequest) -> HttpResponse:
    runs = BenchmarkRun.objects.select_related("target", "requested_by", "schedule").order_by("-created_at", "-id")
    page = Paginator(runs, BENCHMARK_PAGE_SIZE).get_page(request.GET.get("page"))
    return render(request, "runner/benchmark_list.html", {"runs": page.object_list, "page": page})


def benchmark_detail(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    run = get_object_or_404(
        BenchmarkRun.objects.select_related("target", "host", "bundle", "base_run", "requested_by", "schedule"),
        pk=pk,
    )
    imported = (
        Run.objects.filter(bundle_id=run.bundle_id).select_related("build__version__dbms", "server", "workload")
        if run.bundle_id
        else Run.objects.none()
    )
    output = BenchmarkOutput.objects.filter(pk=run.pk).values_list("name", flat=True).first()
    first_imported = next(iter(imported), None)
    compare_base = run.base_run_id or (first_imported.pk if first_imported else None)
    context = {
        "run": run,
        "progress": run.progress or {},
        "imported": imported,
        "output_name": output,
        "compare_base": compare_base,
    }
    if request.htmx:
        return render(request, "runner/benchmark_detail.html#progress", context)
    return render(request, "runner/benchmark_detail.html", context)


@permission_required(RUN_BENCHMARKS)
@require_POST
def benchmark_cancel(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    get_object_or_404(BenchmarkRun, pk=pk)
    state = benchmark.cancel(pk)
    if state in (BenchmarkRun.State.CANCELLING, BenchmarkRun.State.CANCELLED):
        messages.info(request, "Cancel requested: sysbench is stopped and nothing is imported.")
    else:
        messages.warning(request, f"The run is {state}; there is nothing to cancel.")
    if request.htmx:
        return benchmark_detail(request, pk)
    return redirect("runner:benchmark", pk=pk)


def benchmark_output(request: HttpRequest, pk: int) -> HttpResponse:
    output = BenchmarkOutput.objects.filter(pk=pk).first()
    if output is None:
        raise Http404("this run kept no partial output")
    response = HttpResponse(bytes(output.content), content_type="application/gzip")
    response["Content-Disposition"] = disposition.attachment(output.name)
    return response


# --------------------------------------------------------------------------- schedules


def schedule_list(request: HttpRequest) -> HttpResponse:
    schedules = Schedule.objects.select_related("target", "base_run").annotate(
        n_runs=Count("benchmark_runs"), last_run=Max("benchmark_runs__created_at")
    )
    return render(request, "runner/schedule_list.html", {"schedules": schedules})


@permission_required(MANAGE_SCHEDULES)
@require_http_methods(["GET", "POST"])
def schedule_create(request: HttpRequest) -> HttpResponse:
    form = ScheduleForm(request.POST or None, preset=request.GET.get("preset"))
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        with transaction.atomic():
            schedule = Schedule.objects.create(
                name=data["name"],
                target=data["target"],
                hour=data["hour"],
                minute=data["minute"],
                enabled=data["enabled"],
                base_run=data["base_run"],
                created_by=request.user if request.user.is_authenticated else None,
                **form.parameter_fields(),
            )
            schedule.sync_periodic_task()
        messages.success(
            request, f"Schedule {schedule.name} runs every night at {schedule.hour:02d}:{schedule.minute:02d} UTC."
        )
        return redirect("runner:schedule_list")
    return render(request, "runner/schedule_form.html", {"form": form})


@permission_required(MANAGE_SCHEDULES)
@require_POST
def schedule_toggle(request: HttpRequest, pk: int) -> HttpResponse:
    with transaction.atomic():
        schedule = get_object_or_404(Schedule.objects.select_for_update(), pk=pk)
        schedule.enabled = not schedule.enabled
        schedule.save(update_fields=["enabled"])
        schedule.sync_periodic_task()
    messages.success(request, f"Schedule {schedule.name} {'enabled' if schedule.enabled else 'paused'}.")
    return redirect("runner:schedule_list")


# --------------------------------------------------------------------------- benchmark hosts


def host_list(request: HttpRequest) -> HttpResponse:
    found = list(BenchmarkHost.objects.prefetch_related("targets").order_by("name"))
    current = hosts.current_runs(h.pk for h in found)
    rows = [{"host": h, "status": hosts.status(h, current.get(h.pk)), "current": current.get(h.pk)} for h in found]
    return render(request, "runner/host_list.html", {"rows": rows})


def host_detail(request: HttpRequest, pk: int) -> HttpResponse:
    host = get_object_or_404(BenchmarkHost.objects.prefetch_related("targets"), pk=pk)
    current = hosts.current_runs([host.pk]).get(host.pk)
    runs = host.benchmark_runs.select_related("target").order_by("-created_at", "-id")[:BENCHMARK_PAGE_SIZE]
    queued = host.benchmark_runs.filter(state=BenchmarkRun.State.QUEUED).count()
    context = {
        "host": host,
        "status": hosts.status(host, current),
        "current": current,
        "runs": runs,
        "queued": queued,
        "silent_after": int(hosts.silent_after().total_seconds()),
    }
    return render(request, "runner/host_detail.html", context)
