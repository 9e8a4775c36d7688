"""The HW-efficiency section of a comparison: loaded into the comparison page when scrolled to, or opened alone."""

from __future__ import annotations

from typing import Any

from django.http import HttpResponse
from django.template.loader import render_to_string

from benchdash.http import HtmxHttpRequest
from reports.compare import ComparisonError
from reports.hw import hw_context
from reports.views import _comparison_based_page, effective_query, release_views, requested_comparison


def compare_hw(request: HtmxHttpRequest) -> HttpResponse:
    """cpu/o, cs/o, rKB/o and wKB/o of the compared versions relative to the base, per group and per
    microbenchmark, flagged like QPS with more counted as worse."""
    return _comparison_based_page(request, lambda shared: _hw_page(request, shared))


def _hw_page(request: HtmxHttpRequest, shared: dict[str, Any]) -> str | HttpResponse:
    asked = requested_comparison(request)
    data, defaulted, base = asked.data, asked.defaulted, asked.base
    try:
        comparison = asked.comparison()
        # Tables: every version unless the reader chose the long-term release lines and the newest release.
        comparison = release_views(comparison, data)[1]
    except (ComparisonError, ValueError) as exc:
        return HttpResponse(f"{exc}\n", status=400, content_type="text/plain")
    context = {
        "comparison": comparison,
        "base": base,
        "defaulted": defaulted,
        "base_label": comparison.version_label(comparison.base),
        "compare_query": effective_query(data, comparison).urlencode(),
        **hw_context(comparison),
        **shared,
    }
    template = "reports/hw.html#hw" if request.htmx else "reports/hw.html"
    return render_to_string(template, context, request)
