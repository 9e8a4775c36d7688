"""Plotly figures of a comparison, built on the server and drawn by plotly.js in the page (house style).

Pure: plain data only, no Django and no plotly.py, so a view, an export and a
test all get the same figure from the same function, and a page pays neither
plotly.py's import nor its validation. Every function returns a plain JSON-ready
dict ``{"data": [...], "layout": {...}}``, exactly what plotly.py's
``Figure.to_json()`` would write for it (``reports/tests/test_chart_dicts.py`` holds them to that),
for ``json_script``; the page draws it with
``Plotly.newPlot(element, figure.data, figure.layout, plot_config(filename))``.

Payload size matters because a comparison page carries a heatmap and one chart
per group: numbers are rounded to 4 significant digits (absolute QPS keeps its
integer part, see ``_absolute``), the template is "none" (plotly.py's default
template alone is ~6 KB per figure), and constant per-trace text goes into the
trace's hovertemplate rather than into every point.

Missing values are ``None`` (a gap), never 0. Infinite ratios (base 0)
are drawn at a clip value at the top of the scale and say "∞" in the hover and
on the chart, so they neither crash JSON (which has no infinity) nor stretch the
axis until every real change looks flat.
"""

from __future__ import annotations

import functools
import html
import math
import re
import statistics
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, NamedTuple, TypedDict, TypeVar, cast

if TYPE_CHECKING:
    import numpy as np

    from reports.compare import Column, Comparison

# Okabe-Ito (minus its yellow, unreadable on white) extended with three of Paul Tol's muted colours:
# distinguishable with the common colour-vision deficiencies, and a group has at most 10 microbenchmarks.
PALETTE = (
    "#0072B2",
    "#D55E00",
    "#009E73",
    "#CC79A7",
    "#E69F00",
    "#56B4E9",
    "#000000",
    "#882255",
    "#44AA99",
    "#999933",
)
# A marker shape per line as well as a colour, so lines can be told apart in greyscale prints and by anyone.
SYMBOLS = (
    "circle",
    "square",
    "diamond",
    "triangle-up",
    "triangle-down",
    "x",
    "cross",
    "star",
    "pentagon",
    "hexagram",
)
DASHES = ("solid", "dash", "dot", "dashdot")

RED = "#c62828"  # the same red and green as the tables (static/css/benchdash.css)
GREEN = "#1b7f3b"
REFERENCE = "#5b6475"
GRID = "#e5e8ee"
FONT = {"family": "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif", "size": 12, "color": "#1d2330"}
STEP = 0.05  # the y axis starts on a multiple of this, like the write-ups' charts (0.70, 0.85)
HEATMAP_MAX_SPREAD = 1.0  # colour domain at most 0 … 2: beyond that a cell is simply "much worse / much better"
INFINITY_TEXT = "∞"
# A value beyond the upper quartile by this many interquartile ranges (or threshold widths) is an outlier, and the
# axis leaves it at its edge only if showing it would squash the rest into less than 1/OUTLIER_SQUASH of the height.
OUTLIER_FENCE = 3.0
OUTLIER_SQUASH = 2.5
# The lines between versions are only a guide for the eye (versions are not a continuum): thinner than the markers.
GUIDE_WIDTH = 1.25
BAR_VERSIONS = 8  # the bar view shows at most this many versions: beyond that, bars are slivers
LOG_TICKS = (0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 0.85, 1.0, 1.2, 1.5, 2.0, 3.0, 5.0, 10.0, 20.0, 50.0, 100.0)


class DrilldownPoint(TypedDict):
    """One column (build) of one microbenchmark, for ``drilldown_charts``; ``*_ratio`` are other / base."""

    key: str
    version_label: str
    qps: float | None
    relative: float | None
    lat_avg_ms: float | None
    lat_pct_ms: float | None
    cpu_o: float | None
    cs_o: float | None
    rkb_o: float | None
    wkb_o: float | None
    cpu_o_ratio: float | None
    cs_o_ratio: float | None
    rkb_o_ratio: float | None
    wkb_o_ratio: float | None


# --------------------------------------------------------------------------- public helpers


def plot_config(filename: str) -> dict[str, Any]:
    """The plotly.js ``config`` to pass with every figure: fits its container, PNG download, nothing sent out.

    ``filename`` becomes the download's name (plotly adds ``.png``); characters
    that are unsafe in file names (run keys contain ``/`` and brackets) become ``_``.
    """
    safe = re.sub(r"[^A-Za-z0-9._=-]+", "_", filename).strip("._") or "benchdash-chart"
    return {
        "responsive": True,
        # A self-hosted tool's data stays here: no logo linking out, no "edit in Chart Studio" / share / send to
        # the cloud, which would upload internal benchmark results to a third party.
        "displaylogo": False,
        "showLink": False,
        "showSendToCloud": False,
        "showEditInChartStudio": False,
        "modeBarButtonsToRemove": ["sendDataToCloud", "editInChartStudio", "lasso2d", "select2d"],
        "toImageButtonOptions": {"format": "png", "filename": safe},
    }


def column_labels(columns: Sequence[Column], sep: str = " ") -> dict[str, str]:
    """Display name per column key: "DBMS version", plus flavour, then config, only where names would repeat.

    Two builds of 8.4.6 become "MySQL 8.4.6 rel_o2nofp" and "MySQL 8.4.6
    v2_rel_o2nofp" while every other column stays short, which is what keeps
    tick labels readable on a phone.
    """
    parts: dict[str, list[str]] = {c.key: [f"{c.dbms} {c.version}"] for c in columns}
    extras: tuple[Callable[[Column], str], ...] = (lambda c: c.flavour, lambda c: c.config, lambda c: c.key)
    for extra in extras:
        counts = Counter(sep.join(p) for p in parts.values())
        clashing = [c for c in columns if counts[sep.join(parts[c.key])] > 1]
        if not clashing:
            break
        for column in clashing:
            if value := extra(column):
                parts[column.key].append(value)
    return {key: sep.join(p) for key, p in parts.items()}


def default_y_min(values: Iterable[float | None], red: float) -> float:
    """Where a relative-QPS axis starts: the multiple of 0.05 just below the lowest value or the red threshold.

    The red threshold takes part so the reference line and the red band are
    always in view: a group that moved from 1.00 to 1.02 must not fill the
    whole height and look like a collapse.
    """
    finite = [v for v in values if v is not None and math.isfinite(v)]
    return _step_below(min([*finite, red]))


# --------------------------------------------------------------------------- figures


class Scale(TypedDict):
    """The y axis of a group chart as the user set it: ``None`` means automatic."""

    y_min: float | None
    y_max: float | None
    log: bool


def axis_range(
    values: Iterable[float | None],
    red: float,
    green: float,
    *,
    y_min: float | None = None,
    y_max: float | None = None,
    log: bool = False,
    bars: bool = False,
    finite: list[float] | None = None,
) -> tuple[float, float]:
    """(bottom, top) of a relative-QPS axis, in data units; points outside it are drawn at its edge with their value.

    - bottom: ``y_min``, else a step below the lowest value or the red threshold,
      so a collapse is always in view (0 for bars on a linear axis: a bar's
      length is its value);
    - top: ``y_max``, else a step above the highest value or the green
      threshold, unless one or a few outliers would squash every other line
      into a thin band: then the top is set by the rest and the outliers are
      drawn at the top edge with their value. A collapse is never treated so.
    - ``finite``: the values as this reads them (finite, positive on a log axis), sorted, when the caller has
      them (``values`` is then not read).
    - log: no outlier rule (a log axis keeps 0.35 and 2.87 both readable);
      bottom and top leave a 10 % margin around the values.
    """
    if finite is None:
        finite = sorted(v for v in values if v is not None and math.isfinite(v) and (v > 0 or not log))
    if log:
        low = y_min if y_min and y_min > 0 else min([*finite, red]) / 1.1
        high = y_max if y_max and y_max > low else max([*finite, green]) * 1.1
        return round(low, 4), round(high, 4)
    low = y_min if y_min is not None else (0.0 if bars else _step_below(min([*finite, red])))
    if y_max is not None and y_max > low:
        return low, y_max
    high = _step_above(max([*finite, green]))
    if len(finite) >= 4:
        q1, _, q3 = statistics.quantiles(finite, n=4)
        fence = q3 + OUTLIER_FENCE * max(q3 - q1, green - 1.0, 1.0 - red)
        body = _step_above(max([v for v in finite if v <= fence] + [green]))
        if finite[-1] > fence and high - low > OUTLIER_SQUASH * (body - low):
            high = body
    return low, max(high, low + STEP)


def _edge(rel: float | None, low: float, high: float) -> tuple[float | None, str | None, str]:
    """(y drawn, mark, where the mark goes) of a value against the axis: outside it, at the edge with the value."""
    if rel is None or math.isnan(rel) or math.isinf(rel):
        return None, None, "top center"
    if rel < low:
        return low, f"▼{rel:.2f}", "top center"
    if rel > high:
        return high, f"▲{rel:.2f}", "bottom center"
    return _sig(rel), None, "top center"


def _edge_marks(
    comparison: Comparison,
    keys: Sequence[str],
    members: Sequence[str],
    low: float,
    high: float,
    rows: dict[str, list[float | None]] | None = None,
) -> dict[tuple[str, str], str]:
    """The label of each version's points beyond either edge, keyed by (column key, microbenchmark) of the most
    extreme one: its value, "▼0.35". Several points there share it (their labels would be drawn over each other),
    and a range ("▼0.58–0.68") would not fit between the versions of a phone-sized chart; each point's hover
    still says its own value."""
    found: dict[tuple[str, str], str] = {}
    if rows is None:
        rows = {label: [comparison.relative[key].get(label) for key in keys] for label in members}
    # Only a column with a value beyond an edge has a mark: most columns of most charts have none.
    beyond = {j for row in rows.values() for j, v in enumerate(row) if v is not None and not low <= v <= high}
    for j, key in enumerate(keys):
        if j not in beyond:
            continue
        values = [(v, label) for label in members if (v := rows[label][j]) is not None and math.isfinite(v)]
        below = sorted(item for item in values if item[0] < low)
        above = sorted((item for item in values if item[0] > high), reverse=True)
        for items, arrow in ((below, "▼"), (above, "▲")):
            if items:
                found[(key, items[0][1])] = f"{arrow}{items[0][0]:.2f}"
    return found


def _group_members(comparison: Comparison, group: str) -> list[str]:
    """The microbenchmarks of ``group`` in the comparison's order; ValueError naming the groups it has."""
    if group not in comparison.groups:
        raise ValueError(f"unknown group {group!r}; this comparison has {', '.join(comparison.groups)}")
    return [label for label in comparison.labels if comparison.group_of.get(label) == group]


def group_line_chart(
    comparison: Comparison,
    group: str,
    *,
    y_min: float | None = None,
    y_max: float | None = None,
    log: bool = False,
) -> dict[str, Any]:
    """Relative QPS of each microbenchmark of ``group`` across the compared columns, one trace each.

    - x: the compared columns (the base excluded: it is 1.0 everywhere) in
      semantic version order, as categories whose values are ``column_labels``
      (unique; the flavour on a second line); ``layout.meta.keys`` maps each back
      to its column key. Versions are discrete: each value is a marker, and the
      thin line between markers only helps the eye follow one microbenchmark;
    - traces: exactly one per microbenchmark of the group, in group order. The
      reference line at 1.0, the dotted red/green threshold lines and their
      bands are layout shapes, not traces, so the legend lists microbenchmarks only;
    - y: relative QPS to 4 significant digits, ``None`` where missing; the axis
      is ``axis_range``: a value outside it is drawn at the edge it crossed
      with its value ("▼0.35", "▲2.87"), so nothing disappears; an infinite
      ratio is drawn at the top, marked "∞";
    - ``log``: a log axis (its range and the threshold labels in log10 units, as plotly wants them);
    - customdata per point: its QPS; for a line with a clipped, infinite or noisy
      point, ``[relative QPS text, QPS]``. The base QPS is constant per line, so
      it is written into that trace's hovertemplate.
    """
    members = _group_members(comparison, group)
    columns, ticks = _compared_ticks(comparison)
    keys = [c.key for c in columns]
    base_qps = comparison.qps.get(comparison.base, {})
    red, green = comparison.spec.red, comparison.spec.green

    # Each line's relative QPS across the columns, read once: the axis, the edge marks and the lines use them.
    lines = _grid_lines(comparison, keys, members, log)
    inside: dict[str, bool] = {}
    if lines is not None:
        rows, measured, finite, has_infinity = lines.rows, lines.qps, lines.finite, lines.has_infinity
        start, top = axis_range((), red, green, y_min=y_min, y_max=y_max, log=log, finite=finite)
    else:
        relative = comparison.relative
        views = [relative[key] for key in keys]
        rows = {label: [view.get(label) for view in views] for label in members}
        measured = {}
        values = [v for row in rows.values() for v in row]
        start, top = axis_range(values, red, green, y_min=y_min, y_max=y_max, log=log)
        has_infinity = math.inf in values  # a positive infinite ratio (None and NaN are never equal to it)
    # Room above the top for the "∞" mark of a clipped infinite point.
    end = (top * 1.15 if log else top + 2 * STEP) if has_infinity else top

    xs = [ticks[k] for k in keys]
    axis = _LineAxis(start=start, end=end, top=top, log=log)
    if lines is not None:
        inside = lines.inside(start, end)
    edge_marks = _edge_marks(comparison, keys, members, start, end, rows)
    traces = [
        _group_line_trace(
            comparison,
            label,
            i,
            keys,
            xs,
            axis,
            edge_marks,
            _number_text(base_qps.get(label)),
            rows[label],
            measured.get(label),
            inside.get(label),
        )
        for i, label in enumerate(members)
    ]

    layout = _base_layout(title=_group_title(comparison, group), height=500)
    layout.update(
        xaxis=_category_axis(xs, xs),
        # The column key of each x label, for markers (with_markers) and click handlers.
        meta={"keys": {ticks[k]: k for k in keys}},
        yaxis=_relative_axis(start, end, log),
        shapes=_threshold_shapes(red, green, start, end, log=log),
        annotations=_threshold_annotations(red, green, start, end, log=log),
    )
    return _figure(traces, layout)


@dataclass(frozen=True)
class _LineAxis:
    """A group chart's relative-QPS axis: where it starts and ends, where an infinite ratio is drawn, log or not."""

    start: float
    end: float
    top: float
    log: bool


class _LinePoint(NamedTuple):
    y: float | None
    text: str  # the relative QPS for the hover
    mark: str | None  # drawn beside the point: "▼0.35" at an axis edge, "∞"
    place: str  # where the mark goes
    at_value: bool  # drawn at its own value (not clipped), so an error bar belongs on it
    clipped: bool


_Kept = TypeVar("_Kept")


class _KeptForLast(Generic[_Kept]):
    """What was worked out for the last objects asked about, by identity: a page's charts ask the same of one
    comparison once per chart. One slot, replaced whole, so a thread never reads half of another's."""

    def __init__(self) -> None:
        self._slot: tuple[tuple[Any, ...], _Kept] | None = None

    def get(self, of: tuple[Any, ...], work_out: Callable[[], _Kept]) -> _Kept:
        slot = self._slot
        if slot is not None and len(slot[0]) == len(of) and all(a is b for a, b in zip(slot[0], of, strict=True)):
            return slot[1]
        found = work_out()
        self._slot = (of, found)
        return found


@dataclass(frozen=True)
class _GridLines:
    """A group chart's lines read from a computed comparison's arrays (``_grid_lines``)."""

    rows: dict[str, list[float | None]]  # each member's relative QPS per column, None where missing
    qps: dict[str, list[float | None]]  # each member's QPS per column, None where not measured
    finite: list[float]  # what axis_range reads of the relative QPS
    has_infinity: bool  # a positive infinite relative QPS
    members: list[str]
    relative: np.ndarray  # (members, columns)
    present: np.ndarray

    def inside(self, start: float, end: float) -> dict[str, bool]:
        """Per member: every relative QPS measured and within [start, end] (NaN is not)."""
        found = self.present & (self.relative >= start) & (self.relative <= end)
        within = cast(list[bool], found.all(axis=1).tolist())
        return dict(zip(self.members, within, strict=True))


def _grid_lines(comparison: Comparison, keys: list[str], members: list[str], log: bool) -> _GridLines | None:
    """Of a computed comparison (its cells as arrays), straight from the arrays: each member's relative QPS and QPS
    across the columns ``keys`` (None where missing, as ``Comparison.relative`` and ``qps`` have them), the values
    ``axis_range`` reads (finite, positive on a log axis; sorted stably, as ``sorted`` does) and whether any is a
    positive infinity. None for another comparison (a release view's)."""
    from reports.compare import Cells

    cells = comparison.cells
    if not isinstance(cells, Cells) or not keys or not members:
        return None
    import numpy as np

    grid = cells.grid
    column_at, label_at = _grid_index(grid)
    at = np.ix_([label_at[label] for label in members], [column_at[key] for key in keys])
    relative, present = grid.relative.T[at], grid.has_relative.T[at]
    qps, measured = grid.qps.T[at], grid.measured.T[at]
    shown = relative[present]
    finite = shown[np.isfinite(shown) & (shown > 0)] if log else shown[np.isfinite(shown)]
    with np.errstate(invalid="ignore"):
        return _GridLines(
            rows=dict(zip(members, _rows_or_none(relative, present), strict=True)),
            qps=dict(zip(members, _rows_or_none(qps, measured), strict=True)),
            finite=np.sort(finite, kind="stable").tolist(),
            has_infinity=bool(np.isposinf(shown).any()),
            members=members,
            relative=relative,
            present=present,
        )


def _rows_or_none(values: np.ndarray, present: np.ndarray) -> list[list[float | None]]:
    """The rows of ``values`` as lists of floats, None where not ``present``."""
    rows: list[list[float | None]] = values.tolist()
    for i, j in zip(*(a.tolist() for a in (~present).nonzero()), strict=True):
        rows[i][j] = None
    return rows


# The last grid's column and label positions (_grid_index): a page's charts read them once.
_GRID_INDEX: _KeptForLast[tuple[dict[str, int], dict[str, int]]] = _KeptForLast()


def _grid_index(grid: Any) -> tuple[dict[str, int], dict[str, int]]:
    def work_out() -> tuple[dict[str, int], dict[str, int]]:
        return {key: c for c, key in enumerate(grid.keys)}, {label: j for j, label in enumerate(grid.labels)}

    return _GRID_INDEX.get((grid,), work_out)


def _group_line_point(rel: float | None, noisy: bool, axis: _LineAxis, shared_mark: str | None) -> _LinePoint:
    """One point of a group chart's line; ``shared_mark``: the label this point carries when it leaves the axis
    (several lines leaving it at one version share one label, on the most extreme point)."""
    y, text, mark = _plotted(rel, axis.top, noisy)
    place = "top center"
    clipped = False
    if mark is None and y is not None:
        y, mark, place = _edge(rel, axis.start, axis.end)
        if mark is not None:
            clipped = True
            text += " (outside the axis: drawn at its edge)"
            mark = shared_mark
    if axis.log and y is not None and y <= 0:
        y, mark = axis.start, f"▼{rel:.2f}" if rel is not None and math.isfinite(rel) else INFINITY_TEXT
    finite = rel is not None and math.isfinite(rel)
    at_value = finite and axis.start <= rel <= axis.end and (rel > 0 or not axis.log)  # type: ignore[operator]
    return _LinePoint(y, text, mark, place, at_value, clipped)


def _mark_texts(marks: list[str | None], places: list[str], colour: str) -> dict[str, Any]:
    """A line's trace properties for the marks beside its points ("▼0.35", "∞"); a line without any has none."""
    if not any(marks):
        return {"mode": "lines+markers"}
    return {
        "mode": "lines+markers+text",
        "text": marks,
        "textposition": places if len(set(places)) > 1 else places[0],
        "textfont": {"color": colour, "size": 10},
    }


def _group_line_trace(
    comparison: Comparison,
    label: str,
    i: int,
    keys: list[str],
    xs: list[str],
    axis: _LineAxis,
    edge_marks: dict[tuple[str, str], str],
    base_text: str,
    rels: list[float | None] | None = None,
    qps: list[float | None] | None = None,
    inside: bool | None = None,
) -> dict[str, Any]:
    """The line of one microbenchmark across the compared columns (see ``group_line_chart``); ``rels`` and
    ``qps``: its relative QPS and QPS per column, when read already; ``inside``: whether every relative QPS is
    measured and within the axis, when worked out already."""
    spread, noisy_labels = _lines_with_spread_or_noise(comparison)
    if label in noisy_labels:
        noisy_of = comparison.noisy
        noisy = [noisy_of.get(key, {}).get(label, False) for key in keys]
    else:
        noisy = [False] * len(keys)
    plain = _plain_line(comparison, label, keys, axis, noisy, rels, qps, inside)
    if plain is not None:
        ys, qps = plain
        style = _line_style(i)
        # What _trace makes of these properties, written out: its copy of each list costs more than the line.
        trace: dict[str, Any] = {
            "x": list(xs),
            "y": ys,
            "customdata": qps,
            "name": label,
            "mode": "lines+markers",
            "line": {"color": style["color"], "dash": style["dash"], "width": GUIDE_WIDTH},
            "marker": {"symbol": style["symbol"], "size": 8, "color": style["color"]},
            "connectgaps": False,
        }
        if label in spread:
            bars = _error_bars(
                [relative_spread(comparison, k, label) for k in keys], [True] * len(keys), style["color"]
            )
            if bars is not None:
                trace["error_y"] = _plain(bars)
        trace["hovertemplate"] = (
            "<b>%{fullData.name}</b><br>%{x}<br>relative QPS: %{y:.2f}"
            f"<br>QPS: %{{customdata:,}}<br>base QPS: {base_text}<extra></extra>"
        )
        trace["type"] = "scatter"
        return trace
    points = [
        _group_line_point(comparison.relative[key].get(label), quiet, axis, edge_marks.get((key, label)))
        for key, quiet in zip(keys, noisy, strict=True)
    ]
    ys = [p.y for p in points]
    marks = [p.mark for p in points]
    places = [p.place for p in points]
    qps = [
        None if p.y is None else _absolute(comparison.qps[key].get(label)) for key, p in zip(keys, points, strict=True)
    ]
    style = _line_style(i)
    # Payload: a plain line carries only its QPS per point and formats relative QPS from y; the hover
    # text per point (clipped, ∞, "within noise") is sent only for the lines that need it.
    special = any(p.clipped for p in points) or any(marks) or any(noisy)
    relative_part = "%{customdata[0]}" if special else "%{y:.2f}"
    qps_part = "%{customdata[1]:,}" if special else "%{customdata:,}"
    return _trace(
        "scatter",
        x=xs,
        y=ys,
        customdata=[None if p.y is None else [p.text, q] for p, q in zip(points, qps, strict=True)] if special else qps,
        name=label,
        **_mark_texts(marks, places, style["color"]),
        line={"color": style["color"], "dash": style["dash"], "width": GUIDE_WIDTH},
        marker={"symbol": style["symbol"], "size": 8, "color": style["color"]},
        connectgaps=False,
        error_y=_error_bars(
            [relative_spread(comparison, k, label) for k in keys], [p.at_value for p in points], style["color"]
        ),
        hovertemplate=(
            f"<b>%{{fullData.name}}</b><br>%{{x}}<br>relative QPS: {relative_part}"
            f"<br>QPS: {qps_part}<br>base QPS: {base_text}<extra></extra>"
        ),
    )


def _plain_line(
    comparison: Comparison,
    label: str,
    keys: list[str],
    axis: _LineAxis,
    noisy: list[bool],
    rels: list[float | None] | None = None,
    qps: list[float | None] | None = None,
    inside: bool | None = None,
) -> tuple[list[float | None], list[float | None]] | None:
    """(y, QPS) of a line whose every point is measured, finite, within the axis and not within noise, on a linear
    axis: what most lines are, drawn without a hover text, mark or edge of their own (``_group_line_point`` gives
    each of its points exactly this); None for any other line."""
    if axis.log or any(noisy):
        return None
    if rels is None:
        relative = comparison.relative
        rels = [relative[key].get(label) for key in keys]
    start, end = axis.start, axis.end
    # A missing value (None) or NaN fails the comparison, an infinite one the range.
    if inside is None:
        inside = all(rel is not None and start <= rel <= end for rel in rels)
    if not inside:
        return None
    if qps is None:
        measured = comparison.qps
        qps = [measured[key].get(label) for key in keys]
    # Each rel is finite here: _sig's text rounding without its checks, as this runs once per point; a QPS of
    # four digits or more is _absolute's round() without its checks (NaN and infinity fail the range).
    ys: list[float | None] = list(map(float, _sig4_format(len(rels)).format(*rels).split()))
    # Every QPS here is finite (its relative QPS is): of four digits or more, as most are, each is round()ed.
    if qps and None not in qps:
        whole = cast(list[float], qps)
        if min(whole) >= 1000 and max(whole) < math.inf:
            rounded: list[float | None] = list(map(round, whole))
            return ys, rounded
    return ys, [round(q) if q is not None and 1000 <= q < math.inf else _absolute(q) for q in qps]


@functools.cache
def _sig4_format(count: int) -> str:
    """A format of ``count`` numbers to 4 significant digits, space-separated: one call formats a line's points,
    each as _sig rounds it (``float`` of its ``.4g`` text)."""
    return "{:.4g} " * count


# The last comparison's lines with a spread and with a noisy point (_lines_with_spread_or_noise), with the cells
# they were read from: a page's charts read them once, not once per line and column.
_MARKED: _KeptForLast[tuple[frozenset[str], frozenset[str]]] = _KeptForLast()


def _lines_with_spread_or_noise(comparison: Comparison) -> tuple[frozenset[str], frozenset[str]]:
    """The microbenchmarks with a spread (a repeated run) in any column, the base's included, and those with a
    noisy point in any compared column: every other line has neither error bars nor a "within noise" text."""
    return _MARKED.get((comparison, comparison.cells), lambda: _spread_or_noise(comparison))


def _spread_or_noise(comparison: Comparison) -> tuple[frozenset[str], frozenset[str]]:
    from reports.compare import Cells

    cells = comparison.cells
    if isinstance(cells, Cells):
        # Straight from a computed comparison's arrays: the views of every cell cost more than the charts' lines.
        grid = cells.grid
        labels = grid.labels
        with_cv = (grid.has_cv & grid.measured).any(axis=0).tolist() if len(grid.keys) else [False] * len(labels)
        with_noise = grid.noisy[grid.compared].any(axis=0).tolist() if grid.compared.any() else [False] * len(labels)
        spread = frozenset(label for label, found in zip(labels, with_cv, strict=True) if found)
        noisy_labels = frozenset(label for label, found in zip(labels, with_noise, strict=True) if found)
    else:
        spread = frozenset(
            label for view in comparison.cv.values() for label, value in view.items() if value is not None
        )
        noisy_labels = frozenset(label for view in comparison.noisy.values() for label, value in view.items() if value)
    return spread, noisy_labels


class _Ticks(NamedTuple):
    columns: list[Column]  # the compared columns in chart order
    ticks: dict[str, str]  # their tick labels (``column_labels``, a line per part)
    base: str  # the base's label among every column, as a group chart's title names it


# The last comparison's ticks (_compared_ticks, _base_label): a page's charts read them once, not once per chart.
_TICKS: _KeptForLast[_Ticks] = _KeptForLast()


def _ticks(comparison: Comparison) -> _Ticks:
    def work_out() -> _Ticks:
        columns = _compared_columns(comparison)
        base = str(column_labels(comparison.columns)[comparison.base])
        return _Ticks(columns, column_labels(columns, sep="<br>"), base)

    return _TICKS.get((comparison, comparison.columns), work_out)


def _compared_ticks(comparison: Comparison) -> tuple[list[Column], dict[str, str]]:
    """The compared columns in chart order and their tick labels (``column_labels``, a line per part)."""
    found = _ticks(comparison)
    return found.columns, found.ticks


def _base_label(comparison: Comparison) -> str:
    """The base's label among every column (``column_labels``), as a group chart's title names it."""
    return _ticks(comparison).base


def group_absolute_chart(
    comparison: Comparison,
    group: str,
    *,
    log: bool = False,
) -> dict[str, Any]:
    """Absolute QPS of each microbenchmark of ``group`` across the base and the compared columns, one trace each.

    The x axis is ``group_line_chart``'s with the base first (it is a value here, not 1.0); y is QPS as the runs
    measured it (``_absolute``), ``None`` where missing; the axis starts at 0, or is logarithmic with ``log``,
    where microbenchmarks thousands of QPS apart each stay readable. The page's y-axis range (and a chart's own
    top) is one of relative QPS, which does not apply to QPS: the page does not pass it (``group_charts``).
    """
    members = _group_members(comparison, group)
    columns = [comparison.column(comparison.base), *_compared_columns(comparison)]
    keys = [c.key for c in columns]
    ticks = column_labels(columns, sep="<br>")
    xs = [ticks[k] for k in keys]
    traces = []
    for i, label in enumerate(members):
        style = _line_style(i)
        traces.append(
            _trace(
                "scatter",
                x=xs,
                y=[_absolute(comparison.qps[key].get(label)) for key in keys],
                name=label,
                mode="lines+markers",
                line={"color": style["color"], "dash": style["dash"], "width": GUIDE_WIDTH},
                marker={"symbol": style["symbol"], "size": 8, "color": style["color"]},
                connectgaps=False,
                hovertemplate="<b>%{fullData.name}</b><br>%{x}<br>QPS: %{y:,}<extra></extra>",
            )
        )
    title = _titled(group, f"(QPS; the base, {column_labels(columns)[comparison.base]}, first)")
    layout = _base_layout(title=title, height=500)
    # QPS is in the title: an axis title would sit on the tick labels on a phone.
    yaxis: dict[str, Any] = {"automargin": True, "gridcolor": "#e5e8ee", "separatethousands": True}
    if log:
        yaxis["type"] = "log"
    else:
        yaxis["rangemode"] = "tozero"
    layout.update(xaxis=_category_axis(xs, xs), meta={"keys": {ticks[k]: k for k in keys}}, yaxis=yaxis)
    return _figure(traces, layout)


def group_bar_chart(
    comparison: Comparison,
    group: str,
    *,
    y_min: float | None = None,
    y_max: float | None = None,
    log: bool = False,
    limit: int = BAR_VERSIONS,
) -> dict[str, Any]:
    """Relative QPS of each microbenchmark of ``group`` as bars: one bar per version, grouped by microbenchmark.

    The write-ups' chart for a few versions: x is the group's microbenchmarks,
    one trace (a colour) per compared column, the newest ``limit`` columns when
    there are more (``layout.meta.omitted`` says how many were left out). Bars
    start at 0 on a linear axis; a bar beyond the axis top is cut at it and
    labelled with its value ("▲2.87"); a missing value is no bar, and says
    "missing" in the hover of the others.
    """
    members = _group_members(comparison, group)
    columns = _compared_columns(comparison)
    shown = columns[-limit:] if limit > 0 else columns
    red, green = comparison.spec.red, comparison.spec.green
    labels = column_labels(comparison.columns)
    values = [comparison.relative[c.key].get(label) for c in shown for label in members]
    start, top = axis_range(values, red, green, y_min=y_min, y_max=y_max, log=log, bars=True)
    traces = []
    for i, column in enumerate(shown):
        ys: list[float | None] = []
        marks: list[str] = []
        texts: list[str] = []
        at_value: list[bool] = []
        for label in members:
            rel = comparison.relative[column.key].get(label)
            y, text, mark = _plotted(rel, top, comparison.noisy.get(column.key, {}).get(label, False))
            if mark is None and y is not None and rel is not None and rel > top:
                y, mark = top, f"▲{rel:.2f}"
            at_value.append(rel is not None and math.isfinite(rel) and rel <= top)
            ys.append(y)
            marks.append(mark or "")
            texts.append(text)
        traces.append(
            _trace(
                "bar",
                x=members,
                y=ys,
                name=labels[column.key],
                marker={"color": PALETTE[i % len(PALETTE)]},
                error_y=_error_bars([relative_spread(comparison, column.key, m) for m in members], at_value, "#333333"),
                text=marks if any(marks) else None,
                textposition="inside" if any(marks) else None,
                customdata=texts,
                hovertemplate=f"<b>%{{x}}</b><br>{labels[column.key]}<br>relative QPS: %{{customdata}}<extra></extra>",
            )
        )
    layout = _base_layout(title=_group_title(comparison, group), height=460)
    layout.update(
        barmode="group",
        xaxis=_category_axis(members, members),
        yaxis=_relative_axis(start, top, log),
        shapes=_threshold_shapes(red, green, max(start, 1e-9) if log else start, top, log=log, bands=False),
        annotations=_threshold_annotations(red, green, start, top, log=log),
        meta={"omitted": len(columns) - len(shown)},
    )
    return _figure(traces, layout)


def relative_spread(comparison: Comparison, key: str, label: str) -> float | None:
    """± one standard deviation of a relative QPS from repeated runs: rel × √(cv² + cv_base²), the noise of the
    column's runs and of the base's, None when neither column was run more than once."""
    rel = comparison.relative.get(key, {}).get(label)
    cvs = [comparison.cv.get(k, {}).get(label) for k in (key, comparison.base)]
    known = [cv for cv in cvs if cv is not None and math.isfinite(cv)]
    if rel is None or not math.isfinite(rel) or not known:
        return None
    return round(abs(rel) * math.sqrt(sum(cv * cv for cv in known)), 4)


def _error_bars(spreads: list[float | None], drawn: list[bool], color: str) -> dict[str, Any] | None:
    """plotly's error_y for a trace: the spreads of points drawn at their value (a point at an axis edge gets
    none); None when no point has one, so a series without repeats carries no error bars at all."""
    array = [s if s is not None and ok else 0 for s, ok in zip(spreads, drawn, strict=True)]
    if not any(array):
        return None
    return {"type": "data", "array": array, "visible": True, "thickness": 1.2, "width": 3, "color": color}


def _group_title(comparison: Comparison, group: str) -> str:
    base_label = _base_label(comparison)
    # The base goes into the title, not the y-axis title: a long axis title is cut off on a phone.
    return _titled(group, f"(base {base_label} = 1)")


# Plotly neither wraps nor shortens a title: past about this many characters of 15 px type a group's name ran
# off a 390 px screen.
GROUP_TITLE_CHARS = 40


def _titled(group: str, note: str) -> str:
    """A group chart's title: the group's name on its first line, shortened with an ellipsis past GROUP_TITLE_CHARS
    (the group's heading above its chart, and the page's table, name it whole), the note on a second, smaller one."""
    name = group if len(group) <= GROUP_TITLE_CHARS else group[: GROUP_TITLE_CHARS - 1].rstrip() + "…"
    return f"{name}<br><span style='font-size:12px'>{note}</span>"


def _relative_axis(start: float, end: float, log: bool) -> dict[str, Any]:
    axis: dict[str, Any] = {
        "title": {"text": "relative QPS" + (" (log scale)" if log else "")},
        "gridcolor": GRID,
        "zeroline": False,
        "automargin": True,
        "tickformat": ".2f",
    }
    if log:
        # plotly wants a log axis's range in log10 units; ticks at the values people read off such charts.
        ticks = [v for v in LOG_TICKS if start <= v <= end] or [1.0]
        axis.update(type="log", range=[math.log10(start), math.log10(end)], tickvals=ticks)
    else:
        axis["range"] = [start, end]
    return axis


def heatmap(comparison: Comparison) -> dict[str, Any]:
    """Relative QPS of every microbenchmark (rows, in group order, ungrouped last) × compared column.

    - rows (y): microbenchmark labels, top to bottom in group order, with a
      line between groups; columns (x): ``column_labels`` in semantic version
      order, base excluded, ticks on top like a table header;
    - z: relative QPS to 4 significant digits, ``None`` where missing; an
      infinite ratio is z = zmax with the text "∞";
    - colours: diverging around ``zmid`` = 1 on a domain symmetric about 1; the
      scale is flat grey between the red and green thresholds and changes colour
      exactly at them, so a cell's colour agrees with the tables' flags; the
      colour bar (horizontal, below) has ticks at zmin, red, green and zmax;
    - text: the value to 2 decimals ("∞" for infinite), drawn in the cell;
    - customdata[row][col] = the cell's absolute QPS; ``layout.meta`` maps each
      x label to its column key (``keys``) and each row to its microbenchmark id
      (``microbenchmarks``): a click handler reads ``event.points[0].x``/``.y``
      and looks them up there, so no cell carries them.
    """
    columns = _compared_columns(comparison)
    keys = [c.key for c in columns]
    rows = _heatmap_rows(comparison)
    red, green = comparison.spec.red, comparison.spec.green
    z_min, z_max = _heatmap_domain(comparison, keys, rows)
    cells = _HeatmapCells.of(comparison, keys, rows, (z_min, z_max))
    # Payload: the 2-decimal text is only sent when some cell is infinite; otherwise the cell formats z.
    any_infinite = any(INFINITY_TEXT in row for row in cells.text)

    ticks = column_labels(columns, sep="<br>")
    xs = [ticks[k] for k in keys]
    trace = _trace(
        "heatmap",
        x=xs,
        y=rows,
        z=cells.z,
        zmin=z_min,
        zmax=z_max,
        zmid=1.0,
        colorscale=_threshold_colorscale(z_min, z_max, red, green),
        text=cells.text if any_infinite else None,
        texttemplate="%{text}" if any_infinite else "%{z:.2f}",
        textfont={"size": 10},
        customdata=cells.custom,
        xgap=1,
        ygap=1,
        hoverongaps=False,
        hovertemplate=(
            "<b>%{y}</b><br>%{x}<br>relative QPS: "
            + ("%{text}" if any_infinite else "%{z:.2f}")
            + "<br>QPS: %{customdata:,}<extra></extra>"
        ),
        colorbar=_heatmap_colorbar(z_min, z_max, red, green),
    )
    layout = _base_layout(title="", height=150 + 20 * len(rows))
    layout.update(
        margin={"l": 8, "r": 8, "t": 8, "b": 70},
        xaxis={**_category_axis(xs, xs), "side": "top"},
        # What a click needs, once per figure instead of once per cell: the column key of each x label
        # and the microbenchmark id of each row.
        meta={
            "keys": {ticks[k]: k for k in keys},
            "microbenchmarks": {r: comparison.microbenchmark_ids.get(r) for r in rows},
        },
        yaxis={"type": "category", "autorange": "reversed", "automargin": True, "showgrid": False},
        shapes=_group_boundaries(comparison, rows),
        showlegend=False,
    )
    return _figure([trace], layout)


def _heatmap_rows(comparison: Comparison) -> list[str]:
    """The heatmap's rows: the microbenchmarks in group order, the ungrouped ones last."""
    grouped = [label for g in comparison.groups for label in comparison.labels if comparison.group_of.get(label) == g]
    in_groups = set(grouped)
    return grouped + [label for label in comparison.labels if label not in in_groups]


def _heatmap_domain(comparison: Comparison, keys: list[str], rows: list[str]) -> tuple[float, float]:
    """(zmin, zmax): symmetric about 1, wide enough for every finite cell and at least twice the wider threshold."""
    red, green = comparison.spec.red, comparison.spec.green
    finite = [
        v
        for key in keys
        for label in rows
        if (v := comparison.relative[key].get(label)) is not None and math.isfinite(v)
    ]
    # At least twice the wider threshold on each side, so the grey band never fills the whole scale.
    spread = max([abs(v - 1.0) for v in finite] + [2 * max(1.0 - red, green - 1.0)])
    spread = min(_step_above(spread, strictly=False), HEATMAP_MAX_SPREAD)
    return round(1.0 - spread, 4), round(1.0 + spread, 4)


@dataclass(frozen=True)
class _HeatmapCells:
    """The heatmap's cells, row by row: z (relative QPS), the text drawn in each, and its absolute QPS."""

    z: list[list[float | None]]
    text: list[list[str]]
    custom: list[list[float | None]]

    @classmethod
    def of(cls, comparison: Comparison, keys: list[str], rows: list[str], domain: tuple[float, float]) -> _HeatmapCells:
        cells = [[_heatmap_cell(comparison.relative[key].get(label), domain) for key in keys] for label in rows]
        return cls(
            z=[[z for z, _ in row] for row in cells],
            text=[[text for _, text in row] for row in cells],
            custom=[[_absolute(comparison.qps[key].get(label)) for key in keys] for label in rows],
        )


def _heatmap_cell(rel: float | None, domain: tuple[float, float]) -> tuple[float | None, str]:
    """One cell's z and text: nothing where missing, the domain's end and "∞" where infinite, else the value."""
    if rel is None or math.isnan(rel):
        return None, ""
    if math.isinf(rel):
        return (domain[1] if rel > 0 else domain[0]), INFINITY_TEXT
    return _sig(rel), f"{rel:.2f}"


def _heatmap_colorbar(z_min: float, z_max: float, red: float, green: float) -> dict[str, Any]:
    """The colour bar: horizontal, below the cells, labelled at zmin and zmax, and the thresholds' grey band once,
    at its middle ("0.95–1.05")."""
    return {
        "title": {"text": "relative QPS", "side": "top"},
        "orientation": "h",
        "thickness": 10,
        "len": 1,
        "x": 0,
        "xanchor": "left",
        "y": 0,
        "yref": "container",
        "yanchor": "bottom",
        # One label for the band: a label at each threshold, 0.1 apart on a scale twice as wide, crowded each other
        # at 390 px (11 px apart with the heatmap as wide as the screen), and one at 1.00 would sit between them.
        "tickvals": [z_min, (red + green) / 2, z_max],
        "ticktext": [f"{z_min:.2f}", f"{red:.2f}–{green:.2f}", f"{z_max:.2f}"],
    }


def _group_boundaries(comparison: Comparison, rows: list[str]) -> list[dict[str, Any]]:
    """A line between two groups' rows: row i sits at y = i, so a line at i − 0.5 separates it from the row above."""
    starts = [
        i for i in range(1, len(rows)) if comparison.group_of.get(rows[i]) != comparison.group_of.get(rows[i - 1])
    ]
    return [
        {
            "type": "line",
            "xref": "paper",
            "x0": 0,
            "x1": 1,
            "yref": "y",
            "y0": i - 0.5,
            "y1": i - 0.5,
            "line": {"color": "#1d2330", "width": 2},
        }
        for i in starts
    ]


def drilldown_charts(
    series: Sequence[DrilldownPoint], *, microbenchmark: str = "", percentile: float | None = None
) -> dict[str, dict[str, Any]]:
    """Charts of one microbenchmark across versions: ``{"qps": …, "latency": …, "hw": …}``.

    ``series`` is one point per column in the order to draw (semantic version
    order, base included if the caller wants it shown). ``microbenchmark`` goes
    into the titles so a downloaded PNG says what it shows; ``percentile`` (95,
    99) names the latency percentile line.

    - x: the columns' version labels (made unique with the column key where two
      columns share one), as categories; ``layout.meta.keys`` maps each back to
      its column key. A label is a fifth of a run key's length, and x is written
      once per trace: at 200 versions that is most of the charts' bytes;
    - "qps": absolute QPS as bars, relative QPS as a line on a second y axis
      (right, from 0) with a reference line at 1.0 on that axis;
    - "latency": average and percentile latency in ms, one line each;
    - "hw": cpu/o, cs/o, rKB/o, wKB/o relative to base, one line each, with a
      reference line at 1.0; customdata per point is the absolute value.
    Missing values are gaps; infinite ratios are clipped and marked "∞" as in
    ``group_line_chart``.
    """
    xs = _unique_labels(series)
    prefix = f"{microbenchmark}: " if microbenchmark else ""

    def layout(title: str, height: int, **axes: Any) -> dict[str, Any]:
        found = _base_layout(title=f"{prefix}{title}", height=height)
        # Plotly picks which labels to print: with every one forced, 200 versions are an unreadable smear.
        # The categories in the traces' order, named once: the page sends the traces without their x
        # (``for_the_page``), 3 KB per line at 200 versions.
        axis = {"type": "category", "categoryorder": "array", "categoryarray": xs, "automargin": True}
        axis["showgrid"] = False
        found.update(xaxis=axis, meta={"keys": {x: p["key"] for x, p in zip(xs, series, strict=True)}})
        found.update(axes)
        return found

    return {
        "qps": _drilldown_qps(series, xs, layout),
        "latency": _drilldown_latency(series, xs, layout, percentile),
        "hw": _drilldown_hw(series, xs, layout),
    }


_Layout = Callable[..., dict[str, Any]]


def _unique_labels(series: Sequence[DrilldownPoint]) -> list[str]:
    """Each point's version label, with its column key added where two points share a label."""
    counts = Counter(p["version_label"] for p in series)
    return [
        p["version_label"] if counts[p["version_label"]] == 1 else f"{p['version_label']} {p['key']}" for p in series
    ]


def _finite_top(values: Iterable[float | None]) -> float:
    """The axis step just above the largest finite value (and above 1.0): where an infinite ratio is drawn."""
    return _step_above(max([v for v in values if v is not None and math.isfinite(v)] + [1.0]))


def _drilldown_qps(series: Sequence[DrilldownPoint], xs: list[str], layout: _Layout) -> dict[str, Any]:
    relative = [p["relative"] for p in series]
    rel_clip = _finite_top(relative)
    rel_top = rel_clip + 2 * STEP if any(v is not None and math.isinf(v) for v in relative) else rel_clip
    rel_points = [_plotted(v, rel_clip, False) for v in relative]
    marks = [mark for _, _, mark in rel_points]
    qps_layout = layout(
        "QPS",
        400,
        yaxis={"title": {"text": "QPS"}, "rangemode": "tozero", "gridcolor": GRID, "automargin": True},
        yaxis2={
            "title": {"text": "relative QPS"},
            "overlaying": "y",
            "side": "right",
            # A fixed range from 0 with round steps: left to autorange it ticks at 0.21, 0.42, …
            "range": [0, rel_top],
            "dtick": 0.25 if rel_top <= 2.5 else None,
            "tickformat": ".2f",
            "showgrid": False,
            "automargin": True,
        },
        shapes=[_reference_line("y2")],
    )
    bars = _trace(
        "bar",
        x=xs,
        y=[_absolute(p["qps"]) for p in series],
        name="QPS",
        marker={"color": "#9db4e3"},
        hovertemplate="%{x}<br>QPS: %{y:,}<extra></extra>",
    )
    line = _trace(
        "scatter",
        x=xs,
        y=[y for y, _, _ in rel_points],
        customdata=[text for _, text, _ in rel_points],
        text=marks if any(marks) else None,
        mode="lines+markers+text" if any(marks) else "lines+markers",
        textposition="top center",
        name="relative QPS",
        yaxis="y2",
        line={"color": PALETTE[1], "width": 2},
        marker={"symbol": SYMBOLS[1], "size": 8},
        hovertemplate="%{x}<br>relative QPS: %{customdata}<extra></extra>",
    )
    return _figure([bars, line], qps_layout)


def _drilldown_latency(
    series: Sequence[DrilldownPoint], xs: list[str], layout: _Layout, percentile: float | None
) -> dict[str, Any]:
    pct_name = f"p{percentile:g} latency" if percentile is not None else "percentile latency"
    hover = "%{x}<br>%{fullData.name}: %{y} ms<extra></extra>"
    return _figure(
        [
            _metric_line(xs, [_sig(p["lat_avg_ms"]) for p in series], "avg latency", 0, hovertemplate=hover),
            _metric_line(xs, [_sig(p["lat_pct_ms"]) for p in series], pct_name, 1, hovertemplate=hover),
        ],
        layout(
            "latency",
            380,
            yaxis={"title": {"text": "ms"}, "rangemode": "tozero", "gridcolor": GRID, "automargin": True},
        ),
    )


_HW_NAMES = (
    ("cpu_o", "CPU / operation"),
    ("cs_o", "context switches / operation"),
    ("rkb_o", "KB read / operation"),
    ("wkb_o", "KB written / operation"),
)


def _drilldown_hw(series: Sequence[DrilldownPoint], xs: list[str], layout: _Layout) -> dict[str, Any]:
    clip = _finite_top(p[f"{name}_ratio"] for p in series for name, _ in _HW_NAMES)  # type: ignore[literal-required]
    traces = []
    for i, (name, title) in enumerate(_HW_NAMES):
        points = [_plotted(p[f"{name}_ratio"], clip, False) for p in series]  # type: ignore[literal-required]
        marks = [mark for _, _, mark in points]
        traces.append(
            _metric_line(
                xs,
                [y for y, _, _ in points],
                title,
                i,
                customdata=[
                    None if y is None else [text, _absolute(p[name])]  # type: ignore[literal-required]
                    for (y, text, _), p in zip(points, series, strict=True)
                ],
                text=marks if any(marks) else None,
                mode="lines+markers+text" if any(marks) else "lines+markers",
                textposition="top center",
                hovertemplate=(
                    "%{x}<br>%{fullData.name}: %{customdata[1]:,}<br>relative to base: %{customdata[0]}<extra></extra>"
                ),
            )
        )
    hw_axis = {
        "title": {"text": "relative to base"},
        "rangemode": "tozero",
        "tickformat": ".2f",
        "gridcolor": GRID,
        "automargin": True,
    }
    return _figure(traces, layout("HW efficiency", 400, yaxis=hw_axis, shapes=[_reference_line("y")]))


# --------------------------------------------------------------------------- internals


def _compared_columns(comparison: Comparison) -> list[Column]:
    # The same order as compare.py's query (version, then build, then config), whatever order the columns come in.
    return sorted(comparison.others, key=lambda c: (c.version_sort, c.build, c.config))


def _sig(value: float | None, digits: int = 4) -> float | None:
    if value is None or not math.isfinite(value):
        return None
    return float(f"{value:.{digits}g}")


def _absolute(value: float | None) -> float | None:
    """An absolute measurement to 4 significant digits, but never fewer than its integer digits.

    QPS 16798 shown as 16800 would look invented and no longer match the run page.
    """
    if value is None or not math.isfinite(value):
        return None
    if value >= 1000:
        return round(value)  # four or more integer digits (log10 ≥ 3): most QPS, without the logarithm
    if value == 0:
        return 0
    digits = 3 - math.floor(math.log10(abs(value)))
    return round(value) if digits <= 0 else round(value, digits)


def _number_text(value: float | None) -> str:
    shown = _absolute(value)
    if shown is None:
        return "–"
    return f"{shown:,.0f}" if shown >= 1000 else f"{shown:,}"


def _plotted(rel: float | None, clip: float, noisy: bool) -> tuple[float | None, str, str | None]:
    """(y to plot, text for the hover, mark drawn on the chart) of one relative value."""
    if rel is None or math.isnan(rel):
        return None, "missing", None
    if math.isinf(rel):
        return (clip if rel > 0 else 0.0), f"{INFINITY_TEXT} (base is 0; drawn at the top)", INFINITY_TEXT
    text = f"{rel:.2f}" + (" (within run-to-run noise)" if noisy else "")
    return _sig(rel), text, None


def _step_below(value: float) -> float:
    k = math.floor(round(value / STEP, 9))
    if math.isclose(k * STEP, value, abs_tol=1e-9):
        k -= 1  # on the grid already: one more step, so the lowest point is not drawn on the axis line
    return round(k * STEP, 2)


def _step_above(value: float, *, strictly: bool = True) -> float:
    k = math.ceil(round(value / STEP, 9))
    if strictly and math.isclose(k * STEP, value, abs_tol=1e-9):
        k += 1
    return round(k * STEP, 2)


def _line_style(i: int) -> dict[str, str]:
    return {
        "color": PALETTE[i % len(PALETTE)],
        "symbol": SYMBOLS[i % len(SYMBOLS)],
        "dash": DASHES[(i // len(PALETTE)) % len(DASHES)],
    }


def _metric_line(keys: list[str], ys: list[float | None], name: str, i: int, **props: Any) -> dict[str, Any]:
    style = _line_style(i)
    settings: dict[str, Any] = {
        "x": keys,
        "y": ys,
        "name": name,
        "mode": "lines+markers",
        "line": {"color": style["color"], "dash": style["dash"], "width": 2},
        "marker": {"symbol": style["symbol"], "size": 8, "color": style["color"]},
        "connectgaps": False,
    }
    return _trace("scatter", **{**settings, **props})


def _base_layout(*, title: str, height: int) -> dict[str, Any]:
    return {
        "template": _no_template(),
        "height": height,
        "font": FONT,
        "title": {"text": title, "x": 0, "xanchor": "left", "font": {"size": 15}} if title else None,
        # A line more of title (after <br>), 18 px more above the plot.
        "margin": {"l": 8, "r": 8, "t": 40 + 18 * title.count("<br>") if title else 12, "b": 8},
        "paper_bgcolor": "#ffffff",
        "plot_bgcolor": "#ffffff",
        "hovermode": "closest",
        # Below the plot, anchored to the figure's bottom edge: at 390 px a legend on the right would take
        # half the width, and anchored to the container it cannot collide with rotated tick labels.
        "legend": {"orientation": "h", "x": 0, "xanchor": "left", "y": 0, "yref": "container", "yanchor": "bottom"},
    }


def _category_axis(keys: list[str], ticks: list[str]) -> dict[str, Any]:
    return {
        "type": "category",
        "categoryorder": "array",
        "categoryarray": keys,
        "tickmode": "array",
        "tickvals": keys,
        "ticktext": ticks,
        "automargin": True,
        "showgrid": False,
    }


def _reference_line(yref: str) -> dict[str, Any]:
    return {
        "type": "line",
        "xref": "paper",
        "x0": 0,
        "x1": 1,
        "yref": yref,
        "y0": 1.0,
        "y1": 1.0,
        "line": {"color": REFERENCE, "width": 1.5},
        "layer": "below",
    }


def _threshold_shapes(
    red: float, green: float, start: float, end: float, *, log: bool = False, bands: bool = True
) -> list[dict[str, Any]]:
    # The bundled plotly.js places shapes in data units on a log axis too (checked in Chromium: a line at y0 = 0
    # vanished), unlike the axis range and annotations, which take log10 units; ``log`` changes nothing here.
    shapes = [_reference_line("y")]
    if red > start:
        if bands:
            shapes.append(_band(start, min(red, end), "rgba(198,40,40,0.07)"))
        shapes.append(_dotted(red, RED))
    if green < end:
        if bands:
            shapes.append(_band(max(green, start), end, "rgba(27,127,59,0.07)"))
        shapes.append(_dotted(green, GREEN))
    return shapes


def _band(y0: float, y1: float, fill: str) -> dict[str, Any]:
    return {
        "type": "rect",
        "xref": "paper",
        "x0": 0,
        "x1": 1,
        "yref": "y",
        "y0": y0,
        "y1": y1,
        "fillcolor": fill,
        "line": {"width": 0},
        "layer": "below",
    }


def _dotted(y: float, colour: str) -> dict[str, Any]:
    return {
        "type": "line",
        "xref": "paper",
        "x0": 0,
        "x1": 1,
        "yref": "y",
        "y0": y,
        "y1": y,
        "line": {"color": colour, "width": 1, "dash": "dot"},
        "layer": "below",
    }


def _threshold_annotations(
    red: float, green: float, start: float, end: float, *, log: bool = False
) -> list[dict[str, Any]]:
    at = math.log10 if log else float
    notes = []
    for value, colour, text, anchor in ((red, RED, f"≤ {red:.2f}", "top"), (green, GREEN, f"≥ {green:.2f}", "bottom")):
        if start < value < end:
            notes.append(
                {
                    "xref": "paper",
                    "x": 1,
                    "xanchor": "right",
                    "yref": "y",
                    "y": at(value),
                    "yanchor": anchor,
                    "text": text,
                    "showarrow": False,
                    "font": {"size": 10, "color": colour},
                }
            )
    return notes


def _threshold_colorscale(z_min: float, z_max: float, red: float, green: float) -> list[list[Any]]:
    """Red below ``red``, grey between the thresholds, green above ``green``: the tables' flags as colours."""

    def at(value: float) -> float:
        return round(min(max((value - z_min) / (z_max - z_min), 0.0), 1.0), 4)

    return [
        [0.0, "#8e1b1b"],
        [at(red), "#f2a7a7"],
        [at(red), "#eceef2"],
        [at(green), "#eceef2"],
        [at(green), "#a6dcb5"],
        [1.0, "#14602c"],
    ]


def _no_template() -> dict[str, Any]:
    # What plotly.py writes for its "none" template: plotly.js then applies no theme. Sent written out, since
    # plotly.js does not know the name; a fresh dict each time, as figures are cached and extended separately.
    return {"data": {"scatter": [{"type": "scatter"}]}}


def _trace(kind: str, **props: Any) -> dict[str, Any]:
    """A plotly.js trace of ``kind`` as plotly.py would write it: a property given as None is left out."""
    trace: dict[str, Any] = _plain(props)
    trace["type"] = kind
    return trace


def _figure(data: list[dict[str, Any]], layout: dict[str, Any]) -> dict[str, Any]:
    """The JSON-ready figure of traces made by ``_trace``: the layout's unset (None) properties left out."""
    return {"data": data, "layout": _plain(layout)}


def _plain(value: Any) -> Any:
    # Plain JSON values, written out by hand rather than through plotly.graph_objects: its validation and deep
    # copies cost most of a comparison page's rendering, and a test checks that plotly accepts these unchanged.
    # Copied all the way down, so a cached figure is never changed through a figure made from it. None inside
    # an array is a gap in the data and stays; None as a property means "not set" and is dropped.
    if isinstance(value, dict):
        # Scalars kept without a call each: a drill-down's layout maps 200 version labels to their columns.
        return {k: v if type(v) in _SCALARS else _plain(v) for k, v in value.items() if v is not None}
    if isinstance(value, list | tuple):
        # Arrays are mostly numbers and texts (a point per version): those are kept without a call each.
        return [v if v is None or type(v) in _SCALARS else _plain(v) for v in value]
    return value


_SCALARS = frozenset((float, int, str, bool))


# --------------------------------------------------------------------------- regression and bug markers


class Marker(TypedDict):
    """A regression shown on a chart: where it arrived (and was fixed), and the bugs that explain it."""

    arrived: str | None  # column key of the version where it arrived
    fixed: str | None  # column key of the version where it was fixed
    text: str  # the bug keys ("MySQL bug 102037") or "regression" when no bug is linked yet
    kind: str  # "regression" or "improvement"


MARKER_LINE_PX = 13  # one line of a marker label (font size 10): what each further line adds to the top margin


def for_the_page(figure: dict[str, Any]) -> dict[str, Any]:
    """``figure`` as a page sends it: a trace whose x is the x axis's categories, in their order (every line of a
    group chart or drill-down), is sent without them and ``layout.meta.x_from_axis`` says so; the page's script
    (``static/js/benchdash.js``, ``figureOf``) puts them back before anything reads the figure. A 200-version
    comparison's five charts repeat their 200 version labels in each of 42 lines: 125 KB of its HTML."""
    layout = figure.get("layout") or {}
    categories = (layout.get("xaxis") or {}).get("categoryarray")
    meta = layout.get("meta", {})
    if not categories or not isinstance(meta, dict):
        return figure
    data = [
        {name: value for name, value in trace.items() if name != "x"}
        if "xaxis" not in trace and trace.get("x") == categories
        else trace
        for trace in figure.get("data", [])
    ]
    if all("x" in trace for trace in data):
        return figure
    return {**figure, "data": data, "layout": {**layout, "meta": {**meta, "x_from_axis": True}}}


def with_markers(figure: dict[str, Any], markers: Sequence[Marker]) -> dict[str, Any]:
    """The figure with a vertical line and a label at each marker's arrived-in and fixed-in column.

    Works on any figure whose x axis holds column keys (group charts, drill-downs);
    returns a new dict, the cached figure is not changed. Markers at one column share one label, a line per
    kind of end (the bugs of two regressions that arrived in one version are listed together, not printed over
    each other), and the top margin grows by a line for each line past the first. A label is anchored so that
    it stays within the plot: rightwards from a column in the first third, leftwards in the last.
    """
    if not markers:
        return figure
    layout = dict(figure.get("layout", {}))
    shapes = list(layout.get("shapes", []))
    annotations = list(layout.get("annotations", []))
    x_of = {key: x for x, key in layout.get("meta", {}).get("keys", {}).items()}
    at: dict[Any, dict[tuple[str, str], list[str]]] = {}  # x → (end, colour) → the markers' texts
    for marker in markers:
        colour = RED if marker["kind"] == "regression" else GREEN
        for key, what in ((marker["arrived"], "arrived"), (marker["fixed"], "fixed")):
            x = x_of.get(key, key) if key is not None else None
            if x is None:
                continue
            texts = at.setdefault(x, {}).setdefault((what, colour if what == "arrived" else GREEN), [])
            if marker["text"] not in texts:
                texts.append(marker["text"])
    columns = list(layout.get("xaxis", {}).get("categoryarray") or [])
    # A label within two columns of the one before it stands above that one: side by side, "MySQL bug #102037
    # (arrived)" at 5.7.44 and "MySQL bug #111111 (arrived)" at 8.0.43 print over each other (at 390 px always).
    previous, raised, below, top = -3, False, 0, 1
    for x, ends in sorted(at.items(), key=lambda item: columns.index(item[0]) if item[0] in columns else 0):
        for colour in dict.fromkeys(colour for _what, colour in ends):
            shapes.append(_marker_line(x, colour))
        column = columns.index(x) if x in columns else 0
        raised = column - previous <= 2 and not raised
        lift = below if raised else 0  # in lines: the height of the label it stands above
        previous, below, top = column, len(ends), max(top, lift + len(ends))
        annotations.append({**_marker_label(x, ends, columns), "yshift": MARKER_LINE_PX * lift})
    layout["shapes"] = shapes
    layout["annotations"] = annotations
    extra = top - 1
    if extra and "margin" in layout:
        layout["margin"] = {**layout["margin"], "t": layout["margin"].get("t", 0) + MARKER_LINE_PX * extra}
        if layout.get("title"):
            # Kept at the top: plotly.js centres a title in the top margin, so it would sink onto the labels.
            layout["title"] = {**layout["title"], "y": 1, "yref": "container", "yanchor": "top", "pad": {"t": 10}}
    return {**figure, "layout": layout}


def _marker_line(x: Any, colour: str) -> dict[str, Any]:
    return {
        "type": "line",
        "xref": "x",
        "yref": "paper",
        "x0": x,
        "x1": x,
        "y0": 0,
        "y1": 1,
        "line": {"color": colour, "width": 1.5, "dash": "dashdot"},
    }


def _marker_label(x: Any, ends: dict[tuple[str, str], list[str]], columns: list[Any]) -> dict[str, Any]:
    """One label above column ``x``: a line per (end, colour), each in its colour."""
    lines = [(f"{', '.join(texts)} ({what})", colour) for (what, colour), texts in ends.items()]
    if len(lines) == 1:
        text = html.escape(lines[0][0], quote=False)
    else:
        text = "<br>".join(f'<span style="color:{c}">{html.escape(t, quote=False)}</span>' for t, c in lines)
    where = columns.index(x) / (len(columns) - 1) if x in columns and len(columns) > 1 else 0.0
    return {
        "x": x,
        "y": 1,
        "xref": "x",
        "yref": "paper",
        "xanchor": "left" if where <= 1 / 3 else "right" if where >= 2 / 3 else "center",
        "yanchor": "bottom",
        "showarrow": False,
        "text": text,
        "font": {"size": 10, "color": lines[0][1]},
        "bgcolor": "rgba(255,255,255,0.85)",
    }


class StoryPoint(TypedDict):
    """One version of a story's series: its value (relative QPS, or a metric per operation), the story's level
    there, and what the story says happened at it."""

    version: str
    value: float | None
    level: float | None
    mark: str  # "", "arrived", "fixed", "outlier", or another event's words ("worse", "partly back", …)


def story_chart(points: Sequence[StoryPoint], *, title: str, y_title: str, kind: str) -> dict[str, Any]:
    """A story's series: its values per version (markers and a line), the story's level as a step line, a dashed
    vertical line with a label at the arrival and at the fix (and any other event), and each outlier as a
    hollow marker with its label. ``kind`` (regression or improvement) colours the arrival."""
    versions = [p["version"] for p in points]
    layout = _base_layout(title=title, height=360)
    layout.update(
        xaxis=_category_axis(versions, versions),
        yaxis={"title": {"text": y_title}, "gridcolor": GRID, "automargin": True},
        showlegend=True,
        legend={"orientation": "h", "y": -0.2},
    )
    shapes, annotations = [], []
    arrival_colour = RED if kind == "regression" else GREEN
    # A label within two versions of the one before it goes a row higher: at 390 px two neighbouring events'
    # labels ("arrived" at 8.0.43, "fixed in the 8.0 line" at 8.0.44) would cover each other.
    last_labelled, row = -3, 0
    for at, point in enumerate(points):
        mark = point["mark"]
        if not mark or mark == "outlier":
            continue
        row = 1 - row if at - last_labelled <= 2 else 0
        last_labelled = at
        # A fix, whether of the story or of one release line ("fixed in the 8.0 line"), is green.
        colour = arrival_colour if mark == "arrived" else (GREEN if mark.startswith("fixed") else REFERENCE)
        # The column by its position, not its name: plotly.js reads a shape's or a label's name that looks like a
        # number ("17.4", "11.22": Postgres versions) as a position on the category axis, far off to the right.
        shapes.append(
            {
                "type": "line",
                "xref": "x",
                "yref": "paper",
                "x0": at,
                "x1": at,
                "y0": 0,
                "y1": 1,
                "line": {"color": colour, "width": 1.5, "dash": "dashdot"},
            }
        )
        annotations.append(
            {
                "x": at,
                "y": 1,
                "xref": "x",
                "yref": "paper",
                "yanchor": "bottom",
                "yshift": 16 * row,
                "showarrow": False,
                "text": mark,
                "font": {"size": 11, "color": colour},
                "bgcolor": "rgba(255,255,255,0.85)",
            }
        )
    layout.update(shapes=shapes, annotations=annotations)
    if any(a["yshift"] for a in annotations):
        # Room for the second row, the title kept at the top above it.
        layout["margin"] = {**layout["margin"], "t": layout["margin"]["t"] + 18}
        if layout.get("title"):
            layout["title"] = {**layout["title"], "y": 1, "yref": "container", "yanchor": "top", "pad": {"t": 10}}
    outliers = [p for p in points if p["mark"] == "outlier"]
    traces = [
        _trace(
            "scatter",
            x=versions,
            y=[_sig(p["value"]) for p in points],
            mode="lines+markers",
            name="measured",
            line={"color": PALETTE[0], "width": 2},
            marker={"symbol": SYMBOLS[0], "size": 8},
            hovertemplate="%{x}: %{y}<extra></extra>",
        ),
        _trace(
            "scatter",
            x=versions,
            y=[_sig(p["level"]) for p in points],
            mode="lines",
            name="the story's level",
            line={"color": arrival_colour, "width": 2, "shape": "hv", "dash": "dot"},
            hovertemplate="%{x}: level %{y}<extra></extra>",
        ),
    ]
    if outliers:
        traces.append(
            _trace(
                "scatter",
                x=[p["version"] for p in outliers],
                y=[_sig(p["value"]) for p in outliers],
                mode="markers+text",
                text=["outlier"] * len(outliers),
                textposition="bottom center",
                name="outlier (set aside)",
                marker={"symbol": "circle-open", "size": 16, "color": REFERENCE, "line": {"width": 2}},
                hovertemplate="%{x}: outlier %{y}<extra></extra>",
            )
        )
    return _figure(traces, layout)


def with_heatmap_badges(figure: dict[str, Any], badges: Sequence[tuple[str, str, str]]) -> dict[str, Any]:
    """The heatmap with a badge (a small marker) on each (column key, label) cell where a linked regression arrived.

    The badge is a triangle in the cell's top-right corner (a layout shape a fixed number of pixels wide, so it
    never covers the value written in the middle of the cell); an invisible marker at the cell's centre carries
    the hover text naming the bugs, and the cell stays clickable underneath.
    """
    if not badges:
        return figure
    layout = dict(figure.get("layout", {}))
    x_of = {key: x for x, key in layout.get("meta", {}).get("keys", {}).items()}
    columns = list(layout.get("xaxis", {}).get("categoryarray") or [])
    rows = next((list(t["y"]) for t in figure.get("data", []) if t.get("type") == "heatmap"), [])
    corners = []
    for key, label, _text in badges:
        x = x_of.get(key, key)
        if x in columns and label in rows:
            corners.append(_badge_corner(columns.index(x), rows.index(label)))
    layout["shapes"] = [*layout.get("shapes", []), *corners]
    trace = _trace(
        "scatter",
        x=[x_of.get(b[0], b[0]) for b in badges],
        y=[b[1] for b in badges],
        mode="markers",
        marker={"size": 14, "opacity": 0},
        text=[b[2] for b in badges],
        hovertemplate="%{text}<extra></extra>",
        name="bugs",
        showlegend=False,
    )
    return {**figure, "data": [*figure.get("data", []), trace], "layout": layout}


BADGE_PX = 9  # the side of a heatmap cell's bug badge


def _badge_corner(column: int, row: int) -> dict[str, Any]:
    """A triangle in the top-right corner of the heatmap cell at (column, row), both category indices (the y
    axis is reversed, so a cell's top edge is at row − 0.5)."""
    return {
        "type": "path",
        "xref": "x",
        "yref": "y",
        "xsizemode": "pixel",
        "ysizemode": "pixel",
        "xanchor": column + 0.5,
        "yanchor": row - 0.5,
        "path": f"M-1,-1 L-{BADGE_PX + 1},-1 L-1,-{BADGE_PX + 1} Z",
        "fillcolor": "#ffbf47",
        "line": {"color": "#1d2330", "width": 1},
    }


# --------------------------------------------------------------------------- Insert Benchmark

SLA_GREY = "#9aa3b2"


class IbenchStepPoint(TypedDict):
    """One column (build) of one Insert Benchmark step, for ``ibench_step_chart``."""

    key: str
    version_label: str
    value: float | None  # the step's throughput: inserts/s, indexed rows/s or queries/s
    relative: float | None  # None for the base
    flag: str  # red, green, grey, missing, or "base"
    sla_missed: bool


def ibench_step_chart(step: str, unit: str, points: Sequence[IbenchStepPoint]) -> dict[str, Any]:
    """One step across versions: a bar per column of its throughput, coloured like the tables' flags.

    The base's bar is the reference colour; a column whose background inserts
    missed the SLA is grey whatever its change, and says so in its label and hover.
    """
    keys = [p["key"] for p in points]
    colours = {"red": RED, "green": GREEN, "base": REFERENCE}
    texts = []
    for p in points:
        rel = p["relative"]
        if p["flag"] == "base":
            text = "base" if p["value"] is not None else "base missing"
        elif p["value"] is None:
            text = "missing"
        elif rel is None:
            text = "no base value"  # the bar is there; only the ratio cannot be taken
        else:
            text = _plotted(rel, 0.0, False)[1]
        texts.append(text + (" · SLA missed" if p["sla_missed"] else ""))
    bar = _trace(
        "bar",
        x=keys,
        y=[_absolute(p["value"]) for p in points],
        marker={"color": [SLA_GREY if p["sla_missed"] else colours.get(p["flag"], "#9db4e3") for p in points]},
        text=texts,
        textposition="outside",
        cliponaxis=False,
        hovertemplate=f"%{{x}}<br>{unit}: %{{y:,}}<br>relative: %{{text}}<extra></extra>",
        showlegend=False,
    )
    layout = _base_layout(title=f"{step} <span style='font-size:12px'>({unit})</span>", height=320)
    layout.update(
        xaxis=_category_axis(keys, [p["version_label"] for p in points]),
        yaxis={"title": {"text": unit}, "rangemode": "tozero", "gridcolor": GRID, "automargin": True},
    )
    return _figure([bar], layout)


def ibench_rate_over_time(
    step: str,
    what: str,
    series: dict[str, dict[str, Any]],
    labels: dict[str, str],
    *,
    target: float | None = None,
) -> dict[str, Any]:
    """The step's insert (``what="ips"``) or query (``"qps"``) rate over time, one line per column.

    x is seconds since the step started (points are ``seconds_per_point``
    apart); a dotted line marks the SLA's insert rate when ``target`` is given.
    """
    traces = []
    for i, (key, data) in enumerate(series.items()):
        values = data.get(what) or []
        spacing = float(data.get("seconds_per_point") or 1.0)
        style = _line_style(i)
        traces.append(
            _trace(
                "scatter",
                x=[round((n + 1) * spacing, 3) for n in range(len(values))],
                y=values,
                name=labels.get(key, key),
                mode="lines",
                line={"color": style["color"], "dash": style["dash"], "width": 1.5},
                hovertemplate="%{fullData.name}<br>%{x:,} s: %{y:,}/s<extra></extra>",
            )
        )
    name = "inserts/s" if what == "ips" else "queries/s"
    layout = _base_layout(title=f"{step}: {name} over time", height=360)
    layout.update(
        xaxis={"title": {"text": "seconds"}, "gridcolor": GRID, "automargin": True, "rangemode": "tozero"},
        yaxis={"title": {"text": name}, "rangemode": "tozero", "gridcolor": GRID, "automargin": True},
    )
    if target is not None:
        layout["shapes"] = [{**_dotted(target, RED), "yref": "y"}]
        layout["annotations"] = [
            {
                "xref": "paper",
                "x": 1,
                "xanchor": "right",
                "yref": "y",
                "y": target,
                "yanchor": "bottom",
                "text": f"SLA {target:,.0f}/s",
                "showarrow": False,
                "font": {"size": 10, "color": RED},
            }
        ]
    return _figure(traces, layout)


def ibench_rt_histogram(
    step: str, kind: str, histograms: dict[str, dict[str, Any]], labels: dict[str, str]
) -> dict[str, Any]:
    """Response times of one operation (``kind``: insert, query, delete) in a step: per bucket, the share of all
    operations of each column (runs last different times, so shares compare, counts do not); counts in the hover."""
    traces = []
    buckets: list[str] = []
    for i, (key, hist) in enumerate(histograms.items()):
        found = hist.get(kind)
        if not isinstance(found, dict):
            continue
        buckets = list(hist.get("buckets") or buckets)
        counts = [int(c) for c in found.get("counts", [])]
        total = sum(counts)
        max_s = found.get("max_s")
        traces.append(
            _trace(
                "bar",
                x=buckets,
                y=[round(100.0 * c / total, 3) if total else None for c in counts],
                customdata=counts,
                name=labels.get(key, key) + (f" (max {max_s:.3f} s)" if isinstance(max_s, int | float) else ""),
                marker={"color": PALETTE[i % len(PALETTE)]},
                hovertemplate="%{fullData.name}<br>≤ %{x}: %{y}% (%{customdata:,})<extra></extra>",
            )
        )
    layout = _base_layout(title=f"{step}: {kind} response time", height=340)
    layout.update(
        barmode="group",
        xaxis=_category_axis(buckets, buckets),
        yaxis={"title": {"text": "% of operations"}, "rangemode": "tozero", "gridcolor": GRID, "automargin": True},
    )
    return _figure(traces, layout)
