"""The dbbench suite as the registry knows it: which files of a bundle are its results, and their runs."""

from __future__ import annotations

import re
from collections.abc import Sequence

from suites import names
from suites.base import STARTED_CONTENT, ResultFile, Suite, SuiteParse, SuiteRun
from suites.dbbench import layout, parse
from suites.dbbench.groups import DBBENCH

# A merged summary (sum.byrx.txt, sum2.byrx.clang.txt, sum.byrx.txt.sdev, summary.tsv). The author's tables next to
# them (sum.abs0.byrx.tsv, *.csv) are outputs, not results.
SUMMARY_RE = re.compile(r"sum[^/]*\.txt(?:\.sdev)?|summary\.tsv")

# Why a db_bench file of a bundle was not read, as the bundle page and the import output say it.
SDEV_COPY = "the same rows as its .sdev copy, which was read instead (it adds the repeats' mean and stddev)"
NO_HEADER = "named like a db_bench summary, but no db_bench header (a line starting ops_sec)"


def recognise(parts: Sequence[str]) -> bool:
    """A db_bench result: ``report.tsv`` in a ``bm.*/<build>/`` folder, or a merged summary anywhere."""
    if not parts:
        return False
    if parts[-1] == parse.REPORT_NAME:
        return len(parts) >= 3 and parts[-3].startswith("bm.")
    return SUMMARY_RE.fullmatch(parts[-1]) is not None


def parse_files(files: Sequence[ResultFile], *, bundle: str, required: bool) -> SuiteParse:
    """The bundle's db_bench files → runs. A file named like a summary but without a db_bench header is someone's
    notes: it is skipped with a warning, unless it is all the bundle has (``required``)."""
    paths = {file.path for file in files}
    found_runs: list[tuple[parse.DbBenchRun, str]] = []
    warnings: list[str] = []
    not_read: list[tuple[str, str]] = []
    read: list[tuple[str, str]] = []
    for file in files:
        if file.path + ".sdev" in paths:
            not_read.append((file.path, SDEV_COPY))
            continue
        try:
            found, file_warnings = parse.parse_result_file(file.read(), path=file.path, name=f"{bundle}:{file.path}")
        except parse.NotDbBench as exc:
            not_read.append((file.path, NO_HEADER))
            warnings.append(f"{exc}; not read")
            continue
        warnings.extend(file_warnings)
        found_runs.extend((run, f"{bundle}:{file.path}") for run in found)
        tests = {row.test for run in found for row in run.rows}
        read.append((file.path, f"db_bench results: {len(found)} builds × {len(tests)} tests (ops_sec and the rest)"))
    warnings = _name_twins([run for run, _ in found_runs], warnings)
    runs = [_suite_run(run, where) for run, where in found_runs]
    if required and not runs:
        names = ", ".join(sorted(paths)[:5])
        raise parse.ParseError(f"{bundle}: no db_bench results (a header line starting ops_sec) in {names}")
    return SuiteParse(runs=runs, warnings=warnings, not_read=not_read, read=read)


def _name_twins(runs: list[parse.DbBenchRun], warnings: list[str]) -> list[str]:
    """Builds of one version that one file lists twice are told apart as ``<name>#1``, ``#2``; when another file
    of the bundle holds the same results under a name that says what differs (``sum.byrx.lru.txt``,
    ``sum.byrx.hcc.txt``: the block cache), they take that name (``10.2.1.lru``), so ``--base 10.2.1.lru`` finds
    them. The warning about the numbered builds then says which is which instead."""
    said = {run.content_sha256: run for run in runs if "#" not in run.name and run.flavour}
    renamed: dict[str, list[str]] = {}
    for run in runs:
        twin = said.get(run.content_sha256) if "#" in run.name else None
        if twin is None:
            continue
        base = run.name.partition("#")[0]
        renamed.setdefault(base, []).append(f"{run.name} is {twin.name} of {twin.source}")
        run.name, run.build, run.flavour = twin.name, twin.build, twin.flavour
    if not renamed:
        return warnings
    kept = [w for w in warnings if not any(f": {base} appears " in w for base in renamed)]
    return kept + [
        f"{base} appears more than once in one file; named by the files that say what differs: {'; '.join(which)}"
        for base, which in sorted(renamed.items())
    ]


def _suite_run(run: parse.DbBenchRun, where: str) -> SuiteRun:
    return SuiteRun(
        name=run.name,
        source=run.source,
        content_sha256=run.content_sha256,
        dbms=parse.DBMS,
        version=run.version,
        build=run.build,
        flavour=run.flavour,
        config=run.config,
        workload=run.workload_name,
        workload_params=run.workload_params,
        results=run.result_rows(),
        started_at=run.started_at,
        started_from=STARTED_CONTENT,  # report.tsv's date column
        server=parse.server_from_path(run.source),
        workload_warnings=(
            [f"{where}: the path names no workload (byrx, iobuf, iodir); using {run.workload_name!r}"]
            if run.workload is None
            else []
        ),
    )


# The report.tsv columns shown beside ops_sec on the drill-down.
EXTRA_METRICS = ("w_amp", "usec_op", "p99", "p99.9", "stall%", "u_cpu", "s_cpu", "rss", "c_wgb", "mb_sec")

SUITE = Suite(
    name=names.DBBENCH,
    label="RocksDB db_bench",
    parse_error=parse.ParseError,
    is_warmup=parse.is_warmup,
    group_sets=(DBBENCH,),
    recognise=recognise,
    files_hint="RocksDB db_bench results (report.tsv in res.<workload>/bm.<...>/<build>/, or sum*.txt summaries)",
    parse_files=parse_files,
    is_excluded=parse.is_excluded,
    reference_layout="sum",
    export_table=layout.sum_table,
    extra_metrics=EXTRA_METRICS,
)
