"""The HW-efficiency section of a comparison: loaded into the comparison page when scrolled to, or opened alone."""

from __future__ import annotations

from django.http import HttpResponse
from django.template.loader import render_to_string

from benchdash.http import HtmxHttpRequest
from reports.hw import HW_COLUMNS, hw_context
from reports.hw import measured_metrics as _measured
from reports.views import ComparisonPage, comparison_page, effective_query


def compare_hw(request: HtmxHttpRequest) -> HttpResponse:
    """cpu/o, cs/o, rKB/o and wKB/o of the compared versions relative to the base, per group and per
    microbenchmark, flagged like QPS with more counted as worse."""
    return comparison_page(request, lambda page: _hw_page(request, page), also=("metric",))


def _hw_page(request: HtmxHttpRequest, page: ComparisonPage) -> str:
    data, defaulted, base, shared = page.data, page.defaulted, page.base, page.shared
    # Tables: every version unless the reader chose the long-term release lines and the newest release.
    comparison = page.tabled
    compare_query = effective_query(data, comparison).urlencode()
    # One microbenchmark table at a time (?metric=, cpu/o first): the four of a 200-version comparison are 4 MB.
    measured = [key for key, _name, _about in HW_COLUMNS if key in _measured(comparison)]
    chosen = request.GET.get("metric", "")
    if chosen not in measured:
        chosen = measured[0] if measured else ""
    hw = hw_context(comparison, {chosen}, compare_query)
    context = {
        "comparison": comparison,
        "base": base,
        "defaulted": defaulted,
        "base_label": comparison.version_label(comparison.base),
        "compare_query": compare_query,
        "hw_metric": next((m for m in hw["hw_metrics"] if m["key"] == chosen), None),
        **hw,
        **shared,
    }
    template = "reports/hw.html#hw" if request.htmx else "reports/hw.html"
    return render_to_string(template, context, request)
