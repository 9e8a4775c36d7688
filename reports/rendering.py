"""The HTML of the long tables' cells and rows, and of the long run lists: one small renderer module.

Built in Python rather than through templates: a 60-run × 42-test table is 2,500 cells, a series hundreds of
runs, and the template engine spends ~0.2 ms on each cell, option or checkbox, which alone would break a page's
budget. Every text is escaped here; the views and templates only place what these return.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape
from typing import TYPE_CHECKING, Any

from django.urls import reverse
from django.utils.safestring import SafeString, mark_safe

from benchdash import urlpattern
from reports import charts
from reports.stats import GroupSummary
from reports.stats import flag as stats_flag
from reports.templatetags.benchdash import fixed, number_cell, rel

if TYPE_CHECKING:
    from django import forms

    from reports.compare import Column, Comparison
    from reports.views import SeriesChoice
    from runs.models import Run


def base_options(series: list[SeriesChoice], base: Run) -> SafeString:
    """The base selector's options, grouped by DBMS.

    Built here: a series can hold hundreds of runs, and a Select widget renders
    each option through a template (~0.2 ms apiece).
    """
    parts: list[str] = []
    dbms = None
    for run in series:
        name = run.dbms
        if name != dbms:
            if dbms is not None:
                parts.append("</optgroup>")
            parts.append(f'<optgroup label="{escape(name)}">')
            dbms = name
        selected = " selected" if run.pk == base.pk else ""
        parts.append(f'<option value="{run.pk}"{selected}>{escape(run.label)}</option>')
    if dbms is not None:
        parts.append("</optgroup>")
    return mark_safe("".join(parts))  # every text part escaped above


def run_picker(series: Sequence[SeriesChoice], chosen: set[str]) -> SafeString:
    """The run checkboxes of the comparison's form (built here: a series can hold hundreds of runs)."""
    return mark_safe(
        "".join(
            f'<div><input type="checkbox" name="runs" value="{run.pk}" id="id_runs_{i}"'
            f'{" checked" if str(run.pk) in chosen else ""}> <label for="id_runs_{i}">{escape(run.label)}</label></div>'
            for i, run in enumerate(series)
        )
    )


def form_controls(form: forms.Form, names: Sequence[str]) -> dict[str, SafeString]:
    """The HTML of the bound ``form``'s fields ``names`` (selects, number inputs, checkboxes), exactly as
    ``{{ form.name }}`` writes it, errors included (``aria-invalid``).

    Built here: Django renders each widget through three templates (~0.3 ms apiece), a tenth of a small
    comparison page's time for its dozen controls."""
    from django import forms

    errors = form.errors
    data = form.data
    found = {}
    for name in names:
        widget = form.fields[name].widget
        ident = f"id_{name}"
        extra = f' aria-invalid="true" aria-describedby="{ident}_error"' if name in errors else ""
        if isinstance(widget, forms.CheckboxInput):
            checked = " checked" if widget.value_from_datadict(data, form.files, name) else ""
            found[name] = f'<input type="checkbox" name="{name}"{_attrs(widget.attrs)}{extra} id="{ident}"{checked}>'
        elif isinstance(widget, forms.Select) and not widget.allow_multiple_selected:
            value = data.get(name)
            chosen = "" if value is None else str(value)
            options = []
            selected = False
            for option, label in widget.choices:
                here = not selected and str(option) == chosen
                selected = selected or here
                options.append(
                    f'  <option value="{escape(str(option))}"{" selected" if here else ""}>{escape(str(label))}'
                    "</option>\n\n"
                )
            found[name] = (
                f'<select name="{name}"{_attrs(widget.attrs)}{extra} id="{ident}">\n{"".join(options)}</select>'
            )
        elif isinstance(widget, forms.NumberInput | forms.TextInput):
            value = data.get(name)
            shown = f' value="{escape(str(value))}"' if value not in (None, "") else ""
            found[name] = (
                f'<input type="{widget.input_type}" name="{name}"{shown}{_attrs(widget.attrs)}{extra} id="{ident}">'
            )
        else:
            raise TypeError(f"{name}: no HTML for a {type(widget).__name__} here")
    return {name: mark_safe(html) for name, html in found.items()}  # every text escaped above


def _attrs(attrs: dict[str, Any]) -> str:
    """A widget's own attributes as Django's attrs.html writes them (False left out, True as a bare name)."""
    return "".join(
        f" {name}" if value is True else f' {name}="{escape(str(value))}"'
        for name, value in attrs.items()
        if value is not False
    )


def run_options(runs: list[Run], selected: int | None, *, blank: str | None = None) -> SafeString:
    """The runs as a <select>'s options, one group per series, so nobody has to know a run's numeric id.

    Built here rather than by a Select widget: hundreds of runs, two selects, and
    a widget renders each option through a template.
    """
    parts = [f'<option value="">{escape(blank)}</option>'] if blank is not None else []
    series = None
    for run in runs:
        name = f"{run.server.name} · {run.workload.name} · {run.build.version.dbms.name}"
        if name != series:
            if series is not None:
                parts.append("</optgroup>")
            parts.append(f'<optgroup label="{escape(name)}">')
            series = name
        chosen = " selected" if run.pk == selected else ""
        label = f"{run.build.version.dbms.name} {run.build.version.text} · {run.name}"
        parts.append(f'<option value="{run.pk}"{chosen}>{escape(label)}</option>')
    if series is not None:
        parts.append("</optgroup>")
    return mark_safe("".join(parts))  # every text part escaped above


def cell(value: float | None, flag: str = "", noisy: bool = False, qps: float | None = None) -> str:
    """One relative-QPS table cell as HTML.

    Built in Python: a 60-run × 42-test table is 2,500 cells, and the template
    engine spends ~0.2 ms on each, which alone would break the page's budget.
    """
    if value is None:
        if qps is not None:
            # The version has a result, the base has none: nothing to divide by, but nothing missing here.
            return f'<td class="num no-base" title="QPS {qps:.0f}; the base has no result">no base</td>'
        return '<td class="num missing">missing</td>'
    css = _CELL_CLASSES.get((flag, noisy))
    if css is None:
        css = _CELL_CLASSES[(flag, noisy)] = escape(f"num {flag}" + (" noisy" if noisy else ""))
    # rel's text is digits, a sign and a point, or ∞: nothing to escape.
    text = rel(value) + (" ≈" if noisy else "")
    title = f' title="QPS {qps:.0f}"' if qps is not None and math.isfinite(qps) else ""
    return f'<td class="{css}"{title}>{text}</td>'


# The class attribute of each (flag, noisy) a cell can have, escaped once.
_CELL_CLASSES: dict[tuple[str, bool], str] = {}


def label_cells(comparison: Comparison, others: Sequence[Any], label: str) -> SafeString:
    """One microbenchmark's relative-QPS cells, one per compared column."""
    of = comparison.cells
    return cells([cell(c.relative, c.flag, c.noisy, c.qps) for c in (of[(column.key, label)] for column in others)])


def cells(pieces: list[str]) -> SafeString:
    return mark_safe("".join(pieces))  # every piece is built and escaped by cell


def regression_badges(items: Sequence[dict[str, Any]]) -> SafeString:
    """The badges of a group's or a microbenchmark's regression records: each linked bug, or the record itself when
    none is linked."""
    parts = []
    for item in items:
        kind = escape(str(item["kind"]))
        arrived_version = escape(str(item["arrived_version"]))
        for key, url in item["bugs"]:
            parts.append(
                f' <a class="badge bug" href="{escape(str(url))}" title="linked to the {kind} that arrived in '
                f'{arrived_version}">{escape(str(key))}</a>'
            )
        if not item["bugs"] and item["arrived"]:
            arrow = "▼" if item["kind"] == "regression" else "▲"
            parts.append(
                f' <a class="badge {kind}" href="{escape(str(item["url"]))}" title="{kind} '
                f'({escape(str(item["state"]))})">{arrow} {arrived_version}</a>'
            )
    return mark_safe("".join(parts))  # every text escaped above


def relative_rows(rows: Sequence[dict[str, Any]], export_query: str, span: int) -> SafeString:
    """The body of the table of every microbenchmark: a heading row per group, then a row per microbenchmark with
    its link to the drill-down, its regression badges, the base's QPS and its cells (``span``: the table's
    columns). One loop here instead of a template loop with an include per row."""
    drilldown = urlpattern.by_id("reports:drilldown")
    query = escape(export_query)
    parts = []
    group = None
    for row in rows:
        if row["group"] != group:
            group = row["group"]
            parts.append(
                f'\n      <tr class="group-row"><th colspan="{span}" scope="colgroup">{escape(str(group))}</th></tr>'
            )
        label = escape(row["label"])
        parts.append(
            f'\n      <tr data-label="{label}"><td><a href="{drilldown(row["mb_id"])}?{query}">{label}</a>'
            f"{regression_badges(row['regressions'])}</td>{number_cell(row['base_qps'])}"
            f"\n      {row['cells']}</tr>\n    "
        )
    return mark_safe("".join(parts))  # every text escaped above; the cells by cell


def summary_row(key: str, label: str, s: GroupSummary, red: float, green: float) -> dict[str, SafeString]:
    """One version's row of a group's summary table, as HTML (built here for the reason the module says)."""
    key = escape(key)
    cells = "".join(cell(v, stats_flag(v, red, green)) for v in (s.min, s.max, s.avg, s.median))
    count = f'<td class="num{"" if s.complete else " red"}">{s.count_text}</td>'
    at = f"<td>{escape(s.min_label or '–')}</td><td>{escape(s.max_label or '–')}</td>"
    # One line, no title repeating data-column's run key: a 200-version series has 1,000 of these rows.
    html = f'<tr data-column="{key}"><td>{escape(label)}</td>{cells}{count}{at}</tr>'

    return {"html": mark_safe(html)}  # every text escaped above; the cells by cell


def column_heads(comparison: Comparison, others: Sequence[Column]) -> dict[str, SafeString]:
    """The compared columns' header cells: plain (a one-microbenchmark group's table) and with a link to the diff
    of the column's run with the base (the table of every microbenchmark)."""
    plain = []
    linked = []
    diff = reverse("reports:run_diff")
    base_id = comparison.spec.base_run_id
    for column in others:
        head = f'<th class="num" title="{escape(column.key)}">{escape(comparison.version_label(column.key))}'
        plain.append(f"{head}</th>")
        link = f"{diff}?a={base_id}&amp;b={column.run_ids[0]}"
        linked.append(f'{head}<br><a class="muted no-export" href="{link}">diff with base</a></th>')
    return {"column_heads": mark_safe("".join(plain)), "relative_heads": mark_safe("".join(linked))}


def drilldown_row(point: charts.DrilldownPoint, flag: str, *, base: bool, highlighted: bool) -> SafeString:
    """One version's row of the drill-down's table, as HTML.

    Built in Python, like the comparison's cells: a row is thirteen formatted numbers, and the template engine
    took ~0.15 ms per row (floatformat alone ~12 µs per number), a third of the page at 200 versions.
    """
    key = escape(point["key"])
    # One text, no list of cells: a row is built 200 times for a page of 200 versions. No indentation between
    # the cells: at 200 versions it was a sixth of the table's bytes.
    hw = "".join(
        f'<td class="num">{fixed(point[name], places) or "–"}</td><td class="num">{rel(point[ratio])}</td>'  # type: ignore[literal-required]
        for name, ratio, places in _DRILLDOWN_HW
    )
    # The texts escaped here; the numbers are digits, "–", "∞" or "missing".
    return mark_safe(
        f'\n<tr class="{"highlight" if highlighted else ""}" data-column="{key}">'
        f'<td title="{key}">{escape(point["version_label"])}'
        f"{_BASE_MARK if base else '</td>'}"
        f"{number_cell(point['qps'])}"
        f'<td class="num {escape(flag)}">{rel(point["relative"])}</td>'
        f'<td class="num">{fixed(point["lat_avg_ms"], 3) or "–"}</td>'
        f'<td class="num">{fixed(point["lat_pct_ms"], 3) or "–"}</td>'
        f"{hw}</tr>"
    )


_BASE_MARK = ' <span class="muted">(base)</span></td>'
# The drill-down's HW columns: each metric, its ratio to the base, and the places the metric is shown with.
_DRILLDOWN_HW = (
    ("cpu_o", "cpu_o_ratio", 6),
    ("cs_o", "cs_o_ratio", 3),
    ("rkb_o", "rkb_o_ratio", 3),
    ("wkb_o", "wkb_o_ratio", 3),
)
