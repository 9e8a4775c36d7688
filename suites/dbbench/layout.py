"""RocksDB db_bench's export layout: the scripts' ``sum.abs0``/``sum.abs1`` tables and their csv twins."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from suites.cells import csv_text, tsv_line
from suites.dbbench.parse import table_tests
from suites.tables import ExportTable, qps_text, ratio_text, relative_qps


def _dbbench_rows(
    runs: Sequence[str],
    tests: Sequence[str],
    values: Mapping[tuple[str, str], float | None],
    relative: bool,
) -> list[tuple[str, list[str]]]:
    """Per test the cells of every run: ops_sec as an integer, or ``%.2f`` of ops_sec / the base's (runs[0])."""
    rows = []
    for test in tests:
        if relative:
            base = values.get((runs[0], test)) if runs else None
            cells = [ratio_text(relative_qps(values.get((run, test)), base)) for run in runs]
        else:
            cells = [qps_text(values.get((run, test)), 0) for run in runs]  # integer ops_sec, as the scripts print it
        rows.append((test, cells))
    return rows


def format_dbbench_tsv(
    runs: Sequence[str],
    versions: Sequence[str],
    tests: Sequence[str],
    values: Mapping[tuple[str, str], float | None],
    *,
    relative: bool = True,
    header: bool = True,
) -> str:
    """The db_bench scripts' ``sum.abs0.<workload>.tsv`` (relative) / ``sum.abs1.<workload>.tsv`` (absolute).

    ``runs[0]`` is the base; ``versions`` are the column names, in the same
    order. A header of the versions then ``test``; one row per test (``tests``
    gives the order): the cells, then the test name. Relative cells are ``%.2f``
    of ops_sec / the base's, so the base column is all 1.00; absolute cells are
    integer ops_sec. Missing is ``NA``. ``header=False`` gives the older
    ``abs.<workload>.<set>.tsv`` layout (nov23), which has none.
    """
    lines = [tsv_line([*versions, "test"])] if header else []
    lines.extend(tsv_line([*cells, test]) for test, cells in _dbbench_rows(runs, tests, values, relative))
    return "".join(line + "\n" for line in lines)


def format_dbbench_csv(
    runs: Sequence[str],
    versions: Sequence[str],
    tests: Sequence[str],
    values: Mapping[tuple[str, str], float | None],
    *,
    relative: bool = True,
    header: bool = True,
    base_column: bool = True,
) -> str:
    """The csv twins: ``sum.abs0.<workload>.csv``, ``csum.*.csv`` and, without header and base, ``rel2.*.csv``.

    A header ``test,<version>,…,`` (the scripts end it with a comma), then
    ``<test>,<cell>,…`` rows; cells as in format_dbbench_tsv. ``header=False``
    and ``base_column=False`` give nov23's ``rel2.<workload>.<set>.csv``: rows
    only, without the base's 1.00 column.
    """
    skip = 0 if base_column else 1
    rows = [["test", *versions[skip:], ""]] if header else []  # the scripts end the header with a comma
    rows.extend([test, *cells[skip:]] for test, cells in _dbbench_rows(runs, tests, values, relative))
    return csv_text(rows)


def sum_parts(
    table: ExportTable,
) -> tuple[list[str], list[str], list[str], dict[tuple[str, str], float | None]]:
    """Columns (base first), their versions, the tests of the author's tables, and ops_sec per (column, test)."""
    runs = list(table.columns)
    tests = table_tests(table.labels)
    values = {(run, test): table.qps.get((run, test)) for run in runs for test in tests}
    return runs, [table.versions[run] for run in runs], tests, values


def sum_table(table: ExportTable, fmt: str, relative: bool) -> str:
    """The scripts' ``sum.abs0`` (``relative``) or ``sum.abs1`` table of a comparison, tsv or its csv twin:
    columns are versions, rows tests in run order."""
    runs, versions, tests, values = sum_parts(table)
    formatter = format_dbbench_tsv if fmt == "tsv" else format_dbbench_csv
    return formatter(runs, versions, tests, values, relative=relative)
