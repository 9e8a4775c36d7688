"""The write-up of a comparison: ``/compare/writeup`` answers the Markdown post, or with ``format=zip`` a .zip of
it and every group chart as SVG."""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import urlencode

from django.conf import settings
from django.http import HttpRequest, HttpResponse, QueryDict
from django.urls import reverse
from django.utils.text import slugify

from benchdash import disposition
from reports import charts, svgchart, timeline, writeup
from reports import markers as record_markers
from reports.compare import Comparison, ComparisonError, get_comparison
from reports.views import _form, _group_markers, _spec, group_charts
from runs.models import Run

WRITEUP_FORMATS = ("markdown", "zip")
# Wide enough for a blog column's full width; the SVG scales down with its viewBox.
CHART_WIDTH = 900


def link_maker(base_url: str) -> Callable[[str], str]:
    """Paths as the post links them: absolute under ``base_url`` (BENCHDASH_BASE_URL), or as they are without one."""
    root = base_url.rstrip("/")
    return (lambda path: f"{root}{path}") if root else (lambda path: path)


def provenance(comparison: Comparison) -> tuple[list[writeup.RunProvenance], bool]:
    """Every run of the comparison, in its columns' order, and whether the file times of those that have no
    recorded start lie far enough apart to be when they ran (``timeline.runs_apart``): one query."""
    column_of = {run_id: column.key for column in comparison.columns for run_id in column.run_ids}
    runs = {
        run.pk: run
        for run in Run.objects.filter(pk__in=column_of).select_related(
            "build__version__dbms", "config", "server", "workload"
        )
    }
    found = []
    for column in comparison.columns:
        for run_id in column.run_ids:
            run = runs[run_id]
            found.append(
                writeup.RunProvenance(
                    column=column.key,
                    version_label=comparison.version_label(column.key),
                    run=run.name,
                    url=run.get_absolute_url(),
                    build=run.build.name,
                    flavour=run.build.flavour,
                    config=run.config.name,
                    server=run.server.name,
                    cpus=run.cpus,
                    time=f"{run.started_at:%Y-%m-%d %H:%M} UTC" if run.started_at else "",
                    time_source=run.start_origin.split(";")[0],
                    recorded=run.start_recorded,
                )
            )
    file_times = [run.started_at for run in runs.values() if run.started_at and not run.start_recorded]
    return found, timeline.runs_apart(file_times)


def build(comparison: Comparison, query: QueryDict, *, with_charts: bool) -> tuple[str, dict[str, str]]:
    """The post's Markdown and, ``with_charts``, its charts as {path in the zip: SVG}."""
    base = Run.objects.select_related("server", "workload").get(pk=comparison.spec.base_run_id)
    server = base.server
    markers = record_markers.comparison_markers(comparison)
    svgs: dict[str, str] = {}
    chart_paths: dict[str, str] = {}
    if with_charts:
        for chart in group_charts(comparison):
            figure = charts.with_markers(chart["figure"], _group_markers(comparison, chart["group"], markers))
            # The post's SVG shows the values; the spread of repeats is in its tables' notes, not drawn.
            figure = {**figure, "data": [{k: v for k, v in t.items() if k != "error_y"} for t in figure["data"]]}
            svg = svgchart.render(figure, width=CHART_WIDTH, id_prefix=f"writeup-{chart['id']}")
            if svg is None:
                continue  # a figure the SVG renderer cannot draw faithfully: the post links the page instead
            path = f"{writeup.CHARTS_DIR}/{slugify(chart['group']) or chart['id']}.svg"
            svgs[path] = writeup.on_white(svg)
            chart_paths[chart["group"]] = path
    page_query = query.copy()
    page_query.pop("format", None)
    encoded = page_query.urlencode()
    runs, runs_apart = provenance(comparison)
    post = writeup.Writeup(
        comparison=comparison,
        server=writeup.ServerFacts(
            name=server.name, cpus=server.cpus, ram_gb=server.ram_gb, storage=server.storage, os=server.os
        ),
        workload_params=dict(base.workload.params or {}),
        runs=runs,
        runs_apart=runs_apart,
        stories=writeup.open_stories(comparison.server_id, comparison.workload_id),
        markers=markers,
        link=link_maker(settings.BENCHDASH_BASE_URL),
        compare_path=f"{reverse('reports:compare')}?{encoded}",
        hw_path=f"{reverse('reports:hw')}?{encoded}",
        regressions_path=f"{reverse('regressions:regression_list')}?"
        + urlencode({"server": server.name, "workload": base.workload.name}),
        charts=chart_paths,
    )
    return writeup.markdown(post), svgs


def compare_writeup(request: HttpRequest) -> HttpResponse:
    form, base, _series = _form(request.GET)
    fmt = request.GET.get("format") or "markdown"
    if base is None or not form.is_valid() or fmt not in WRITEUP_FORMATS:
        why = form.errors.as_text() or ("no base run" if base is None else f"format is one of {WRITEUP_FORMATS}")
        return HttpResponse(f"bad write-up request: {why}\n", status=400, content_type="text/plain")
    try:
        comparison = get_comparison(_spec(form, base))
    except ComparisonError as exc:
        return HttpResponse(f"{exc}\n", status=400, content_type="text/plain")
    return writeup_response(comparison, request.GET, fmt)


def writeup_response(comparison: Comparison, query: QueryDict, fmt: str) -> HttpResponse:
    """The write-up as a download: the page's button and the API answer the same bytes."""
    text, svgs = build(comparison, query, with_charts=fmt == "zip")
    stem = f"writeup.{comparison.server}.dop{comparison.dop}".replace(" ", "_")
    if fmt == "zip":
        response = HttpResponse(writeup.zip_bytes(text, svgs), content_type="application/zip")
        response["Content-Disposition"] = disposition.attachment(f"{stem}.zip")
    else:
        response = HttpResponse(text, content_type="text/markdown; charset=utf-8")
        response["Content-Disposition"] = disposition.attachment(f"{stem}.md")
    return response
