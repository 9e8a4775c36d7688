"""Sysbench's export layouts, as the reference author's scripts print them.

What the author's scripts do, and so what these functions reproduce:

- ``qps.{abs,rel}.all.{tsv,csv}``: one row per test label (``<test>_range=<R>``)
  in three blocks — point, range, write — each in the order ``ls | sort`` gives
  the ``sb.r.qps.<test>.range<R>.pk<P>`` files in an en_US locale. Absolute QPS
  is printed as the author's ``sb.r.qps`` files print it in each era: an integer
  (C ``%.0f``, round half to even) for most, decimals where he printed them
  (scan's millions of rows/s with 3 in 2021-2025, sysbench's own ``%.2f`` in
  2018-2020) — a run read from his tables keeps the decimals its cells have,
  and a value whose precision nothing records keeps at least three significant
  digits (``suites.tables.printed_decimals``). The relative table divides those
  printed values and prints ``%.2f``. The ``.pre`` rows are printed where the
  author's tables of that era have them (2023 to October 2024; ``keep_pre``).
- ``o.met.all``: one block per ``sb.met`` file (see ``format_met_blocks``).

Where the scripts would print an empty field for a missing result (and shift
every later column), these functions print ``NA``: a missing result is never 0.
Pure: plain values in, text out (the shared printing rules are ``suites.tables``').
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence

from suites.cells import csv_text, tsv_line
from suites.groups import bare_test
from suites.sysbench.parse import is_load
from suites.tables import NA, ExportTable, met_ratio_text, printed_qps, qps_text, ratio_text, relative_qps

_LABEL_RE = re.compile(r"^(?P<test>.+)_range=(?P<range>\d+)$")
_WRITE_RE = re.compile(r"delete|insert|update|write")
_NOT_ALNUM_RE = re.compile(r"[^0-9a-z]+")

REFERENCE_BLOCKS = ("point", "range", "write")


# --------------------------------------------------------------------------- row order


def ls_sort_key(name: str) -> tuple[str, str]:
    """Sort key that mimics ``sort`` in an en_US locale for result file names.

    glibc's en_US collation ignores punctuation at the first level and compares
    letters case-insensitively with digits before letters; that is exactly the
    order of the lowercased alphanumeric characters. The whole name breaks ties
    (glibc would use its later levels; no standard test names tie).
    """
    return _NOT_ALNUM_RE.sub("", name.lower()), name


def _split_label(label: str) -> tuple[str, int | None]:
    match = _LABEL_RE.match(label)
    if not match:
        return label, None
    return match["test"], int(match["range"])


def _label_sort_key(label: str, pk: int) -> tuple[str, str]:
    # Sort the file name, not the label: the ".pk<P>" after the range is what puts range=1000 before
    # range=100 before range=10 (its letters sort after the digits of a longer range).
    test, range_size = _split_label(label)
    return ls_sort_key(f"sb.r.qps.{test}" if range_size is None else f"sb.r.qps.{test}.range{range_size}.pk{pk}")


def reference_block(name: str) -> str | None:
    """The block of the reference tables a test (or label) is printed in: "point", "range", "write" or None.

    The scripts grep for "point" (dropping point warm-ups: ``grep -v warm``),
    then ``delete|insert|update|write`` for writes; everything else is range,
    warm-ups included (``scan.warm`` is in the table).
    """
    test = bare_test(name)
    if is_load(test):
        return None  # the load step has its own o.met block and no QPS row
    if "point" in test:
        return None if "warm" in test else "point"
    if _WRITE_RE.search(test):
        return "write"
    return "range"


def reference_tests(labels: Iterable[str], pk: int = 1, *, keep_pre: bool = False) -> list[str]:
    """The labels of a reference QPS table, in its row order.

    Takes test labels (``point-query_range=100``). Drops the pre-write phase
    (tests ending ``.pre`` and ``.warmpre``: the author's tables since November
    2024 have none) unless ``keep_pre`` (his tables of 2023-2024 keep the
    ``.pre`` rows), and point warm-ups; keeps the rest in point, range, write
    blocks, each sorted like ``ls | sort`` sorts their
    ``sb.r.qps.<test>.range<R>.pk<pk>`` files.
    """
    blocks: dict[str, list[str]] = {block: [] for block in REFERENCE_BLOCKS}
    for label in dict.fromkeys(labels):
        test = bare_test(label)
        if test.endswith(".warmpre") or (test.endswith(".pre") and not keep_pre):
            continue
        block = reference_block(test)
        if block is not None:
            blocks[block].append(label)
    ordered: list[str] = []
    for block in REFERENCE_BLOCKS:
        ordered.extend(sorted(blocks[block], key=lambda label: _label_sort_key(label, pk)))
    return ordered


# --------------------------------------------------------------------------- QPS tables


def _qps_rows(
    runs: Sequence[str],
    labels: Sequence[str],
    values: Mapping[tuple[str, str], float | None],
    relative_to: str | None,
    decimals: Mapping[tuple[str, str], int] | None = None,
) -> tuple[list[str], list[tuple[str, list[str]]]]:
    """The column runs and, per label, the cell texts: absolute QPS, or relative to ``relative_to``.
    ``decimals``: per (run, label), the decimals the author printed the value with, where known."""
    said = decimals or {}
    if relative_to is None:
        columns = list(runs)
        rows = [
            (label, [qps_text(values.get((run, label)), said.get((run, label))) for run in columns]) for label in labels
        ]
        return columns, rows
    columns = [run for run in runs if run != relative_to]
    rows = []
    for label in labels:
        base = printed_qps(values.get((relative_to, label)), said.get((relative_to, label)))
        cells = [
            ratio_text(relative_qps(printed_qps(values.get((run, label)), said.get((run, label))), base))
            for run in columns
        ]
        rows.append((label, cells))
    return columns, rows


def format_qps_tsv(
    runs: Sequence[str],
    labels: Sequence[str],
    values: Mapping[tuple[str, str], float | None],
    relative_to: str | None = None,
    decimals: Mapping[tuple[str, str], int] | None = None,
) -> str:
    """The ``qps.abs.all.tsv`` layout, or ``qps.rel.all.tsv`` when ``relative_to`` names the base run.

    Absolute: ``col-N : RUN`` lines, a blank line, a ``col-1<TAB>…col-K``
    header, then ``v1<TAB>…<TAB>vK<TAB>label`` rows with integer QPS.
    Relative: a ``Relative to: BASE`` line first; the columns are the runs
    other than the base, the cells ``%.2f`` of the ratio of the printed
    integers (``inf`` when the base prints 0, ``1.00`` when both do). Missing
    cells are ``NA``. ``labels`` gives the row order (see reference_tests).
    """
    columns, rows = _qps_rows(runs, labels, values, relative_to, decimals)
    lines = [] if relative_to is None else [tsv_line([f"Relative to: {relative_to}"])]
    lines.extend(tsv_line([f"col-{i} : {run}"]) for i, run in enumerate(columns, start=1))
    lines.append("")
    lines.append("\t".join(f"col-{i}" for i in range(1, len(columns) + 1)))
    lines.extend(tsv_line([*cells, label]) for label, cells in rows)
    return "\n".join(lines) + "\n"


def format_qps_csv(
    runs: Sequence[str],
    labels: Sequence[str],
    values: Mapping[tuple[str, str], float | None],
    relative_to: str | None = None,
    decimals: Mapping[tuple[str, str], int] | None = None,
) -> str:
    """The ``qps.abs.all.csv`` / ``qps.rel.all.csv`` layout: ``label,v1,…,vK`` rows, no header at all.

    Cells as in format_qps_tsv; the relative file likewise leaves out the base
    column and, unlike the tsv, does not name the base.
    """
    _, rows = _qps_rows(runs, labels, values, relative_to, decimals)
    return csv_text([label, *cells] for label, cells in rows)


def qps_table(table: ExportTable, fmt: str, relative: bool) -> str:
    """``qps.rel.all.{tsv,csv}`` (``relative``: to the table's base) or ``qps.abs.all.{tsv,csv}`` of a comparison."""
    labels = reference_tests(table.labels, pk=table.pk, keep_pre=table.keep_pre)
    formatter = format_qps_tsv if fmt == "tsv" else format_qps_csv
    return formatter(
        table.columns, labels, table.qps, relative_to=table.base if relative else None, decimals=table.decimals
    )


# --------------------------------------------------------------------------- o.met.all

MET_HEADER = "cpu/o\t\tcs/o\tr/o\trKB/o\twKB/o\to/s\tdbms"
MET_KEYS = ("cpu_o", "cs_o", "r_o", "rkb_o", "wkb_o", "o_s")
"""parse_met keys of the o.met.all columns, in column order."""

_MET_ABS_FORMATS = ("{:.6f}", "{:.3f}", "{:.6g}", "{:.6g}", "{:.6g}", "{:.0f}")
# cpu/o and cs/o are copied as text from the sb.met file, which an.sh writes with 6 and 3 decimals;
# r/o, rKB/o, wKB/o go through awk's %.6g (0.000 → 0, 30.450 → 30.45) and o/s through %.0f.


def _met_value(metrics: Mapping[str, float] | None, key: str) -> float | None:
    if metrics is None:
        return None
    value = metrics.get(key)
    return None if value is None or math.isnan(value) else value


def format_met_blocks(
    runs: Sequence[str],
    files: Sequence[str],
    metrics: Mapping[tuple[str, str], Mapping[str, float] | None],
) -> str:
    """The ``o.met.all`` layout: per sb.met file, absolute and relative HW metrics of each run.

    ``runs[0]`` is the base ("first result"). ``metrics[(run, file)]`` is what
    suites.sysbench.parse.parse_met returns for that run's file; a missing file or
    metric prints ``NA``. Each block: the file name, ``--- absolute``, the header
    (with its double tab after cpu/o), one row per run, ``--- relative to first
    result``, one row per other run, a blank line. Relative cells are ``%.2f``
    of other/base, ``1`` when both are 0, ``inf`` when only the base is; o/s is
    compared as the integers printed above, the others as in the sb.met file.
    Relative rows carry an empty field after cpu/o, as the script prints them.
    """
    out: list[str] = []
    for file in files:
        out.append(file)
        out.append("--- absolute")
        out.append(MET_HEADER)
        for run in runs:
            row = metrics.get((run, file))
            cells = []
            for key, fmt in zip(MET_KEYS, _MET_ABS_FORMATS, strict=True):
                value = _met_value(row, key)
                cells.append(NA if value is None else fmt.format(value))
            out.append(tsv_line([*cells, run]))
        out.append("--- relative to first result")
        base_row = metrics.get((runs[0], file)) if runs else None
        for run in runs[1:]:
            row = metrics.get((run, file))
            cells = []
            for key in MET_KEYS:
                value, base = _met_value(row, key), _met_value(base_row, key)
                if key == "o_s":
                    value = None if value is None else float(round(value))
                    base = None if base is None else float(round(base))
                cells.append(met_ratio_text(value, base))
            out.append(tsv_line([cells[0], "", *cells[1:], run]))
        out.append("")
    return "".join(line + "\n" for line in out)
