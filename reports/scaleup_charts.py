"""Plotly figures of the scale-up page: values against client count, one line per version.

Pure, and built like ``reports.charts``: a plain JSON-ready ``{"data", "layout"}`` dict per figure, the same
palette, marker shapes, layout and number rounding, missing values as gaps, infinite ratios drawn at the top of
the scale and marked "∞". The x axis is the client count on a log scale ticked at the measured counts, so
doubling concurrencies (1, 2, 4, 8) are evenly spaced and 1, 10, 40 stay in proportion.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from reports.charts import (
    GRID,
    _absolute,
    _base_layout,
    _figure,
    _line_style,
    _plotted,
    _reference_line,
    _step_above,
    _trace,
)
from reports.scaleup import Curve


def _clients_axis(dops: Sequence[int]) -> dict[str, Any]:
    axis: dict[str, Any] = {
        "title": {"text": "clients (concurrency)"},
        "tickmode": "array",
        "tickvals": list(dops),
        "ticktext": [str(d) for d in dops],
        "showgrid": True,
        "gridcolor": GRID,
        "automargin": True,
    }
    if dops and min(dops) > 0 and len(dops) > 1:
        axis["type"] = "log"
        # A little room either side of the first and last count (log10 units on a log axis).
        axis["range"] = [math.log10(min(dops)) - 0.08, math.log10(max(dops)) + 0.08]
    return axis


def absolute_chart(title: str, dops: Sequence[int], curves: Sequence[Curve], *, unit: str = "QPS") -> dict[str, Any]:
    """Absolute values (QPS, or a metric per operation) against client count, one line per version."""
    traces = []
    for i, curve in enumerate(curves):
        style = _line_style(i)
        traces.append(
            _trace(
                "scatter",
                x=list(dops),
                y=[_absolute(v) for v in curve.values],
                name=curve.label,
                mode="lines+markers",
                line={"color": style["color"], "dash": style["dash"], "width": 2},
                marker={"symbol": style["symbol"], "size": 8, "color": style["color"]},
                connectgaps=False,
                hovertemplate=f"{curve.label}<br>%{{x}} clients<br>{unit}: %{{y:,}}<extra></extra>",
            )
        )
    layout = _base_layout(title=title, height=380)
    layout.update(
        xaxis=_clients_axis(dops),
        yaxis={"title": {"text": unit}, "rangemode": "tozero", "gridcolor": GRID, "automargin": True},
    )
    return _figure(traces, layout)


def relative_chart(
    title: str, dops: Sequence[int], curves: Sequence[Curve], *, what: str = "relative QPS"
) -> dict[str, Any]:
    """Ratios against client count (relative to the base at the same concurrency, or growth from the lowest
    count), one line per version, with the reference line at 1.0."""
    finite = [v for c in curves for v in c.values if v is not None and math.isfinite(v)]
    clip = _step_above(max([*finite, 1.0]))
    traces = []
    for i, curve in enumerate(curves):
        style = _line_style(i)
        points = [_plotted(v, clip, False) for v in curve.values]
        marks = [mark for _, _, mark in points]
        traces.append(
            _trace(
                "scatter",
                x=list(dops),
                y=[y for y, _, _ in points],
                customdata=[text for _, text, _ in points],
                text=marks if any(marks) else None,
                textposition="top center",
                name=curve.label,
                mode="lines+markers+text" if any(marks) else "lines+markers",
                line={"color": style["color"], "dash": style["dash"], "width": 2},
                marker={"symbol": style["symbol"], "size": 8, "color": style["color"]},
                connectgaps=False,
                hovertemplate=f"{curve.label}<br>%{{x}} clients<br>{what}: %{{customdata}}<extra></extra>",
            )
        )
    low = max(0.0, math.floor(min([*finite, 1.0]) * 10) / 10)
    pad = (clip - low) * 0.05  # markers at either end stay whole
    layout = _base_layout(title=title, height=380)
    layout.update(
        xaxis=_clients_axis(dops),
        yaxis={
            "title": {"text": what},
            "range": [max(0.0, low - pad) if low > 0 else -pad, clip + pad],
            "tickformat": ".2f",
            "gridcolor": GRID,
            "automargin": True,
        },
        shapes=[_reference_line("y")],
    )
    return _figure(traces, layout)
