"""HTTP API for comparisons: ``GET /api/compare`` returns the documented JSON form."""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any, Literal

from django.conf import settings
from django.http import HttpRequest, QueryDict
from ninja import Query, Router, Schema, Status
from ninja.responses import NinjaJSONEncoder

from benchdash import pagecache
from benchdash.api_errors import ErrorOut, responses
from benchdash.querynumbers import QueryFloat, QueryInt
from reports import releaseview
from reports.compare import ComparisonError, ComparisonSpec, get_comparison, resolve_run, series_stamp
from reports.exports import CONTENT_TYPES, export, spec_for_format
from reports.writeup_views import writeup_response
from runs.models import Run

router = Router(tags=["comparisons"])


class ComparisonParams(Schema):
    base: str
    runs: str = ""  # comma-separated run names or ids; empty: the base's whole series
    server: str | None = None
    workload: str | None = None
    group_set: str = "auto"
    dop: QueryInt | None = None
    # A word of a summary table's name (``prep1``) when several tables of an archive share the run names.
    variant: str | None = None
    red: QueryFloat = 0.95
    green: QueryFloat = 1.05
    include_warmups: bool = False


class CompareParams(ComparisonParams):
    format: Literal["json", "tsv", "csv", "markdown"] = "json"
    absolute: bool = False
    metrics: bool = False
    # Every version unless asked for the long-term release lines and the newest release (runs/releases.py).
    releases: Literal["long-term", "all"] = "all"
    # Every run's scan by the spec's formula (comparable), unless asked for each run's own scripts' formula.
    scan_formula: Literal["spec", "era"] = "spec"


# The text exports are the same 200 in other media types: documented beside the JSON body.
# (Keyed by the int, as ninja keys its own responses: a "200" string would be a second "200" key in the JSON.)
_TEXT_EXPORTS = {
    200: {
        "content": {CONTENT_TYPES[f].split(";")[0]: {"schema": {"type": "string"}} for f in ("tsv", "csv", "markdown")},
        "headers": {"ETag": {"description": "strong validator of this answer's bytes", "schema": {"type": "string"}}},
    },
    304: {
        "description": "Not Modified: If-None-Match names the current answer's ETag; no body",
        "headers": {"ETag": {"schema": {"type": "string"}}},
    },
}


@router.get("/compare", response=responses({200: dict[str, Any]}), openapi_extra={"responses": _TEXT_EXPORTS})
def compare(request: HttpRequest, params: Query[CompareParams]) -> Any:
    """Relative QPS of runs of one server + workload against ``base`` (a run name or id).

    JSON: ``columns`` (runs in semantic version order, repeats averaged), ``qps``,
    ``relative_qps`` and ``flags`` keyed by column then microbenchmark label,
    ``summaries`` keyed by group then column (min, max, avg, median, n of total,
    min_label, max_label, missing), ``metrics`` / ``metric_ratios`` (cpu/o, cs/o,
    r/o, rKB/o, wKB/o, o/s), ``cv`` (spread of repeats), ``warnings``. Infinite
    ratios are the string ``"inf"``. ``format=tsv|csv|markdown`` returns those
    exports as text instead. Without ``dop``, every format compares at the
    concurrency at which the base measured the most microbenchmarks (warm-ups
    not counted, ties to the fewest clients); ``dop`` in the JSON says which. ``releases=long-term`` reads the
    long-term releases and the newest release of a series that mixes both kinds (every version by default);
    ``release_view`` in the JSON says which releases the view left out, with the switch. ``scan_formula=era`` reads
    scan as each run's own scripts computed it (tps × table size / 1000 in mid-March to mid-April 2025) instead
    of by the spec's formula for every run; ``scan_eras`` then names the runs of each formula when they are mixed.
    Every answer carries a strong ``ETag``; sent back in ``If-None-Match`` it gets a 304 until a run of the
    series arrives or goes, or the release lines change.
    """
    try:
        base, spec = _requested(params, scan_formula=params.scan_formula)
        spec = spec_for_format(spec, params.format, metrics=params.metrics)
        # Everything the document holds: the series' runs (its stamp changes when one arrives or goes), the release
        # lines in force and the request in canonical form (names resolved to ids). Regression records are not in
        # it, so unlike the comparison page its key leaves them out.
        wanted = {
            "spec": asdict(spec),
            "format": params.format,
            "absolute": params.absolute,
            "metrics": params.metrics,
            "releases": params.releases,
            "release_lines": settings.BENCHDASH_RELEASE_LINES if params.releases != "all" else None,
        }
        key = f"api/compare|{series_stamp(base.server_id, base.workload_id)}|{json.dumps(wanted, sort_keys=True)}"
        return pagecache.document(request, key, lambda: _serialised(spec, params))
    except (ComparisonError, ValueError) as exc:
        return Status(400, ErrorOut(detail=str(exc)))


def _requested(params: ComparisonParams, scan_formula: str = "spec") -> tuple[Run, ComparisonSpec]:
    """The base run and the comparison the parameters name (runs by name or id, in the base's series)."""
    base = resolve_run(
        params.base, server=params.server, workload=params.workload, dop=params.dop, variant=params.variant
    )
    names = [n.strip() for n in params.runs.split(",") if n.strip()]
    run_ids = tuple(
        resolve_run(n, server=base.server.name, workload=base.workload.name, dop=params.dop, near=base).pk
        for n in names
    )
    spec = ComparisonSpec(
        base_run_id=base.pk,
        run_ids=run_ids,
        group_set=params.group_set,
        dop=params.dop,
        red=params.red,
        green=params.green,
        include_warmups=params.include_warmups,
        scan_formula=scan_formula,
    )
    return base, spec


def _serialised(spec: ComparisonSpec, params: CompareParams) -> tuple[bytes, str]:
    """The comparison as the bytes of the requested format; a 200-version series' JSON is megabytes, made once
    per change of the series instead of on every request."""
    full = get_comparison(spec)
    cut = releaseview.in_view(full, params.releases, settings.BENCHDASH_RELEASE_LINES)
    comparison = cut.comparison
    if params.format == "json" and not params.metrics:
        body = json.dumps(
            {**comparison.as_json(), "release_view": _release_view(full, cut, params.releases)},
            cls=NinjaJSONEncoder,
            separators=(",", ":"),
        ).encode()
        return body, "application/json; charset=utf-8"
    text = export(comparison, params.format, absolute=params.absolute, metrics=params.metrics)
    return text.encode(), CONTENT_TYPES[params.format]


def _release_view(full: Any, cut: releaseview.InView, view: str) -> dict[str, Any]:
    """Which releases the view leaves out, in one line with the switch, and which newest release it reads
    provisionally (a short-term one, until a newer release arrives)."""
    left_out = releaseview.left_out_labels(full, cut)
    provisional = releaseview.provisional_labels(full, settings.BENCHDASH_RELEASE_LINES)
    if view == "all":
        line = "Every release; releases=long-term for the long-term releases and the newest."
    else:
        newest = f" ({', '.join(provisional)}: provisional until a newer release arrives)" if provisional else ""
        gone = f"left out: {', '.join(left_out)}" if left_out else "no release left out"
        line = f"Long-term releases and the newest{newest}; {gone}; releases=all for every release."
    return {"releases": view, "left_out": left_out, "provisional": provisional, "note": line}


class WriteupParams(ComparisonParams):
    format: Literal["markdown", "zip"] = "markdown"


_WRITEUP = {
    200: {
        "content": {
            "text/markdown": {"schema": {"type": "string"}},
            "application/zip": {"schema": {"type": "string", "format": "binary"}},
        }
    }
}


@router.get("/compare/writeup", response=responses({200: str}), openapi_extra={"responses": _WRITEUP})
def compare_writeup(request: HttpRequest, params: Query[WriteupParams]) -> Any:
    """The comparison as a blog post in Markdown (the comparison page's write-up), or with ``format=zip`` a
    .zip of ``writeup.md`` and every group chart as ``charts/<group>.svg``. Links back to benchdash are
    absolute when the server has ``BENCHDASH_BASE_URL`` set."""
    try:
        base, spec = _requested(params)
        comparison = get_comparison(spec)
    except ComparisonError as exc:
        return Status(400, ErrorOut(detail=str(exc)))
    query = QueryDict(mutable=True)
    query["base"] = str(base.pk)
    query.setlist("runs", [str(pk) for pk in spec.run_ids])
    # The post links back to the comparison it shows: the parameters that change it, as the page spells them.
    if params.group_set != "auto":
        query["group_set"] = params.group_set
    if params.dop is not None:
        query["dop"] = str(params.dop)
    if (params.red, params.green) != (0.95, 1.05):
        query["red"], query["green"] = str(params.red), str(params.green)
    if params.include_warmups:
        query["include_warmups"] = "on"
    return writeup_response(comparison, query, params.format)
