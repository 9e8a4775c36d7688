"""Dashboard pages: home, the comparison page with its exports, and saved reports."""

from __future__ import annotations

from typing import Any

from django.db import DatabaseError, IntegrityError, connection
from django.db.models import Count, Max, Min
from django.http import Http404, HttpRequest, HttpResponse, QueryDict
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.text import slugify
from django.views.decorators.http import require_POST

from reports import groups as groupsets
from reports.compare import Comparison, ComparisonError, ComparisonSpec, get_comparison
from reports.exports import CONTENT_TYPES, export, filename, spec_for_format
from reports.forms import CompareForm, ExportForm, SaveReportForm
from reports.models import GroupSetDefinition, Report
from runs.models import Run


def home(request: HttpRequest) -> HttpResponse:
    series = list(
        Run.objects.values("server__id", "server__name", "workload__id", "workload__name", "build__version__dbms__name")
        .annotate(runs=Count("id"), latest=Max("created_at"), first_run=Min("id"))
        .order_by("server__name", "workload__name", "build__version__dbms__name")
    )
    # The default base of a series is its oldest version: one query for all series.
    oldest = {}
    for run in Run.objects.order_by(
        "server_id", "workload_id", "build__version__dbms__name", "build__version__sort_key", "pk"
    ).values("pk", "server_id", "workload_id", "build__version__dbms__name"):
        oldest.setdefault((run["server_id"], run["workload_id"], run["build__version__dbms__name"]), run["pk"])
    for s in series:
        s["base"] = oldest[(s["server__id"], s["workload__id"], s["build__version__dbms__name"])]
    reports = Report.objects.select_related("base_run")[:20]
    return render(request, "reports/home.html", {"series": series, "reports": reports})


def healthz(request: HttpRequest) -> HttpResponse:
    """Liveness for load balancers and compose: 200 when the database answers, 503 otherwise."""
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except DatabaseError as exc:
        return HttpResponse(f"database unavailable: {exc.__class__.__name__}\n", status=503, content_type="text/plain")
    return HttpResponse("ok\n", content_type="text/plain")


def _series_runs(base: Run) -> list[Run]:
    return list(
        Run.objects.filter(server_id=base.server_id, workload_id=base.workload_id)
        .select_related("build__version__dbms")
        .order_by("build__version__sort_key", "name", "pk")
    )


def _form(data: QueryDict, form_class: type[CompareForm] = CompareForm) -> tuple[CompareForm, Run | None, list[Run]]:
    form = form_class(data)
    base_id = data.get("base", "")
    base = Run.objects.select_related("server", "workload").filter(pk=base_id).first() if base_id.isdigit() else None
    series = _series_runs(base) if base else []
    form.fields["base"].widget.choices = [(r.pk, _run_choice(r)) for r in series]
    form.fields["runs"].choices = [(r.pk, _run_choice(r)) for r in series]
    form.fields["group_set"].widget.choices = [("auto", "auto")] + [
        (name, name)
        for name in [g.name for g in groupsets.STANDARD_GROUP_SETS]
        + list(GroupSetDefinition.objects.values_list("name", flat=True))
    ]
    return form, base, series


def _run_choice(run: Run) -> str:
    return f"{run.build.version.dbms} {run.build.version.text} · {run.name}"


def _spec(form: CompareForm, base: Run) -> ComparisonSpec:
    data = form.cleaned_data
    return ComparisonSpec(
        base_run_id=base.pk,
        run_ids=tuple(data.get("runs") or ()),
        group_set=data.get("group_set") or "auto",
        dop=data.get("dop"),
        red=data["red"] if data.get("red") is not None else 0.95,
        green=data["green"] if data.get("green") is not None else 1.05,
        include_warmups=bool(data.get("include_warmups")),
    )


def compare(request: HttpRequest) -> HttpResponse:
    form, base, series = _form(request.GET)
    context: dict[str, Any] = {"form": form, "base": base, "series": series}
    if base is None:
        if request.GET.get("base"):
            raise Http404("no such base run")
        context["choices"] = Run.objects.select_related("server", "workload", "build__version__dbms").order_by(
            "server__name", "workload__name", "build__version__sort_key"
        )[:500]
        return render(request, "reports/compare_pick.html", context)
    if form.is_valid():
        try:
            comparison = get_comparison(_spec(form, base))
        except ComparisonError as exc:
            context["error"] = str(exc)
        else:
            context.update(comparison_context(comparison, request.GET))
    template = "reports/compare.html#comparison" if request.htmx else "reports/compare.html"
    return render(request, template, context)


def comparison_context(comparison: Comparison, query: QueryDict) -> dict[str, Any]:
    """Rows for the tables, so the template only prints."""
    others = comparison.others
    group_tables = []
    for group in comparison.groups:
        rows = []
        for column in others:
            summary = comparison.summaries[group][column.key]
            rows.append({"column": column, "label": comparison.version_label(column.key), "s": summary})
        members = [label for label in comparison.labels if comparison.group_of.get(label) == group]
        group_tables.append({"name": group, "rows": rows, "size": len(members)})
    label_rows = []
    for label in comparison.labels:
        cells = [
            {
                "rel": comparison.relative[c.key][label],
                "flag": comparison.flags[c.key][label],
                "noisy": comparison.noisy[c.key][label],
                "qps": comparison.qps[c.key].get(label),
            }
            for c in others
        ]
        label_rows.append(
            {
                "label": label,
                "group": comparison.group_of.get(label) or "ungrouped",
                "base_qps": comparison.qps[comparison.base].get(label),
                "cells": cells,
            }
        )
    export_query = query.copy()
    export_query.pop("format", None)
    return {
        "comparison": comparison,
        "others": [{"column": c, "label": comparison.version_label(c.key)} for c in others],
        "base_label": comparison.version_label(comparison.base),
        "group_tables": group_tables,
        "label_rows": label_rows,
        "export_query": export_query.urlencode(),
        "has_repeats": any(c.repeats > 1 for c in comparison.columns),
    }


def compare_export(request: HttpRequest) -> HttpResponse:
    form, base, _series = _form(request.GET, ExportForm)
    if base is None or not form.is_valid():
        return HttpResponse(f"bad export request: {form.errors.as_text() or 'no base run'}\n", status=400)
    fmt = form.cleaned_data["format"]
    absolute, metrics = form.cleaned_data["absolute"], form.cleaned_data["metrics"]
    try:
        comparison = get_comparison(spec_for_format(_spec(form, base), fmt, metrics=metrics))
    except ComparisonError as exc:
        return HttpResponse(f"{exc}\n", status=400, content_type="text/plain")
    text = export(comparison, fmt, absolute=absolute, metrics=metrics)
    response = HttpResponse(text, content_type=CONTENT_TYPES[fmt])
    response["Content-Disposition"] = (
        f'attachment; filename="{filename(comparison, fmt, absolute=absolute, metrics=metrics)}"'
    )
    return response


@require_POST
def save_report(request: HttpRequest) -> HttpResponse:
    form, base, _series = _form(request.POST)
    save = SaveReportForm(request.POST)
    if base is None or not form.is_valid() or not save.is_valid():
        return HttpResponse("a report needs a name and a valid comparison\n", status=400)
    spec = _spec(form, base)
    slug = slugify(save.cleaned_data["name"])[:190] or "report"
    try:
        report = Report.objects.create(
            name=save.cleaned_data["name"],
            slug=slug,
            base_run=base,
            group_set=spec.group_set,
            dop=spec.dop,
            red=spec.red,
            green=spec.green,
            include_warmups=spec.include_warmups,
            created_by=request.user if request.user.is_authenticated else None,
        )
    except IntegrityError:
        return HttpResponse(f"a report named {slug!r} exists already; choose another name\n", status=409)
    report.runs.set(spec.run_ids)
    return redirect(report)


def report_detail(request: HttpRequest, slug: str) -> HttpResponse:
    report = get_object_or_404(Report, slug=slug)
    query = QueryDict(mutable=True)
    query["base"] = str(report.base_run_id)
    query.setlist("runs", [str(pk) for pk in report.runs.values_list("pk", flat=True)])
    query["group_set"] = report.group_set
    if report.dop:
        query["dop"] = str(report.dop)
    query["red"], query["green"] = str(report.red), str(report.green)
    if report.include_warmups:
        query["include_warmups"] = "on"
    return redirect(f"{reverse('reports:compare')}?{query.urlencode()}&report={report.slug}")


def report_list(request: HttpRequest) -> HttpResponse:
    reports = Report.objects.select_related("base_run__server", "base_run__workload").annotate(n_runs=Count("runs"))
    return render(request, "reports/report_list.html", {"reports": reports})
