"""Timelines: a microbenchmark's QPS, or a group's median relative QPS, for every run of the base's series by
run date, regressions marked."""

from __future__ import annotations

from typing import Any

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404
from django.template.loader import render_to_string

from benchdash.http import row_id
from reports import charts, timeline
from reports.views import ComparisonPage, _shared_page, _with_default_base, comparison_page
from runs.models import Microbenchmark, Run


def _arranged(found: list[timeline.Point]) -> tuple[list[timeline.Point], bool]:
    """The points in date order, or in version order when their dates do not order the runs (and so True)."""
    if timeline.dates_order_runs(found):
        return found, False
    return timeline.in_version_order(found), True


def _title(label: str, by_version: bool) -> str:
    return f"{label} by version (no run dates)" if by_version else f"{label} by run date"


def microbenchmark_timeline(request: HttpRequest, microbenchmark_id: int) -> HttpResponse:
    """Nightly runs of one version over time: one point per run at its date, one line per version."""
    return _shared_page(request, lambda shared, _series: _timeline_page(request, microbenchmark_id, shared))


def _timeline_page(request: HttpRequest, microbenchmark_id: int, shared: dict[str, Any]) -> str:
    microbenchmark = get_object_or_404(Microbenchmark, pk=microbenchmark_id)
    data, defaulted = _with_default_base(request, microbenchmark_id=microbenchmark.pk)
    base_id = data.get("base", "")
    base = defaulted or (
        Run.objects.select_related("server", "workload", "build__version__dbms").filter(pk=pk).first()
        if (pk := row_id(base_id)) is not None
        else None
    )
    if base is None:
        raise Http404("no such base run")
    dop = data.get("dop", "")
    found, chosen_dop = timeline.points(base, microbenchmark, int(dop) if dop.isdigit() else None)
    found, by_version = _arranged(found)
    records = timeline.regressions(base, microbenchmark)
    label = microbenchmark.label
    versions: dict[str, int] = {}
    for p in found:
        versions[p.version] = versions.get(p.version, 0) + 1
    context = {
        "microbenchmark": microbenchmark,
        "label": label,
        "base": base,
        "defaulted": defaulted,
        "dop": chosen_dop,
        "points": found,
        "records": records,
        "repeated": sorted(v for v, n in versions.items() if n > 1),
        "any_import_time": any(not p.file_time for p in found),
        "by_version": by_version,
        "figure": timeline.figure(found, records, title=_title(label, by_version), by_version=by_version),
        "config": charts.plot_config(f"{label}-timeline"),
        "compare_query": data.urlencode(),
        **shared,
    }
    return render_to_string("reports/timeline.html", context, request)


def group_timeline(request: HttpRequest) -> HttpResponse:
    """A group's timeline: per run of the series, the median relative QPS of the group's microbenchmarks."""
    return comparison_page(
        request, lambda page: _group_timeline_page(request, page), also=("group",), not_comparable=404
    )


def _group_timeline_page(request: HttpRequest, page: ComparisonPage) -> str:
    comparison, data, defaulted, base, shared = page.comparison, page.data, page.defaulted, page.base, page.shared
    groups = [g for g in comparison.groups if any(comparison.group_of.get(label) == g for label in comparison.labels)]
    group = data.get("group", "")
    if group not in groups:
        if group:
            raise Http404(f"no group {group!r} in this comparison")
        group = groups[0] if groups else ""
    members = [label for label in comparison.labels if comparison.group_of.get(label) == group]
    found, by_version = _arranged(
        timeline.group_points(base, [comparison.microbenchmark_ids[label] for label in members], comparison.dop)
    )
    records = timeline.regressions(base, None, group)
    versions: dict[str, int] = {}
    for p in found:
        versions[p.version] = versions.get(p.version, 0) + 1
    query = data.copy()
    query.pop("group", None)
    context = {
        "group": group,
        "groups": groups,
        "members": members,
        "label": group,
        "base": base,
        "defaulted": defaulted,
        "dop": comparison.dop,
        "points": found,
        "records": records,
        "relative": True,
        "repeated": sorted(v for v, n in versions.items() if n > 1),
        "any_import_time": any(not p.file_time for p in found),
        "by_version": by_version,
        "figure": timeline.figure(
            found,
            records,
            title=_title(group, by_version),
            y_title="median relative QPS",
            y_format=".2f",
            by_version=by_version,
        ),
        "config": charts.plot_config(f"{group}-timeline"),
        "compare_query": query.urlencode(),
        **shared,
    }
    return render_to_string("reports/timeline.html", context, request)
