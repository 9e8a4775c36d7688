"""The scale-up page: a comparison's throughput against client count, per group and per microbenchmark.

The page reads the comparison's own query (base, runs, group set, thresholds) and
asks for that comparison at every concurrency the series has; each of those is the
cached comparison the comparison page itself shows at that concurrency, so the
numbers here are the comparison page's numbers. ``reports.scaleup`` turns them into
curves. Without ``group`` or ``mb`` the page shows every group; ``group=<name>``
one group with its microbenchmarks, ``mb=<microbenchmark id>`` one microbenchmark
with its HW metrics.
"""

from __future__ import annotations

import dataclasses
from typing import Any
from urllib.parse import urlencode

from django.http import Http404, HttpRequest, HttpResponse, QueryDict
from django.template.defaultfilters import pluralize
from django.template.loader import render_to_string
from django.urls import reverse

from reports import charts, scaleup_charts
from reports.compare import Comparison, get_comparison
from reports.scaleup import AtConcurrency, Curve, ScaleUp, scaleup
from reports.stats import flag
from reports.views import ComparisonPage, comparison_page, effective_query
from runs.models import Microbenchmark, Run

# The page's own parameters, besides the comparison's (declared to the page cache).
SCALEUP_PARAMS = ("group", "mb")
# HW metrics: how the tables name them, and the decimals they are shown with (as on the drill-down).
METRIC_NAMES = {
    "cpu_o": ("CPU / operation", 6),
    "cs_o": ("context switches / operation", 3),
    "r_o": ("reads / operation", 3),
    "rkb_o": ("KB read / operation", 3),
    "wkb_o": ("KB written / operation", 3),
    # The rate sb.met divides by: sysbench's own, so it repeats the QPS table rather than measuring the disk.
    "o_s": ("operations / s (what the metrics are divided by)", 0),
}


def scaleup_page(request: HttpRequest) -> HttpResponse:
    return comparison_page(
        request, lambda page: _render(request, page), also=SCALEUP_PARAMS, suite=request.GET.get("suite") or None
    )


def comparisons_by_concurrency(
    comparison: Comparison, *, base: Run | None = None, stamp: str | None = None
) -> list[Comparison]:
    """The same comparison at each concurrency of the series, with the group set it resolved to (an "auto"
    group set could resolve differently at a concurrency that measured fewer microbenchmarks). ``base`` and
    ``stamp``: the base run and the series' stamp the page read already (``get_comparison``); the same for
    every concurrency."""
    found = []
    for dop in comparison.dops:
        spec = dataclasses.replace(comparison.spec, dop=dop, group_set=comparison.group_set)
        found.append(comparison if dop == comparison.dop else get_comparison(spec, base=base, stamp=stamp))
    return found


def build_scaleup(
    comparison: Comparison, *, base: Run | None = None, stamp: str | None = None
) -> tuple[ScaleUp, dict[str, int]]:
    """The curves, and the id of each microbenchmark in them (for links); ``base`` and ``stamp`` as for
    ``comparisons_by_concurrency``."""
    by_dop = comparisons_by_concurrency(comparison, base=base, stamp=stamp)
    labels = list(comparison.labels)
    for other in by_dop:
        labels.extend(label for label in other.labels if label not in labels)
    group_of = {label: g for other in by_dop for label, g in other.group_of.items()} | comparison.group_of
    names = charts.column_labels(comparison.columns)
    ids = {label: mb_id for other in by_dop for label, mb_id in other.microbenchmark_ids.items()}
    return scaleup(
        [AtConcurrency(c.dop, c.qps, c.metrics) for c in by_dop],
        base=comparison.base,
        columns=[(c.key, names[c.key]) for c in comparison.columns],
        labels=labels,
        group_of=group_of,
        groups=comparison.groups,
    ), ids


def _rows(curves: tuple[Curve, ...], base: str, red: float, green: float, *, ratio: bool) -> list[dict[str, Any]]:
    """Table rows: one per version, one cell per client count (value, CSS flag)."""
    return [
        {
            "label": curve.label,
            "key": curve.key,
            "base": curve.key == base,
            "cells": [(v, flag(v, red, green) if ratio and curve.key != base else "") for v in curve.values],
        }
        for curve in curves
    ]


def _figure(
    id_: str, figure: dict[str, Any], filename: str, label: str, url: str = "", link: str = ""
) -> dict[str, Any]:
    """One chart for the template; ``url`` and ``link``: a page that shows more of it."""
    return {
        "id": id_,
        "figure": figure,
        "config": charts.plot_config(filename),
        "label": label,
        "url": url,
        "link": link,
    }


def _render(request: HttpRequest, page: ComparisonPage) -> str | HttpResponse:
    asked, comparison, charted, tabled = page.asked, page.comparison, page.charted, page.tabled
    data, defaulted, base, release_note, shared = page.data, page.defaulted, page.base, page.release_note, page.shared
    # Each version is divided by the base alone, so cutting versions out of the full curves gives the numbers a
    # cut comparison would: the charts and the tables read their own release view, as on the comparison page.
    result, ids = build_scaleup(comparison, base=asked.base, stamp=asked.series_stamp)
    drawn = {c.key for c in charted.columns}
    listed = {c.key for c in tabled.columns}
    red, green = comparison.spec.red, comparison.spec.green
    dops = list(result.dops)
    query = _without(effective_query(data, comparison), *SCALEUP_PARAMS)
    context: dict[str, Any] = {
        "comparison": comparison,
        "scaleup": result,
        "base": base,
        "defaulted": defaulted,
        "base_label": dict(result.columns)[result.base],
        "dops": dops,
        "query": query,
        "groups": list(result.groups),
        "microbenchmarks": [(label, ids.get(label)) for label in result.microbenchmarks],
        "release_note": release_note,
        **shared,
    }
    server = comparison.server
    mb_id = data.get("mb", "")
    group = data.get("group", "")
    if mb_id:
        microbenchmark = Microbenchmark.objects.filter(pk=mb_id).first() if mb_id.isdigit() else None
        if microbenchmark is None or microbenchmark.label not in result.microbenchmarks:
            raise Http404("that microbenchmark is not in this comparison")
        mb = result.microbenchmarks[microbenchmark.label]
        label = mb.label
        metric_tables = [
            {
                "key": name,
                "name": METRIC_NAMES[name][0],
                "digits": METRIC_NAMES[name][1],
                "rows": _rows(_only(curves, listed), result.base, red, green, ratio=False),
            }
            for name, curves in mb.metrics.items()
            if any(v is not None for c in curves for v in c.values)
        ]
        figures = [
            _figure(
                "scale-qps",
                scaleup_charts.absolute_chart(f"{label}: QPS", dops, _only(mb.qps, drawn)),
                f"{label}-qps",
                "QPS",
            ),
            _figure(
                "scale-rel",
                scaleup_charts.relative_chart(f"{label}: relative QPS", dops, _only(mb.relative, drawn)),
                f"{label}-relative",
                "relative QPS",
            ),
        ]
        if any(v is not None for c in mb.metrics["cpu_o"] for v in c.values):
            figures.append(
                _figure(
                    "scale-cpu",
                    scaleup_charts.absolute_chart(
                        f"{label}: CPU / operation", dops, _only(mb.metrics["cpu_o"], drawn), unit="CPU / operation"
                    ),
                    f"{label}-cpu_o",
                    "CPU per operation",
                )
            )
        context.update(
            subject=label,
            kind="microbenchmark",
            microbenchmark=microbenchmark,
            group_name=comparison.group_of.get(label) or "",
            figures=figures,
            qps_rows=_rows(_only(mb.qps, listed), result.base, red, green, ratio=False),
            rel_rows=_rows(_only(mb.relative, listed), result.base, red, green, ratio=True),
            metric_tables=metric_tables,
            drilldown_url=f"{reverse('reports:drilldown', args=[microbenchmark.pk])}?{query}",
        )
    elif group:
        if group not in result.groups:
            raise Http404("that group is not in this comparison")
        g = result.groups[group]
        lowest = f"{dops[0]} client{pluralize(dops[0])}"
        columns = list(result.columns)
        rel_curves = g.relative_curves(columns)
        growth = g.scaling_curves(columns)
        context.update(
            subject=f"group {group}",
            kind="group",
            group=g,
            figures=[
                _figure(
                    "scale-rel",
                    scaleup_charts.relative_chart(
                        f"{group}: average relative QPS", dops, _only(rel_curves, drawn), what="average relative QPS"
                    ),
                    f"{server}-{group}-relative",
                    "average relative QPS",
                ),
                _figure(
                    "scale-growth",
                    scaleup_charts.relative_chart(
                        f"{group}: growth from {lowest}",
                        dops,
                        _only(growth, drawn),
                        what=f"QPS / QPS at {lowest}",
                    ),
                    f"{server}-{group}-growth",
                    "growth with clients",
                ),
            ],
            summary_rows=[
                {
                    "label": label,
                    "base": key == result.base,
                    "cells": [_summary_cell(s, red, green, key == result.base) for s in g.relative[key]],
                }
                for key, label in columns
                if key in listed
            ],
            rel_rows=_rows(_only(rel_curves, listed), result.base, red, green, ratio=True),
            growth_rows=_rows(_only(growth, listed), result.base, red, green, ratio=False),
            members=[(label, ids.get(label)) for label in g.members],
        )
    else:
        columns = list(result.columns)
        context.update(
            subject="every group",
            kind="overview",
            figures=[
                _figure(
                    f"scale-{i}",
                    scaleup_charts.relative_chart(
                        f"{name}: average relative QPS",
                        dops,
                        _only(g.relative_curves(columns), drawn),
                        what="average relative QPS",
                    ),
                    f"{server}-{name}-relative",
                    f"{name} average relative QPS",
                    f"{reverse('reports:scaleup')}?{query}&{urlencode({'group': name})}",
                    f"{name}: each microbenchmark, growth with clients",
                )
                for i, (name, g) in enumerate(result.groups.items())
            ],
        )
    if len(dops) < 2:
        # One point per line says nothing about scaling: the page says so and keeps the tables.
        context["figures"] = []
    return render_to_string("reports/scaleup.html", context, request)


def _summary_cell(summary: Any, red: float, green: float, is_base: bool) -> dict[str, Any]:
    return {"s": summary, "flag": "" if is_base else flag(summary.avg, red, green)}


def _only(curves: tuple[Curve, ...], keys: set[str]) -> tuple[Curve, ...]:
    return tuple(curve for curve in curves if curve.key in keys)


def _without(query: QueryDict, *names: str) -> str:
    copy = query.copy()
    for name in names:
        copy.pop(name, None)
    return copy.urlencode()
