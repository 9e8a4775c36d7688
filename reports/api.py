"""HTTP API for comparisons: ``GET /api/compare`` returns the documented JSON form."""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any, Literal

from django.http import HttpRequest
from ninja import Query, Router, Schema, Status
from ninja.responses import NinjaJSONEncoder

from benchdash import pagecache
from reports.compare import ComparisonError, ComparisonSpec, get_comparison, resolve_run, series_stamp
from reports.exports import CONTENT_TYPES, export, spec_for_format
from runs.api_errors import ErrorOut, responses

router = Router(tags=["comparisons"])


class CompareParams(Schema):
    base: str
    runs: str = ""  # comma-separated run names or ids; empty: the base's whole series
    server: str | None = None
    workload: str | None = None
    group_set: str = "auto"
    dop: int | None = None
    red: float = 0.95
    green: float = 1.05
    include_warmups: bool = False
    format: Literal["json", "tsv", "csv", "markdown"] = "json"
    absolute: bool = False
    metrics: bool = False


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
    exports as text instead. Every answer carries a strong ``ETag``; sent back in
    ``If-None-Match`` it gets a 304 until a run of the series arrives or goes.
    """
    try:
        base = resolve_run(params.base, server=params.server, workload=params.workload)
        names = [n.strip() for n in params.runs.split(",") if n.strip()]
        run_ids = tuple(resolve_run(n, server=base.server.name, workload=base.workload.name).pk for n in names)
        spec = ComparisonSpec(
            base_run_id=base.pk,
            run_ids=run_ids,
            group_set=params.group_set,
            dop=params.dop,
            red=params.red,
            green=params.green,
            include_warmups=params.include_warmups,
        )
        spec = spec_for_format(spec, params.format, metrics=params.metrics)
        # Everything the document holds: the series' runs (its stamp changes when one arrives or goes) and the
        # request in canonical form (names resolved to ids). Regression records are not in it, so unlike the
        # comparison page its key leaves them out.
        wanted = {"spec": asdict(spec), "format": params.format, "absolute": params.absolute, "metrics": params.metrics}
        key = f"api/compare|{series_stamp(base.server_id, base.workload_id)}|{json.dumps(wanted, sort_keys=True)}"
        return pagecache.document(request, key, lambda: _serialised(spec, params))
    except ComparisonError as exc:
        return Status(400, ErrorOut(detail=str(exc)))


def _serialised(spec: ComparisonSpec, params: CompareParams) -> tuple[bytes, str]:
    """The comparison as the bytes of the requested format; a 200-version series' JSON is megabytes, made once
    per change of the series instead of on every request."""
    comparison = get_comparison(spec)
    if params.format == "json" and not params.metrics:
        body = json.dumps(comparison.as_json(), cls=NinjaJSONEncoder, separators=(",", ":")).encode()
        return body, "application/json; charset=utf-8"
    text = export(comparison, params.format, absolute=params.absolute, metrics=params.metrics)
    return text.encode(), CONTENT_TYPES[params.format]
