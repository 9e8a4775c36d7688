"""The ibench suite as the registry knows it: which files of a bundle are its results, and their runs."""

from __future__ import annotations

from collections.abc import Sequence

from suites.base import ResultFile, Suite, SuiteParse, SuiteRun
from suites.ibench import parse, sla
from suites.ibench.groups import IBENCH
from suites.naming import parse_build


def _no_warmups(test: str) -> bool:
    return False  # every step is measured; none is run only to warm the server up


def label_order(label: str) -> tuple[int, str] | None:
    """Steps keep the order they run in: l.i0, l.x, l.i1, l.i2, qr100, qp100, …"""
    if not parse.is_step(label):
        return None
    return (-1, "{:02d}{:08d}{:02d}{:04d}".format(*parse.step_sort_key(label)[:4]))


def recognise(parts: Sequence[str]) -> bool:
    """An ``o.sum.[tc].*`` summary, an ``mrg.<step>`` table, or an o.res / o.ib file in a step directory. The
    author's relative tables (``rel.<step>``) are outputs and are not read."""
    return parse.file_kind(parts) is not None


def parse_files(files: Sequence[ResultFile], *, bundle: str, required: bool) -> SuiteParse:
    """The bundle's Insert Benchmark files → runs. The files of one run may be spread over the bundle (summaries,
    merged tables, step directories): they are read together, so each run is assembled once."""
    # The files themselves, not their bytes: the parser decodes each when it reads it, so they are never all in
    # memory at once.
    found = parse.read_bundle_files((f.path, f, f.mtime) for f in files)  # type: ignore[misc]
    runs = [_suite_run(run) for run in found.runs_found]
    if required and not runs:
        names = ", ".join(sorted(f.path for f in files)[:5])
        raise parse.ParseError(f"{bundle}: no Insert Benchmark results (an ips … tag header) in {names}")
    return SuiteParse(runs=runs, warnings=found.warnings, not_read=found.not_read, read=found.read)


def _suite_run(run: parse.IbenchRun) -> SuiteRun:
    results = run.result_rows()  # before the warnings: missing throughputs are reported there
    dbms, version, flavour, build_warnings = parse_build(run.build)
    return SuiteRun(
        name=run.name,
        source=run.sources[0],
        content_sha256=run.content_sha256,
        dbms=dbms,
        version=version,
        build=run.build,
        flavour=flavour,
        config=run.tag.config,
        workload=run.workload_name,
        workload_params=run.workload_params,
        results=results,
        started_at=run.started_at,
        server=parse.server_from_path(run.sources[0]),
        warnings=list(run.warnings),
        name_warnings=[f"{run.name}: {w}" for w in build_warnings],
    )


SUITE = Suite(
    name="ibench",
    label="Insert Benchmark",
    parse_error=parse.ParseError,
    is_warmup=_no_warmups,
    group_sets=(IBENCH,),
    recognise=recognise,
    files_hint=(
        "Insert Benchmark results (o.sum.t.* step summaries, mrg.<step> tables, "
        "or <rows>.<build>.<config>/<step>/o.res.dop<N>)"
    ),
    parse_files=parse_files,
    is_excluded=parse.is_excluded,
    label_order=label_order,
    reference_layout="steps",
    checks_sla=True,
    no_signal=sla.no_signal,
    # The summary columns shown beside the throughput on the drill-down.
    extra_metrics=("p99", "rss"),
    # Its p99 is a rate (higher is better), where db_bench's is a latency.
    metric_labels=(("p99", "p99 rate"),),
)
