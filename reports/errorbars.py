"""Error bars from repeated runs on the drill-down's QPS chart.

A column whose build ran more than once has a coefficient of variation of its QPS (``Comparison.cv``, the
sample standard deviation over the mean). Its bar gets ± one standard deviation (cv × mean QPS); a column run
once gets none, rather than a bar of zero that would claim there is no noise.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any


def spreads(qps: Sequence[float | None], cv: Sequence[float | None]) -> list[float | None]:
    """One standard deviation of QPS per column, None where there is no mean or no repeat."""
    out: list[float | None] = []
    for mean, variation in zip(qps, cv, strict=True):
        if mean is None or variation is None or not math.isfinite(mean) or not math.isfinite(variation):
            out.append(None)
        else:
            out.append(round(abs(mean * variation), 3))
    return out


def with_error_bars(figure: dict[str, Any], qps: Sequence[float | None], cv: Sequence[float | None]) -> dict[str, Any]:
    """A copy of the drill-down QPS figure whose bar trace carries ± one standard deviation; the figure as it
    is when no column has repeats."""
    errors = spreads(qps, cv)
    if not any(e is not None for e in errors):
        return figure
    data = []
    done = False
    for trace in figure.get("data", []):
        if not done and trace.get("type") == "bar":
            trace = {
                **trace,
                "error_y": {
                    "type": "data",
                    "array": [e if e is not None else 0 for e in errors],
                    "visible": True,
                    "color": "#1d2330",
                    "thickness": 1.2,
                    "width": 5,
                },
                "hovertemplate": "%{x}<br>QPS: %{y:,} ± %{error_y.array:,.0f} (1σ of repeats)<extra></extra>",
            }
            done = True
        data.append(trace)
    return {**figure, "data": data}
