"""The Insert Benchmark page: every step of a comparison, its SLA, charts across versions, and one step in detail.

Same query string as the comparison page (``base``, ``runs``, ``dop``, ``red``,
``green``) plus ``step``: the step shown in detail (per-second rates over time,
response-time histograms, every metric column relative). An htmx request for
another step gets only that fragment; the step links are real links too.
"""

from __future__ import annotations

from typing import Any, cast

from django import forms
from django.http import Http404, HttpResponse
from django.shortcuts import render

import suites
from benchdash.http import HtmxHttpRequest, row_id
from reports import charts
from reports import ibench as ibench_reports
from reports.compare import Comparison, ComparisonError, ComparisonSpec, get_comparison
from reports.forms import CompareForm
from reports.templatetags.benchdash import rel
from runs.models import Run
from suites.ibench import parse as ibench

TEMPLATE = "reports/ibench.html"


class IbenchForm(CompareForm):
    step = forms.CharField(required=False)


def ibench_page(request: HtmxHttpRequest) -> HttpResponse:
    from reports.views import default_base  # the comparison pages' rule for a missing base

    base_id = request.GET.get("base", "")
    defaulted = None
    if base_id:
        base = (
            Run.objects.select_related("server", "workload").filter(pk=pk, workload__suite=suites.IBENCH.name).first()
            if (pk := row_id(base_id)) is not None
            else None
        )
    else:
        base = defaulted = default_base(suite=suites.IBENCH.name)
        if base is None:
            return render(request, TEMPLATE, {"no_runs": True})
    if base is None:
        raise Http404("no Insert Benchmark run with that id; pick a base on the comparison page")
    series = list(
        Run.objects.filter(server_id=base.server_id, workload_id=base.workload_id)
        .select_related("build__version__dbms")
        .order_by("build__version__sort_key", "name", "pk")
    )
    given = request.GET.copy()
    given["base"] = str(base.pk)
    form = IbenchForm(given)
    cast(forms.ChoiceField, form.fields["runs"]).choices = [(r.pk, r.name) for r in series]
    if not form.is_valid():
        return HttpResponse(f"bad request: {form.errors.as_text()}\n", status=400, content_type="text/plain")
    data = form.cleaned_data
    spec = ComparisonSpec(
        base_run_id=base.pk,
        run_ids=tuple(data.get("runs") or ()),
        dop=data.get("dop"),
        red=data["red"] if data.get("red") is not None else 0.95,
        green=data["green"] if data.get("green") is not None else 1.05,
    )
    context: dict[str, Any] = {"base": base, "series": series, "defaulted": defaulted}
    try:
        comparison = get_comparison(spec)
    except ComparisonError as exc:
        context["error"] = str(exc)
        return render(request, TEMPLATE, context, status=400)
    steps = ibench_reports.steps_of(comparison)
    step = data.get("step") or (steps[0] if steps else "")
    if steps and step not in steps:
        raise Http404(f"no step {step!r} in this comparison")
    query = given.copy()
    query.pop("step", None)
    context.update(
        base_label=comparison.version_label(comparison.base),
        comparison=comparison,
        query=query.urlencode(),
        steps=steps,
        step=step,
        detail=step_detail(comparison, step),
    )
    if request.htmx and request.GET.get("step"):
        return render(request, f"{TEMPLATE}#step-detail", context)
    context.update(overview(comparison, steps))
    return render(request, TEMPLATE, context)


# A relative cell where the version has a value and the base none: "missing" would blame the version.
NO_BASE = "no base"


def _cell(comparison: Comparison, key: str, step: str) -> dict[str, Any]:
    """One (version, step) of the summary table: absolute throughput, relative, flag, SLA."""
    value = comparison.qps.get(key, {}).get(step)
    missed = (key, step) in comparison.sla_missed or (comparison.base, step) in comparison.sla_missed
    if key == comparison.base:
        return {"value": value, "text": "1.00" if value is not None else "missing", "flag": "", "sla_missed": missed}
    relative = comparison.relative.get(key, {}).get(step)
    if value is not None and comparison.qps.get(comparison.base, {}).get(step) is None:
        # This version ran the step but the base did not: nothing to divide by, yet nothing is missing here.
        return {"value": value, "text": NO_BASE, "flag": "", "sla_missed": missed}
    flag = comparison.flags.get(key, {}).get(step, "missing")
    return {"value": value, "text": rel(relative), "flag": flag, "sla_missed": missed}


def overview(comparison: Comparison, steps: list[str]) -> dict[str, Any]:
    """The summary table, the SLA table and one chart per step (data read once for all steps)."""
    keys = [comparison.base, *(c.key for c in comparison.others)]
    labels = {key: comparison.version_label(key) for key in keys}
    rows = []
    figures = []
    alone: dict[str, list[str]] = {}  # version label → the steps only it ran: not charted
    for i, step in enumerate(steps):
        cells = [_cell(comparison, key, step) for key in keys]
        unit = ibench.throughput_label(step)
        rows.append({"step": step, "unit": unit, "group": comparison.group_of.get(step) or "", "cells": cells})
        points = [
            charts.IbenchStepPoint(
                key=key,
                version_label=labels[key],
                value=cell["value"],
                relative=None if key == comparison.base else comparison.relative.get(key, {}).get(step),
                flag="base" if key == comparison.base else cell["flag"],
                sla_missed=cell["sla_missed"],
            )
            for key, cell in zip(keys, cells, strict=True)
        ]
        measured = [point for point in points if point["value"] is not None]
        if len(keys) > 1 and len(measured) == 1:
            # One bar, with no base to divide by and no other version beside it, compares nothing.
            alone.setdefault(measured[0]["version_label"], []).append(step)
            continue
        figures.append(
            {
                "id": f"ibench-step-{i}",
                "step": step,
                "figure": charts.ibench_step_chart(step, unit, points),
                "config": charts.plot_config(f"{comparison.server}-{step}"),
            }
        )
    return {
        "columns": [{"key": key, "label": labels[key], "base": key == comparison.base} for key in keys],
        "rows": rows,
        "sla_rows": ibench_reports.sla_table(comparison),
        "step_figures": figures,
        "steps_alone": list(alone.items()),
    }


def step_detail(comparison: Comparison, step: str) -> dict[str, Any]:
    """Per-second rates, response-time histograms and every metric column (relative) of one step."""
    if not step:
        return {}
    keys = [comparison.base, *(c.key for c in comparison.others)]
    labels = {key: comparison.version_label(key) for key in keys}
    figures = []
    series = ibench_reports.per_second(comparison, step)
    if series:
        ordered = {key: series[key] for key in keys if key in series}
        rate = ibench.target_rate(step)
        clients = comparison.dop
        target = ibench.sla_threshold(clients, rate) if rate is not None else None
        figures.append(("ips", charts.ibench_rate_over_time(step, "ips", ordered, labels, target=target)))
        if any(s.get("qps") for s in ordered.values()):
            figures.append(("qps", charts.ibench_rate_over_time(step, "qps", ordered, labels)))
    hists = ibench_reports.histograms(comparison, step)
    if hists:
        ordered_hists = {key: hists[key] for key in keys if key in hists}
        kinds = sorted({k for h in ordered_hists.values() for k, v in h.items() if isinstance(v, dict)})
        for kind in kinds:
            figures.append((f"rt-{kind}", charts.ibench_rt_histogram(step, kind, ordered_hists, labels)))
    metrics = ibench_reports.step_metrics(comparison, [step])
    ratios = ibench_reports.metric_ratios(comparison, metrics)
    metric_rows = []
    for name in metrics.columns:
        base_value = metrics.values.get((comparison.base, step), {}).get(name)
        cells = []
        for column in comparison.others:
            ratio = ratios.get(column.key, {}).get(step, {}).get(name)
            value = metrics.values.get((column.key, step), {}).get(name)
            text = "missing" if value is None else NO_BASE if base_value is None else rel(ratio)
            cells.append({"value": value, "ratio": ratio, "text": text})
        metric_rows.append({"name": name, "base": base_value, "cells": cells})
    return {
        "figures": [
            {"id": f"ibench-detail-{name}", "figure": figure, "config": charts.plot_config(f"{step}-{name}")}
            for name, figure in figures
        ],
        "metric_rows": metric_rows,
        "others": [{"key": c.key, "label": labels[c.key]} for c in comparison.others],
        "base_label": labels[comparison.base],
        "has_raw": bool(series or hists),
    }
