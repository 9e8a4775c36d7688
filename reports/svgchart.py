"""Static SVG drawings of the line charts of ``reports.charts``, for files that leave benchdash.

The pages draw every chart with plotly.js in the browser (one chart path;
``static/js/benchdash.js``). A write-up's .zip (``reports.writeup_views``) is a
set of files for a blog post, read where no plotly.js runs: this module draws
the same figure dict (``{"data": [...], "layout": {...}}``) as a plain SVG
string on the server for it.

Pure: standard library only, no Django, no plotly. It draws what the line
charts use, the way plotly lays them out (automatic margins, 5 % axis padding,
"nice" tick steps, auto-rotated category labels, a legend of trace names):

- scatter traces (lines, markers and text marks) on one x axis (category or
  linear) and one linear y axis; ``None`` is a gap unless ``connectgaps``;
- ``layout.shapes`` lines and rectangles in paper or data coordinates, and
  ``layout.annotations`` without arrows;
- the title, axis titles, grid and zero lines, and the legend.

Anything else (heatmaps, bars, histograms, second axes, log or date axes,
arrows, reversed axes) returns ``None``: such a figure is left to plotly.js,
and the write-up leaves that chart out. No font metrics exist on the server, so text
widths are estimated with DejaVu Sans's advance widths (Debian's ``system-ui``,
one of the widest common sans-serif faces): labels get at least the room they
need in any browser.

Every text comes from the figure, and trace names and tick labels are user
data: all of it is XML-escaped on output. Plotly's own markup in texts (``<br>``,
``<b>``, ``<i>``, ``<span style='font-size:…;color:…'>``) is rendered; any
other tag is shown literally, as text.
"""

from __future__ import annotations

import html
import logging
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import pairwise
from typing import Any, TypeGuard

DEFAULT_WIDTH = 700  # plotly's default figure size
DEFAULT_HEIGHT = 450
DEFAULT_FONT = {"family": "'Open Sans', verdana, arial, sans-serif", "size": 12.0, "color": "#444"}
LINE_HEIGHT = 1.3  # plotly's line spacing in multi-line text, in ems
TICK_STANDOFF = 3  # px between the plot area and its tick labels
LEGEND_ROW = 19  # px: plotly's legend row for a 12 px font (max(text height, 16) + 3)
LEGEND_PAD = 5
LEGEND_SYMBOL = 40  # px before an entry's text: the line sample (5 → 35) and a gap
LEGEND_GAP = 6  # px after an entry's text

# Advance widths of DejaVu Sans in thousandths of an em, grouped by width; any other character counts as 0.65 em.
_WIDTHS: dict[str, int] = {}
for _chars, _width in (
    ("'", 270),
    ("Iijl", 280),
    (" ,.·", 320),
    ("/:;\\|", 340),
    ("f", 350),
    ("-", 360),
    ("t()[]", 390),
    ("!", 400),
    ("r", 410),
    ('"', 460),
    ("*_`–", 500),
    ("sz", 520),
    ("?", 530),
    ("c", 550),
    ("F", 580),
    ("kLxyv", 580),
    ("Pe", 610),
    ("aoTY", 610),
    ("bdghnpqu", 630),
    ("0123456789$E{}S", 640),
    ("K", 660),
    ("AXVBZR", 690),
    ("C", 700),
    ("U", 730),
    ("HN", 750),
    ("DG&", 770),
    ("OQ", 790),
    ("w", 820),
    ("∞", 830),
    ("#+<=>^~≤≥×→", 840),
    ("M", 860),
    ("%", 950),
    ("mW", 980),
    ("@…", 1000),
):
    for _char in _chars:
        _WIDTHS[_char] = _width

logger = logging.getLogger(__name__)


class Unsupported(Exception):
    """The figure uses something this module cannot draw faithfully: leave it to plotly.js."""


# --------------------------------------------------------------------------- public API


def render(figure: dict[str, Any], *, width: int = DEFAULT_WIDTH, id_prefix: str = "svgchart") -> str | None:
    """The figure as a standalone ``<svg>`` string ``width`` units wide, or ``None`` if it is not drawable here.

    The SVG has a ``viewBox`` and no fixed size, so it scales to its container's
    width; its height is ``layout.height`` (plotly's default, 450, without one)
    in the same units. ``id_prefix`` makes the ids of its clip path and marker
    definitions unique in the page: several SVGs share one document.
    """
    try:
        return _Chart(figure, width, id_prefix).svg()
    except Unsupported:
        return None
    except (TypeError, ValueError, KeyError, AttributeError, ZeroDivisionError):
        # A figure this module misreads is left out of the write-up rather than breaking its export.
        logger.warning("cannot draw a figure as SVG; the write-up links its page instead", exc_info=True)
        return None


def text_width(text: str, size: float, *, bold: bool = False) -> float:
    """Estimated advance width of ``text`` at ``size`` px (DejaVu Sans; bold is about 10 % wider)."""
    total = sum(_WIDTHS.get(char, 650) for char in text) * size / 1000
    return total * 1.1 if bold else total


# --------------------------------------------------------------------------- rich text


@dataclass(frozen=True)
class _Style:
    size: float
    color: str | None = None
    bold: bool = False
    italic: bool = False


_TAG = re.compile(r"<(/?)(br|b|i|em|span|sup|sub)(\s[^<>]*)?\s*/?>", re.IGNORECASE)
_CSS_SIZE = re.compile(r"font-size\s*:\s*([\d.]+)px", re.IGNORECASE)
_CSS_COLOR = re.compile(r"(?<![-\w])color\s*:\s*([#\w(),.\s%]+?)\s*(?:;|$)", re.IGNORECASE)


def _rich_lines(text: str, size: float) -> list[list[tuple[str, _Style]]]:
    """Plotly's pseudo-HTML as lines of (text, style) runs; entities are decoded, unknown tags kept as text."""
    lines: list[list[tuple[str, _Style]]] = [[]]
    stack = [_Style(size)]
    position = 0
    for match in _TAG.finditer(text):
        if match.start() > position:
            lines[-1].append((html.unescape(text[position : match.start()]), stack[-1]))
        position = match.end()
        closing, tag, attributes = match.group(1), match.group(2).lower(), match.group(3) or ""
        if tag == "br":
            lines.append([])
        elif closing:
            if len(stack) > 1:
                stack.pop()
        else:
            style = stack[-1]
            if tag == "b":
                style = _Style(style.size, style.color, True, style.italic)
            elif tag in ("i", "em"):
                style = _Style(style.size, style.color, style.bold, True)
            elif tag in ("sup", "sub"):
                style = _Style(style.size * 0.7, style.color, style.bold, style.italic)
            elif tag == "span":
                found_size = _CSS_SIZE.search(attributes)
                found_color = _CSS_COLOR.search(attributes)
                style = _Style(
                    float(found_size.group(1)) if found_size else style.size,
                    found_color.group(1).strip() if found_color else style.color,
                    style.bold,
                    style.italic,
                )
            stack.append(style)
    if position < len(text):
        lines[-1].append((html.unescape(text[position:]), stack[-1]))
    return lines


def _plain(text: str) -> str:
    """The text a reader sees, without markup: for <title> and <desc>."""
    return " ".join("".join(run for run, _ in line).strip() for line in _rich_lines(text, 12)).strip()


def _line_width(line: list[tuple[str, _Style]]) -> float:
    return sum(text_width(run, style.size, bold=style.bold) for run, style in line)


def _block_size(lines: list[list[tuple[str, _Style]]], size: float) -> tuple[float, float]:
    """(width, height) of a block of lines."""
    return max((_line_width(line) for line in lines), default=0.0), len(lines) * size * LINE_HEIGHT


def _esc(text: str) -> str:
    # XML text and attribute values: &, <, > and both quotes. Control characters are not allowed in XML 1.0.
    cleaned = "".join(c for c in text if c in "\t\n\r" or ord(c) >= 0x20)
    return html.escape(cleaned, quote=True)


# --------------------------------------------------------------------------- numbers and formats


def _n(value: float) -> str:
    """A coordinate to one decimal, without a trailing ``.0``."""
    text = f"{value:.1f}"
    if text.endswith(".0"):
        text = text[:-2]
    return "0" if text == "-0" else text


def _finite(value: object) -> TypeGuard[float]:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _nice_step(rough: float) -> float:
    """Plotly's tick step: the first of 2, 5, 10 × 10ⁿ at or above ``rough``."""
    if rough <= 0 or not math.isfinite(rough):
        return 1.0
    base = 10 ** math.floor(math.log10(rough))
    for multiple in (2, 5, 10):
        if rough / base <= multiple * (1 + 1e-9):
            return multiple * base
    return 10 * base


def _decimals(step: float) -> int:
    for digits in range(0, 12):
        if abs(round(step, digits) - step) <= abs(step) * 1e-9:
            return digits
    return 12


_SI = {3: "k", 6: "M", 9: "B", 12: "T"}
_D3_FIXED = re.compile(r"^(,)?\.(\d+)f$")


def _tick_texts(values: list[float], step: float, tickformat: str | None, span: tuple[float, float]) -> list[str]:
    """Tick labels: a d3 fixed-point ``tickformat`` if given, else plotly's: k, M, B from 10,000 on."""
    found = _D3_FIXED.match(tickformat or "")
    if found:
        spec = ("," if found.group(1) else "") + f".{found.group(2)}f"
        return [_minus(format(v, spec)) for v in values]
    end = max(abs(span[0]), abs(span[1]))
    magnitude = math.floor(math.log10(end) + 0.01) if end > 0 else 0
    exponent = min(12, 3 * round((magnitude - 1) / 3)) if magnitude > 3 else 0
    scale = 10**exponent
    digits = _decimals(step / scale)
    texts = []
    for v in values:
        text = f"{v / scale:.{digits}f}"
        if "." in text:
            text = text.rstrip("0").rstrip(".")  # plotly drops zeros that say nothing: 0, 0.5, 1, 1.5
        if text == "-0":
            text = "0"
        texts.append(_minus(text) + (_SI.get(exponent, "") if text != "0" else ""))
    return texts


def _minus(text: str) -> str:
    return text.replace("-", "\u2212", 1) if text.startswith("-") else text


def _dasharray(dash: str | None, width: float) -> str | None:
    """Plotly's dash patterns, which scale with the line width (at least 3 px)."""
    unit = max(width, 3.0)
    patterns = {
        "dot": (1, 1),
        "dash": (3, 3),
        "longdash": (5, 5),
        "dashdot": (3, 1, 1, 1),
        "longdashdot": (5, 2, 1, 2),
    }
    if not dash or dash == "solid":
        return None
    if dash in patterns:
        return ",".join(_n(unit * p) for p in patterns[dash])
    if re.fullmatch(r"[\d.]+(px|%)?(\s*,\s*[\d.]+(px|%)?)*", dash):
        return dash.replace("px", "")
    return None


# --------------------------------------------------------------------------- one trace, read


def _check_scatter(trace: dict[str, Any]) -> None:
    """Refuse a trace this module cannot draw: not a visible scatter, another axis, filled, stacked, error bars."""
    if trace.get("type", "scatter") != "scatter" or trace.get("visible", True) is not True:
        raise Unsupported("not a visible scatter trace")
    if trace.get("xaxis", "x") != "x" or trace.get("yaxis", "y") != "y":
        raise Unsupported("a trace on another axis")
    if trace.get("fill") not in (None, "none") or trace.get("stackgroup") or trace.get("orientation") == "h":
        raise Unsupported("a filled or stacked trace")
    if (trace.get("error_x") or {}).get("visible") or (trace.get("error_y") or {}).get("visible"):
        raise Unsupported("error bars")


def _points(trace: dict[str, Any]) -> tuple[list[Any], list[Any]]:
    """The trace's x and y values, as given (x: 0, 1, … without one); every y a number or ``None``."""
    ys = list(trace.get("y") or [])
    given_x = trace.get("x")
    xs: list[Any] = list(given_x) if given_x is not None else list(range(len(ys)))
    if len(xs) != len(ys) or any(y is not None and not _finite(y) for y in ys):
        raise Unsupported("x and y of different lengths, or a y that is not a number")
    return xs, ys


def _modes(trace: dict[str, Any], count: int) -> set[str]:
    """The trace's drawing modes (plotly's default: lines and markers under 20 points, lines from 20)."""
    default_mode = "lines+markers" if count < 20 else "lines"
    modes = set(str(trace.get("mode") or default_mode).split("+"))
    if not modes <= _SUPPORTED_MODES and modes != {"none"}:
        raise Unsupported("a scatter mode")
    return modes


def _look(trace: dict[str, Any], line: dict[str, Any], index: int) -> tuple[str, str, str, float]:
    """(line colour, marker colour, marker symbol, marker size): one of each for the whole trace."""
    marker = trace.get("marker") or {}
    color = str(line.get("color") or marker.get("color") or _COLOURS[index % len(_COLOURS)])
    marker_color = marker.get("color", color)
    if not isinstance(marker_color, str):
        raise Unsupported("a colour per point")
    symbol = marker.get("symbol", "circle")
    size = marker.get("size", 6)
    if not isinstance(symbol, str) or not _finite(size):
        raise Unsupported("a symbol or size per point")
    return color, marker_color, symbol, size


def _texts(trace: dict[str, Any], modes: set[str], count: int) -> list[str | None]:
    """The text mark of each point (``None``: none): one text for all, or one per point, padded or cut to ``count``."""
    raw_text = trace.get("text")
    if "text" not in modes or raw_text is None:
        return [None] * count
    texts = [None if t is None else str(t) for t in raw_text] if isinstance(raw_text, list) else [str(raw_text)] * count
    return (texts + [None] * count)[:count]


def _text_position(trace: dict[str, Any]) -> list[str] | str:
    """One text position for the trace, or one per point (a point clipped at the top has its value below it)."""
    if isinstance(trace.get("textposition"), list):
        return [str(p or "middle center") for p in trace["textposition"]]
    return str(trace.get("textposition") or "middle center")


# --------------------------------------------------------------------------- marker symbols


def _polygon(points: Iterable[tuple[float, float]]) -> str:
    return "M" + "L".join(f"{_n(x)},{_n(y)}" for x, y in points) + "Z"


def _star(points: int, outer: float, inner: float) -> str:
    corners = []
    for k in range(2 * points):
        radius = outer if k % 2 == 0 else inner
        angle = math.pi * k / points - math.pi / 2
        corners.append((radius * math.cos(angle), radius * math.sin(angle)))
    return _polygon(corners)


@lru_cache(maxsize=256)
def _symbol_path(symbol: str, size: float) -> str:
    """A marker shape centred on (0, 0), ``size`` px across like plotly's (its radius is size / 2)."""
    r = size / 2
    base = symbol.replace("-open", "").replace("-dot", "")
    if base == "square":
        path = _polygon([(r, r), (-r, r), (-r, -r), (r, -r)])
    elif base == "diamond":
        d = r * 1.3
        path = _polygon([(d, 0), (0, d), (-d, 0), (0, -d)])
    elif base in ("triangle-up", "triangle-down"):
        half = r * 2 / math.sqrt(3)
        flip = 1 if base == "triangle-up" else -1
        path = _polygon([(-half, flip * r / 2), (half, flip * r / 2), (0, -flip * r)])
    elif base in ("cross", "x"):
        arm, reach = r * 0.4, r * 1.2
        corners = [
            (arm, reach),
            (-arm, reach),
            (-arm, arm),
            (-reach, arm),
            (-reach, -arm),
            (-arm, -arm),
            (-arm, -reach),
            (arm, -reach),
            (arm, -arm),
            (reach, -arm),
            (reach, arm),
            (arm, arm),
        ]
        if base == "x":
            turn = math.sqrt(0.5)
            corners = [((x - y) * turn, (x + y) * turn) for x, y in corners]
        path = _polygon(corners)
    elif base == "star":
        path = _star(5, r * 1.25, r * 0.5)
    elif base == "hexagram":
        path = _star(6, r * 1.15, r * 0.66)
    elif base == "pentagon":
        outer = r * 1.05
        path = _polygon(
            [
                (
                    outer * math.cos(2 * math.pi * k / 5 - math.pi / 2),
                    outer * math.sin(2 * math.pi * k / 5 - math.pi / 2),
                )
                for k in range(5)
            ]
        )
    else:
        path = f"M{_n(r)},0A{_n(r)},{_n(r)} 0 1,1 0,{_n(-r)}A{_n(r)},{_n(r)} 0 0,1 {_n(r)},0Z"
    return path


# --------------------------------------------------------------------------- the chart


@dataclass
class _Trace:
    name: str
    xs: list[Any]
    ys: list[float | None]
    lines: bool
    markers: bool
    texts: list[str | None]
    text_position: str | list[str]
    color: str
    width: float
    dash: str | None
    symbol: str
    marker_size: float
    marker_color: str
    connect_gaps: bool
    in_legend: bool


@dataclass
class _Axis:
    category: bool
    low: float = 0.0
    high: float = 1.0
    ticks: list[float] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)
    angle: float = 0.0  # tick label rotation in degrees, clockwise, like plotly's tickangle
    categories: list[str] = field(default_factory=list)


_SUPPORTED_MODES = {"lines", "markers", "text"}
_COLOURS = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
)


class _Chart:
    def __init__(self, figure: dict[str, Any], width: int, id_prefix: str) -> None:
        if not isinstance(figure, dict):
            raise Unsupported("not a figure")
        self.layout: dict[str, Any] = dict(figure.get("layout") or {})
        self.width = float(width)
        self.height = float(self.layout.get("height") or DEFAULT_HEIGHT)
        self.prefix = re.sub(r"[^A-Za-z0-9_-]", "-", id_prefix) or "svgchart"
        font = {**DEFAULT_FONT, **(self.layout.get("font") or {})}
        self.font_family = str(font["family"])
        self.font_size = float(font["size"])
        self.font_color = str(font["color"])
        self._check_layout()
        self.traces = [self._trace(t, i) for i, t in enumerate(figure.get("data") or [])]
        if not self.traces:
            raise Unsupported("no traces")
        self.xaxis_layout: dict[str, Any] = dict(self.layout.get("xaxis") or {})
        self.yaxis_layout: dict[str, Any] = dict(self.layout.get("yaxis") or {})
        self.x = _Axis(category=self._x_is_category())
        self.y = _Axis(category=False)
        if self.x.category:
            self.x.categories = self._categories()
        self.category_index = {c: i for i, c in enumerate(self.x.categories)}
        self.label_sizes: dict[str, tuple[float, float]] = {}
        self.extents: dict[str, tuple[float, float] | None] = {}

    # ------------------------------------------------------------------ what can be drawn

    def _check_layout(self) -> None:
        for key in self.layout:
            if re.fullmatch(r"[xy]axis\d+", key):
                raise Unsupported("a second axis")
        for name in ("xaxis", "yaxis"):
            axis = self.layout.get(name) or {}
            if axis.get("type") not in (None, "-", "linear", "category") or axis.get("autorange") == "reversed":
                raise Unsupported(f"{name} type or direction")
            if axis.get("side") not in (None, "bottom" if name == "xaxis" else "left"):
                raise Unsupported(f"{name} side")
            if name == "yaxis" and axis.get("type") == "category":
                raise Unsupported("a category y axis")
        for shape in self.layout.get("shapes") or []:
            if shape.get("type", "rect" if "fillcolor" in shape else "line") not in ("line", "rect"):
                raise Unsupported("a shape other than a line or rectangle")
            if shape.get("xref", "x") not in ("x", "paper") or shape.get("yref", "y") not in ("y", "paper"):
                raise Unsupported("a shape on another axis")
        for note in self.layout.get("annotations") or []:
            if note.get("showarrow", True) or note.get("xref", "x") not in ("x", "paper"):
                raise Unsupported("an annotation arrow or axis")
            if note.get("yref", "y") not in ("y", "paper"):
                raise Unsupported("an annotation on another axis")

    def _trace(self, trace: dict[str, Any], index: int) -> _Trace:
        _check_scatter(trace)
        xs, ys = _points(trace)
        modes = _modes(trace, len(ys))
        line = trace.get("line") or {}
        color, marker_color, symbol, size = _look(trace, line, index)
        return _Trace(
            name=str(trace.get("name") if trace.get("name") is not None else f"trace {index}"),
            xs=xs,
            ys=[None if y is None else float(y) for y in ys],
            lines="lines" in modes,
            markers="markers" in modes,
            texts=_texts(trace, modes, len(ys)),
            text_position=_text_position(trace),
            color=color,
            width=float(line.get("width", 2)),
            dash=_dasharray(line.get("dash"), float(line.get("width", 2))),
            symbol=symbol,
            marker_size=float(size),
            marker_color=marker_color,
            connect_gaps=bool(trace.get("connectgaps", False)),
            in_legend=trace.get("showlegend", True) is not False,
        )

    def _x_is_category(self) -> bool:
        kind = (self.layout.get("xaxis") or {}).get("type")
        if kind == "category":
            return True
        values = [x for t in self.traces for x in t.xs if x is not None]
        if kind == "linear":
            if not all(_finite(x) for x in values):
                raise Unsupported("a linear x axis with values that are not numbers")
            return False
        return any(isinstance(x, str) for x in values)

    def _categories(self) -> list[str]:
        order = self.xaxis_layout.get("categoryarray") if self.xaxis_layout.get("categoryorder") == "array" else None
        categories = [str(c) for c in order] if order else []
        seen = set(categories)
        for trace in self.traces:
            for x in trace.xs:
                if x is not None and str(x) not in seen:
                    seen.add(str(x))
                    categories.append(str(x))
        return categories

    # ------------------------------------------------------------------ geometry

    def _x_value(self, x: Any) -> float | None:
        if x is None:
            return None
        if self.x.category:
            found = self.category_index.get(str(x))
            return None if found is None else float(found)
        return float(x) if _finite(x) else None

    def _px(self, value: float) -> float:
        return self.left + (value - self.x.low) / (self.x.high - self.x.low) * (self.right - self.left)

    def _py(self, value: float) -> float:
        return self.bottom - (value - self.y.low) / (self.y.high - self.y.low) * (self.bottom - self.top)

    def _marker_pad(self) -> float:
        return max((t.marker_size / 2 for t in self.traces if t.markers), default=0.0)

    def _extent(self, axis: str) -> tuple[float, float] | None:
        if axis not in self.extents:
            self.extents[axis] = self._data_extent(axis)
        return self.extents[axis]

    def _data_extent(self, axis: str) -> tuple[float, float] | None:
        values: list[float] = []
        for trace in self.traces:
            for x, y in zip(trace.xs, trace.ys, strict=True):
                value = self._x_value(x) if axis == "x" else y
                if value is not None:
                    values.append(value)
        for shape in self.layout.get("shapes") or []:
            if shape.get(f"{axis}ref", axis) == axis:
                for end in ("0", "1"):
                    value = self._x_value(shape.get(f"x{end}")) if axis == "x" else shape.get(f"y{end}")
                    if value is not None and _finite(value):
                        values.append(float(value))
        return (min(values), max(values)) if values else None

    def _autorange(self, axis: str, length: float, padded: bool) -> tuple[float, float]:
        settings = self.xaxis_layout if axis == "x" else self.yaxis_layout
        extent = self._extent(axis)
        if extent is None:
            raise Unsupported("no data to draw")
        low, high = extent
        to_zero = settings.get("rangemode") in ("tozero", "nonnegative")
        if to_zero:
            low, high = min(low, 0.0), max(high, 0.0)
        if high == low:
            spread = 1.0 if low == 0 or (axis == "x" and self.x.category) else abs(low) / 10
            return low - spread, high + spread
        pad = (0.05 * length if padded else 0.0) + self._marker_pad()
        pad_low = 0.0 if to_zero and low == 0 else pad
        pad_high = 0.0 if to_zero and high == 0 else pad
        scale = (high - low) / max(length - pad_low - pad_high, 1.0)
        return low - pad_low * scale, high + pad_high * scale

    def _range(self, axis: str, length: float) -> tuple[float, float]:
        settings = self.xaxis_layout if axis == "x" else self.yaxis_layout
        given = settings.get("range")
        lines_only = all(t.lines and not t.markers and not any(t.texts) for t in self.traces)
        # Plotly pads y always and x unless every trace is a bare line: a bare line may touch the plot's sides.
        auto = self._autorange(axis, length, padded=axis == "y" or not lines_only)
        if isinstance(given, list | tuple) and len(given) == 2:
            low = float(given[0]) if _finite(given[0]) else auto[0]
            high = float(given[1]) if _finite(given[1]) else auto[1]
            if high > low:
                return low, high
        return auto

    def _numeric_ticks(self, axis: _Axis, settings: dict[str, Any], length: float, per_tick: float) -> None:
        if settings.get("tickmode") == "array" and settings.get("tickvals") is not None:
            values = [float(v) for v in settings["tickvals"] if _finite(v) and axis.low <= v <= axis.high]
            texts = [str(t) for t in settings.get("ticktext") or []]
            axis.ticks = values
            step = min((b - a for a, b in pairwise(values)), default=1.0)
            axis.labels = (
                texts[: len(values)]
                if len(texts) >= len(values)
                else _tick_texts(values, step, None, (axis.low, axis.high))
            )
            return
        span = axis.high - axis.low
        dtick = settings.get("dtick")
        if _finite(dtick) and dtick > 0:
            step = float(dtick)
        else:
            step = _nice_step(span / (max(4.0, min(9.0, length / per_tick)) + 1))
        first = math.ceil((axis.low - 1e-9 * span) / step)
        values = []
        k = first
        while k * step <= axis.high + 1e-9 * span and len(values) < 200:
            values.append(round(k * step, 12))
            k += 1
        axis.ticks = values
        axis.labels = _tick_texts(values, step, settings.get("tickformat"), (axis.low, axis.high))

    def _category_ticks(self) -> None:
        settings = self.xaxis_layout
        if settings.get("tickmode") == "array" and settings.get("tickvals") is not None:
            texts = list(settings.get("ticktext") or settings["tickvals"])
            pairs = [(str(v), str(t)) for v, t in zip(settings["tickvals"], texts, strict=False)]
        else:
            pairs = [(c, c) for c in self.x.categories]
        ticks, labels = [], []
        for value, text in pairs:
            position = self._x_value(value)
            if position is not None and self.x.low <= position <= self.x.high:
                ticks.append(position)
                labels.append(text)
        self.x.ticks, self.x.labels = ticks, labels

    def _x_label_layout(self, angle: float | None = None) -> tuple[float, float]:
        """Choose the x tick labels' angle (unless given) and thin them out; (height they take, how far right)."""
        size = self.font_size
        blocks = [self._label_size(label) for label in self.x.labels]
        if not blocks:
            return 0.0, 0.0
        widest = max(w for w, _ in blocks)
        # How far apart two labels' baselines must be: the lines of the tallest, its last line only as high
        # as its glyphs (1.15 em), not a whole line (1.3 em).
        tallest = max(h for _, h in blocks) - 0.15 * size
        positions = [self._px(t) for t in self.x.ticks]
        gaps = [b - a for a, b in pairwise(positions)]
        spacing = min(gaps) if gaps else math.inf
        given = self.xaxis_layout.get("tickangle")
        if angle is not None:
            pass
        elif _finite(given):
            angle = float(given)
        elif widest + 6 <= spacing:
            angle = 0.0
        elif 2 * tallest + 2 <= spacing:
            angle = 30.0
        else:
            angle = 90.0
        # Labels too close even standing upright: keep every k-th so none overlap (plotly would overlap them).
        needed = widest + 6 if angle == 0 else tallest / max(math.sin(math.radians(abs(angle))), 0.1) + 2
        keep = max(1, math.ceil(needed / spacing)) if math.isfinite(spacing) and spacing > 0 else 1
        if keep > 1:
            self.x.ticks = self.x.ticks[::keep]
            self.x.labels = self.x.labels[::keep]
            blocks = blocks[::keep]
        self.x.angle = angle
        radians = math.radians(abs(angle))
        height = max(w * math.sin(radians) + h * math.cos(radians) for w, h in blocks)
        reach = 0.0
        for (w, h), tick in zip(blocks, self.x.ticks, strict=True):
            x = self._px(tick)
            right = x + w / 2 if angle == 0 else x + w * math.cos(radians) + h / 2 * math.sin(radians)
            reach = max(reach, right)
        return height + TICK_STANDOFF, reach

    def _label_size(self, label: str) -> tuple[float, float]:
        found = self.label_sizes.get(label)
        if found is None:
            found = self.label_sizes[label] = _block_size(_rich_lines(label, self.font_size), self.font_size)
        return found

    def _move_right(self, right: float) -> None:
        self.right = right
        self.x.low, self.x.high = self._range("x", self.right - self.left)
        if self.x.category:
            self._category_ticks()
        else:
            self._numeric_ticks(self.x, self.xaxis_layout, self.right - self.left, 80)

    def _legend_layout(self) -> None:
        items = [t for t in self.traces if t.in_legend]
        show = self.layout.get("showlegend")
        self.legend_items = items if (show is True or (show is None and len(items) > 1)) and items else []
        self.legend_height = 0.0
        self.legend_width = 0.0
        self.legend_columns = 1
        self.legend_vertical = (self.layout.get("legend") or {}).get("orientation", "v") != "h"
        if not self.legend_items:
            return
        size = float(((self.layout.get("legend") or {}).get("font") or {}).get("size") or self.font_size)
        self.legend_size = size
        self.legend_row = max(size * LINE_HEIGHT, 16) + 3
        widths = [LEGEND_SYMBOL + text_width(_plain(t.name), size) + LEGEND_GAP for t in self.legend_items]
        if self.legend_vertical:
            self.legend_width = max(widths) + 2 * LEGEND_PAD
            self.legend_height = len(widths) * self.legend_row + 2 * LEGEND_PAD
            return
        available = self.width - self.left - self.margin["r"]
        if sum(widths) <= available:
            self.legend_columns = len(widths)
            self.legend_column_widths = widths
        else:
            column = max(widths)
            self.legend_columns = max(1, int(available // column))
            self.legend_column_widths = [column] * self.legend_columns
        rows = math.ceil(len(widths) / self.legend_columns)
        self.legend_height = rows * self.legend_row + 2 * LEGEND_PAD

    def _layout(self) -> None:
        margin = {"l": 80.0, "r": 80.0, "t": 100.0, "b": 80.0}
        margin.update({k: float(v) for k, v in (self.layout.get("margin") or {}).items() if k in margin and _finite(v)})
        self.margin = margin
        size = self.font_size
        y_title = _axis_title(self.yaxis_layout)
        x_title = _axis_title(self.xaxis_layout)
        self.left = margin["l"] + 40
        self.right = self.width - margin["r"]
        self.top = margin["t"]
        self.bottom = self.height - margin["b"] - 3 * size
        for _ in range(3):  # margins depend on labels and labels on margins: a few rounds settle them
            self._legend_layout()
            right_edge = self.width - margin["r"] - (self.legend_width + 10 if self.legend_vertical else 0)
            self.y.low, self.y.high = self._range("y", self.bottom - self.top)
            self._numeric_ticks(self.y, self.yaxis_layout, self.bottom - self.top, 40)
            label_width = max((text_width(t, size) for t in self.y.labels), default=0.0)
            self.y_label_width = label_width
            # Automatic margins as plotly makes them: the labels and the title, 6 px apart, fit from the edge
            # (the given left margin is a minimum, not added on top).
            title_width = round(_axis_title_size(self.yaxis_layout, size) * 1.15) + 6 if y_title else 0.0
            self.left = max(margin["l"], title_width + label_width + TICK_STANDOFF)
            self._move_right(right_edge)
            x_labels, reach = self._x_label_layout()
            if reach > self.width - 2:
                # Labels slanting past the right edge push the plot's right side in, as plotly's automargin
                # does; if the narrower plot would stand them upright, upright at full width it is.
                full_right, slant = self.right, self.x.angle
                self._move_right(max(self.left + 50, self.right - (reach - self.width + 2)))
                x_labels, _ = self._x_label_layout()
                if self.x.angle != slant:
                    self._move_right(full_right)
                    x_labels, reach = self._x_label_layout(self.x.angle)
                    if reach > self.width - 2:
                        self._move_right(max(self.left + 50, self.right - (reach - self.width + 2)))
                        x_labels, _ = self._x_label_layout(self.x.angle)
            self.x_label_height = x_labels
            x_title_height = size * LINE_HEIGHT + 4 if x_title else 0.0
            legend_below = self.legend_height + 8 if self.legend_items and not self.legend_vertical else 0.0
            self.bottom = self.height - max(margin["b"], legend_below) - x_labels - x_title_height
            if self.bottom - self.top < 30:
                self.bottom = self.top + 30  # plotly squeezes but never inverts the plot; neither do we

    # ------------------------------------------------------------------ drawing

    def svg(self) -> str:
        self._layout()
        p = self.prefix
        width, height = _n(self.width), _n(self.height)
        title_text = _title_text(self.layout.get("title"))
        label = _plain(title_text) if title_text else "Chart"
        names = ", ".join(t.name for t in self.traces)
        y_title = _plain(_axis_title(self.yaxis_layout) or "y")
        description = (
            f"{len(self.traces)} line{'s' if len(self.traces) != 1 else ''} ({names}) of {y_title}"
            f" from {self.y.labels[0] if self.y.labels else ''} to {self.y.labels[-1] if self.y.labels else ''}"
        )
        out = [
            f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" role="img"'
            f' aria-labelledby="{p}-title {p}-desc" font-family="{_esc(self.font_family)}"'
            f' font-size="{_n(self.font_size)}" fill="{_esc(self.font_color)}">',
            f'<title id="{p}-title">{_esc(label)}</title><desc id="{p}-desc">{_esc(description)}</desc>',
            self._defs(),
            f'<rect width="{width}" height="{height}" fill="{_esc(str(self.layout.get("paper_bgcolor") or "#fff"))}"/>',
            f'<rect x="{_n(self.left)}" y="{_n(self.top)}" width="{_n(self.right - self.left)}"'
            f' height="{_n(self.bottom - self.top)}" fill="{_esc(str(self.layout.get("plot_bgcolor") or "#fff"))}"/>',
            self._shapes("below"),
            self._grid(),
            self._traces(),
            self._shapes("above"),
            self._axes(),
            self._annotations(),
            self._title(title_text),
            self._legend(),
            "</svg>",
        ]
        return "".join(out)

    def _defs(self) -> str:
        p = self.prefix
        parts = [
            f'<defs><clipPath id="{p}-plot"><rect x="{_n(self.left)}" y="{_n(self.top)}"'
            f' width="{_n(self.right - self.left)}" height="{_n(self.bottom - self.top)}"/></clipPath>'
        ]
        for i, trace in enumerate(self.traces):
            if trace.markers:
                half = math.ceil(trace.marker_size * 0.75) + 1
                parts.append(
                    f'<marker id="{p}-m{i}" viewBox="{-half} {-half} {2 * half} {2 * half}" markerWidth="{2 * half}"'
                    f' markerHeight="{2 * half}" markerUnits="userSpaceOnUse" refX="0" refY="0">'
                    f"{self._symbol(trace)}</marker>"
                )
        parts.append("</defs>")
        return "".join(parts)

    def _symbol(self, trace: _Trace, x: float = 0.0, y: float = 0.0) -> str:
        shape = _symbol_path(trace.symbol, trace.marker_size)
        place = f' transform="translate({_n(x)},{_n(y)})"' if x or y else ""
        if trace.symbol.endswith("-open"):
            return f'<path d="{shape}"{place} fill="none" stroke="{_esc(trace.marker_color)}" stroke-width="1.5"/>'
        return f'<path d="{shape}"{place} fill="{_esc(trace.marker_color)}"/>'

    def _shape_x(self, shape: dict[str, Any], end: str) -> float | None:
        value = shape.get(f"x{end}")
        if shape.get("xref", "x") == "paper":
            return self.left + float(value) * (self.right - self.left) if _finite(value) else None
        position = self._x_value(value)
        return None if position is None else self._px(position)

    def _shape_y(self, shape: dict[str, Any], end: str) -> float | None:
        value = shape.get(f"y{end}")
        if not _finite(value):
            return None
        if shape.get("yref", "y") == "paper":
            return self.bottom - float(value) * (self.bottom - self.top)
        return self._py(float(value))

    def _shapes(self, layer: str) -> str:
        out = []
        for shape in self.layout.get("shapes") or []:
            if (shape.get("layer") or "above") != layer or shape.get("visible", True) is False:
                continue
            x0, x1 = self._shape_x(shape, "0"), self._shape_x(shape, "1")
            y0, y1 = self._shape_y(shape, "0"), self._shape_y(shape, "1")
            if None in (x0, x1, y0, y1):
                continue
            assert x0 is not None and x1 is not None and y0 is not None and y1 is not None
            line = shape.get("line") or {}
            line_width = float(line.get("width", 2)) if _finite(line.get("width", 2)) else 2.0
            stroke = str(line.get("color") or "#444")
            clip = (
                f' clip-path="url(#{self.prefix}-plot)"'
                if shape.get("xref", "x") != "paper" or shape.get("yref", "y") != "paper"
                else ""
            )
            dash = _dasharray(line.get("dash"), line_width)
            stroke_attrs = (
                f' stroke="{_esc(stroke)}" stroke-width="{_n(line_width)}"'
                + (f' stroke-dasharray="{dash}"' if dash else "")
                if line_width > 0
                else ""
            )
            opacity = f' opacity="{_n(float(shape["opacity"]))}"' if _finite(shape.get("opacity")) else ""
            if shape.get("type", "line") == "rect":
                fill = str(shape.get("fillcolor") or "none")
                out.append(
                    f'<rect class="shape" x="{_n(min(x0, x1))}" y="{_n(min(y0, y1))}" width="{_n(abs(x1 - x0))}"'
                    f' height="{_n(abs(y1 - y0))}" fill="{_esc(fill)}"{stroke_attrs}{opacity}{clip}/>'
                )
            elif line_width > 0:
                out.append(
                    f'<line class="shape" x1="{_n(x0)}" y1="{_n(y0)}" x2="{_n(x1)}" y2="{_n(y1)}"'
                    f"{stroke_attrs}{opacity}{clip}/>"
                )
        return "".join(out)

    def _grid(self) -> str:
        out = []
        for axis, settings in ((self.y, self.yaxis_layout), (self.x, self.xaxis_layout)):
            vertical = axis is self.x
            if settings.get("showgrid", True) and axis.ticks:
                colour = _esc(str(settings.get("gridcolor") or "#eee"))
                grid_width = _n(float(settings.get("gridwidth") or 1))
                segments = "".join(
                    f"M{_n(self._px(t))},{_n(self.top)}V{_n(self.bottom)}"
                    if vertical
                    else f"M{_n(self.left)},{_n(self._py(t))}H{_n(self.right)}"
                    for t in axis.ticks
                )
                out.append(
                    f'<path class="grid" d="{segments}" fill="none" stroke="{colour}" stroke-width="{grid_width}"/>'
                )
            if not axis.category and settings.get("zeroline", True) and axis.low <= 0 <= axis.high:
                colour = _esc(str(settings.get("zerolinecolor") or "#444"))
                zero = (
                    f"M{_n(self._px(0))},{_n(self.top)}V{_n(self.bottom)}"
                    if vertical
                    else f"M{_n(self.left)},{_n(self._py(0))}H{_n(self.right)}"
                )
                out.append(f'<path class="zeroline" d="{zero}" fill="none" stroke="{colour}" stroke-width="1"/>')
        return "".join(out)

    def _path(self, trace: _Trace) -> str:
        """The trace's points as one path: a new subpath after each gap, so a missing value is never bridged."""
        points: list[tuple[float, float] | None] = []
        for x, y in zip(trace.xs, trace.ys, strict=True):
            position = self._x_value(x)
            if position is None or y is None:
                if not trace.connect_gaps:
                    points.append(None)
                continue
            points.append((self._px(position), self._py(y)))
        if trace.lines and not trace.markers:
            points = _thin(points)
        parts = []
        pen_down = False
        for point in points:
            if point is None:
                pen_down = False
                continue
            px, py = point
            parts.append(("L" if pen_down and trace.lines else "M") + f"{_n(px)},{_n(py)}")
            pen_down = True
        return "".join(parts)

    def _traces(self) -> str:
        out = [f'<g class="traces" clip-path="url(#{self.prefix}-plot)" fill="none">']
        for i, trace in enumerate(self.traces):
            d = self._path(trace)
            attributes = [f'class="trace" data-name="{_esc(trace.name)}" d="{d}"']
            if trace.lines:
                attributes.append(
                    f'stroke="{_esc(trace.color)}" stroke-width="{_n(trace.width)}" stroke-linejoin="round"'
                    + (f' stroke-dasharray="{trace.dash}"' if trace.dash else "")
                )
            if trace.markers:
                url = f"url(#{self.prefix}-m{i})"
                attributes.append(f'marker-start="{url}" marker-mid="{url}" marker-end="{url}"')
            out.append(f"<path {' '.join(attributes)}/>")
            out.append(self._point_texts(trace))
        out.append("</g>")
        return "".join(out)

    def _point_texts(self, trace: _Trace) -> str:
        if not any(trace.texts):
            return ""
        size = self.font_size
        gap = (trace.marker_size / 2 if trace.markers else 0) + 2
        positions = (
            trace.text_position if isinstance(trace.text_position, list) else [trace.text_position] * len(trace.xs)
        )
        positions = (positions + ["middle center"] * len(trace.xs))[: len(trace.xs)]
        out = []
        for x, y, text, where in zip(trace.xs, trace.ys, trace.texts, positions, strict=True):
            position = self._x_value(x)
            if not text or position is None or y is None:
                continue
            vertical, _, horizontal = where.partition(" ")
            anchor = {"left": "end", "right": "start"}.get(horizontal, "middle")
            px, py = self._px(position), self._py(y)
            px += {"left": -gap, "right": gap}.get(horizontal, 0)
            baseline = {"top": py - gap - size * 0.25, "bottom": py + gap + size * 0.8}.get(vertical, py + size * 0.35)
            out.append(
                f'<text class="point-text" x="{_n(px)}" y="{_n(baseline)}" text-anchor="{anchor}"'
                f' fill="{_esc(trace.color)}">{_esc(_plain(text))}</text>'
            )
        return "".join(out)

    def _rich_text(
        self,
        text: str,
        x: float,
        y: float,
        size: float,
        *,
        anchor: str | None = None,
        colour: str | None = None,
        transform: str | None = None,
    ) -> str:
        """``<text>`` of plotly markup; ``y`` is the first line's baseline, later lines go down by 1.3 em."""
        lines = _rich_lines(text, size)
        head = [f'<text x="{_n(x)}" y="{_n(y)}"' if x else f'<text y="{_n(y)}"']
        if size != self.font_size:
            head.append(f' font-size="{_n(size)}"')
        if anchor:
            head.append(f' text-anchor="{anchor}"')
        if colour:
            head.append(f' fill="{_esc(colour)}"')
        if transform:
            head.append(f' transform="{transform}"')
        out = ["".join(head), ">"]
        for n, line in enumerate(lines):
            for k, (run, style) in enumerate(line):
                attributes = []
                if k == 0 and n > 0:
                    attributes.append(f'x="{_n(x)}" dy="{_n(size * LINE_HEIGHT)}"')
                if style.size != size:
                    attributes.append(f'font-size="{_n(style.size)}"')
                if style.color:
                    attributes.append(f'fill="{_esc(style.color)}"')
                if style.bold:
                    attributes.append('font-weight="bold"')
                if style.italic:
                    attributes.append('font-style="italic"')
                tspan = "<tspan" + "".join(" " + a for a in attributes) + ">"
                out.append(f"{tspan}{_esc(run)}</tspan>" if attributes else _esc(run))
            if not line and n > 0:
                out.append(f'<tspan x="{_n(x)}" dy="{_n(size * LINE_HEIGHT)}"> </tspan>')
        out.append("</text>")
        return "".join(out)

    def _axes(self) -> str:
        size = self.font_size
        out = ['<g class="yticks" text-anchor="end">']
        for tick, label in zip(self.y.ticks, self.y.labels, strict=True):
            out.append(f'<text x="{_n(self.left - 2)}" y="{_n(self._py(tick) + size * 0.35)}">{_esc(label)}</text>')
        out.append(f'</g><g class="xticks" text-anchor="{"middle" if self.x.angle == 0 else "start"}">')
        radians = math.radians(self.x.angle)
        for tick, label in zip(self.x.ticks, self.x.labels, strict=True):
            x = self._px(tick)
            if self.x.angle == 0:
                out.append(self._rich_text(label, x, self.bottom + TICK_STANDOFF + size * 0.9, size))
                continue
            # Rotated like plotly: the label starts at its tick and its lines are centred on the tick.
            lines = len(_rich_lines(label, size))
            top = self.bottom + TICK_STANDOFF + size * 0.35 * math.cos(radians)
            first = -(lines - 1) / 2 * size * LINE_HEIGHT + size * 0.35
            turn = f"translate({_n(x)},{_n(top)}) rotate({_n(self.x.angle)})"
            out.append(self._rich_text(label, 0, first, size, transform=turn))
        out.append("</g>")
        y_title = _axis_title(self.yaxis_layout)
        if y_title:
            title_size = _axis_title_size(self.yaxis_layout, size)
            # Rotated a quarter turn back, the glyphs stand left of the baseline: 0.8 em of them, 0.2 em below.
            x = self.left - TICK_STANDOFF - self.y_label_width - 6 - 0.25 * title_size
            middle = (self.top + self.bottom) / 2
            turn = f"translate({_n(x)},{_n(middle)}) rotate(-90)"
            out.append(self._rich_text(y_title, 0, 0, title_size, anchor="middle", transform=turn))
        x_title = _axis_title(self.xaxis_layout)
        if x_title:
            baseline = self.bottom + self.x_label_height + size * 1.1
            out.append(
                self._rich_text(
                    x_title,
                    (self.left + self.right) / 2,
                    baseline,
                    _axis_title_size(self.xaxis_layout, size),
                    anchor="middle",
                )
            )
        return "".join(out)

    def _annotations(self) -> str:
        out = []
        for note in self.layout.get("annotations") or []:
            if note.get("visible", True) is False or note.get("text") in (None, ""):
                continue
            text = str(note["text"])
            font = note.get("font") or {}
            size = float(font.get("size") or self.font_size)
            colour = str(font.get("color") or self.font_color)
            x_value, y_value = note.get("x"), note.get("y")
            if note.get("xref", "x") == "paper":
                if not _finite(x_value):
                    continue
                x = self.left + float(x_value) * (self.right - self.left)
                fraction = float(x_value)
            else:
                position = self._x_value(x_value)
                if position is None:
                    continue
                x = self._px(position)
                fraction = 0.5
            if not _finite(y_value):
                continue
            y = (
                self.bottom - float(y_value) * (self.bottom - self.top)
                if note.get("yref", "y") == "paper"
                else self._py(float(y_value))
            ) - (float(note["yshift"]) if _finite(note.get("yshift")) else 0.0)  # plotly's yshift: up, in px
            lines = _rich_lines(text, size)
            box_width, box_height = _block_size(lines, size)
            box_width += 2
            box_height += 2
            xanchor = note.get("xanchor", "auto")
            if xanchor == "auto":
                xanchor = "left" if fraction <= 1 / 3 else "right" if fraction >= 2 / 3 else "center"
                if note.get("xref", "x") != "paper":
                    xanchor = "center"
            yanchor = note.get("yanchor", "auto")
            if yanchor == "auto":
                yanchor = "middle"
            box_left = {"left": x, "right": x - box_width}.get(str(xanchor), x - box_width / 2)
            box_top = {"top": y, "bottom": y - box_height}.get(str(yanchor), y - box_height / 2)
            background = (
                f'<rect x="{_n(box_left)}" y="{_n(box_top)}" width="{_n(box_width)}" height="{_n(box_height)}"'
                f' fill="{_esc(str(note["bgcolor"]))}"/>'
                if note.get("bgcolor")
                else ""
            )
            align = note.get("align", "center")
            if align == "left":
                anchor, tx = "start", box_left + 1
            elif align == "right":
                anchor, tx = "end", box_left + box_width - 1
            else:
                anchor, tx = "middle", box_left + box_width / 2
            words = self._rich_text(text, tx, box_top + 1 + size * 0.95, size, anchor=anchor, colour=colour)
            out.append(f'<g class="annotation">{background}{words}</g>')
        return "".join(out)

    def _title(self, text: str) -> str:
        if not text:
            return ""
        title = self.layout.get("title") if isinstance(self.layout.get("title"), dict) else {}
        assert isinstance(title, dict)
        size = float((title.get("font") or {}).get("size") or self.font_size * 1.4)
        fraction = float(title["x"]) if _finite(title.get("x")) else 0.5
        x = fraction * self.width
        anchor = {"left": "start", "right": "end"}.get(str(title.get("xanchor", "auto")), "middle")
        if title.get("xanchor", "auto") == "auto":
            anchor = "start" if fraction <= 1 / 3 else "end" if fraction >= 2 / 3 else "middle"
        lines = _rich_lines(text, size)
        # Plotly centres the title in the top margin: the first baseline at its middle, less half the other lines.
        baseline = self.margin["t"] / 2 - (len(lines) - 1) / 2 * size * LINE_HEIGHT
        return f'<g class="title">{self._rich_text(text, x, baseline, size, anchor=anchor)}</g>'

    def _legend(self) -> str:
        if not self.legend_items:
            return ""
        size = self.legend_size
        row = self.legend_row
        out = ['<g class="legend">']
        if self.legend_vertical:
            left = self.right + 10
            top = self.top
            places = [(left + LEGEND_PAD, top + LEGEND_PAD + (n + 0.5) * row) for n in range(len(self.legend_items))]
        else:
            left = self.left
            top = self.height - self.legend_height
            places = []
            for n in range(len(self.legend_items)):
                column, line = n % self.legend_columns, n // self.legend_columns
                x = left + sum(self.legend_column_widths[:column])
                places.append((x, top + LEGEND_PAD + (line + 0.5) * row))
        for trace, (x, middle) in zip(self.legend_items, places, strict=True):
            out.append('<g class="legend-item">')
            if trace.lines:
                dash = f' stroke-dasharray="{trace.dash}"' if trace.dash else ""
                out.append(
                    f'<path d="M{_n(x + 5)},{_n(middle)}H{_n(x + 35)}" fill="none" stroke="{_esc(trace.color)}"'
                    f' stroke-width="{_n(min(trace.width, 5))}"{dash}/>'
                )
            if trace.markers:
                out.append(self._symbol(trace, x + 20, middle))
            out.append(
                f'<text x="{_n(x + LEGEND_SYMBOL)}" y="{_n(middle + size * 0.35)}"'
                + (f' font-size="{_n(size)}"' if size != self.font_size else "")
                + f">{_esc(_plain(trace.name))}</text>"
            )
            out.append("</g>")
        out.append("</g>")
        return "".join(out)


# --------------------------------------------------------------------------- helpers


def _title_text(title: Any) -> str:
    if isinstance(title, dict):
        return str(title.get("text") or "")
    return str(title or "")


def _axis_title(axis: dict[str, Any]) -> str:
    return _title_text(axis.get("title"))


def _axis_title_size(axis: dict[str, Any], font_size: float) -> float:
    """An axis title's font size: its own, else plotly's default of 1.2 × the figure's font, rounded."""
    title = axis.get("title")
    if isinstance(title, dict) and _finite((title.get("font") or {}).get("size")):
        return float(title["font"]["size"])
    return float(round(font_size * 1.2))


def _thin(points: list[tuple[float, float] | None]) -> list[tuple[float, float] | None]:
    """A dense bare line with at most four points per pixel column (first, lowest, highest, last), in order.

    What a screen can show of a per-second series thousands of points long;
    plotly.js simplifies its lines the same way. Gaps are kept.
    """
    if len(points) < 200:
        return points
    out: list[tuple[float, float] | None] = []
    column: list[tuple[float, float]] = []

    def flush() -> None:
        if not column:
            return
        low = min(column, key=lambda p: p[1])
        high = max(column, key=lambda p: p[1])
        keep = {id(column[0]): column[0], id(low): low, id(high): high, id(column[-1]): column[-1]}
        out.extend(p for p in column if id(p) in keep)
        column.clear()

    current: int | None = None
    for point in points:
        if point is None:
            flush()
            out.append(None)
            current = None
            continue
        pixel = math.floor(point[0])
        if pixel != current:
            flush()
            current = pixel
        column.append(point)
    flush()
    return out
