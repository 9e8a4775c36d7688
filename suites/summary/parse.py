"""The summary tables the author's sysbench scripts print, read back into runs.

Much of the field's history survives only as these tables, beside (or instead
of) the run directories they were made from. The layouts read, by era:

- ``qps.abs.<name>.tsv``: ``col-<n> : <run directory name>`` lines, a blank
  line, a ``col-1<TAB>col-2…`` header, then one row per microbenchmark: one QPS
  per run, tab separated, and the test label last (``point-query_range=100``).
  Tables of 2023 to late 2024 keep the ``.pre`` rows; later ones drop them.
- ``qps.abs.<name>.csv``: the same rows with the label first, comma separated
  and without the run names, which come from the table's ``.tsv`` or, failing
  that, from the ``o.met`` beside it.
- ``o.met.<name>``, a bare ``o.met``, and the older ``met.<name>.txt``: per
  ``sb.met`` file of the runs, a block: the file's name, ``--- absolute``, a
  header of metric names ending in ``dbms`` (6, 5 or 4 metric columns, by era),
  one row per run (its metrics, then its name), ``--- relative to first
  result`` and the ratios, which are derived and not read. The first block is
  often the load's (``sb.prepare.met.…``).
- ``o.qps.abs.<name>`` (December 2020): per ``sb.r.qps`` file a block: the file
  name without ``sb.r.qps.`` (``point-query.range100.pk1``), then one line per
  run: its QPS at each concurrency in run order, tab separated, and the run's
  name last; a blank line ends the block.

The author's relative tables (``qps.rel.*``, ``o.qps.rel.*``) divide what the
absolute ones print: they are recognised, listed as derived, and not imported.

Every column of a QPS table becomes one sysbench run with a result per row. The
tables themselves carry no concurrency, server or workload; what says them:

- the concurrency: the o.met blocks whose o/s is the table's QPS (the scripts
  pass the QPS to the metrics script), else a ``dop<N>`` word of the table's
  name (``qps.abs.pgo.dop40.prep0.tsv``), else a ``dop<N>`` folder it sits in
  (the scripts' ``<server>/dop<N>/``), else the o.met blocks' file names; else
  the bundle's manifest (``concurrency``), else 1, said;
- the server: the folder above such a ``dop<N>`` folder, else the manifest;
- the workload: only the manifest (or the run directories beside the tables).

A run keeps which table it came from (``SuiteRun.table``: the table's
folders and name words, without the concurrency): the author reuses run names
in every table of an archive, so the name alone does not say which run is
meant. HW metrics of tests the QPS table lacks (``.pre`` tests, the load, a
test measured at another concurrency) are kept as results of their own, their
QPS the block's o/s. Each run keeps where its dimensions came from
(``SuiteRun.sources``), for its page; the parse lists what it read of each
file and what it did not (``SuiteParse.read``, ``not_read``).
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from suites.base import ResultFile, SuiteParse, SuiteRun
from suites.naming import parse_run_dir
from suites.sysbench import parse as sysbench


class ParseError(ValueError):
    """A summary table that cannot be read: the message names the file and the line."""


QPS_TSV_RE = re.compile(r"^qps\.abs\.(?P<name>.+)\.tsv$")
QPS_CSV_RE = re.compile(r"^qps\.abs\.(?P<name>.+)\.csv$")
MET_RE = re.compile(r"^o\.met(?:\.(?P<name>.+))?$")
MET_TXT_RE = re.compile(r"^met\.(?P<name>.+)\.txt$")
OQPS_RE = re.compile(r"^o\.qps\.abs(?:\.(?P<name>.+))?$")
REL_RE = re.compile(r"^(?:o\.)?qps\.rel(?:\.(?P<name>.+?))?(?:\.(?:tsv|csv))?$")
_COLUMN_RE = re.compile(r"^col-(?P<n>\d+) : (?P<run>\S+)\s*$")
_LABEL_RE = re.compile(r"^(?P<test>\S+)_range=(?P<range>\d+)$")
_DOP_RE = re.compile(r"^dop(?P<dop>[1-9]\d{0,5})$")
_OQPS_FILE_RE = re.compile(r"^(?P<test>\S+)\.range(?P<range>\d+)\.pk[01]$")
# Characters no name of a run, test or file may hold: they rewrite a terminal's or a spreadsheet's view of it.
_CONTROL_RE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")

# Why a file was not read, as the bundle page and the import output say it.
MET_WITHOUT_QPS = "HW metrics without a qps.abs table beside them (the runs' QPS)"
DERIVED_TABLE = "the author's relative table: derived from the absolute table beside it, which was read"
NOT_A_MET_TABLE = "named like an o.met table but not one: {error}"
# What was read of a file, as the import report lists it.
READ_QPS = "QPS of {runs} runs × {tests} microbenchmarks at concurrency {dop}"
READ_OQPS = "QPS of {runs} runs × {tests} microbenchmarks at concurrencies {dops}"
READ_CSV_TWIN = "the same QPS as {tsv}, checked cell by cell (not imported twice)"

# What a workload is called when nothing says its parameters (as for a run directory without command lines), so
# a manifest's ``workload`` puts summary runs and raw runs in one series.
UNKNOWN_WORKLOAD = "sysbench (parameters unknown)"
# A missing cell: the scripts print NA where a run lacks the test.
_MISSING = ("NA", "", "-")


def recognise(parts: Sequence[str]) -> bool:
    base = parts[-1] if parts else ""
    return any(pattern.match(base) for pattern in (QPS_TSV_RE, QPS_CSV_RE, MET_RE, MET_TXT_RE, OQPS_RE, REL_RE))


def is_warmup(test: str) -> bool:
    return sysbench.is_warmup(test)


def check_name(text: str, where: str, what: str) -> str:
    """``text`` unless it holds a control character, which is refused naming the file and the field."""
    match = _CONTROL_RE.search(text)
    if match:
        raise ParseError(
            f"{where}: {what} {text[:60]!r} holds the control character U+{ord(match.group()):04X}; "
            "names must be printable"
        )
    return text


@dataclass
class QpsTable:
    """One QPS table: its runs in column order and, per run, QPS by (test, range) and the decimals printed."""

    path: str
    runs: list[str]
    qps: dict[str, dict[tuple[str, int], float]] = field(default_factory=dict)
    decimals: dict[str, dict[tuple[str, int], int]] = field(default_factory=dict)

    @property
    def labels(self) -> set[tuple[str, int]]:
        # A Dec 2020 table's tests carry their column (``<test>\t<n>``) until their concurrencies are known.
        return {(key[0].partition("\t")[0], key[1]) for row in self.qps.values() for key in row}

    def first_qps(self, run: str, test: str, range_size: int) -> float | None:
        """The run's QPS of a test, in the first column when the table has one per concurrency."""
        row = self.qps.get(run, {})
        return row.get((test, range_size), row.get((f"{test}\t0", range_size)))


def _where(bundle: str, path: str, line: int | None = None) -> str:
    return f"{bundle}:{path}" + (f": line {line}" if line is not None else "")


def _value(text: str, where: str, what: str) -> float | None:
    if text in _MISSING:
        return None
    try:
        value = float(text)
    except ValueError:
        raise ParseError(f"{where}: {what} is {text[:40]!r}, not a number") from None
    if not math.isfinite(value) or value < 0:
        raise ParseError(f"{where}: {what} is {text[:40]!r}; a measurement must be a finite number ≥ 0")
    return value


def decimals_of(text: str) -> int:
    """How many decimals a printed number has (``1.466`` → 3, ``1119.20`` → 2, ``6700`` → 0)."""
    _, dot, fraction = text.strip().partition(".")
    return len(fraction) if dot and fraction.isdigit() else 0


def _label(text: str, where: str) -> tuple[str, int]:
    match = _LABEL_RE.match(text)
    if not match:
        check_name(text, where, "the test label")
        raise ParseError(f"{where}: {text[:60]!r} is not a test label (<test>_range=<R>, e.g. point-query_range=100)")
    return match["test"], int(match["range"])


def _run_name(text: str, where: str) -> str:
    check_name(text, where, "the run name")
    try:
        parse_run_dir(text)
    except ValueError as exc:
        raise ParseError(f"{where}: {exc}") from None
    return text


def _lines(file: ResultFile, where: str) -> list[str]:
    try:
        text = file.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ParseError(f"{where}: not UTF-8 text (byte {exc.start})") from None
    if "\x00" in text:
        raise ParseError(f"{where}: contains NUL bytes, so it is damaged")
    return text.splitlines()


def _store(table: QpsTable, run: str, key: tuple[str, int], cell: str, where: str) -> None:
    row = table.qps.setdefault(run, {})
    if key in row or key in table.decimals.get(run, {}):
        raise ParseError(f"{where}: {sysbench.test_label(*key)} appears twice in this table")
    value = _value(cell, where, f"the QPS of {run}")
    table.decimals.setdefault(run, {})[key] = decimals_of(cell)
    if value is not None:
        row[key] = value


def _column_lines(lines: list[str], bundle: str, path: str) -> tuple[list[str], int]:
    """The runs the ``col-<n> : <run>`` lines name, and the line number of the ``col-1…`` header."""
    runs: list[str] = []
    for number, line in enumerate(lines, start=1):
        if line.startswith("col-1\t") or line.strip() == "col-1":
            if not runs:
                break
            return runs, number
        match = _COLUMN_RE.match(line)
        if match:
            if int(match["n"]) != len(runs) + 1:
                raise ParseError(f"{_where(bundle, path, number)}: col-{match['n']} where col-{len(runs) + 1} was due")
            runs.append(_run_name(match["run"], _where(bundle, path, number)))
        elif line.strip():
            raise ParseError(
                f"{_where(bundle, path, number)}: expected 'col-<n> : <run directory name>', found {line[:60]!r}"
            )
    raise ParseError(f"{_where(bundle, path)}: no 'col-<n> : <run>' lines and 'col-1…' header line")


def parse_qps_tsv(file: ResultFile, *, bundle: str) -> QpsTable:
    lines = _lines(file, _where(bundle, file.path))
    runs, header_at = _column_lines(lines, bundle, file.path)
    header = lines[header_at - 1].split("\t")
    if header != [f"col-{n}" for n in range(1, len(runs) + 1)]:
        raise ParseError(
            f"{_where(bundle, file.path, header_at)}: the header names {len(header)} columns, "
            f"the table {len(runs)} runs"
        )
    table = QpsTable(path=file.path, runs=runs)
    for number, line in enumerate(lines[header_at:], start=header_at + 1):
        if not line.strip():
            continue
        where = _where(bundle, file.path, number)
        cells = line.split("\t")
        if len(cells) != len(runs) + 1:
            raise ParseError(f"{where}: {len(cells) - 1} values for {len(runs)} runs")
        key = _label(cells[-1], where)
        for run, cell in zip(runs, cells[:-1], strict=True):
            _store(table, run, key, cell, where)
    if not any(table.qps.values()):
        raise ParseError(f"{_where(bundle, file.path)}: no QPS rows under the header")
    return table


def parse_qps_csv(file: ResultFile, runs: list[str], *, bundle: str) -> QpsTable:
    table = QpsTable(path=file.path, runs=runs)
    text = "\n".join(_lines(file, _where(bundle, file.path)))
    for number, cells in enumerate(csv.reader(io.StringIO(text)), start=1):
        if not cells or not "".join(cells).strip():
            continue
        where = _where(bundle, file.path, number)
        if len(cells) != len(runs) + 1:
            raise ParseError(f"{where}: {len(cells) - 1} values for the {len(runs)} runs its tables name")
        key = _label(cells[0], where)
        for run, cell in zip(runs, cells[1:], strict=True):
            _store(table, run, key, cell, where)
    if not any(table.qps.values()):
        raise ParseError(f"{_where(bundle, file.path)}: no QPS rows")
    return table


def parse_oqps(file: ResultFile, *, bundle: str) -> QpsTable:
    """The December 2020 ``o.qps.abs.<name>``: a block per sb.r.qps file, a line per run (one QPS per
    concurrency, the run last). Its columns' concurrencies are given later (``_oqps_dops``)."""
    lines = _lines(file, _where(bundle, file.path))
    table = QpsTable(path=file.path, runs=[])
    key: tuple[str, int] | None = None
    for number, line in enumerate(lines, start=1):
        where = _where(bundle, file.path, number)
        cells = line.split("\t")
        if not line.strip():
            key = None
        elif len(cells) == 1:
            match = _OQPS_FILE_RE.match(line.strip())
            if not match:
                check_name(line.strip(), where, "the sb.r.qps file name")
                raise ParseError(
                    f"{where}: expected an sb.r.qps file name (<test>.range<R>.pk<P>), found {line[:60]!r}"
                )
            key = (match["test"], int(match["range"]))
        elif key is None:
            raise ParseError(f"{where}: QPS before the name of the sb.r.qps file they come from")
        else:
            run = _run_name(cells[-1].strip(), where)
            if run not in table.runs:
                table.runs.append(run)
            for column, cell in enumerate(cells[:-1]):
                _store(table, run, (f"{key[0]}\t{column}", key[1]), cell, where)
    if not any(table.qps.values()):
        raise ParseError(f"{_where(bundle, file.path)}: no sb.r.qps blocks")
    return table


@dataclass
class MetBlock:
    file_name: str  # the sb.met (or sb.prepare.met) file the block summarises
    metrics: dict[str, dict[str, float]]  # run → metric field → value


def _met_header(lines: list[str], number: int, line: str, bundle: str, path: str) -> list[str]:
    if number >= len(lines) or lines[number].strip() != "--- absolute":
        raise ParseError(f"{_where(bundle, path, number + 1)}: expected '--- absolute' under {line[:60]!r}")
    if number + 1 >= len(lines):
        raise ParseError(f"{_where(bundle, path, number + 2)}: the block ends before its header")
    header = lines[number + 1].split()
    if not header or header[-1] != "dbms":
        raise ParseError(f"{_where(bundle, path, number + 2)}: expected a header of metrics ending in 'dbms'")
    return header


def _met_row(cells: list[str], header: list[str], where: str) -> tuple[str, dict[str, float]]:
    if len(cells) != len(header):
        raise ParseError(f"{where}: {len(cells)} values for the {len(header)} columns of the header")
    run = _run_name(cells[-1], where)
    row: dict[str, float] = {}
    for name, cell in zip(header[:-1], cells[:-1], strict=True):
        key = sysbench.MET_FIELDS.get(name)
        value = _value(cell, where, f"{name} of {run}")
        if key is not None and value is not None:
            row[key] = value
    return run, row


def parse_met_table(file: ResultFile, *, bundle: str) -> list[MetBlock]:
    """The absolute part of each block of an ``o.met`` file; the relative rows are derived, so not read."""
    lines = _lines(file, _where(bundle, file.path))
    blocks: list[MetBlock] = []
    number = 0
    while number < len(lines):
        line = lines[number].strip()
        number += 1
        if not line:
            continue
        where = _where(bundle, file.path, number)
        if not line.startswith(("sb.met.", "sb.prepare.met.")):
            check_name(line, where, "the sb.met file name")
            raise ParseError(f"{where}: expected the name of an sb.met file to start a block, found {line[:60]!r}")
        check_name(line, where, "the sb.met file name")
        block = MetBlock(file_name=line, metrics={})
        header = _met_header(lines, number, line, bundle, file.path)
        number += 2
        while number < len(lines) and lines[number].strip() and not lines[number].startswith("---"):
            run, row = _met_row(lines[number].split(), header, _where(bundle, file.path, number + 1))
            block.metrics[run] = row
            number += 1
        # The relative rows, up to the blank line that ends the block.
        while number < len(lines) and lines[number].strip():
            number += 1
        blocks.append(block)
    if not blocks:
        raise ParseError(f"{_where(bundle, file.path)}: no sb.met blocks")
    return blocks


def _stem(path: str) -> tuple[str, str, str] | None:
    """(folder, kind, name) of a summary file: kind is tsv, csv, met, oqps or rel."""
    folder, _, base = path.rpartition("/")
    for kind, pattern in (
        ("tsv", QPS_TSV_RE),
        ("csv", QPS_CSV_RE),
        ("met", MET_RE),
        ("met", MET_TXT_RE),
        ("oqps", OQPS_RE),
        ("rel", REL_RE),
    ):
        match = pattern.match(base)
        if match:
            return folder, kind, match["name"] or ""
    return None


@dataclass
class _Folder:
    """The summary files of one folder, by kind and table name."""

    tsv: dict[str, ResultFile] = field(default_factory=dict)
    csv: dict[str, ResultFile] = field(default_factory=dict)
    met: dict[str, ResultFile] = field(default_factory=dict)
    oqps: dict[str, ResultFile] = field(default_factory=dict)
    rel: dict[str, ResultFile] = field(default_factory=dict)


@dataclass
class _Report:
    """What the parse read of each file, what it did not and why, and its warnings."""

    warnings: list[str] = field(default_factory=list)
    read: list[tuple[str, str]] = field(default_factory=list)
    not_read: list[tuple[str, str]] = field(default_factory=list)


def _folders(files: Sequence[ResultFile]) -> dict[str, _Folder]:
    by_folder: dict[str, _Folder] = {}
    for file in files:
        stem = _stem(file.path)
        if stem is not None:
            folder, kind, name = stem
            # The relative tables are listed one by one (the tsv and the csv of one table share its name).
            key = file.path.rpartition("/")[2] if kind == "rel" else name
            getattr(by_folder.setdefault(folder, _Folder()), kind)[key] = file
    return by_folder


def _met_blocks(folder: _Folder, bundle: str, report: _Report) -> dict[str, list[MetBlock]]:
    blocks: dict[str, list[MetBlock]] = {}
    for name, file in sorted(folder.met.items()):
        try:
            blocks[name] = parse_met_table(file, bundle=bundle)
        except ParseError as exc:
            if name and MET_RE.match(file.path.rpartition("/")[2]):
                raise
            # A bare ``o.met`` or a ``met.<name>.txt`` is a common name: one that is not the scripts' table is
            # listed with why, not refused (``o.met.<name>`` is the scripts' own: a damaged one is refused).
            report.not_read.append((file.path, NOT_A_MET_TABLE.format(error=exc)))
    return blocks


def _tables(folder: _Folder, met_blocks: dict[str, list[MetBlock]], bundle: str, report: _Report) -> list[QpsTable]:
    tables: list[QpsTable] = []
    for name, file in sorted(folder.tsv.items()):
        tables.append(parse_qps_tsv(file, bundle=bundle))
        if name in folder.csv:
            # The same table twice: the csv is checked against the tsv, which names the runs.
            csv = parse_qps_csv(folder.csv[name], tables[-1].runs, bundle=bundle)
            if csv.qps != tables[-1].qps:
                raise ParseError(f"{_where(bundle, csv.path)}: its QPS differ from {file.path}'s")
            report.read.append((csv.path, READ_CSV_TWIN.format(tsv=file.path)))
    for name, file in sorted(folder.csv.items()):
        if name in folder.tsv:
            continue
        blocks = met_blocks.get(name) or next(iter(met_blocks.values()), None)
        if not blocks:
            raise ParseError(
                f"{_where(bundle, file.path, 1)}: a csv table does not name its runs; put its "
                f"qps.abs.{name}.tsv or an o.met file beside it"
            )
        tables.append(parse_qps_csv(file, list(blocks[0].metrics), bundle=bundle))
    tables.extend(parse_oqps(file, bundle=bundle) for _, file in sorted(folder.oqps.items()))
    return tables


def parse_files(files: Sequence[ResultFile], *, bundle: str, required: bool) -> SuiteParse:
    """A bundle's summary tables → one run per column of each QPS table, with the HW metrics of its o.met."""
    runs: list[SuiteRun] = []
    report = _Report()
    for _, folder in sorted(_folders(files).items()):
        met_blocks = _met_blocks(folder, bundle, report)
        tables = _tables(folder, met_blocks, bundle, report)
        for _, file in sorted(folder.rel.items()):
            report.not_read.append((file.path, DERIVED_TABLE))
        used_mets: set[str] = set()
        for table in tables:
            table_name = _stem(table.path)
            name = table_name[2] if table_name else ""
            met_name = name if name in met_blocks else (next(iter(met_blocks)) if len(met_blocks) == 1 else None)
            blocks = met_blocks.get(met_name, []) if met_name is not None else []
            if met_name is not None:
                used_mets.add(met_name)
            found = _runs_of(table, blocks, bundle=bundle, report=report)
            runs.extend(found)
            if met_name is not None:
                _report_met(folder.met[met_name].path, blocks, found, report)
        for name in sorted(set(folder.met) - used_mets):
            if name in met_blocks:
                report.not_read.append((folder.met[name].path, MET_WITHOUT_QPS))
                report.warnings.append(
                    f"{bundle}:{folder.met[name].path}: HW metrics without a qps.abs table beside them; not read"
                )
    if required and not runs:
        raise ParseError(f"{bundle}: no summary tables (qps.abs.<name>.tsv or .csv, or o.qps.abs.<name>)")
    return SuiteParse(runs=runs, warnings=report.warnings, not_read=report.not_read, read=sorted(report.read))


def _report_met(path: str, blocks: list[MetBlock], runs: list[SuiteRun], report: _Report) -> None:
    if any(p == path for p, _ in report.read):
        return
    extras = [row.get("extra", {}) for run in runs for row in run.results]
    beside = {extra["block"] for extra in extras if "block" in extra and "qps_from" not in extra}
    kept = {extra["block"] for extra in extras if "qps_from" in extra}
    unread = len(blocks) - len(beside | kept)
    text = f"HW metrics: {len(blocks)} blocks, {len(beside)} of the QPS table's results"
    if kept:
        text += f", {len(kept)} of tests or concurrencies the table lacks (kept as results, QPS from their o/s)"
    if unread:
        text += f", {unread} not imported (see the warnings)"
    report.read.append((path, text))


# Where a summary run's concurrency, server and workload came from, as its page says it.
FROM_MET_NAMES = "from the o.met blocks' sb.met file names"
FROM_MET_QPS = "from the o.met blocks whose o/s is the table's QPS (their sb.met file names)"
FROM_TABLE_NAME = "from the table's file name ({word})"
FROM_DOP_FOLDER = "from the folder it sits in ({word})"
FROM_SERVER_FOLDER = "from the folder above its {word} folder ({server})"
NOT_SAID = "not said by the tables: taken as 1"
NO_WORKLOAD = "not said: a summary table never says its workload"


def dop_from_path(path: str) -> tuple[int, str] | None:
    """The concurrency a table's path says, and where: a ``dop<N>`` word of its name (``qps.abs.pgo.dop40.prep0
    .tsv``), else a ``dop<N>`` folder it sits in (``dell32/dop1/qps.abs.fbin.tsv``)."""
    *folders, base = [part for part in path.split("/") if part]
    for word in base.split("."):
        if match := _DOP_RE.match(word):
            return int(match["dop"]), FROM_TABLE_NAME.format(word=word)
    for folder in reversed(folders):
        if match := _DOP_RE.match(folder):
            return int(match["dop"]), FROM_DOP_FOLDER.format(word=folder)
    return None


def server_from_path(path: str) -> tuple[str, str] | None:
    """The server the scripts' ``<server>/dop<N>/`` layout names, and where it was read; None for any other
    layout, whose folders (an archive's own name, say) are not a server's."""
    folders = [part for part in path.split("/") if part][:-1]
    for at in range(len(folders) - 1, 0, -1):
        if _DOP_RE.match(folders[at]):
            return folders[at - 1], FROM_SERVER_FOLDER.format(word=folders[at], server=folders[at - 1])
    return None


def table_variant(path: str) -> str:
    """What tells a table apart from the others of its archive, its concurrency aside: the words of its name
    after ``qps.abs.`` (``pgo.prep1`` of ``qps.abs.pgo.dop10.prep1.tsv``), ``dop<N>`` words left out (the
    concurrency is said on its own). Runs of two tables with the same variant differ by concurrency."""
    stem = _stem(path)
    words = (stem[2] if stem else "").split(".") if stem and stem[2] else []
    return ".".join(word for word in words if word and not _DOP_RE.match(word))


@dataclass
class _MetRow:
    """One o.met block's row of one run, read as a result: which test, range and concurrency it is of."""

    test: str
    range_size: int
    dop: int | None  # None: the load, whose block names no concurrency
    block: str
    metrics: dict[str, dict[str, float]]


def _met_rows(blocks: list[MetBlock]) -> tuple[list[_MetRow], list[str]]:
    rows: list[_MetRow] = []
    unmatched: list[str] = []
    for block in blocks:
        if block.file_name.startswith("sb.prepare.met."):
            name = sysbench.parse_file_name(block.file_name)
            if name is not None:
                rows.append(_MetRow(sysbench.LOAD_TEST, name.range_size, None, block.file_name, block.metrics))
                continue
        name = sysbench.parse_file_name(block.file_name) if block.file_name.startswith("sb.met.") else None
        if name is None:
            unmatched.append(block.file_name)
            continue
        rows.append(_MetRow(name.test, name.range_size, name.dop or 1, block.file_name, block.metrics))
    return rows, unmatched


def _qps_matches(row: _MetRow, table: QpsTable) -> bool:
    """A block whose o/s is the table's QPS of that test for every run (as printed, %.0f): the table's own."""
    found = False
    for run, values in row.metrics.items():
        qps = table.first_qps(run, row.test, row.range_size)
        o_s = values.get("o_s")
        if qps is None or o_s is None:
            continue
        if round(qps) != round(o_s):
            return False
        found = True
    return found


def _table_dop(table: QpsTable, met_rows: list[_MetRow], where: str, warnings: list[str]) -> tuple[int, str, list[str]]:
    """The table's concurrency, where it was read, and the warnings of a table that does not say it."""
    labels = table.labels
    matching = Counter(
        row.dop
        for row in met_rows
        if row.dop is not None and (row.test, row.range_size) in labels and _qps_matches(row, table)
    )
    named = dop_from_path(table.path)
    if matching:
        dop = matching.most_common(1)[0][0]
        if named is not None and named[0] != dop:
            warnings.append(
                f"{where}: concurrency {named[0]} {named[1]}, but {dop} {FROM_MET_QPS}; imported at {dop}, "
                "as the sb.met files say"
            )
        return dop, FROM_MET_QPS, []
    if named is not None:
        return named[0], named[1], []
    named_in_mets = Counter(row.dop for row in met_rows if row.dop is not None and (row.test, row.range_size) in labels)
    if named_in_mets:
        return named_in_mets.most_common(1)[0][0], FROM_MET_NAMES, []
    return (
        1,
        NOT_SAID,
        [
            f"{where}: the table does not say its concurrency (no o.met beside it, no dop<N> in its name or "
            "folder); taken as 1 (set concurrency in benchdash.toml)"
        ],
    )


def _oqps_dops(table: QpsTable, dop: int, where: str, warnings: list[str]) -> None:
    """A Dec 2020 table's columns are its runs' concurrencies in run order, which it does not name: one column
    is the table's concurrency; several are taken as 1, 2, … and said."""
    columns = sorted({int(test.rpartition("\t")[2]) for row in table.qps.values() for test, _ in row})
    if len(columns) > 1:
        warnings.append(
            f"{where}: {len(columns)} columns of QPS, one per concurrency, which the table does not name; "
            f"taken as {', '.join(str(c + 1) for c in columns)} (the scripts' order of that time)"
        )
    for run in list(table.qps):
        for source in (table.qps, table.decimals):
            row = source.get(run, {})
            moved = {}
            for (test, range_size), value in row.items():
                bare, _, column = test.rpartition("\t")
                column_dop = dop if len(columns) == 1 else int(column) + 1
                moved[(bare, range_size, column_dop)] = value
            source[run] = moved  # type: ignore[assignment]


def _runs_of(table: QpsTable, blocks: list[MetBlock], *, bundle: str, report: _Report) -> list[SuiteRun]:
    met_rows, unmatched = _met_rows(blocks)
    where = f"{bundle}:{table.path}"
    dop, dop_source, dop_warnings = _table_dop(table, met_rows, where, report.warnings)
    oqps = OQPS_RE.match(table.path.rpartition("/")[2]) is not None
    if oqps:
        _oqps_dops(table, dop, where, report.warnings)
    server = server_from_path(table.path)
    sources = {"concurrency": dop_source, "server": server[1] if server else "", "workload": NO_WORKLOAD}
    if unmatched:
        shown = ", ".join(unmatched[:5]) + (f" and {len(unmatched) - 5} more" if len(unmatched) > 5 else "")
        report.warnings.append(f"{where}: o.met blocks not of an sb.met file, not imported: {shown}")
    variant = table_variant(table.path)
    runs = []
    tests: set[tuple[str, int]] = set()
    for run in table.runs:
        results = _results(table, run, dop, met_rows, oqps=oqps)
        if not results:
            report.warnings.append(f"{where}: {run} has no QPS in the table; no run imported for it")
            continue
        tests |= {(row["test"], row["range_size"]) for row in results if "qps_from" not in row.get("extra", {})}
        met_order = [row.block for row in met_rows if run in row.metrics]
        runs.append(_suite_run(table, run, results, variant, server, sources, dop_warnings, met_order))
    dops = sorted({row["dop"] for run in runs for row in run.results if "qps_from" not in row.get("extra", {})})
    text = (READ_OQPS if oqps else READ_QPS).format(
        runs=len(runs), tests=len(tests), dops=", ".join(map(str, dops)), dop=dop
    )
    report.read.append((table.path, text))
    return runs


def _results(table: QpsTable, run: str, dop: int, met_rows: list[_MetRow], *, oqps: bool) -> list[dict[str, Any]]:
    """The run's results: one per QPS cell (with the HW metrics of its o.met block), then one per o.met block
    of a test the table lacks (``.pre`` tests, the load, another concurrency), its QPS the block's o/s."""
    results: dict[tuple[str, int, int], dict[str, Any]] = {}
    for key, qps in sorted(table.qps.get(run, {}).items()):
        test, range_size = key[0], key[1]
        row_dop = key[2] if oqps else dop  # type: ignore[misc]
        row: dict[str, Any] = {"test": test, "range_size": range_size, "dop": row_dop, "qps": qps}
        results[(test, range_size, row_dop)] = row
    for met in met_rows:
        values = met.metrics.get(run)
        if values is None:
            continue
        row_dop = dop if met.dop is None else met.dop
        found = results.get((met.test, met.range_size, row_dop))
        if found is not None:
            found.update(values)
            found.setdefault("extra", {})["block"] = met.block
            continue
        if values.get("o_s") is None or (row_dop == dop and (met.test, met.range_size) in table.labels):
            continue  # a cell the table leaves empty stays missing
        extra: dict[str, Any] = {"qps_from": "o.met o/s", "block": met.block}
        if met.dop is None:
            extra["prepared_for"] = sysbench.parse_file_name(met.block).test  # type: ignore[union-attr]
        results[(met.test, met.range_size, row_dop)] = {
            "test": met.test,
            "range_size": met.range_size,
            "dop": row_dop,
            "qps": values["o_s"],
            **values,
            "extra": extra,
        }
    return list(results.values())


def _suite_run(
    table: QpsTable,
    run: str,
    results: list[dict[str, Any]],
    variant: str,
    server: tuple[str, str] | None,
    sources: dict[str, str],
    dop_warnings: list[str],
    met_order: list[str],
) -> SuiteRun:
    parts = parse_run_dir(run)
    measured = [{k: v for k, v in row.items() if k != "extra"} for row in results]
    identity = json.dumps(["sysbench summary", run, measured], sort_keys=True).encode()
    return SuiteRun(
        name=run,
        source=table.path,
        content_sha256=hashlib.sha256(identity).hexdigest(),
        dbms=parts.dbms,
        version=parts.version,
        build=parts.build,
        flavour=parts.flavour,
        config=parts.config,
        workload=UNKNOWN_WORKLOAD,
        workload_params={},
        results=results,
        server=server[0] if server else None,
        name_warnings=[f"{run}: {w}" for w in parts.warnings],
        dop_warnings=list(dop_warnings),
        sources=dict(sources),
        table=variant,
        layout={
            "decimals": {
                sysbench.test_label(key[0], key[1]): places
                for key, places in table.decimals.get(run, {}).items()
                if places
            },
            "pre_rows": any(key[0].endswith(".pre") for key in table.qps.get(run, {})),
            "met_order": met_order,
        },
    )
