"""The summary tables the author's sysbench scripts print, read back into runs.

Much of the field's history survives only as these tables, beside (or instead
of) the run directories they were made from:

- ``qps.abs.<name>.tsv``: ``col-<n> : <run directory name>`` lines, a blank
  line, a ``col-1<TAB>col-2…`` header, then one row per microbenchmark: one QPS
  per run, tab separated, and the test label last (``point-query_range=100``).
- ``qps.abs.<name>.csv``: the same rows with the label first, comma separated
  and without the run names, which come from the table's ``.tsv`` or, failing
  that, from the ``o.met`` beside it.
- ``o.met.<name>``: per ``sb.met`` file of the runs, a block: the file's name,
  ``--- absolute``, a header of metric names ending in ``dbms``, one row per
  run (its metrics, then its name), ``--- relative to first result`` and the
  ratios, which are derived and not read.

Every column of a QPS table becomes one sysbench run with a result per row. The
tables themselves carry no concurrency, server or workload; what says them:

- the concurrency: the ``o.met`` blocks' file names (``sb.met.<test>…dop<N>``),
  else a ``dop<N>`` word of the table's name (``qps.abs.pgo.dop40.prep0.tsv``),
  else a ``dop<N>`` folder it sits in (the scripts' ``<server>/dop<N>/``); else
  the bundle's manifest (``concurrency``), else 1, said;
- the server: the folder above such a ``dop<N>`` folder, else the manifest;
- the workload: only the manifest (or the run directories beside the tables).

Each run keeps where they came from (``SuiteRun.sources``), for its page.
"""

from __future__ import annotations

import hashlib
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
MET_RE = re.compile(r"^o\.met\.(?P<name>.+)$")
_COLUMN_RE = re.compile(r"^col-(?P<n>\d+) : (?P<run>\S+)\s*$")
_LABEL_RE = re.compile(r"^(?P<test>\S+)_range=(?P<range>\d+)$")
_DOP_RE = re.compile(r"^dop(?P<dop>[1-9]\d{0,5})$")

# Why an o.met table was not read, as the bundle page and the import output say it.
MET_WITHOUT_QPS = "HW metrics without a qps.abs table beside them (the runs' QPS)"

# What a workload is called when nothing says its parameters (as for a run directory without command lines), so
# a manifest's ``workload`` puts summary runs and raw runs in one series.
UNKNOWN_WORKLOAD = "sysbench (parameters unknown)"
# A missing cell: the scripts print NA where a run lacks the test.
_MISSING = ("NA", "", "-")


def recognise(parts: Sequence[str]) -> bool:
    base = parts[-1] if parts else ""
    return bool(QPS_TSV_RE.match(base) or QPS_CSV_RE.match(base) or MET_RE.match(base))


def is_warmup(test: str) -> bool:
    return sysbench.is_warmup(test)


@dataclass
class QpsTable:
    """One QPS table: its runs in column order and, per run, QPS by (test, range)."""

    path: str
    runs: list[str]
    qps: dict[str, dict[tuple[str, int], float]] = field(default_factory=dict)


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


def _label(text: str, where: str) -> tuple[str, int]:
    match = _LABEL_RE.match(text)
    if not match:
        raise ParseError(f"{where}: {text[:60]!r} is not a test label (<test>_range=<R>, e.g. point-query_range=100)")
    return match["test"], int(match["range"])


def _run_name(text: str, where: str) -> str:
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


def _store(table: QpsTable, run: str, key: tuple[str, int], value: float | None, where: str) -> None:
    row = table.qps.setdefault(run, {})
    if key in row:
        raise ParseError(f"{where}: {sysbench.test_label(*key)} appears twice in this table")
    if value is not None:
        row[key] = value


def parse_qps_tsv(file: ResultFile, *, bundle: str) -> QpsTable:
    lines = _lines(file, _where(bundle, file.path))
    runs: list[str] = []
    header_at = None
    for number, line in enumerate(lines, start=1):
        if line.startswith("col-1\t") or line.strip() == "col-1":
            header_at = number
            break
        match = _COLUMN_RE.match(line)
        if match:
            if int(match["n"]) != len(runs) + 1:
                raise ParseError(
                    f"{_where(bundle, file.path, number)}: col-{match['n']} where col-{len(runs) + 1} was due"
                )
            runs.append(_run_name(match["run"], _where(bundle, file.path, number)))
        elif line.strip():
            raise ParseError(
                f"{_where(bundle, file.path, number)}: expected 'col-<n> : <run directory name>', found {line[:60]!r}"
            )
    if header_at is None or not runs:
        raise ParseError(f"{_where(bundle, file.path)}: no 'col-<n> : <run>' lines and 'col-1…' header line")
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
            _store(table, run, key, _value(cell, where, f"the QPS of {run}"), where)
    if not any(table.qps.values()):
        raise ParseError(f"{_where(bundle, file.path)}: no QPS rows under the header")
    return table


def parse_qps_csv(file: ResultFile, runs: list[str], *, bundle: str) -> QpsTable:
    table = QpsTable(path=file.path, runs=runs)
    for number, line in enumerate(_lines(file, _where(bundle, file.path)), start=1):
        if not line.strip():
            continue
        where = _where(bundle, file.path, number)
        cells = line.split(",")
        if len(cells) != len(runs) + 1:
            raise ParseError(f"{where}: {len(cells) - 1} values for the {len(runs)} runs its tables name")
        key = _label(cells[0], where)
        for run, cell in zip(runs, cells[1:], strict=True):
            _store(table, run, key, _value(cell, where, f"the QPS of {run}"), where)
    if not any(table.qps.values()):
        raise ParseError(f"{_where(bundle, file.path)}: no QPS rows")
    return table


@dataclass
class MetBlock:
    file_name: str  # the sb.met (or sb.prepare.met) file the block summarises
    metrics: dict[str, dict[str, float]]  # run → metric field → value


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
            raise ParseError(f"{where}: expected the name of an sb.met file to start a block, found {line[:60]!r}")
        block = MetBlock(file_name=line, metrics={})
        if number >= len(lines) or lines[number].strip() != "--- absolute":
            raise ParseError(f"{_where(bundle, file.path, number + 1)}: expected '--- absolute' under {line[:60]!r}")
        if number + 1 >= len(lines):
            raise ParseError(f"{_where(bundle, file.path, number + 2)}: the block ends before its header")
        header = lines[number + 1].split()
        if not header or header[-1] != "dbms":
            raise ParseError(f"{_where(bundle, file.path, number + 2)}: expected a header of metrics ending in 'dbms'")
        number += 2
        while number < len(lines) and lines[number].strip() and not lines[number].startswith("---"):
            where = _where(bundle, file.path, number + 1)
            cells = lines[number].split()
            if len(cells) != len(header):
                raise ParseError(f"{where}: {len(cells)} values for the {len(header)} columns of the header")
            run = _run_name(cells[-1], where)
            row: dict[str, float] = {}
            for name, cell in zip(header[:-1], cells[:-1], strict=True):
                key = sysbench.MET_FIELDS.get(name)
                value = _value(cell, where, f"{name} of {run}")
                if key is not None and value is not None:
                    row[key] = value
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
    """(folder, kind, name) of a summary file: kind is tsv, csv or met."""
    folder, _, base = path.rpartition("/")
    for kind, pattern in (("tsv", QPS_TSV_RE), ("csv", QPS_CSV_RE), ("met", MET_RE)):
        match = pattern.match(base)
        if match:
            return folder, kind, match["name"]
    return None


def parse_files(files: Sequence[ResultFile], *, bundle: str, required: bool) -> SuiteParse:
    """A bundle's summary tables → one run per column of each QPS table, with the HW metrics of its o.met."""
    by_folder: dict[str, dict[str, dict[str, ResultFile]]] = {}
    for file in files:
        stem = _stem(file.path)
        if stem is not None:
            folder, kind, name = stem
            by_folder.setdefault(folder, {}).setdefault(kind, {})[name] = file
    runs: list[SuiteRun] = []
    warnings: list[str] = []
    not_read: list[tuple[str, str]] = []
    for folder in sorted(by_folder):
        kinds = by_folder[folder]
        tsvs, csvs, mets = kinds.get("tsv", {}), kinds.get("csv", {}), kinds.get("met", {})
        met_blocks = {name: parse_met_table(file, bundle=bundle) for name, file in sorted(mets.items())}
        tables: list[QpsTable] = []
        for name, file in sorted(tsvs.items()):
            tables.append(parse_qps_tsv(file, bundle=bundle))
            if name in csvs:
                # The same table twice: the csv is checked against the tsv, which names the runs.
                csv = parse_qps_csv(csvs[name], tables[-1].runs, bundle=bundle)
                if csv.qps != tables[-1].qps:
                    raise ParseError(f"{_where(bundle, csv.path)}: its QPS differ from {file.path}'s")
        for name, file in sorted(csvs.items()):
            if name in tsvs:
                continue
            blocks = met_blocks.get(name) or next(iter(met_blocks.values()), None)
            if not blocks:
                raise ParseError(
                    f"{_where(bundle, file.path, 1)}: a csv table does not name its runs; put its "
                    f"qps.abs.{name}.tsv or an o.met file beside it"
                )
            tables.append(parse_qps_csv(file, list(blocks[0].metrics), bundle=bundle))
        for name in sorted(set(mets) - set(tsvs) - set(csvs)):
            if not tables:
                not_read.append((mets[name].path, MET_WITHOUT_QPS))
                warnings.append(f"{bundle}:{mets[name].path}: HW metrics without a qps.abs table beside them; not read")
        for table in tables:
            table_name = _stem(table.path)
            blocks = met_blocks.get(table_name[2] if table_name else "") or (
                next(iter(met_blocks.values())) if len(met_blocks) == 1 else []
            )
            runs.extend(_runs_of(table, blocks, bundle=bundle, warnings=warnings))
    if required and not runs:
        raise ParseError(f"{bundle}: no summary tables (qps.abs.<name>.tsv or .csv)")
    return SuiteParse(runs=runs, warnings=warnings, not_read=not_read)


# Where a summary run's concurrency, server and workload came from, as its page says it.
FROM_MET_NAMES = "from the o.met blocks' sb.met file names"
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


def _runs_of(table: QpsTable, blocks: list[MetBlock], *, bundle: str, warnings: list[str]) -> list[SuiteRun]:
    metrics: dict[tuple[str, int, int], dict[str, dict[str, float]]] = {}
    unmatched: list[str] = []
    labels = {key for row in table.qps.values() for key in row}
    for block in blocks:
        name = sysbench.parse_file_name(block.file_name) if block.file_name.startswith("sb.met.") else None
        if name is None or (name.test, name.range_size) not in labels:
            unmatched.append(block.file_name)
            continue
        metrics[(name.test, name.range_size, name.dop or 1)] = block.metrics
    dops = Counter(dop for (_, _, dop) in metrics)
    where = f"{bundle}:{table.path}"
    named = dop_from_path(table.path)
    dop_warnings: list[str] = []
    if dops:
        dop, dop_source = dops.most_common(1)[0][0], FROM_MET_NAMES
        if named is not None and named[0] != dop:
            warnings.append(
                f"{where}: concurrency {named[0]} {named[1]}, but {dop} {FROM_MET_NAMES}; imported at {dop}, "
                "as the sb.met files say"
            )
    elif named is not None:
        dop, dop_source = named
    else:
        dop, dop_source = 1, NOT_SAID
        dop_warnings.append(
            f"{where}: the table does not say its concurrency (no o.met beside it, no dop<N> in its name or "
            "folder); taken as 1 (set concurrency in benchdash.toml)"
        )
    server = server_from_path(table.path)
    sources = {
        "concurrency": dop_source,
        "server": server[1] if server else "",
        "workload": NO_WORKLOAD,
    }
    if unmatched:
        shown = ", ".join(unmatched[:5]) + (f" and {len(unmatched) - 5} more" if len(unmatched) > 5 else "")
        warnings.append(f"{where}: HW metrics of tests the QPS table does not have, not imported: {shown}")
    runs = []
    for run in table.runs:
        results: list[dict[str, Any]] = []
        for (test, range_size), qps in sorted(table.qps.get(run, {}).items()):
            row: dict[str, Any] = {"test": test, "range_size": range_size, "dop": dop, "qps": qps}
            row.update(metrics.get((test, range_size, dop), {}).get(run, {}))
            results.append(row)
        if not results:
            warnings.append(f"{where}: {run} has no QPS in the table; no run imported for it")
            continue
        parts = parse_run_dir(run)
        identity = json.dumps(["sysbench summary", run, results], sort_keys=True).encode()
        runs.append(
            SuiteRun(
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
            )
        )
    return runs
