"""Dashboard pages: home, the comparison page with its exports, and saved reports."""

from __future__ import annotations

import functools
import hashlib
import json
import math
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any, NamedTuple, cast

from django import forms
from django.conf import settings
from django.core.paginator import Paginator
from django.db import IntegrityError, connection
from django.db.models import Count, Max
from django.http import Http404, HttpRequest, HttpResponse, QueryDict
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.safestring import mark_safe
from django.utils.text import slugify
from django.views.decorators.http import require_POST

import suites
from accounts.permissions import SAVE_REPORT, permission_required
from benchdash import disposition, pagecache, sqlonce
from benchdash.http import ROW_ID_LIMIT, HtmxHttpRequest, row_id
from reports import charts, releaseview, rendering
from reports import markers as record_markers
from reports.compare import (
    CACHE_SECONDS,
    CONCURRENCY_RULE,
    Comparison,
    ComparisonError,
    ComparisonSpec,
    get_comparison,
    get_microbenchmark_comparison,
    read_base_run,
    series_stamp_of,
)
from reports.errorbars import with_error_bars
from reports.explain import explain
from reports.exports import CONTENT_TYPES, export, filename, spec_for_format
from reports.forms import CompareForm, ExportForm, SaveReportForm
from reports.models import SCAN_FORMULAS, GroupSetDefinition, Report, SeriesSummary
from reports.palette import LEGEND as HEATMAP_LEGEND
from reports.palette import colour_blind_heatmap
from reports.series import cyclic_gc_paused
from reports.stats import metric_ratio
from runs.models import Result, Run
from runs.signals import runs_stamp

# Series per home page: the page's size and time stay the same however many series the archive holds.
HOME_PAGE_SIZE = 50


def home(request: HttpRequest) -> HttpResponse:
    """Servers and workloads, each DBMS series with its newest run and that run's red flags; a search box.

    Read from the series summaries the worker writes when runs arrive, a page at a time, never from the runs.
    """
    summaries = SeriesSummary.objects.aggregate(n=Count("id"), updated=Max("computed_at"), last=Max("id"))
    reports = Report.objects.aggregate(n=Count("id"), last=Max("id"))
    listed = f"{summaries['n']}|{summaries['last']}|{summaries['updated']}"
    key = f"home|{runs_stamp()}|{listed}|{reports['n']}|{reports['last']}"
    return pagecache.page(request, key, lambda shared: _home_page(request, shared), params=("page",))


def _home_page(request: HttpRequest, shared: dict[str, Any]) -> str:
    summaries = SeriesSummary.objects.select_related(
        "server", "workload", "dbms", "latest_run__build__version", "base_run__build__version"
    ).order_by("server__name", "workload__name", "dbms__name", "pk")
    page = Paginator(summaries, HOME_PAGE_SIZE).get_page(request.GET.get("page"))
    # Imports whose series the worker has not summarised yet: said, so an empty page is not mistaken for none.
    pending = not page.paginator.count and Run.objects.exists()
    reports = Report.objects.select_related("base_run")[:20]
    return render_to_string(
        "reports/home.html", {"page": page, "pending": pending, "reports": reports, **shared}, request
    )


def search(request: HttpRequest) -> HttpResponse:
    """Bugs, servers, workloads, groups, microbenchmarks and runs matching ``q``, grouped by kind (reports.search)."""
    from reports.search import search as find

    q = request.GET.get("q", "").strip()
    return render(request, "reports/search.html", {"q": q, **find(q)})


def default_base(*, suite: str | None = None, microbenchmark_id: int | None = None) -> Run | None:
    """The base a comparison-based page uses when none is given: the oldest version of the first series
    (by server, workload and DBMS name), of ``suite`` or holding ``microbenchmark_id`` when given."""
    summaries = SeriesSummary.objects.select_related(
        "base_run__server", "base_run__workload", "base_run__build__version__dbms"
    ).order_by("server__name", "workload__name", "dbms__name")
    runs = Run.objects.select_related("server", "workload", "build__version__dbms").order_by(
        "server__name", "workload__name", "build__version__dbms__name", "build__version__sort_key", "pk"
    )
    if suite:
        summaries = summaries.filter(workload__suite=suite)
        runs = runs.filter(workload__suite=suite)
    if microbenchmark_id is not None:
        pairs = set(
            Result.objects.filter(microbenchmark_id=microbenchmark_id)
            .values_list("run__server_id", "run__workload_id")
            .distinct()
        )
        found = next((s for s in summaries if (s.server_id, s.workload_id) in pairs), None)
        if found is not None:
            return found.base_run
        summaries = summaries.none()
        runs = runs.filter(pk__in=Result.objects.filter(microbenchmark_id=microbenchmark_id).values("run_id"))
    summary = summaries.first()
    # Before the series' summaries are computed (just after an import), its oldest run.
    return summary.base_run if summary else runs.first()


def _with_default_base(
    request: HttpRequest, *, suite: str | None = None, microbenchmark_id: int | None = None
) -> tuple[QueryDict, Run | None]:
    """The request's query, with the default base put in when it names none (and that base, for the page to say so)."""
    if request.GET.get("base"):
        return request.GET, None
    base = default_base(suite=suite, microbenchmark_id=microbenchmark_id)
    if base is None:
        return request.GET, None
    query = request.GET.copy()
    query["base"] = str(base.pk)
    return query, base


class SeriesChoice(NamedTuple):
    """A run of the base's series as the form's run and base choices name it."""

    pk: int
    name: str
    dbms: str
    version: str

    @property
    def label(self) -> str:
        return f"{self.dbms} {self.version} · {self.name}"


def _series_runs(base: Run) -> list[SeriesChoice]:
    # Plain values: a series of hundreds of runs would otherwise build three model instances per run; by SQL
    # compiled once, as building the queryset cost more than running it.
    return [SeriesChoice(*row) for row in _series_runs_sql().fetch(base.server_id, base.workload_id)]


@functools.cache
def _series_runs_sql() -> sqlonce.Statement:
    """The runs of a series (server id, workload id) as the run pickers list them."""
    server, workload = sqlonce.ID_STAND_INS[:2]
    return sqlonce.compile_once(
        Run.objects.filter(server_id=server, workload_id=workload)
        .order_by("build__version__dbms__name", "build__version__sort_key", "name", "pk")
        .values_list("pk", "name", "build__version__dbms__name", "build__version__text"),
        (server, workload),
    )


@functools.cache
def _group_set_names_sql() -> sqlonce.Statement:
    """The names of the group sets defined in the database, in their order."""
    return sqlonce.compile_once(GroupSetDefinition.objects.values_list("name", flat=True), ())


def _form(
    data: QueryDict,
    form_class: type[CompareForm] = CompareForm,
    *,
    rendered: bool = False,
    known: Run | None = None,
) -> tuple[CompareForm, Run | None, list[SeriesChoice]]:
    """The comparison form bound to ``data``, its base run (with ``BASE_RELATED``: what the comparison and the
    page read of it) and the runs of the base's series.

    ``rendered``: the page shows the form, so it gets its run and group-set choices; otherwise the series is
    read only when ``data`` ticks runs (they must be the series'), and the group sets not at all. ``known``: the
    base run when the caller read it already (the default base)."""
    form = form_class(data)
    base_id = data.get("base", "")
    if known is not None and str(known.pk) == base_id:
        base: Run | None = known
    else:
        pk = row_id(base_id)
        base = read_base_run(pk) if pk is not None else None
    series = _series_runs(base) if base and (rendered or data.getlist("runs")) else []
    cast(forms.ChoiceField, form.fields["runs"]).choices = [(r.pk, r.label) for r in series]
    if rendered:
        form.fields["group_set"].widget.choices = [("auto", "auto")] + [
            (name, name) for name in [g.name for g in _built_in_group_sets(base)] + _group_set_names()
        ]
    return form, base, series


def _group_set_names() -> list[str]:
    return [name for (name,) in _group_set_names_sql().fetch()]


def _built_in_group_sets(base: Run | None) -> tuple[suites.GroupSet, ...]:
    """The built-in group sets to offer: the base's suite's own (db_bench's sets group no sysbench test), every
    suite's without a base or for a suite no longer registered."""
    if base is None:
        return suites.group_sets()
    try:
        return tuple(g for g in suites.get(base.workload.suite).group_sets if g.groups)
    except LookupError:
        return suites.group_sets()


def _run_choice(run: Run) -> str:
    return SeriesChoice(run.pk, run.name, run.build.version.dbms.name, run.build.version.text).label


def run_label(run: Run, *, server: bool = False, workload: bool = False) -> str:
    """A run as an option: DBMS and version, its result directory, and the server or workload when a list
    mixes them (three RocksDB 9.8.4 runs of one build differ only by their db_bench workload)."""
    parts = [_run_choice(run)]
    if workload:
        parts.append(run.workload.name)
    if server:
        parts.append(run.server.name)
    return " · ".join(parts)


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
        # The page shows scan as each run reported it unless asked otherwise, and warns when eras are mixed.
        scan_formula=data.get("scan_formula") or "era",
    )


@dataclass(frozen=True)
class RequestedComparison:
    """What a comparison-based page's query asks for: the query (with the default base put in), that default
    base when it was used, the base run (with ``BASE_RELATED``), the comparison's spec, and the
    series' stamp when the page's cache key read it (``series_stamp``)."""

    data: QueryDict
    defaulted: Run | None
    base: Run
    spec: ComparisonSpec
    series_stamp: str | None = None

    def comparison(self) -> Comparison:
        """The comparison, the base and the series' stamp not read again."""
        return get_comparison(self.spec, base=self.base, stamp=self.series_stamp)

    def microbenchmark_comparison(self, microbenchmark_id: int) -> Comparison:
        """The comparison of one microbenchmark (``get_microbenchmark_comparison``), likewise."""
        return get_microbenchmark_comparison(self.spec, microbenchmark_id, base=self.base, stamp=self.series_stamp)


def requested_comparison(
    request: HttpRequest,
    *,
    suite: str | None = None,
    microbenchmark_id: int | None = None,
    series: SeriesStamp | None = None,
) -> RequestedComparison:
    """The comparison a page's query names (the series' default base when it names none, of ``suite`` or holding
    ``microbenchmark_id`` when given); 404 when it names none that can be compared. ``series``: what the page's
    cache key read of the base's series already."""
    data, defaulted = _with_default_base(request, suite=suite, microbenchmark_id=microbenchmark_id)
    form, base, _series = _form(data, known=defaulted)
    if base is None or not form.is_valid():
        raise Http404("no such comparison")
    return RequestedComparison(data, defaulted, base, _spec(form, base), series.of(base) if series else None)


@dataclass(frozen=True)
class SeriesStamp:
    """The series stamp (``reports.compare.series_stamp``) of a base run's series, as a page's cache key read it
    in its one query: the comparison need not read it again."""

    base_id: int
    stamp: str

    def of(self, base: Run) -> str | None:
        return self.stamp if base.pk == self.base_id else None


@dataclass(frozen=True)
class SharedKey:
    """A comparison-based page's cache key, and the base's series stamp read with it."""

    text: str
    series: SeriesStamp


@dataclass(frozen=True)
class ComparisonPage:
    """What a comparison-based page draws from: the comparison its query asks for, that comparison as its charts
    and as its tables show it (``release_views``) with what the page says about that, and the page cache's
    shared context."""

    asked: RequestedComparison
    comparison: Comparison
    charted: Comparison
    tabled: Comparison
    release_note: dict[str, Any]
    shared: dict[str, Any]

    @property
    def data(self) -> QueryDict:
        return self.asked.data

    @property
    def base(self) -> Run:
        return self.asked.base

    @property
    def defaulted(self) -> Run | None:
        return self.asked.defaulted


def comparison_page(
    request: HttpRequest,
    render: Callable[[ComparisonPage], str | HttpResponse],
    *,
    also: tuple[str, ...] = (),
    suite: str | None = None,
    microbenchmark_id: int | None = None,
    not_comparable: int = 400,
    release_view: bool = True,
) -> HttpResponse:
    """The one preamble of the pages drawn from a comparison: the requested comparison (404 when the query names
    none), the comparison (``microbenchmark_id``: of that microbenchmark only), its release views, each failure
    a 400 saying why in plain text (``not_comparable=404``: a comparison that cannot be made is no page); then
    ``render``, shared through the page cache under the comparison's series. ``release_view=False``: a page that
    shows every version whatever the query's ``releases`` (and says nothing of them) gets the comparison as it is
    for both views."""

    def produce(shared: dict[str, Any], series: SeriesStamp | None) -> str | HttpResponse:
        asked = requested_comparison(request, suite=suite, microbenchmark_id=microbenchmark_id, series=series)
        try:
            if microbenchmark_id is None:
                comparison = asked.comparison()
            else:
                comparison = asked.microbenchmark_comparison(microbenchmark_id)
        except ComparisonError as exc:
            if not_comparable == 404:
                raise Http404(str(exc)) from exc
            return _bad_request(exc)
        if not release_view:
            return render(ComparisonPage(asked, comparison, comparison, comparison, {}, shared))
        try:
            charted, tabled, note = release_views(comparison, asked.data)
        except ValueError as exc:  # a malformed BENCHDASH_RELEASE_LINES: say so rather than guess
            return _bad_request(exc)
        return render(ComparisonPage(asked, comparison, charted, tabled, note, shared))

    return _shared_page(request, produce, also=also)


def _bad_request(exc: Exception) -> HttpResponse:
    return HttpResponse(f"{exc}\n", status=400, content_type="text/plain")


def _shared_key(request: HttpRequest) -> SharedKey | None:
    """Cache key of a comparison-based page (comparison, heatmap, drill-down) as every visitor sees it.

    It changes when a run of the base's series arrives or goes, when the
    series' regressions, triage or bug links change, and with the path, the
    query and whether htmx asked for a fragment. None: no such base, not shared.
    Read in one query: a page served from the cache makes no other.
    """
    base_id = row_id(request.GET.get("base", ""))
    if base_id is None:
        return None
    with connection.cursor() as cursor:
        cursor.execute(_series_stamp_sql(), [base_id])
        row = cursor.fetchone()
    if row is None:
        return None
    # The comparison's cache key reads the same stamp: the page need not read it again.
    server_id, workload_id, runs = row[:3]
    count, _, last = runs.partition(":")
    series = SeriesStamp(base_id, series_stamp_of(server_id, workload_id, int(count), int(last)))
    # The release-line overrides decide what the charts show: a changed setting must not serve an old page.
    lines = hashlib.sha256(json.dumps(settings.BENCHDASH_RELEASE_LINES, sort_keys=True).encode()).hexdigest()[:12]
    return SharedKey(f"{request.path}|{'|'.join(str(value) for value in row)}|rl{lines}", series)


@functools.cache
def _series_stamp_sql() -> str:
    """The base run's series, its runs' number and newest id (a run arriving or going: ``series_stamp``), and
    each marker provider's stamp (regression records, triage, bug links)."""
    run = Run._meta.db_table
    # "<number>:<newest id>" in one aggregate: MAX(id) alone is planned as a backward walk of every run's id.
    runs = (
        "(SELECT CAST(COUNT(*) AS TEXT) || ':' || COALESCE(CAST(MAX(id) AS TEXT), '')"
        f" FROM {run} WHERE server_id = series.server_id AND workload_id = series.workload_id)"
    )
    stamps = ", ".join([runs, *record_markers.stamp_sql()])
    return f"SELECT series.server_id, series.workload_id, {stamps} FROM {run} series WHERE series.id = %s"


# The query parameters a comparison page reads (the page cache keeps one entry per canonical set of them).
COMPARE_PARAMS = (
    "base",
    "group_set",
    "dop",
    "red",
    "green",
    "include_warmups",
    "scan_formula",
    "y_min",
    "y_max",
    "y_max_*",  # one chart's own top: y_max_<group slug> (group_y_max)
    "log",
    "view",
    "suite",
    "releases",
)
COMPARE_MULTI = ("runs",)
# How each is written canonically, and which values the page takes (others are rendered, with the form's error,
# and never kept): numbers normalised and bounded, ids and choices as the form reads them.
_ID = pagecache.integer(1, ROW_ID_LIMIT - 1)
_AXIS = pagecache.number(0, 1e12)
COMPARE_KINDS = {
    "base": _ID,
    "runs": _ID,
    "dop": pagecache.integer(1, 100_000),
    "red": pagecache.number(0, 1e6),
    "green": pagecache.number(0, 1e6),
    "include_warmups": pagecache.flag,
    "log": pagecache.flag,
    "scan_formula": pagecache.choice(*(value for value, _label in SCAN_FORMULAS)),
    "y_min": _AXIS,
    "y_max": _AXIS,
    "y_max_*": _AXIS,
    "view": pagecache.choice("lines", "bars", "absolute"),
    "releases": pagecache.choice("long-term", "all"),
}
# "?base=" with nothing chosen asks for the run picker: kept, not dropped as an empty value.
COMPARE_BLANK = ("base",)


def compare(request: HtmxHttpRequest) -> HttpResponse:
    response = _shared_page(request, lambda shared, known: _compare_page(request, shared, known))
    if request.htmx and response.status_code == 200:
        # htmx would push the form as serialised, every empty field with it (dop=&y_min=&y_max_writes=…): the
        # address bar gets the query the page was drawn from instead (request.GET, canonical by now).
        response["HX-Push-Url"] = f"{request.path}?{request.GET.urlencode()}"
    return response


def _shared_page(
    request: HttpRequest,
    render: Callable[[dict[str, Any], SeriesStamp | None], str | HttpResponse],
    *,
    also: tuple[str, ...] = (),
) -> HttpResponse:
    """A page drawn from a comparison's query (``also``: parameters of its own), shared through the page cache
    under the comparison's series; ``render`` gets the cache's shared context and what its key read of the
    series."""
    key = _shared_key(request)

    def produce(shared: dict[str, Any]) -> str | HttpResponse:
        # A comparison page allocates tens of thousands of small objects that live until it is sent and makes
        # next to no reference cycles: the collections they set off free nothing (a fifth of a long page's CPU).
        with cyclic_gc_paused():
            return render(shared, key.series if key else None)

    return pagecache.page(
        request,
        key.text if key else None,
        produce,
        params=(*COMPARE_PARAMS, *also),
        multi=COMPARE_MULTI,
        blank=COMPARE_BLANK,
        kinds=COMPARE_KINDS,
    )


def _compare_page(request: HtmxHttpRequest, shared: dict[str, Any], known: SeriesStamp | None) -> str:
    # "?base=" with nothing chosen asks for the picker of every run; no base parameter at all gets the default.
    if "base" in request.GET and not request.GET["base"]:
        data, defaulted = request.GET.copy(), None
    else:
        data, defaulted = _with_default_base(request, suite=request.GET.get("suite") or None)
    form, base, series = _form(data, rendered=True, known=defaulted)
    chosen = {str(v) for v in data.getlist("runs")}
    context: dict[str, Any] = {
        "form": form,
        "base": base,
        "series": series,
        # Built in Python: rendering 60 checkbox widgets through the form machinery costs ~50 ms.
        "run_picker": rendering.run_picker(series, chosen),
        # Likewise the dozen controls: the same HTML as {{ form.<name> }}, without a template per widget.
        "controls": rendering.form_controls(form, COMPARE_CONTROLS),
        "base_options": rendering.base_options(series, base) if base else "",
        "defaulted": defaulted,
        "scan_choice": base is not None and _reads_scan_eras(base),
        **shared,
    }
    if base is None:
        if request.GET.get("base"):
            raise Http404("no such base run")
        # Asked for, or nothing imported yet (the picker then says so and points to the upload page), or nothing
        # of the suite asked for (the db_bench link before any db_bench run): said so, and no run of another
        # suite preselected in its place.
        context["choices"] = pick_choices()
        context["suite_missing"] = _suite_label(request.GET.get("suite") or "")
        return render_to_string("reports/compare_pick.html", context, request)
    if form.is_valid():
        try:
            comparison = get_comparison(_spec(form, base), base=base, stamp=known.of(base) if known else None)
        except ComparisonError as exc:
            context["error"] = str(exc)
        else:
            if comparison.others:
                try:
                    context.update(_comparison_entries(request, comparison, form.cleaned_data, data))
                except ValueError as exc:  # a malformed BENCHDASH_RELEASE_LINES: say so rather than guess
                    context["error"] = str(exc)
            else:
                # Runs ticked, but only the base among them; with none ticked, the series has no other run yet.
                context["empty"] = "ticked" if data.getlist("runs") else "alone"
    else:
        context["error"] = "; ".join(
            f"{name}: {' '.join(str(e) for e in errors)}" for name, errors in form.errors.items()
        )
    if request.htmx:
        return render_to_string(_FRAGMENT, context, request)
    return render_to_string("reports/compare.html", context, request)


_FRAGMENT = "reports/compare.html#comparison"
# The comparison form's controls the page shows (the base and the runs have pickers of their own).
COMPARE_CONTROLS = (
    "group_set",
    "dop",
    "red",
    "green",
    "releases",
    "view",
    "y_min",
    "y_max",
    "log",
    "scan_formula",
    "include_warmups",
)


def _reads_scan_eras(base: Run) -> bool:
    """Whether the base's suite computed scan's QPS by two formulas over the years, so the page offers a choice
    (sysbench's); a custom suite's or db_bench's page has no such choice to make."""
    try:
        return suites.get(base.workload.suite).scan_eras
    except LookupError:  # a suite no longer registered: nothing says it has scan eras
        return False


def _suite_label(name: str) -> str:
    """The suite's name as people say it ("RocksDB db_bench"), or "" for none or an unknown one."""
    try:
        return suites.get(name).label if name else ""
    except LookupError:
        return ""


def pick_choices() -> list[dict[str, Any]]:
    """Every run as a base to pick, labelled with its workload: one server's list mixes workloads."""
    runs = Run.objects.select_related("server", "workload", "build__version__dbms").order_by(
        "server__name", "workload__name", "build__version__sort_key"
    )[:500]
    return [{"server": run.server.name, "pk": run.pk, "label": run_label(run, workload=True)} for run in runs]


def _comparison_entries(
    request: HttpRequest, comparison: Comparison, options: dict[str, Any], query: QueryDict
) -> dict[str, Any]:
    """What the comparison fragment shows: the tables' rows, and the group charts with their bug markers.

    Tables and charts may show different release views (``release_views``)."""
    markers = record_markers.comparison_markers(comparison)
    charted, tabled, note = release_views(comparison, query)
    deferred = len(tabled.others) * len(tabled.labels) > RELATIVE_TABLE_INLINE_CELLS
    # A long comparison's group summaries (a row per version in each group) load when scrolled to, likewise.
    entries = comparison_context(tabled, query, markers, label_rows=not deferred, summary_rows=not deferred)
    entries["relative_deferred"] = deferred
    scale = charts.Scale(y_min=options.get("y_min"), y_max=options.get("y_max"), log=bool(options.get("log")))
    view = options.get("view") or "lines"
    tops = group_y_max(query, charted.groups)
    found = group_charts(charted, scale, view, tops)
    if view == "lines":
        shown = {c.key for c in charted.columns}
        found = [
            {
                **chart,
                "figure": charts.with_markers(
                    chart["figure"], _markers_within(_group_markers(charted, chart["group"], markers), shown)
                ),
            }
            for chart in found
        ]
    entries["group_charts"] = {chart["group"]: chart for chart in found}
    entries["bar_omitted"] = max(0, len(charted.others) - charts.BAR_VERSIONS) if view == "bars" else 0
    entries["bar_shown"] = min(len(charted.others), charts.BAR_VERSIONS)
    entries["release_note"] = note
    return entries


def release_views(comparison: Comparison, query: QueryDict) -> tuple[Comparison, Comparison, dict[str, Any]]:
    """The comparison as its charts show it and as its tables show it, and what the page says about that.

    ``releases`` absent: charts read the long-term release lines and the newest release (when the series mixes
    both kinds),
    tables every version, so the tables still match the reference scripts'. ``releases=long-term|all``
    applies to both. Raises ValueError for a malformed release-line override.
    """
    chosen = query.get("releases", "")
    long_term = releaseview.in_view(comparison, "long-term", settings.BENCHDASH_RELEASE_LINES)
    charted = comparison if chosen == "all" else long_term.comparison
    tabled = long_term.comparison if chosen == "long-term" else comparison

    def switched(value: str) -> str:
        found = effective_query(query, comparison)
        found.pop("format", None)
        if value:
            found["releases"] = value
        else:
            found.pop("releases", None)
        return found.urlencode()

    note = {
        "mixed": bool(long_term.left_out),
        "chosen": chosen,
        "left_out": releaseview.left_out_labels(comparison, long_term),
        "provisional": releaseview.provisional_labels(comparison, settings.BENCHDASH_RELEASE_LINES),
        "all_query": switched("all"),
        "long_term_query": switched("long-term"),
        "default_query": switched(""),
    }
    return charted, tabled, note


def _markers_within(markers: list[Any], keys: set[str]) -> list[Any]:
    """Markers on a chart that shows only ``keys``: an end at a version the chart leaves out is not drawn."""
    found = []
    for marker in markers:
        arrived = marker["arrived"] if marker["arrived"] in keys else None
        fixed = marker["fixed"] if marker["fixed"] in keys else None
        if arrived or fixed:
            found.append({**marker, "arrived": arrived, "fixed": fixed})
    return found


def _group_markers(comparison: Comparison, group: str, markers: dict[str, Any]) -> list[Any]:
    """Markers of a group's chart: the group's own records and those of its microbenchmarks, with bugs."""
    items = list(markers["by_group"].get(group, []))
    for label in comparison.labels:
        if comparison.group_of.get(label) == group:
            items.extend(markers["by_label"].get(label, []))
    return record_markers.chart_markers(items)


def comparison_context(
    comparison: Comparison,
    query: QueryDict,
    markers: dict[str, Any] | None = None,
    *,
    label_rows: bool = True,
    summary_rows: bool = True,
    groups: Collection[str] | None = None,
) -> dict[str, Any]:
    """Rows for the tables, so the template only prints (``label_rows=False``: not the table of every
    microbenchmark, ``summary_rows=False``: not the rows of the groups' summaries, for a page that loads them
    apart; ``groups``: only these groups' tables)."""
    others = comparison.others
    red, green = comparison.spec.red, comparison.spec.green
    group_tables = []
    for group in comparison.groups:
        members = [label for label in comparison.labels if comparison.group_of.get(label) == group]
        if not members or (groups is not None and group not in groups):
            continue  # a group set's group that this suite or run did not measure: nothing to show
        rows = []
        single = None
        if len(members) == 1:
            # Min, max, avg and median of one value are that value: one plain row says it once.
            label = members[0]
            single = rendering.label_cells(comparison, others, label)
        elif summary_rows:
            summaries = comparison.summaries[group]
            rows = [
                rendering.summary_row(
                    column.key, comparison.version_label(column.key), summaries[column.key], red, green
                )
                for column in others
            ]
        group_tables.append(
            {
                "name": group,
                "rows": rows,
                "size": len(members),
                "single": single,
                "single_label": members[0] if single is not None else "",
                "regressions": (markers or {}).get("by_group", {}).get(group, []),
                "badges": rendering.regression_badges((markers or {}).get("by_group", {}).get(group, [])),
                "deferred": single is None and not summary_rows,
            }
        )
    rows_of_labels = []
    for label in comparison.labels if label_rows else ():
        cells = rendering.label_cells(comparison, others, label)
        rows_of_labels.append(
            {
                "label": label,
                "group": comparison.group_of.get(label) or "ungrouped",
                "mb_id": comparison.microbenchmark_ids[label],
                "regressions": (markers or {}).get("by_label", {}).get(label, []),
                "base_qps": comparison.qps[comparison.base].get(label),
                "cells": cells,
            }
        )
    export_query = effective_query(query, comparison)
    export_query.pop("format", None)
    return {
        "comparison": comparison,
        "others": [{"column": c, "label": comparison.version_label(c.key)} for c in others],
        **rendering.column_heads(comparison, others),
        "base_label": comparison.version_label(comparison.base),
        "group_tables": group_tables,
        "label_rows": rows_of_labels,
        "relative_rows": rendering.relative_rows(rows_of_labels, export_query.urlencode(), len(others) + 2),
        "export_query": export_query.urlencode(),
        "api_query": api_query(comparison).urlencode(),
        "concurrency_rule": CONCURRENCY_RULE,
        "dop_asked": bool(query.get("dop")),
        "dop_links": _dop_links(query, comparison),
        "rule_query": _rule_query(query),
        "has_repeats": any(c.repeats > 1 for c in comparison.columns),
        "scan_query": _scan_formula_query(query, "spec" if comparison.spec.scan_formula == "era" else "era"),
    }


def _scan_formula_query(query: QueryDict, formula: str) -> str:
    """The same comparison with scan's QPS read by ``formula`` ("spec" or "era")."""
    found = query.copy()
    found["scan_formula"] = formula
    return found.urlencode()


def effective_query(query: QueryDict, comparison: Comparison) -> QueryDict:
    """``query`` with the concurrency the comparison used written in: every link out of a comparison (exports,
    heatmap, drill-down, scale-up, HW metrics) then shows that concurrency, whatever it would choose alone."""
    found = query.copy()
    found["dop"] = str(comparison.dop)
    return found


def api_query(comparison: Comparison) -> QueryDict:
    """The /api/compare query that returns this comparison (runs by id, the effective concurrency)."""
    spec = comparison.spec
    query = QueryDict(mutable=True)
    query["base"] = str(spec.base_run_id)
    if spec.run_ids:
        query["runs"] = ",".join(str(pk) for pk in spec.run_ids)
    query["group_set"] = spec.group_set
    query["dop"] = str(comparison.dop)
    query["red"], query["green"] = str(spec.red), str(spec.green)
    if spec.include_warmups:
        query["include_warmups"] = "true"
    query["scan_formula"] = spec.scan_formula
    return query


def _dop_links(query: QueryDict, comparison: Comparison) -> list[dict[str, Any]]:
    """The comparison at each concurrency of the series (the current one unlinked), and by the rule."""
    links = []
    for dop in comparison.dops:
        at = query.copy()
        at["dop"] = str(dop)
        links.append({"dop": dop, "current": dop == comparison.dop, "query": at.urlencode()})
    return links


def _rule_query(query: QueryDict) -> str:
    found = query.copy()
    found.pop("dop", None)
    return found.urlencode()


def _cached(key: str, build: Callable[[], Any]) -> Any:
    """Derived artefacts of a cached comparison (chart JSON) live as long as it does."""
    if not key:
        return build()
    found = pagecache.cached(key)
    if found is None:
        found = build()
        pagecache.keep(key, found, CACHE_SECONDS)
    return found


def group_y_max_param(group: str) -> str:
    """The query parameter of one group chart's own y-axis top."""
    return f"y_max_{slugify(group)}"


def group_y_max(query: QueryDict, groups: list[str]) -> dict[str, float]:
    """Each group chart's own y-axis top from the query (``y_max_<group slug>``): an outlier in one group need not
    squash another's lines. A value that is not a positive finite number is ignored, as the form's would be."""
    tops = {}
    for group in groups:
        try:
            value = float(query.get(group_y_max_param(group), ""))
        except ValueError:
            continue
        if math.isfinite(value) and value > 0:
            tops[group] = value
    return tops


def group_charts(
    comparison: Comparison,
    scale: charts.Scale | None = None,
    view: str = "lines",
    tops: dict[str, float] | None = None,
) -> list[dict[str, Any]]:
    """One chart per group that has microbenchmarks (lines across versions, or bars), with the ids the
    template needs for json_script; ``tops``: a group chart's own y-axis top, over the page's."""
    scale = scale or charts.Scale(y_min=None, y_max=None, log=False)
    tops = tops or {}
    present = {g for g in comparison.group_of.values() if g}
    absolute = view == "absolute"
    # QPS as measured: the page's y-axis range and a chart's own top are relative QPS (the page says so), so the
    # absolute charts are drawn without them, and cached once whatever they are; a chart's own top is kept in the
    # form (a hidden field), for when the page goes back to relative QPS.
    drawn_with = charts.Scale(y_min=None, y_max=None, log=scale["log"]) if absolute else scale
    drawn_tops = {} if absolute else tops

    def draw(group: str) -> dict[str, Any]:
        if absolute:
            return charts.group_absolute_chart(comparison, group, log=scale["log"])
        relative = charts.group_bar_chart if view == "bars" else charts.group_line_chart
        top = tops.get(group, scale["y_max"])
        return relative(comparison, group, y_min=scale["y_min"], y_max=top, log=scale["log"])

    def build() -> list[dict[str, Any]]:
        return [
            {
                "group": group,
                "id": f"chart-{i}",
                "figure": draw(group),
                "y_max_param": group_y_max_param(group),
                "relative": not absolute,
                "config": charts.plot_config(f"{comparison.server}-{group}"),
                "config_id": f"chart-{i}-config",
            }
            for i, group in enumerate(comparison.groups)
            if group in present
        ]

    own_tops = ",".join(f"{slugify(g)}={v}" for g, v in sorted(drawn_tops.items()))
    key = (
        f"{comparison.cache_key}:groups:{view}:{drawn_with['y_min']}:{drawn_with['y_max']}:{drawn_with['log']}:"
        f"{own_tops}"
    )
    # Each chart's own top as the form has it (not cached with the absolute charts, which any top shares).
    found: list[dict[str, Any]] = _cached(key if comparison.cache_key else "", build)
    return [{**chart, "y_max": tops.get(chart["group"])} for chart in found]


# Above this many cells (compared versions × microbenchmarks) the comparison page loads its table of every
# microbenchmark and its groups' summaries (a row per version) when scrolled to, as it does the heatmap: the
# first response is the charts and what they need. At 60 versions × 42 the tables are 2,520 cells with their QPS
# and 300 summary rows, half the page's HTML and a third of its time; a run against its baseline (42 cells)
# keeps them inline.
RELATIVE_TABLE_INLINE_CELLS = 1_000


def compare_relative_table(request: HtmxHttpRequest) -> HttpResponse:
    """The relative QPS of every microbenchmark for every version, or with ``group`` one group's summary (a row
    per version): loaded into a long comparison's page when scrolled to, or opened alone."""
    return comparison_page(request, lambda page: _relative_table_page(request, page), also=("group",))


def _relative_table_page(request: HtmxHttpRequest, page: ComparisonPage) -> str:
    group = page.data.get("group")
    markers = record_markers.comparison_markers(page.comparison)
    if group is not None:
        found = comparison_context(page.tabled, page.data, markers, label_rows=False, groups={group})
        if not found["group_tables"]:
            raise Http404(f"no group {group!r} in this comparison")
        context = {**found, "table": found["group_tables"][0]}
        fragment = "reports/relative_table.html#summary"
    else:
        context = comparison_context(page.tabled, page.data, markers)
        fragment = "reports/relative_table.html#table"
    context.update(base=page.base, defaulted=page.defaulted, release_note=page.release_note, **page.shared)
    return render_to_string(fragment if request.htmx else "reports/relative_table.html", context, request)


def compare_heatmap(request: HtmxHttpRequest) -> HttpResponse:
    """The heatmap of a comparison: loaded into the comparison page when scrolled to, or opened alone."""
    return comparison_page(request, lambda page: _heatmap_page(request, page))


def _heatmap_page(request: HtmxHttpRequest, page: ComparisonPage) -> str:
    comparison, charted, tabled, note, shared = (
        page.comparison,
        page.charted,
        page.tabled,
        page.release_note,
        page.shared,
    )
    data, defaulted, base = page.data, page.defaulted, page.base
    figure = _cached(f"{charted.cache_key}:heatmap" if charted.cache_key else "", lambda: charts.heatmap(charted))
    markers = record_markers.comparison_markers(comparison)
    shown = {c.key for c in charted.columns}
    badges = [
        (item["arrived"], label, ", ".join(key for key, _ in item["bugs"]) + f" (arrived in {item['arrived_version']})")
        for label, items in markers["by_label"].items()
        for item in items
        if item["bugs"] and item["arrived"] in shown and item["arrived"] != comparison.base
    ]
    figure = colour_blind_heatmap(charts.with_heatmap_badges(figure, badges))
    drill_query = effective_query(data, comparison).urlencode()
    context = {
        "comparison": comparison,
        "base": base,
        "defaulted": defaulted,
        "base_label": comparison.version_label(comparison.base),
        "figure": figure,
        # Wide enough for each version's column to print its value (3 rem) beside the row names, at most the 44 rem
        # past which the heatmap scrolls sideways: two versions fit a phone without scrolling.
        "min_width_rem": min(44, 16 + 3 * len(charted.columns)),
        "config": charts.plot_config(f"{comparison.server}-heatmap"),
        "cell_url": f"{reverse('reports:drilldown', args=[0]).replace('/0/', '/MB_ID/')}?{drill_query}",
        "legend": HEATMAP_LEGEND,
        # The values as a table too, for copying as Markdown or CSV.
        **{k: v for k, v in comparison_context(tabled, data).items() if k in ("others", "label_rows")},
        "compare_query": drill_query,
        "release_note": note,
        **shared,
    }
    template = "reports/heatmap.html#heatmap" if request.htmx else "reports/heatmap.html"
    return render_to_string(template, context, request)


def drilldown(request: HttpRequest, microbenchmark_id: int) -> HttpResponse:
    """One microbenchmark across the versions of a comparison: QPS, latency and HW efficiency."""
    return comparison_page(
        request,
        lambda page: _drilldown_page(request, microbenchmark_id, page),
        also=("column",),
        microbenchmark_id=microbenchmark_id,
    )


def drilldown_details(request: HtmxHttpRequest, microbenchmark_id: int) -> HttpResponse:
    """What the drill-down loads after its first response: the microbenchmark's stories and bugs, why it changed
    (``explain``) and the suite's own metrics. Swapped into the drill-down by htmx, or opened alone (no script)."""
    return comparison_page(
        request,
        lambda page: _drilldown_details_page(request, microbenchmark_id, page),
        also=("column",),
        microbenchmark_id=microbenchmark_id,
        release_view=False,  # its explanation and suite metrics read every version, as they did in the page
    )


def _drilldown_label(comparison: Comparison, microbenchmark_id: int) -> str:
    """The microbenchmark's label: the comparison names its microbenchmarks, the page reads no row of its own."""
    label = next((name for name, pk in comparison.microbenchmark_ids.items() if pk == microbenchmark_id), None)
    if label is None or label not in comparison.labels:
        raise Http404(f"microbenchmark {microbenchmark_id} is not in this comparison")
    return label


def _drilldown_details_page(request: HtmxHttpRequest, microbenchmark_id: int, page: ComparisonPage) -> str:
    comparison, data = page.comparison, page.data
    label = _drilldown_label(comparison, microbenchmark_id)
    column_of_run = {rid: c.key for c in comparison.columns for rid in c.run_ids}
    # "Why did it change?": the HW metrics and config differences of one build, the clicked one or the newest.
    explained = _explained_column(comparison, data.get("column", ""))
    context = {
        "microbenchmark_id": microbenchmark_id,
        "label": label,
        "comparison": comparison,
        "explanation": explain(comparison, explained, label) if explained else None,
        "extra_rows": _extra_metric_rows(comparison, microbenchmark_id, column_of_run),
        # The microbenchmark's stories (QPS and its HW metrics' own) with their bugs, each a link to its page.
        "stories": record_markers.records(
            comparison.server_id, comparison.workload_id, microbenchmark_id, every_metric=True
        ),
        "drilldown_query": data.urlencode(),
        **page.shared,
    }
    template = "reports/drilldown.html#details" if request.htmx else "reports/drilldown_details.html"
    return render_to_string(template, context, request)


def _drilldown_page(request: HttpRequest, microbenchmark_id: int, page: ComparisonPage) -> str:
    comparison, charted, tabled, note, shared = (
        page.comparison,
        page.charted,
        page.tabled,
        page.release_note,
        page.shared,
    )
    data, defaulted, base = page.data, page.defaulted, page.base
    label = _drilldown_label(comparison, microbenchmark_id)
    column_of_run = {rid: c.key for c in comparison.columns for rid in c.run_ids}
    latency, percentile = _drilldown_latency(comparison, microbenchmark_id, column_of_run)
    points = []
    rows = []
    highlight = request.GET.get("column", "")
    listed = {c.key for c in tabled.columns}
    for column in comparison.columns:
        point = _drilldown_point(comparison, column.key, label, latency.get(column.key, []))
        points.append(point)
        if column.key in listed:
            flag = comparison.flags.get(column.key, {}).get(label, "")
            rows.append(
                rendering.drilldown_row(
                    point, flag, base=column.key == comparison.base, highlighted=column.key == highlight
                )
            )
    shown = {c.key for c in charted.columns}
    charted_points = [p for p in points if p["key"] in shown]
    figures = charts.drilldown_charts(charted_points, microbenchmark=label, percentile=percentile)
    # ± one standard deviation of repeated runs on the QPS bars, where a column was run more than once.
    cvs = [comparison.cv.get(column.key, {}).get(label) for column in charted.columns]
    figures["qps"] = with_error_bars(figures["qps"], [p["qps"] for p in charted_points], cvs)
    context = {
        "microbenchmark_id": microbenchmark_id,
        "label": label,
        "comparison": comparison,
        "base": base,
        # The table's rows as one text: each is built and escaped by rendering.drilldown_row, and the template's
        # loop over 200 of them cost more than joining them.
        "rows": mark_safe("".join(rows)),  # every row escaped by drilldown_row
        "defaulted": defaulted,
        "base_label": comparison.version_label(comparison.base),
        "percentile": percentile,
        "highlight": highlight,
        "repeats": [(comparison.version_label(c.key), c.repeats) for c in comparison.columns if c.repeats > 1],
        "figures": [
            {"id": f"drill-{name}", "figure": figure, "config": charts.plot_config(f"{label}-{name}")}
            for name, figure in figures.items()
        ],
        "compare_query": effective_query(data, comparison).urlencode(),
        "release_note": note,
        # The stories, "why it changed" and the suite's metrics come after the first response (drilldown_details).
        "details_query": data.urlencode(),
        **shared,
    }
    return render_to_string("reports/drilldown.html", context, request)


def _drilldown_latency(
    comparison: Comparison, microbenchmark_id: int, column_of_run: dict[int, str]
) -> tuple[dict[str, list[tuple[float | None, float | None]]], float | None]:
    """Per column, the (average, percentile) latencies of its runs; and the percentile the runs measured (p95,
    p99): the first the columns give, in their order."""
    latency: dict[str, list[tuple[float | None, float | None]]] = {}
    percentile_of_run = {}
    for run_id, avg, pct_ms, pct in _latencies(comparison, microbenchmark_id, column_of_run):
        latency.setdefault(column_of_run[run_id], []).append((avg, pct_ms))
        percentile_of_run[run_id] = pct
    return latency, next((p for rid in column_of_run if (p := percentile_of_run.get(rid))), None)


def _drilldown_point(
    comparison: Comparison, key: str, label: str, latency: list[tuple[float | None, float | None]]
) -> charts.DrilldownPoint:
    """One column of the drill-down: its cell's QPS, relative QPS (1 for the base) and HW metrics with their ratio
    to the base's, and its runs' mean latencies."""
    is_base = key == comparison.base
    cell = comparison.cells.get((key, label))
    qps = cell.qps if cell is not None else None
    metrics = (cell.metrics if cell is not None and cell.qps is not None else None) or {}
    ratios = comparison.metric_ratios.get(key, {}).get(label, {}) if not is_base else {}
    relative = 1.0 if is_base else (cell.relative if cell is not None else None)
    return charts.DrilldownPoint(
        key=key,
        version_label=comparison.version_label(key),
        qps=qps,
        relative=relative if qps is not None else None,
        lat_avg_ms=_mean_of([a for a, _ in latency]),
        lat_pct_ms=_mean_of([p for _, p in latency]),
        cpu_o=metrics.get("cpu_o"),
        cs_o=metrics.get("cs_o"),
        rkb_o=metrics.get("rkb_o"),
        wkb_o=metrics.get("wkb_o"),
        cpu_o_ratio=1.0 if is_base else ratios.get("cpu_o"),
        cs_o_ratio=1.0 if is_base else ratios.get("cs_o"),
        rkb_o_ratio=1.0 if is_base else ratios.get("rkb_o"),
        wkb_o_ratio=1.0 if is_base else ratios.get("wkb_o"),
    )


def _explained_column(comparison: Comparison, asked: str) -> str:
    """The column "Why did it change?" explains: the one asked for, else the newest ("" when there is none)."""
    if asked in {c.key for c in comparison.others}:
        return asked
    return comparison.others[-1].key if comparison.others else ""


def _latencies(
    comparison: Comparison, microbenchmark_id: int, column_of_run: dict[int, str]
) -> list[tuple[int, float | None, float | None, float | None]]:
    """(run id, average ms, percentile ms, percentile) of the microbenchmark at the comparison's concurrency, by
    run id: read with its results when the comparison is of this microbenchmark alone, else in a query of their
    own (the cached comparison of the series keeps none). Not in the model's order: that joins four tables to
    sort a few rows that the columns put in order anyway."""
    if comparison.latency is not None:
        return [
            (found.run_id, found.avg_ms, found.percentile_ms, found.percentile)
            for found in sorted(comparison.latency)
            if found.dop == comparison.dop and found.run_id in column_of_run
        ]
    return list(
        Result.objects.filter(run_id__in=column_of_run, microbenchmark_id=microbenchmark_id, dop=comparison.dop)
        .order_by("run_id")
        .values_list("run_id", "lat_avg_ms", "lat_pct_ms", "lat_pct")
    )


def _extra_metric_rows(
    comparison: Comparison, microbenchmark_id: int, column_of_run: dict[int, str]
) -> list[dict[str, Any]]:
    """Per column, the suite's own metrics (Result.extra) and their ratio to the base: one query."""
    extra_metrics = suites.get(comparison.suite).extra_metrics
    if not extra_metrics:
        return []
    values: dict[str, dict[str, list[float]]] = {}
    for run_id, extra in (
        Result.objects.filter(run_id__in=column_of_run, microbenchmark_id=microbenchmark_id, dop=comparison.dop)
        .order_by("run_id")
        .values_list("run_id", "extra")
    ):
        for name in extra_metrics:
            value = (extra or {}).get(name)
            if isinstance(value, int | float):
                values.setdefault(column_of_run[run_id], {}).setdefault(name, []).append(float(value))
    names = [n for n in extra_metrics if any(n in v for v in values.values())]
    base = {n: _mean_of(list(values.get(comparison.base, {}).get(n, []))) for n in names}
    rows = []
    for column in comparison.columns:
        own = {n: _mean_of(list(values.get(column.key, {}).get(n, []))) for n in names}
        rows.append(
            {
                "label": comparison.version_label(column.key),
                "cells": [(own[n], metric_ratio(own[n], base[n])) for n in names],
            }
        )
    return [{"names": names, "rows": rows}] if names else []


def _mean_of(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else None


def compare_export(request: HttpRequest) -> HttpResponse:
    form, base, _series = _form(request.GET, ExportForm)
    if base is None or not form.is_valid():
        return HttpResponse(f"bad export request: {form.errors.as_text() or 'no base run'}\n", status=400)
    fmt = form.cleaned_data["format"]
    absolute, metrics = form.cleaned_data["absolute"], form.cleaned_data["metrics"]
    try:
        comparison = get_comparison(spec_for_format(_spec(form, base), fmt, metrics=metrics))
        # Exports are tables: every version unless the reader switched to the long-term lines.
        comparison = releaseview.in_view(
            comparison,
            releaseview.parse_view(form.cleaned_data.get("releases"), "all"),
            settings.BENCHDASH_RELEASE_LINES,
        ).comparison
    except (ComparisonError, ValueError) as exc:
        return HttpResponse(f"{exc}\n", status=400, content_type="text/plain")
    text = export(comparison, fmt, absolute=absolute, metrics=metrics)
    response = HttpResponse(text, content_type=CONTENT_TYPES[fmt])
    response["Content-Disposition"] = disposition.attachment(
        filename(comparison, fmt, absolute=absolute, metrics=metrics)
    )
    return response


@permission_required(SAVE_REPORT)
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
            releases=form.cleaned_data.get("releases") or "",
            scan_formula=spec.scan_formula,
            **_chart_scale(form, request.POST),
            created_by=request.user if request.user.is_authenticated else None,
        )
    except IntegrityError:
        return HttpResponse(f"a report named {slug!r} exists already; choose another name\n", status=409)
    report.runs.set(spec.run_ids)
    return redirect(report)


def _chart_scale(form: CompareForm, query: QueryDict) -> dict[str, Any]:
    """The charts' scale and kind a saved report keeps: the form's y-axis range, log scale and view, and each
    group chart's own top (``y_max_<group slug>``, a positive finite number, as the page reads it)."""
    tops = {}
    for name in query:
        if name.startswith("y_max_"):
            try:
                value = float(query.get(name, ""))
            except ValueError:
                continue
            if math.isfinite(value) and value > 0:
                tops[name] = value
    data = form.cleaned_data
    return {
        "y_min": data.get("y_min"),
        "y_max": data.get("y_max"),
        "log": bool(data.get("log")),
        "view": data.get("view") or "",
        "group_y_max": tops,
    }


def _chart_query(report: Report, query: QueryDict) -> None:
    """Puts a saved report's chart scale and kind back into its comparison's query."""
    for name, value in (("y_min", report.y_min), ("y_max", report.y_max), *sorted(report.group_y_max.items())):
        if value is not None:
            query[name] = str(value)
    if report.log:
        query["log"] = "on"
    if report.view:
        query["view"] = report.view


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
    if report.releases:
        query["releases"] = report.releases
    query["scan_formula"] = report.scan_formula
    _chart_query(report, query)
    return redirect(f"{reverse('reports:compare')}?{query.urlencode()}&report={report.slug}")


# Saved reports per page of their list.
REPORT_PAGE_SIZE = 50


def report_list(request: HttpRequest) -> HttpResponse:
    reports = (
        Report.objects.select_related("base_run__server", "base_run__workload")
        .annotate(n_runs=Count("runs"))
        .order_by("name", "pk")
    )
    page = Paginator(reports, REPORT_PAGE_SIZE).get_page(request.GET.get("page"))
    return render(request, "reports/report_list.html", {"reports": page.object_list, "page": page})
