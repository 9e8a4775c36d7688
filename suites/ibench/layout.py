"""The Insert Benchmark's export layout: the scripts' per-step ``rel.<step>`` and ``mrg.<step>`` tables."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from suites.cells import csv_text, tsv_line
from suites.tables import NA, met_ratio_text


def _ibench_number(text: str) -> float | None:
    # awk reads a cell as a number when it looks like one; NA (and anything else) is no measurement.
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def format_ibench_table(
    columns: Sequence[str],
    rows: Sequence[tuple[str, Mapping[str, str] | None]],
    *,
    relative: bool = True,
    separator: str = "\t",
) -> str:
    """The Insert Benchmark scripts' per-step tables: ``rel.<step>`` (relative) or ``mrg.<step>`` (absolute).

    ``columns`` is the summary header without ``tag`` (``ips qps rps … p99``);
    ``rows`` are (tag, cell texts by column) in table order, the base first,
    with the cells as the merge script prints them (ips, qps and rps as
    integers, the rest as the step summary wrote them); None is a run without
    the step (all NA). Absolute: the header, then every row. Relative
    (``sum_met.awk``): the header, then each row after the base, each cell
    ``%.2f`` of cell / base cell, ``NA`` when either is NA, ``1`` when both are
    0, ``inf`` when only the base is; the tag is copied.
    """
    table: list[list[str]] = [[*columns, "tag"]]
    texts = [(tag, [NA if cells is None else cells.get(c, NA) for c in columns]) for tag, cells in rows]
    if not relative:
        table.extend([*cells, tag] for tag, cells in texts)
    elif texts:
        _, base = texts[0]
        for tag, cells in texts[1:]:
            ratios = [
                met_ratio_text(_ibench_number(cell), _ibench_number(base_cell))
                for cell, base_cell in zip(cells, base, strict=True)
            ]
            table.append([*ratios, tag])
    if separator == ",":
        return csv_text(table)  # the csv module: a tag with a comma stays in its column
    return "".join(tsv_line(row) + "\n" for row in table)
