"""Cells of the text exports (TSV, CSV), safe to open in a spreadsheet.

A spreadsheet runs a cell that starts with ``=``, ``+``, ``-`` or ``@`` (or a
tab or carriage return before one) as a formula: a run or test name chosen by
whoever uploaded a bundle must not become one on the reader's machine. Such a
cell is printed with a leading apostrophe (the spreadsheet convention for
"text"), unless it is a number, which a spreadsheet reads as a number anyway
(``-0.5``). Every other cell is printed as it is, so the author's tables are
reproduced byte for byte. CSV goes through the ``csv`` module: a name with a
comma or a quote stays in its column.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def neutralised(text: str) -> str:
    """``text`` as a spreadsheet shows it as text: an apostrophe before a cell it would run as a formula."""
    if text.startswith(FORMULA_STARTS) and not _is_number(text):
        return "'" + text
    return text


def tsv_line(cells: Sequence[str]) -> str:
    """One TSV line; a tab or line break inside a cell (never in a name benchdash imports) becomes a space."""
    return "\t".join(neutralised(cell).replace("\t", " ").replace("\n", " ").replace("\r", " ") for cell in cells)


def csv_text(rows: Iterable[Sequence[str]]) -> str:
    """CSV lines ending ``\\n``, as the reference scripts print them, quoted only where a cell needs it."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n", quoting=csv.QUOTE_MINIMAL)
    for row in rows:
        writer.writerow([neutralised(cell) for cell in row])
    return out.getvalue()
