"""Comparisons from the database: runs of one server + workload against a base.

``load_series`` reads the series in a fixed number of queries into plain values;
``build_comparison`` computes from those alone, without the database: it averages
repeated runs of the same build (and measures their spread) and hands plain
dicts to ``reports.stats``. ``get_comparison`` caches the result under a key
that changes whenever a run of the series is added or removed, so a page never
recomputes from raw results while nothing changed.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import math
from collections import Counter, defaultdict
from collections.abc import Callable, Collection, ItemsView, Iterable, Iterator, KeysView, Mapping, Sequence, ValuesView
from dataclasses import asdict, dataclass, field
from functools import cached_property
from itertools import compress
from typing import TYPE_CHECKING, Any, NamedTuple, cast

from django.db import connection
from django.db.models import BooleanField, Case, Count, Max, Q, QuerySet, TextField, When
from django.db.models.expressions import RawSQL
from django.db.models.functions import Cast

import suites
from benchdash import pagecache, sqlonce
from benchdash.http import row_id
from reports import matrix, run_identity, sla, stats
from reports.diff import workload_mismatch
from reports.matrix import HW_METRICS
from reports.models import GroupSetDefinition
from runs import branches
from runs.models import Result, Run
from suites import groups as groupsets
from suites.openformat.parse import carried_group_set
from suites.sysbench import eras
from suites.sysbench import parse as sysbench
from suites.sysbench.layout import REFERENCE_BLOCKS, ls_sort_key, reference_block

if TYPE_CHECKING:
    import numpy as np

# What ``load_series`` reads with the base run (a caller that passes it as ``base`` selects these too).
BASE_RELATED = ("server", "workload", "build__version")
CACHE_SECONDS = 24 * 3600
# Bump when the payload's shape changes, so old cached payloads are never read.
PAYLOAD_VERSION = 10


class ComparisonError(ValueError):
    """A comparison that cannot be made; the message tells the user what to change."""


@dataclass(frozen=True)
class ComparisonSpec:
    base_run_id: int
    run_ids: tuple[int, ...] = ()  # empty: every run of the base's server and workload
    group_set: str = "auto"
    dop: int | None = None  # None: the base run's main concurrency
    red: float = stats.DEFAULT_RED
    green: float = stats.DEFAULT_GREEN
    include_warmups: bool = False
    noise_k: float = 2.0
    # How scan's QPS is read: "spec", every run by the spec's formula, so runs of both eras compare (what
    # regression detection and timelines need); "era", each run by the formula its own scripts used, as the
    # author published it (the comparison page's default, which then warns when the eras are mixed).
    scan_formula: str = "spec"

    def cache_key(self, stamp: str) -> str:
        raw = json.dumps(asdict(self), sort_keys=True) + stamp
        return f"cmp:{PAYLOAD_VERSION}:{hashlib.sha256(raw.encode()).hexdigest()}"


@dataclass
class Column:
    """One build (+ config) of the series; repeated runs of it are averaged."""

    key: str
    run_ids: list[int]
    dbms: str
    version: str
    version_sort: str
    build: str
    flavour: str
    config: str
    started_at: str | None
    # Of a column of a summary table: the table (``in.dop8``) and how it printed the column (Run.summary_layout).
    summary_table: str = ""
    summary_layout: dict[str, Any] = field(default_factory=dict)

    @property
    def repeats(self) -> int:
        return len(self.run_ids)


class Cell(NamedTuple):
    """One (column, microbenchmark) of a comparison: what the column measured and what that says against the
    base, one question per field. A compared column has a cell for every label (a missing one: ``qps`` None,
    flag "missing"); the base's cells are its measured ones, with no relative value or flag of their own."""

    qps: float | None  # the mean of the column's repeats; None: not measured at the comparison's concurrency
    cv: float | None  # the repeats' coefficient of variation; None: one run
    metrics: Mapping[str, float | None] | None  # HW_METRICS, each the mean of the repeats that have it
    relative: float | None = None  # qps / the base's (``stats.relative_qps``); None: either side missing
    flag: str = ""  # red, green, grey or missing, after the noise and the suite's marking ("": the base's)
    noisy: bool = False  # a red or green change the spread of the repeats explains: shown grey, marked ≈

    @property
    def measured(self) -> bool:
        return self.qps is not None

    @property
    def regression(self) -> bool:
        return self.flag == "red"

    @property
    def improvement(self) -> bool:
        return self.flag == "green"


# The per-column maps read from the cells, worked out once per comparison object and never cached with it.
_CELL_VIEWS = ("qps", "cv", "metrics", "relative", "flags", "noisy")
# Cell's fields by position, and a Cell made from a tuple of them without the generated __new__'s per-call cost:
# a comparison makes one per cell.
_QPS, _CV, _METRICS, _RELATIVE, _FLAG, _NOISY = range(6)
_new_cell = tuple.__new__


@dataclass
class Comparison:
    spec: ComparisonSpec
    suite: str  # the workload's suite (sysbench, db_bench, ibench): what suite-specific code branches on
    server: str
    server_id: int
    workload: str
    workload_id: int
    dop: int
    dops: list[int]
    group_set: str
    columns: list[Column]
    base: str
    labels: list[str]
    groups: list[str]
    group_of: dict[str, str | None]
    ungrouped: list[str]
    microbenchmark_ids: dict[str, int]
    # (column key, label) → its cell; the maps below (qps, relative, flags, …) are views of them. Computed, the
    # cells are kept as arrays (``Cells``), each Cell made when read.
    cells: Mapping[tuple[str, str], Cell]
    summaries: Mapping[str, Mapping[str, stats.GroupSummary]]
    result: stats.ComparisonResult[str]
    pk_mode: int = 1
    warnings: list[str] = field(default_factory=list)
    cache_key: str = ""  # set by get_comparison: derived artefacts (charts) are cached under it too
    # (column, label) the suite's marking says are no regression signal (``Suite.no_signal``: the Insert
    # Benchmark's steps whose background inserts missed the SLA); never flagged red or green.
    sla_missed: set[tuple[str, str]] = field(default_factory=set)
    # The scan formula of each run in the table ("spec" or "tps×rows/1000") → their names, when the table mixes
    # both and shows scan as each run reported it: the page warns and offers the spec's formula for all.
    scan_eras: dict[str, list[str]] = field(default_factory=dict)
    # One microbenchmark's comparison (``get_microbenchmark_comparison`` computing it): that microbenchmark's
    # latencies, read with its results; None otherwise (its page then reads them). See ``Series.latency``.
    latency: tuple[Latency, ...] | None = None

    def __getstate__(self) -> dict[str, Any]:
        # What is cached of a comparison: its cells, not the maps read from them (each process reads those again):
        # computed ones as their arrays, others (a release view's dict) as plain tuples, which are read back
        # several times faster than named ones.
        state = {name: value for name, value in self.__dict__.items() if name not in _CELL_VIEWS}
        if not isinstance(self.cells, Cells):
            state["cells"] = (list(self.cells), [tuple(cell) for cell in self.cells.values()])
            return state
        # Computed: the result's maps are made again from the cells' arrays (the group summaries, when read).
        state["result"] = dataclasses.replace(self.result, relative={}, flags={})
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        if not isinstance(self.cells, Cells):
            keys, values = state["cells"]
            self.cells = dict(zip(keys, [_new_cell(Cell, value) for value in values], strict=True))
            return
        grid, result = self.cells.grid, self.result
        result.relative = grid.relative_map()
        result.flags = grid.flag_map(grid.compared_flags)

    def row(self, label: str) -> dict[str, Cell]:
        """One microbenchmark's cells, by column key (the columns that have one)."""
        return {c.key: cell for c in self.columns if (cell := self.cells.get((c.key, label))) is not None}

    def column_cells(self, key: str) -> dict[str, Cell]:
        """One column's cells, by label."""
        return {label: cell for (k, label), cell in self.cells.items() if k == key}

    @cached_property
    def qps(self) -> dict[str, dict[str, float | None]]:
        """Per column, the QPS of each label it measured (in the order the results were read)."""
        return self._measured_view(_QPS)

    @cached_property
    def cv(self) -> dict[str, dict[str, float | None]]:
        return self._measured_view(_CV)

    @cached_property
    def metrics(self) -> dict[str, dict[str, dict[str, float | None]]]:
        return self._measured_view(_METRICS)

    @cached_property
    def relative(self) -> dict[str, dict[str, float | None]]:
        """Per compared column, the relative QPS of every label."""
        if isinstance(self.cells, Cells):
            return self.result.relative  # the same map: a cell's relative QPS is the result's
        return self._compared_view(_RELATIVE)

    @cached_property
    def flags(self) -> dict[str, dict[str, str]]:
        return self._compared_view(_FLAG)

    @cached_property
    def noisy(self) -> dict[str, dict[str, bool]]:
        return self._compared_view(_NOISY)

    # Read by position: a view reads every cell (8,400 at 200 versions × 42 microbenchmarks), or straight from
    # the arrays of computed cells.
    def _measured_view(self, field: int) -> dict[str, dict[str, Any]]:
        if isinstance(self.cells, Cells):
            return self.cells.measured_view(field)
        view: dict[str, dict[str, Any]] = {c.key: {} for c in self.columns}
        for (key, label), cell in self.cells.items():
            if cell[_QPS] is not None:
                view[key][label] = cell[field]
        return view

    def _compared_view(self, field: int) -> dict[str, dict[str, Any]]:
        if isinstance(self.cells, Cells):
            return self.cells.compared_view(field)
        cells, labels = self.cells, self.labels
        return {key: {label: cells[(key, label)][field] for label in labels} for key in self.result.runs}

    @cached_property
    def metric_ratios(self) -> dict[str, dict[str, dict[str, float | None]]]:
        """Each HW metric of each compared column relative to the base's, per microbenchmark.

        Worked out when first read, not with the comparison: the comparison page never reads them, and
        200 versions × 42 microbenchmarks × 6 metrics would double what the cache keeps of it.
        """
        if isinstance(self.cells, Cells):
            return self.cells.grid.metric_ratio_map()
        base = self.metrics[self.base]
        return {
            key: {
                label: {
                    name: stats.metric_ratio(self.metrics[key].get(label, {}).get(name), base.get(label, {}).get(name))
                    for name in HW_METRICS
                }
                for label in self.result.labels
            }
            for key in self.result.runs
        }

    def metric_ratios_of(self, key: str) -> dict[str, dict[str, float | None]]:
        """``metric_ratios[key]`` ({} for the base or a column not compared), worked out for that column alone
        unless every column's are already: "why it changed" reads one column of 200."""
        if "metric_ratios" in self.__dict__:
            return self.metric_ratios.get(key, {})
        if key not in self.result.runs:
            return {}
        base, own = self.metrics[self.base], self.metrics[key]
        return {
            label: {
                name: stats.metric_ratio(own.get(label, {}).get(name), base.get(label, {}).get(name))
                for name in HW_METRICS
            }
            for label in self.result.labels
        }

    @property
    def others(self) -> list[Column]:
        return [c for c in self.columns if c.key != self.base]

    def version_label(self, key: str) -> str:
        """ "DBMS version", with the flavour when another column has the same version."""
        return self._version_labels[key]

    @cached_property
    def _version_labels(self) -> dict[str, str]:
        # Once per comparison: a page asks for a label per table row, and finding one was a walk of the columns.
        counts = Counter(c.version for c in self.columns)
        return {
            c.key: f"{c.dbms} {c.version}" + (f" {c.flavour}" if counts[c.version] > 1 else "") for c in self.columns
        }

    def column(self, key: str) -> Column:
        return next(c for c in self.columns if c.key == key)

    def as_json(self) -> dict[str, Any]:
        """The documented JSON form (inf as the string "inf": JSON has no infinity)."""
        return stats.json_safe(
            {
                "server": self.server,
                "workload": self.workload,
                "dop": self.dop,
                "dops": self.dops,
                "group_set": self.group_set,
                "thresholds": {"red": self.spec.red, "green": self.spec.green, "noise_k": self.spec.noise_k},
                "include_warmups": self.spec.include_warmups,
                "base": self.base,
                "columns": [{**asdict(c), "repeats": c.repeats} for c in self.columns],
                "groups": {g: [label for label in self.labels if self.group_of.get(label) == g] for g in self.groups},
                "ungrouped": self.ungrouped,
                "qps": self.qps,
                "relative_qps": self.relative,
                "flags": self.flags,
                "cv": self.cv,
                "summaries": {
                    g: {k: asdict(s) for k, s in by_column.items()} for g, by_column in self.summaries.items()
                },
                "metrics": self.metrics,
                "metric_ratios": self.metric_ratios,
                "warnings": self.warnings,
                "sla_missed": [list(cell) for cell in sorted(self.sla_missed)],
                "scan_formula": self.spec.scan_formula,
                "scan_eras": self.scan_eras,
            }
        )


def series_stamp(server_id: int, workload_id: int) -> str:
    """Changes whenever a run of the series is added or deleted: part of every cache key."""
    agg = Run.objects.filter(server_id=server_id, workload_id=workload_id).aggregate(n=Count("id"), last=Max("id"))
    return series_stamp_of(server_id, workload_id, agg["n"], agg["last"])


def series_stamp_of(server_id: int, workload_id: int, runs: int, last_run_id: int | None) -> str:
    """``series_stamp`` from the series' number of runs and newest run id, for a caller that read them already
    (a page reads them with its cache key's stamps, in one query)."""
    return f"{server_id}:{workload_id}:{runs}:{last_run_id}"


def _cache_key(spec: ComparisonSpec, base: Run | None = None, stamp: str | None = None) -> str:
    if stamp is None:
        if base is None:
            base = Run.objects.filter(pk=spec.base_run_id).only("server_id", "workload_id").first()
            if base is None:
                raise ComparisonError(f"no run with id {spec.base_run_id}")
        stamp = series_stamp(base.server_id, base.workload_id)
    # Group set definitions can change without a run arriving: their generation is part of the key.
    return spec.cache_key(f"{stamp}|g{pagecache.generation()}")


def get_comparison(spec: ComparisonSpec, *, base: Run | None = None, stamp: str | None = None) -> Comparison:
    """The comparison of ``spec``, from the cache when it is there.

    A page that read the base run already (with its server, workload and build's version) passes it as
    ``base``, and its series' ``series_stamp`` as ``stamp``: neither is read again."""
    key = _cache_key(spec, base, stamp)
    found = pagecache.cached(key)
    if found is not None:
        return found  # type: ignore[no-any-return]
    comparison = compute_comparison(spec, base=base)
    comparison.cache_key = key
    pagecache.keep(key, comparison, CACHE_SECONDS)
    return comparison


def get_microbenchmark_comparison(
    spec: ComparisonSpec, microbenchmark_id: int, *, base: Run | None = None, stamp: str | None = None
) -> Comparison:
    """The comparison a page about one microbenchmark reads: the whole series' when it is cached, else that
    microbenchmark's alone (``load_series``), which reads and computes a 42nd of it. Its numbers for that
    microbenchmark are the whole comparison's; it has no other microbenchmark, and it is not cached (the page is).
    ``base`` and ``stamp`` as for ``get_comparison``."""
    found = pagecache.cached(_cache_key(spec, base, stamp))
    if found is not None:
        return found  # type: ignore[no-any-return]
    return build_comparison(load_series(spec, microbenchmark_id=microbenchmark_id, base=base))


def compute_comparison(spec: ComparisonSpec, *, base: Run | None = None) -> Comparison:
    """The comparison from raw results, uncached: the series read once, then computed without the database."""
    return build_comparison(load_series(spec, base=base))


# --------------------------------------------------------------------------- what a comparison is made from


@dataclass(frozen=True)
class SeriesRun:
    """One run of the series, with what its column and the workload warnings need."""

    id: int
    name: str
    build_id: int
    config_id: int
    dbms: str
    version: str
    version_sort: str
    build: str
    flavour: str
    config: str
    started_at: str | None = None
    sysbench_version: str = ""
    commands: Mapping[str, str] | None = None
    scan_formula: str = ""  # the formula its own sb.r.qps.scan used; "" when it reported none
    summary_table: str = ""  # Run.summary_table: runs of two tables are never one column
    summary_layout: Mapping[str, Any] | None = None  # Run.summary_layout
    lane: str = ""  # off the main line: "PR #42", "branch feature-x" (runs.branches); never one column with it


class Latency(NamedTuple):
    """A result's latency: the average and a percentile (``percentile``: 95, 99) in milliseconds."""

    run_id: int
    dop: int
    avg_ms: float | None
    percentile_ms: float | None
    percentile: float | None


class SeriesResult(NamedTuple):
    """One stored result: a test (and range) of a run at one concurrency."""

    run_id: int
    microbenchmark_id: int
    test: str
    range_size: int | None
    dop: int
    qps: float
    metrics: tuple[float | None, ...]  # HW_METRICS, in that order
    suite: str
    is_warmup: bool = False  # loaded whatever the warm-up switch, so the concurrency rule never depends on it
    tps: float | None = None  # transactions/s: scan's value under the tps×rows/1000 formula is made from it


@dataclass(frozen=True)
class Series:
    """Everything a comparison is computed from, read by ``load_series``; plain values, no model instances."""

    spec: ComparisonSpec
    suite: str
    server: str
    server_id: int
    workload: str
    workload_id: int
    base_run_id: int
    pk_mode: int
    runs: tuple[SeriesRun, ...]  # in column order: by version, build, config, start, id
    results: tuple[SeriesResult, ...]
    group_set: groupsets.GroupSet | None = None  # None: chosen from the suite and the tests (spec "auto")
    # What the suite's marking reads (``Suite.no_signal``), for a suite that ``checks_sla``: the Insert
    # Benchmark's SLA samples.
    sla_samples: tuple[Any, ...] = ()
    # A comparison of one microbenchmark (a page about it): ``results`` hold that microbenchmark's and the base
    # run's, ``dops`` every (concurrency, warm-up) of the series' results, so the concurrency rule decides as for
    # the whole series; build_comparison then keeps that microbenchmark alone, with the numbers it has in the
    # comparison of every microbenchmark (and no workload warnings).
    microbenchmark_id: int | None = None
    dops: tuple[tuple[int, bool], ...] | None = None
    # That microbenchmark's latencies at every concurrency, read in the same query as its results: its page
    # shows them, and a query of their own cost as much as the rest of that one.
    latency: tuple[Latency, ...] | None = None
    # The results as arrays (the series' matrix, read whole): ``results`` is then empty.
    table: matrix.Table | None = None


def read_base_run(pk: int) -> Run | None:
    """The run ``pk`` with ``BASE_RELATED``, or None. By SQL compiled once: building the query cost more than
    running it (one row by its id, unordered: ordering it by the runs' default order cost a third of that)."""
    (stand_in,) = sqlonce.ID_STAND_INS[:1]
    found = sqlonce.instances_once(
        "compare.read_base_run",
        lambda: Run.objects.select_related(*BASE_RELATED).filter(pk=stand_in).order_by()[:1],
        (stand_in,),
    ).fetch(pk)
    return cast(Run, found[0]) if found else None


def load_series(spec: ComparisonSpec, *, microbenchmark_id: int | None = None, base: Run | None = None) -> Series:
    """Every database read a comparison needs, in a fixed number of queries whatever the number of runs.

    ``microbenchmark_id``: read only what the comparison of that one microbenchmark needs (its results, the
    base's, and the series' concurrencies), for a page about it: see ``Series.microbenchmark_id``. ``base``: the
    base run when the caller read it already, with its server, workload and build's version (``BASE_RELATED``).
    """
    if base is not None and base.pk != spec.base_run_id:
        raise ValueError(f"run {base.pk} is not the base of this comparison ({spec.base_run_id})")
    base_run = base or read_base_run(spec.base_run_id)
    if base_run is None:
        raise ComparisonError(f"no run with id {spec.base_run_id}")
    # On PostgreSQL the common shapes read by SQL compiled once per process (benchdash.sqlonce): building and
    # compiling the querysets cost as much CPU as running them and reading their rows.
    runs = _runs_from_rows(_series_run_rows(spec, base_run, microbenchmark_id is not None))
    runs = run_identity.in_asked_order(runs, base_run.pk, spec.run_ids)
    if spec.run_ids:
        missing = set(spec.run_ids) - {r.id for r in runs}
        if missing:
            raise ComparisonError(
                f"runs {sorted(missing)} are not on {base_run.server} with workload {base_run.workload}: "
                "only runs of one server and workload can be compared"
            )
    run_ids = [r.id for r in runs]
    if microbenchmark_id is None:
        # The results table is read only when the series' matrix cannot serve: the queryset is built then.
        read, latencies, table = _read_results(
            spec, base_run, run_ids, lambda: _result_rows(spec, base_run, run_ids, None), None
        )
        return _series(spec, base_run, runs, run_ids, read, None, None, latencies, table)
    if _compiled_reads():
        results, dops, latency = _read_compiled(
            _microbenchmark_sql(spec.include_warmups), run_ids, microbenchmark_id, base_run.pk
        )
        return _series(spec, base_run, runs, run_ids, results, microbenchmark_id, dops, latency, None)
    rows = _result_rows(spec, base_run, run_ids, microbenchmark_id)
    concurrencies = tuple(_dops(rows))
    rows = _of_microbenchmark(rows, microbenchmark_id, base_run.pk)
    read, latencies, table = _read_results(spec, base_run, run_ids, lambda: rows, microbenchmark_id)
    return _series(spec, base_run, runs, run_ids, read, microbenchmark_id, concurrencies, latencies, table)


def _read_compiled(
    compiled: _MicrobenchmarkSql, run_ids: list[int], microbenchmark_id: int, base_id: int
) -> tuple[tuple[SeriesResult, ...], tuple[tuple[int, bool], ...], tuple[Latency, ...]]:
    """One microbenchmark's results and latencies, and the series' concurrencies, by SQL compiled once."""
    dops = tuple((dop, warmup) for dop, warmup in compiled.dops.fetch(run_ids))
    found = compiled.results.fetch(run_ids, microbenchmark_id, base_id)
    results, latency = _microbenchmark_results(found, microbenchmark_id)
    return results, dops, latency


def _runs_from_rows(run_rows: Iterable[Sequence[Any]]) -> list[SeriesRun]:
    """The runs of ``_run_values``' rows; each distinct JSON text (command lines, summary layout) decoded once."""
    decoded: dict[str | None, Mapping[str, str] | None] = {None: None}
    runs = []
    for (
        pk,
        name,
        build_id,
        config_id,
        dbms,
        version,
        version_sort,
        build,
        flavour,
        config,
        started_at,
        sysbench_version,
        commands,
        scan_formula,
        summary_table,
        summary_layout,
        branch,
        pull_request,
    ) in run_rows:
        if commands not in decoded:
            decoded[commands] = json.loads(commands)
        if summary_layout not in decoded:
            decoded[summary_layout] = json.loads(summary_layout)
        runs.append(
            SeriesRun(
                id=pk,
                name=name,
                build_id=build_id,
                config_id=config_id,
                dbms=dbms,
                version=version,
                version_sort=version_sort,
                build=build,
                flavour=flavour,
                config=config,
                started_at=started_at.isoformat() if started_at else None,
                sysbench_version=sysbench_version,
                commands=decoded[commands],
                scan_formula=scan_formula,
                summary_table=summary_table,
                summary_layout=decoded[summary_layout] or None,
                lane=branches.lane(branch, pull_request),
            )
        )
    return runs


def _series(
    spec: ComparisonSpec,
    base_run: Run,
    runs: list[SeriesRun],
    run_ids: list[int],
    results: tuple[SeriesResult, ...],
    microbenchmark_id: int | None,
    dops: tuple[tuple[int, bool], ...] | None,
    latency: tuple[Latency, ...] | None,
    table: matrix.Table | None,
) -> Series:
    suite = base_run.workload.suite
    return Series(
        spec=spec,
        suite=suite,
        server=base_run.server.name,
        server_id=base_run.server_id,
        workload=base_run.workload.name,
        workload_id=base_run.workload_id,
        base_run_id=base_run.pk,
        pk_mode=base_run.pk_mode,
        runs=tuple(runs),
        results=results,
        microbenchmark_id=microbenchmark_id,
        dops=dops,
        latency=latency,
        table=table,
        group_set=_series_group_set(spec, base_run),
        sla_samples=tuple(sla.load_samples(run_ids)) if suites.get(suite).checks_sla else (),
    )


def _series_runs(spec: ComparisonSpec, base_run: Run) -> QuerySet[Run]:
    if spec.run_ids:
        return _runs_of(base_run.server_id, base_run.workload_id).filter(pk__in={*spec.run_ids, base_run.pk})
    return _default_series(
        base_run.server_id, base_run.workload_id, base_run.build.version.dbms_id, run_identity.series_filter(base_run)
    )


def _runs_of(server_id: Any, workload_id: Any) -> QuerySet[Run]:
    return Run.objects.filter(server_id=server_id, workload_id=workload_id)


def _default_series(server_id: Any, workload_id: Any, dbms_id: Any, within: Q) -> QuerySet[Run]:
    """The default series is the base's DBMS (and table, for a run of a summary table: ``within``); other DBMSs on
    the same server are picked explicitly."""
    return _runs_of(server_id, workload_id).filter(within, build__version__dbms_id=dbms_id)


def _run_values(runs_qs: QuerySet[Run], one_microbenchmark: bool) -> QuerySet[Run, tuple[Any, ...]]:
    """The series' runs as plain values, not model instances: a series of 200 runs would otherwise build a
    thousand of them. The runs of a series mostly share their command lines and summary layouts: each is read as
    its JSON text, decoded once per distinct text."""
    commands_text: Cast | Case = Cast("commands", TextField())
    if one_microbenchmark:
        # One microbenchmark's comparison has no workload warnings (its page shows none): the command lines
        # are read only where scan_qps reads them, from the runs whose scan used tps × rows / 1000.
        commands_text = Case(
            When(scan_formula=sysbench.SCAN_TPS_ROWS, then=commands_text), default=None, output_field=TextField()
        )
    return (
        runs_qs.order_by("build__version__sort_key", "build__name", "config__name", "started_at", "pk")
        .annotate(commands_text=commands_text, summary_layout_text=Cast("summary_layout", TextField()))
        .values_list(
            "pk",
            "name",
            "build_id",
            "config_id",
            "build__version__dbms__name",
            "build__version__text",
            "build__version__sort_key",
            "build__name",
            "build__flavour",
            "config__name",
            "started_at",
            "sysbench_version",
            "commands_text",
            "scan_formula",
            "summary_table",
            "summary_layout_text",
            "branch",
            "pull_request",
        )
    )


def _in_runs(run_ids: Any) -> QuerySet[Result]:
    """The results of the runs, their ids as one array (PostgreSQL): the runs as a subquery cost more to compile
    twice than the array costs to send."""
    in_runs = f'"{Result._meta.db_table}"."run_id" = ANY(%s)'
    return Result.objects.filter(RawSQL(in_runs, (run_ids,), output_field=BooleanField()))


def _without_warmups(rows: QuerySet[Result], include_warmups: bool) -> QuerySet[Result]:
    # The import decides what a warm-up is, per suite (sysbench *.warm, db_bench revrange.t1, …).
    return rows if include_warmups else rows.exclude(microbenchmark__is_warmup=True)


def _dops(rows: QuerySet[Result]) -> QuerySet[Result, tuple[int, bool]]:
    """The concurrency rule reads the base's results and every concurrency of the series, nothing else."""
    return rows.order_by().values_list("dop", "microbenchmark__is_warmup").distinct()


def _of_microbenchmark(rows: QuerySet[Result], microbenchmark_id: Any, base_id: Any) -> QuerySet[Result]:
    return rows.filter(Q(microbenchmark_id=microbenchmark_id) | Q(run_id=base_id))


def _result_rows(
    spec: ComparisonSpec, base_run: Run, run_ids: list[int], microbenchmark_id: int | None
) -> QuerySet[Result]:
    """The series' results in the results table (warm-ups left out unless asked)."""
    # The runs as a subquery rather than their ids: hundreds of parameters cost more to send than to plan (and,
    # for one microbenchmark's two small reads, more CPU to bind than the rest of the query: 2 of 4 ms). Those two
    # small reads take the ids as one array instead: compiling the subquery twice cost more than the array (a
    # tenth of their load_series).
    if microbenchmark_id is None:
        rows = Result.objects.filter(run_id__in=_series_runs(spec, base_run).order_by().values("pk"))
    elif connection.vendor != "postgresql":  # the embedded default (SQLite) has no arrays
        rows = Result.objects.filter(run_id__in=run_ids)
    else:
        rows = _in_runs(run_ids)
    return _without_warmups(rows, spec.include_warmups)


def _series_run_rows(spec: ComparisonSpec, base_run: Run, one_microbenchmark: bool) -> list[tuple[Any, ...]]:
    """The rows of ``_run_values`` for the comparison's runs. On PostgreSQL the two common shapes (the base's main
    line series, or runs asked for) run SQL compiled once per process: building the queryset cost more than the
    query (``benchdash.sqlonce``); any other shape, or another database, through the query builder."""
    server, workload = base_run.server_id, base_run.workload_id
    if connection.vendor == "postgresql" and spec.run_ids:
        asked = sorted({*spec.run_ids, base_run.pk})
        return _asked_runs_statement(one_microbenchmark).fetch(server, workload, asked)
    if (
        connection.vendor == "postgresql"
        and not base_run.summary_table
        and branches.in_main_line(base_run.branch, base_run.pull_request)
    ):
        statement = _main_line_runs_statement(one_microbenchmark, branches.pattern())
        return statement.fetch(server, workload, base_run.build.version.dbms_id)
    return list(_run_values(_series_runs(spec, base_run), one_microbenchmark))


@functools.cache
def _asked_runs_statement(one_microbenchmark: bool) -> sqlonce.Statement:
    """``_run_values`` of the runs asked for (their ids as one array) on the base's server and workload."""
    server, workload, asked = sqlonce.ID_STAND_INS[:3]
    in_asked = f'"{Run._meta.db_table}"."id" = ANY(%s)'
    runs_qs = _runs_of(server, workload).filter(RawSQL(in_asked, (asked,), output_field=BooleanField()))
    return sqlonce.compile_once(_run_values(runs_qs, one_microbenchmark), (server, workload, asked))


@functools.cache
def _main_line_runs_statement(one_microbenchmark: bool, pattern: str) -> sqlonce.Statement:
    """``_run_values`` of a main-line base's default series (``run_identity.series_filter`` of a run on the main
    line and of no summary table): the base's DBMS on its server and workload. ``pattern``: the base branches'
    (``branches.pattern``), a constant of the statement, so a changed setting compiles another."""
    del pattern  # a key only: main_line reads the setting itself
    server, workload, dbms = sqlonce.ID_STAND_INS[:3]
    runs_qs = _default_series(server, workload, dbms, branches.main_line())
    return sqlonce.compile_once(_run_values(runs_qs, one_microbenchmark), (server, workload, dbms))


class _MicrobenchmarkSql(NamedTuple):
    """One microbenchmark's two reads of its results (``_compiled_reads``), run with the series' run ids."""

    dops: sqlonce.Statement  # (run ids)
    results: sqlonce.Statement  # (run ids, microbenchmark id, base run id)


def _compiled_reads() -> bool:
    """Whether one microbenchmark's results are read by SQL compiled once: on PostgreSQL (the results' runs as an
    array), whatever the series (the two reads depend on its runs' ids only). The embedded default (SQLite) reads
    through querysets built for it."""
    return connection.vendor == "postgresql"


@functools.cache
def _microbenchmark_sql(include_warmups: bool) -> _MicrobenchmarkSql:
    """The two reads of one microbenchmark's comparison, compiled from the querysets the other path builds."""
    runs, microbenchmark, base = sqlonce.ID_STAND_INS[:3]
    rows = _without_warmups(_in_runs(runs), include_warmups)
    results = _of_microbenchmark(rows, microbenchmark, base).order_by().values_list(*_MICROBENCHMARK_COLUMNS)
    return _MicrobenchmarkSql(
        sqlonce.compile_once(_dops(rows), (runs,)), sqlonce.compile_once(results, (runs, microbenchmark, base))
    )


def _read_results(
    spec: ComparisonSpec,
    base_run: Run,
    run_ids: Collection[int],
    rows: Callable[[], QuerySet[Result]],
    microbenchmark_id: int | None,
) -> tuple[tuple[SeriesResult, ...], tuple[Latency, ...] | None, matrix.Table | None]:
    """The results of the series' runs ``run_ids`` (``rows()`` in the results table): the whole series from the
    series' matrix while it is at the refresh's stamp (``reports.matrix``), in one query, as its arrays."""
    if microbenchmark_id is None:
        stored = matrix.results(base_run.server_id, base_run.workload_id, run_ids, include_warmups=spec.include_warmups)
        if stored is not None:
            return (), None, stored
    return (*_series_results(rows(), microbenchmark_id), None)


# What one microbenchmark's comparison reads of each result: its latencies too (its page shows them).
_RESULT_COLUMNS = (
    "run_id",
    "microbenchmark_id",
    "microbenchmark__test",
    "microbenchmark__range_size",
    "dop",
    "qps",
    *HW_METRICS,
    "microbenchmark__suite",
    "microbenchmark__is_warmup",
    "tps",
)
_MICROBENCHMARK_COLUMNS = (*_RESULT_COLUMNS, "lat_avg_ms", "lat_pct_ms", "lat_pct")


def _series_results(
    rows: QuerySet[Result], microbenchmark_id: int | None
) -> tuple[tuple[SeriesResult, ...], tuple[Latency, ...] | None]:
    """The results as plain values; of one microbenchmark's comparison, its latencies too (read in the same
    query: its page shows them)."""
    # Not ordered by the database: ordering by the runs' versions there joins every run of the archive into
    # the plan. build_comparison sorts them.
    if microbenchmark_id is None:
        results = tuple(
            # By position, the metrics one slice of the row: this runs once per result.
            _new_result(SeriesResult, (*row[:_METRICS_AT], row[_METRICS_AT:_METRICS_END], *row[_METRICS_END:]))
            for row in rows.order_by().values_list(*_RESULT_COLUMNS)
        )
        return results, None
    return _microbenchmark_results(list(rows.order_by().values_list(*_MICROBENCHMARK_COLUMNS)), microbenchmark_id)


def _microbenchmark_results(
    found: Sequence[Sequence[Any]], microbenchmark_id: int
) -> tuple[tuple[SeriesResult, ...], tuple[Latency, ...]]:
    """Rows of ``_MICROBENCHMARK_COLUMNS`` as results, and the microbenchmark's latencies."""
    results = tuple(
        SeriesResult(run_id, mb_id, test, range_size, dop, qps, tuple(metrics), suite, warmup, tps)
        for run_id, mb_id, test, range_size, dop, qps, *metrics, suite, warmup, tps, _, _, _ in found
    )
    latency = tuple(Latency(row[0], row[4], *row[-3:]) for row in found if row[1] == microbenchmark_id)
    return results, latency


# Where a result row's HW metrics are (``_series_results``' columns), and a SeriesResult made from a tuple of its
# fields without the generated __new__'s per-call cost.
_METRICS_AT = 6
_METRICS_END = _METRICS_AT + len(HW_METRICS)
_new_result = tuple.__new__


def _series_group_set(spec: ComparisonSpec, base_run: Run) -> groupsets.GroupSet | None:
    """The group set asked for; "auto" reads a series in the groups its documents brought, when they brought
    some (they are named too)."""
    carried = carried_group_set(base_run.workload.name, base_run.workload.params or {})
    if carried is not None and spec.group_set == carried.name:
        return carried
    return named_group_set(spec.group_set) or carried


def named_group_set(name: str) -> groupsets.GroupSet | None:
    """The group set called ``name`` (a built-in one or a user's definition), None for "auto"."""
    if name in ("", "auto"):
        return None
    for standard in suites.group_sets():
        if standard.name == name:
            return standard
    definition = GroupSetDefinition.objects.filter(name=name).first()
    if definition is None:
        known = [g.name for g in suites.group_sets()] + list(GroupSetDefinition.objects.values_list("name", flat=True))
        raise ComparisonError(f"unknown group set {name!r}; known: auto, {', '.join(known)}")
    return groupsets.user_group_set(definition.name, definition.ordered_rules())


def choose_group_set(suite: str, labels: Sequence[str]) -> groupsets.GroupSet:
    """The group set the suite reads a series with these labels in (its own rule, in its package)."""
    return suites.get(suite).choose_group_set(labels)


# --------------------------------------------------------------------------- the computation


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _columns(runs: Sequence[SeriesRun]) -> tuple[list[Column], dict[int, str]]:
    """One column per build + config (+ summary table, + lane); repeats of it (same build, config, server,
    workload, table, and all on the main line or all of one pull request) are averaged."""
    columns: dict[tuple[int, int, str, str], Column] = {}
    for run in runs:
        key = run_identity.column_key(run)
        if key not in columns:
            columns[key] = Column(
                key=f"{run.name} [{run.lane}]" if run.lane else run.name,
                run_ids=[],
                dbms=run.dbms,
                version=run.version,
                version_sort=run.version_sort,
                build=run.build,
                flavour=run.flavour,
                config=run.config,
                started_at=run.started_at,
                summary_table=run.summary_table,
                summary_layout=dict(run.summary_layout or {}),
            )
        columns[key].run_ids.append(run.id)
    names = [c.key for c in columns.values()]
    if len(set(names)) != len(names):
        # Two builds share a directory name (another config, another summary table): tell them apart.
        for column in columns.values():
            column.key = f"{column.key} [{column.summary_table or f'{column.build}/{column.config}'}]"
    column_of_run = {run_id: column.key for column in columns.values() for run_id in column.run_ids}
    return list(columns.values()), column_of_run


def build_comparison(series: Series) -> Comparison:
    """The comparison of a loaded series: averages repeats, measures their spread, flags changes. No database.

    In named steps, over the results as arrays (``reports.matrix.Table``): the columns and the base's; the results
    in order with their column and label; the concurrency compared; one measured cell per (column, label) at it;
    the labels grouped and divided by the base; the suite's marking (cells that are no signal); the cells with
    their flags, kept as arrays (``Cells``) that the maps a page reads are made from.
    """
    spec = series.spec
    columns, column_of_run = _columns(series.runs)
    base_run = next((run for run in series.runs if run.id == series.base_run_id), None)
    if base_run is None:
        raise ComparisonError(f"no run with id {series.base_run_id}")
    base_key = column_of_run[base_run.id]
    found = _samples(series, columns, column_of_run, base_key)
    dop = _concurrency(spec, found, base_run.name)
    if series.microbenchmark_id is not None:
        found = found.only(series.microbenchmark_id)
    measured = _measured(found, dop)
    labels_seen = measured.labels_seen()
    group_set = series.group_set or choose_group_set(series.suite, labels_seen)
    suite_order = suites.get(series.suite).label_order
    ordered = sorted(labels_seen, key=lambda label: (suite_order and suite_order(label)) or _label_order(label))
    grouped, ungrouped = group_set.partition(ordered)
    if series.microbenchmark_id is not None:
        # Its group alone: the set's other groups are empty here, and summarising each for every column was a
        # tenth of the computation at 200 versions (its page shows no group summary).
        grouped = {group: members for group, members in grouped.items() if members}
    keys = [c.key for c in columns]
    grid, result, summaries = _compare(measured, keys, keys.index(base_key), grouped, spec.red, spec.green)
    greyed = _no_signal(series, column_of_run, dop)
    _flag_cells(grid, measured.repeated, greyed, spec.noise_k)
    # One microbenchmark's comparison (its page) has none: its runs' command lines are not all read.
    warnings = (
        [] if series.microbenchmark_id is not None else _workload_warnings(series.runs) + workload_mismatch(series.runs)
    )
    return Comparison(
        spec=spec,
        suite=series.suite,
        server=series.server,
        server_id=series.server_id,
        workload=series.workload,
        workload_id=series.workload_id,
        dop=dop,
        dops=sorted(found.measured_dops | {dop}),
        group_set=group_set.name,
        columns=columns,
        base=base_key,
        labels=result.labels,
        groups=result.groups,
        group_of={label: group_set.classify(label) for label in result.labels},
        ungrouped=result.ungrouped + [u for u in ungrouped if u not in result.ungrouped],
        microbenchmark_ids=found.microbenchmark_ids,
        cells=Cells(grid),
        summaries=summaries,
        result=result,
        pk_mode=series.pk_mode,
        warnings=warnings,
        sla_missed=greyed,
        scan_eras=_scan_eras(series, result.labels),
        latency=series.latency,
    )


@dataclass
class _Samples:
    """The series' results as the comparison reads them, as arrays in order (runs by version, then suite, test,
    range, concurrency: the order of labels that no group set places, as in the reference tables): each result's
    column (index into the columns), label (index into ``labels``), concurrency, QPS and HW metrics; the label of
    each microbenchmark, and the concurrencies there are (and those the base measured each label at)."""

    labels: list[str]
    column: np.ndarray
    label: np.ndarray
    dop: np.ndarray
    qps: np.ndarray
    metrics: np.ndarray  # (results, len(HW_METRICS)), 0 where metric_nulls
    metric_nulls: np.ndarray
    microbenchmark_ids: dict[str, int]
    label_of: dict[int, str]
    every_dop: set[int]
    measured_dops: set[int]  # concurrencies with a result that is not a warm-up
    base_labels: dict[int, set[str]]

    def only(self, microbenchmark_id: int) -> _Samples:
        """Those of one microbenchmark (its page's comparison); the concurrencies stay the series'."""
        label = self.label_of.get(microbenchmark_id)
        keep = self.label == (self.labels.index(label) if label is not None else -1)
        ids = {label: microbenchmark_id} if label is not None else {}
        return dataclasses.replace(
            self,
            column=self.column[keep],
            label=self.label[keep],
            dop=self.dop[keep],
            qps=self.qps[keep],
            metrics=self.metrics[keep],
            metric_nulls=self.metric_nulls[keep],
            microbenchmark_ids=ids,
        )


def _samples(series: Series, columns: Sequence[Column], column_of_run: Mapping[int, str], base_key: str) -> _Samples:
    """Every result of the series' runs, in order, with its column and label."""
    import numpy as np

    spec = series.spec
    table = series.table if series.table is not None else matrix.Table.of_rows(series.results)
    index_of_key = {c.key: i for i, c in enumerate(columns)}
    run_ids = np.array([run.id for run in series.runs], dtype=np.int64)
    run_columns = np.array([index_of_key[column_of_run[run.id]] for run in series.runs], dtype=np.int64)
    # Each result's run as its rank in the series (the results of other runs left out).
    by_id = np.argsort(run_ids, kind="stable")
    at = np.minimum(np.searchsorted(run_ids[by_id], table.runs), len(run_ids) - 1)
    keep = run_ids[by_id][at] == table.runs
    rank = by_id[at[keep]]
    indexes, dops = table.indexes[keep], table.dops[keep]
    described = table.microbenchmarks
    # The microbenchmarks ranked by (suite, test, range): equal ones rank alike, so their results keep their order.
    keys = [(suite, test, range_size is None, range_size or 0) for _, test, range_size, suite, _ in described]
    rank_of_key = {key: i for i, key in enumerate(sorted(set(keys)))}
    microbenchmark_rank = np.array([rank_of_key[key] for key in keys], dtype=np.int64)
    order = np.lexsort((dops, microbenchmark_rank[indexes], rank))
    rank, indexes, dops = rank[order], indexes[order], dops[order]
    values, nulls = table.values[keep][order], table.nulls[keep][order]
    run_ids_of_rows = run_ids[rank]
    # Each microbenchmark's label: the first of its id's in order, as a microbenchmark id has one label.
    present, first = np.unique(indexes, return_index=True)
    reversed_present, from_end = np.unique(indexes[::-1], return_index=True)
    last = dict(zip(reversed_present.tolist(), (len(indexes) - 1 - from_end).tolist(), strict=True))
    labels: list[str] = []
    index_of_label: dict[str, int] = {}
    label_of: dict[int, str] = {}
    label_of_microbenchmark = np.zeros(len(described), dtype=np.int64)
    latest: dict[int, int] = {}  # label → the microbenchmark of its last result
    for i in present[np.argsort(first, kind="stable")].tolist():
        microbenchmark_id, test, range_size, _, _ = described[i]
        label = label_of.get(microbenchmark_id)
        if label is None:
            label = f"{test}_range={range_size}" if range_size is not None else test
            label_of[microbenchmark_id] = label
        index = index_of_label.get(label)
        if index is None:
            index = index_of_label[label] = len(labels)
            labels.append(label)
        label_of_microbenchmark[i] = index
        if index not in latest or last[i] > last[latest[index]]:
            latest[index] = i
    # Each label's microbenchmark: that of its last result (labels in the order they first come).
    microbenchmark_ids = {label: described[latest[index]][0] for index, label in enumerate(labels)}
    label = label_of_microbenchmark[indexes]
    column = run_columns[rank]
    warmup = np.array([m[4] for m in described], dtype=bool)[indexes]
    every_dop = set(np.unique(dops).tolist())
    measured_dops = set(np.unique(dops[~warmup]).tolist())
    if series.dops is not None:
        every_dop.update(d for d, _ in series.dops)
        measured_dops.update(d for d, warm in series.dops if not warm)
    base_labels: dict[int, set[str]] = defaultdict(set)
    of_base = ~warmup & (column == index_of_key[base_key])
    for dop, index in zip(dops[of_base].tolist(), label[of_base].tolist(), strict=True):
        base_labels[dop].add(labels[index])
    qps = values[:, 0].copy()
    # scan_qps is the stored QPS but for the runs whose own scripts used the other scan formula: only their
    # results are read through it (none, for the spec's formula).
    other_era = (
        set() if spec.scan_formula == "spec" else {run.id for run in series.runs if eras.other_era(run.scan_formula)}
    )
    if other_era:
        run_of = {run.id: run for run in series.runs}
        for k in np.nonzero(np.isin(run_ids_of_rows, list(other_era)))[0].tolist():
            microbenchmark_id, test, range_size, suite, is_warmup = described[indexes[k]]
            row = SeriesResult(
                int(run_ids_of_rows[k]),
                microbenchmark_id,
                test,
                range_size,
                int(dops[k]),
                float(values[k, 0]),
                (),
                suite,
                is_warmup,
                None if nulls[k, -1] else float(values[k, -1]),
            )
            qps[k] = scan_qps(row, run_of[row.run_id], spec.scan_formula)
    return _Samples(
        labels=labels,
        column=column,
        label=label,
        dop=dops,
        qps=qps,
        metrics=values[:, 1 : 1 + len(HW_METRICS)],
        metric_nulls=nulls[:, 1 : 1 + len(HW_METRICS)],
        microbenchmark_ids=microbenchmark_ids,
        label_of=label_of,
        every_dop=every_dop,
        measured_dops=measured_dops,
        base_labels=base_labels,
    )


def _concurrency(spec: ComparisonSpec, found: _Samples, base_name: str) -> int:
    """The concurrency compared: the spec's, else the base's main one (``CONCURRENCY_RULE``)."""
    if not found.every_dop:
        raise ComparisonError(f"{base_name} has no results to compare")
    dop = spec.dop if spec.dop is not None else main_concurrency(found.base_labels, found.every_dop)
    if dop not in found.every_dop:
        every = sorted(found.measured_dops or found.every_dop)
        raise ComparisonError(f"no results at concurrency {dop}; this series has {every}")
    return dop


@dataclass
class _Measured:
    """One cell per (column, label) measured at the concurrency compared, in the order of their first results:
    the mean of its repeats, their coefficient of variation (NaN: one result), the mean of each HW metric (NaN
    where none of the repeats has it, ``metric_nulls``); and whether any cell has repeats."""

    labels: list[str]  # the samples' labels, which ``label`` indexes
    column: np.ndarray
    label: np.ndarray
    qps: np.ndarray
    cv: np.ndarray
    has_cv: np.ndarray
    metrics: np.ndarray
    metric_nulls: np.ndarray
    repeated: bool

    def labels_seen(self) -> list[str]:
        """The labels measured, in the order of their first cells."""
        import numpy as np

        present, first = np.unique(self.label, return_index=True)
        return [self.labels[i] for i in present[np.argsort(first, kind="stable")].tolist()]


def _measured(found: _Samples, dop: int) -> _Measured:
    """The measured cells at ``dop`` (``_Measured``). A cell of one result has that result's values (x + 0.0, as
    the mean of one value is, bit for bit); a cell of repeats averages them in order, as ``_mean`` and
    ``stats.spread`` do."""
    import numpy as np

    rows = np.nonzero(found.dop == dop)[0]
    width = len(found.labels)
    keys = found.column[rows] * width + found.label[rows]
    cell_keys, first, inverse, counts = np.unique(keys, return_index=True, return_inverse=True, return_counts=True)
    in_order = np.argsort(first, kind="stable")
    firsts = rows[first[in_order]]
    qps = found.qps[firsts] + 0.0
    metrics = found.metrics[firsts] + 0.0
    metric_nulls = found.metric_nulls[firsts].copy()
    cv = np.full(len(firsts), np.nan)
    has_cv = np.zeros(len(firsts), dtype=bool)
    repeats = counts[in_order]
    repeated = bool((repeats > 1).any())
    if repeated:
        position = np.empty(len(cell_keys), dtype=np.int64)
        position[in_order] = np.arange(len(cell_keys))
        # The results of each cell together, in order.
        grouped = rows[np.argsort(position[inverse], kind="stable")]
        ends = np.cumsum(repeats)
        for cell in np.nonzero(repeats > 1)[0].tolist():
            its = grouped[ends[cell] - repeats[cell] : ends[cell]]
            qps_values = found.qps[its].tolist()
            qps[cell] = _mean(qps_values)
            cv[cell] = stats.spread(qps_values).cv
            has_cv[cell] = True
            for j in range(len(HW_METRICS)):
                present = [
                    m
                    for m, null in zip(found.metrics[its, j].tolist(), found.metric_nulls[its, j].tolist(), strict=True)
                    if not null
                ]
                mean = _mean(present)
                metrics[cell, j] = 0.0 if mean is None else mean
                metric_nulls[cell, j] = mean is None
    return _Measured(
        labels=found.labels,
        column=cell_keys[in_order] // width if width else cell_keys[in_order],
        label=cell_keys[in_order] % width if width else cell_keys[in_order],
        qps=qps,
        cv=cv,
        has_cv=has_cv,
        metrics=metrics,
        metric_nulls=metric_nulls,
        repeated=repeated,
    )


def _no_signal(series: Series, column_of_run: Mapping[int, str], dop: int) -> set[tuple[str, str]]:
    """The suite's marking: (column, label) of the cells its own rule says are no regression signal (the
    Insert Benchmark's query steps whose background inserts missed their target rate)."""
    rule = suites.get(series.suite).no_signal
    return rule(series.sla_samples, column_of_run, dop) if rule is not None else set()


# A cell's flag as a small integer in the arrays: its name is FLAGS[code] ("": the base's cells).
FLAGS = ("", "red", "green", "grey", "missing")
_RED, _GREEN, _GREY, _MISSING = 1, 2, 3, 4


@dataclass
class _Grid:
    """Every cell of a comparison as arrays over (column, label): the columns' keys and the labels in the
    comparison's order; what was measured (QPS, cv, HW metrics); of the compared columns, the relative QPS, the
    flag (``FLAGS``) and the noise; and the order of the cells (flat indexes, column × labels + label): the
    measured ones in the order of their first results, then each compared column's unmeasured ones."""

    keys: list[str]
    labels: list[str]
    base: int
    compared: np.ndarray  # (columns,) bool: every column but the base
    measured: np.ndarray  # (columns, labels) bool
    qps: np.ndarray
    cv: np.ndarray
    has_cv: np.ndarray
    metrics: np.ndarray  # (columns, labels, len(HW_METRICS))
    metric_nulls: np.ndarray
    relative: np.ndarray
    has_relative: np.ndarray
    flags: np.ndarray  # int8 codes of FLAGS
    noisy: np.ndarray
    order: np.ndarray
    measured_count: int
    compared_flags: np.ndarray  # the flags before the noise and the suite's marking: stats.compare's

    def relative_map(self) -> dict[str, dict[str, float | None]]:
        """Per compared column, the relative QPS of every label (None: either side missing)."""
        compared = self.compared
        rows = self.relative[compared].tolist()
        for i, j in zip(*(a.tolist() for a in (~self.has_relative[compared]).nonzero()), strict=True):
            rows[i][j] = None
        return self._by_compared_column(rows)

    def flag_map(self, codes: np.ndarray) -> dict[str, dict[str, Any]]:
        """Per compared column, the flag of every label from ``codes`` (``flags`` or ``compared_flags``)."""
        names = _flag_names()
        return self._by_compared_column(names[codes[self.compared]].tolist())

    def metric_ratio_map(self) -> dict[str, dict[str, dict[str, float | None]]]:
        """Per compared column and label, each HW metric relative to the base's (``stats.metric_ratio``: either
        side missing or NaN → None, both 0 → 1, the base 0 → inf)."""
        import numpy as np

        compared, base = self.compared, self.base
        value, of_base = self.metrics[compared], self.metrics[base]
        present = self.measured[compared][..., None] & ~self.metric_nulls[compared] & ~np.isnan(value)
        base_present = self.measured[base][:, None] & ~self.metric_nulls[base] & ~np.isnan(of_base)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            ratio = np.where(
                of_base == 0, np.where(value == 0, 1.0, np.inf), value / np.where(of_base == 0, 1.0, of_base)
            )
        found = ratio.astype(object)  # Python floats, and None where either side is missing
        found[~(present & base_present)] = None
        rows = found.tolist()
        return self._by_compared_column(
            [[dict(zip(HW_METRICS, metrics, strict=True)) for metrics in row] for row in rows]
        )

    def _by_compared_column(self, rows: list[list[Any]]) -> dict[str, dict[str, Any]]:
        keys = [key for key, compared in zip(self.keys, self.compared.tolist(), strict=True) if compared]
        return {key: dict(zip(self.labels, row, strict=True)) for key, row in zip(keys, rows, strict=True)}


@functools.cache
def _flag_names() -> np.ndarray:
    import numpy as np

    return np.array(FLAGS, dtype=object)


class Cells(Mapping[tuple[str, str], Cell]):
    """A computed comparison's cells, (column key, label) → Cell, in their order: kept as the arrays of its
    ``_Grid`` and made into Cells only when read (a cell alone, or all of them once, when iterated). The maps of
    one question per column (``Comparison.qps``, ``relative``, …) are made from the arrays directly. Pickled as
    the arrays."""

    def __init__(self, grid: _Grid) -> None:
        self.grid = grid
        self._all: dict[tuple[str, str], Cell] | None = None
        self._at: tuple[dict[str, int], dict[str, int]] | None = None
        self._reads = 0

    def __getstate__(self) -> dict[str, Any]:
        return {"grid": self.grid}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["grid"])  # type: ignore[misc]

    def __len__(self) -> int:
        return len(self.grid.order)

    def __iter__(self) -> Iterator[tuple[str, str]]:
        return iter(self.every())

    def __getitem__(self, key: tuple[str, str]) -> Cell:
        if self._all is not None:
            return self._all[key]
        # A cell alone costs a few times what it costs among all of them: a reader of more than a column's worth
        # (a table of every microbenchmark) gets them all made at once.
        self._reads += 1
        if self._reads > len(self.grid.labels) + 1:
            return self.every()[key]
        at = self._where(key)
        if at is None:
            raise KeyError(key)
        return self._cell(*at)

    def __contains__(self, key: object) -> bool:
        return self._where(key) is not None

    def keys(self) -> KeysView[tuple[str, str]]:
        return self.every().keys()

    def values(self) -> ValuesView[Cell]:
        return self.every().values()

    def items(self) -> ItemsView[tuple[str, str], Cell]:
        return self.every().items()

    def _where(self, key: object) -> tuple[int, int] | None:
        if self._at is None:
            grid = self.grid
            self._at = ({k: c for c, k in enumerate(grid.keys)}, {label: j for j, label in enumerate(grid.labels)})
        if not isinstance(key, tuple) or len(key) != 2:
            return None
        columns, labels = self._at
        c, j = columns.get(key[0]), labels.get(key[1])
        if c is None or j is None or not (self.grid.measured[c, j] or self.grid.compared[c]):
            return None
        return c, j

    def _cell(self, c: int, j: int) -> Cell:
        grid = self.grid
        measured = bool(grid.measured[c, j])
        metrics = None
        if measured:
            nulls = grid.metric_nulls[c, j].tolist()
            metrics = dict(
                zip(
                    HW_METRICS,
                    [None if null else v for v, null in zip(grid.metrics[c, j].tolist(), nulls, strict=True)],
                    strict=True,
                )
            )
        return _new_cell(
            Cell,
            (
                float(grid.qps[c, j]) if measured else None,
                float(grid.cv[c, j]) if grid.has_cv[c, j] else None,
                metrics,
                float(grid.relative[c, j]) if grid.has_relative[c, j] else None,
                FLAGS[grid.flags[c, j]],
                bool(grid.noisy[c, j]),
            ),
        )

    def every(self) -> dict[tuple[str, str], Cell]:
        """Every cell, made once."""
        if self._all is None:
            grid = self.grid
            width = len(grid.labels)
            order = grid.order.tolist()
            column, label = (order, order) if not width else ([f // width for f in order], [f % width for f in order])
            keys = [(grid.keys[c], grid.labels[j]) for c, j in zip(column, label, strict=True)]
            taken = grid.order
            measured = grid.measured.ravel()[taken].tolist()
            qps = _or_none(grid.qps.ravel()[taken], grid.measured.ravel()[taken])
            cv = _or_none(grid.cv.ravel()[taken], grid.has_cv.ravel()[taken])
            metrics = _metric_dicts(grid, taken)
            relative = _or_none(grid.relative.ravel()[taken], grid.has_relative.ravel()[taken])
            flags = [FLAGS[code] for code in grid.flags.ravel()[taken].tolist()]
            noisy = grid.noisy.ravel()[taken].tolist()
            self._all = dict(
                zip(
                    keys,
                    [
                        _new_cell(Cell, (q, v, m if is_measured else None, r, f, n))
                        for q, v, m, r, f, n, is_measured in zip(
                            qps, cv, metrics, relative, flags, noisy, measured, strict=True
                        )
                    ],
                    strict=True,
                )
            )
        return self._all

    def measured_view(self, field: int) -> dict[str, dict[str, Any]]:
        """Per column, ``field`` (_QPS, _CV or _METRICS) of each label it measured, in the order of the cells."""
        import numpy as np

        grid = self.grid
        width = len(grid.labels)
        view: dict[str, dict[str, Any]] = {key: {} for key in grid.keys}
        if not width or not grid.measured_count:
            return view
        cells = grid.order[: grid.measured_count]
        cells = cells[np.argsort(cells // width, kind="stable")]
        if field == _QPS:
            values = grid.qps.ravel()[cells].tolist()
        elif field == _CV:
            values = _or_none(grid.cv.ravel()[cells], grid.has_cv.ravel()[cells])
        else:
            values = _metric_dicts(grid, cells)
        names = np.array(grid.labels, dtype=object)[cells % width].tolist()
        ends = np.cumsum(np.bincount(cells // width, minlength=len(grid.keys))).tolist()
        start = 0
        for key, end in zip(grid.keys, ends, strict=True):
            if end > start:
                view[key] = dict(zip(names[start:end], values[start:end], strict=True))
                start = end
        return view

    def compared_view(self, field: int) -> dict[str, dict[str, Any]]:
        """Per compared column, ``field`` (_RELATIVE, _FLAG or _NOISY) of every label."""
        grid = self.grid
        if field == _RELATIVE:
            return grid.relative_map()
        if field == _FLAG:
            return grid.flag_map(grid.flags)
        return grid._by_compared_column(grid.noisy[grid.compared].tolist())


def _or_none(values: np.ndarray, present: np.ndarray) -> list[Any]:
    """``values`` as Python floats, None where not ``present``."""
    if not present.any():
        return [None] * len(values)
    found: list[Any] = values.tolist()
    if not present.all():
        found = [v if p else None for v, p in zip(found, present.tolist(), strict=True)]
    return found


def _metric_dicts(grid: _Grid, cells: np.ndarray) -> list[dict[str, float | None]]:
    """The HW metrics of each of the flat ``cells`` as a Cell holds them."""
    metrics = grid.metrics.reshape(-1, len(HW_METRICS))[cells].tolist()
    nulls = grid.metric_nulls.reshape(-1, len(HW_METRICS))[cells]
    if not nulls.any():
        return [dict(zip(HW_METRICS, row, strict=True)) for row in metrics]
    return [
        dict(zip(HW_METRICS, [None if null else v for v, null in zip(row, isnull, strict=True)], strict=True))
        for row, isnull in zip(metrics, nulls.tolist(), strict=True)
    ]


def _compare(
    measured: _Measured,
    keys: list[str],
    base: int,
    grouped: Mapping[str, Sequence[str]],
    red: float,
    green: float,
) -> tuple[_Grid, stats.ComparisonResult[str], GroupSummaries]:
    """``stats.compare`` of the measured cells, over arrays: each compared column's relative QPS and flag for
    every label, and each group's summary per compared column, the same numbers to the bit (divisions and
    comparisons of the same doubles; the average by ``math.fsum``, the median of the sorted finite values, the
    min and max the first of their value in the group's order). Returns the cells as a ``_Grid`` (flags before
    the noise and the suite's marking), the ``stats.ComparisonResult`` and its group summaries."""
    import numpy as np

    columns = len(keys)
    # The labels as stats.compare orders them: the groups' in order, then those of no group as the base's cells
    # and then each compared column's come.
    labels = list(dict.fromkeys(label for members in grouped.values() for label in members))
    seen = set(labels)
    ungrouped: list[str] = []
    by_column = np.argsort(measured.column, kind="stable")
    if any(label not in seen for label in measured.labels):
        for c in [base, *(c for c in range(columns) if c != base)]:
            for index in measured.label[by_column][measured.column[by_column] == c].tolist():
                label = measured.labels[index]
                if label not in seen:
                    seen.add(label)
                    labels.append(label)
                    ungrouped.append(label)
    position = {label: j for j, label in enumerate(labels)}
    width = len(labels)
    to_position = np.array([position.get(label, -1) for label in measured.labels], dtype=np.int64)
    cell_label = to_position[measured.label]
    flat = measured.column * width + cell_label
    shape = (columns, width)
    # The measured cells set in place through flat views of the (column, label) arrays.
    is_measured = np.zeros(shape, dtype=bool)
    is_measured.reshape(-1)[flat] = True
    qps = np.zeros(shape)
    qps.reshape(-1)[flat] = measured.qps
    cv = np.zeros(shape)
    cv.reshape(-1)[flat] = measured.cv
    has_cv = np.zeros(shape, dtype=bool)
    has_cv.reshape(-1)[flat] = measured.has_cv
    metrics = np.zeros((*shape, len(HW_METRICS)))
    metrics.reshape(-1, len(HW_METRICS))[flat] = measured.metrics
    metric_nulls = np.ones((*shape, len(HW_METRICS)), dtype=bool)
    metric_nulls.reshape(-1, len(HW_METRICS))[flat] = measured.metric_nulls

    compared = np.arange(columns) != base
    runs = [keys[c] for c in range(columns) if c != base]
    usable = is_measured & ~np.isnan(qps)  # stats.compare: None and NaN are missing alike
    value, of_base = qps[compared], qps[base]
    both = usable[compared] & usable[base]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        relative = np.where(
            of_base == 0, np.where(value == 0, 1.0, np.inf), value / np.where(of_base == 0, 1.0, of_base)
        )
    codes = np.full(relative.shape, _GREY, dtype=np.int8)
    codes[np.isnan(relative)] = _MISSING
    codes[relative >= green] = _GREEN
    codes[relative <= red] = _RED
    codes[~both] = _MISSING
    # The order of the cells: the measured ones, then each compared column's unmeasured ones, column by column.
    unmeasured = np.nonzero(~is_measured[compared].ravel())[0]
    compared_rows = np.nonzero(compared)[0]
    missing_cells = compared_rows[unmeasured // width] * width + unmeasured % width if width else unmeasured
    grid_relative = np.zeros(shape)
    grid_relative[compared] = np.where(both, relative, 0.0)
    has_relative = np.zeros(shape, dtype=bool)
    has_relative[compared] = both
    flags = np.zeros(shape, dtype=np.int8)
    flags[compared] = codes
    grid = _Grid(
        keys=keys,
        labels=labels,
        base=base,
        compared=compared,
        measured=is_measured,
        qps=qps,
        cv=cv,
        has_cv=has_cv,
        metrics=metrics,
        metric_nulls=metric_nulls,
        relative=grid_relative,
        has_relative=has_relative,
        flags=flags,
        noisy=np.zeros(shape, dtype=bool),
        order=np.concatenate([flat, missing_cells]).astype(np.int64),
        measured_count=len(flat),
        compared_flags=flags.copy(),
    )
    result: stats.ComparisonResult[str] = stats.ComparisonResult(
        base=keys[base],
        runs=runs,
        groups=list(grouped),
        labels=labels,
        ungrouped=ungrouped,
        relative=grid.relative_map(),
        flags=grid.flag_map(grid.compared_flags),
        red=red,
        green=green,
    )
    summaries = GroupSummaries(grid, grouped)
    result.summaries = summaries.by_run()
    return grid, result, summaries


class GroupSummaries(Mapping[str, dict[str, stats.GroupSummary]]):
    """A computed comparison's group summaries, group → compared column → ``stats.GroupSummary``: each group's
    worked out from the cells' arrays when first read (a page that defers its summary rows reads none), the same
    as ``stats.summarize`` gives. Pickled as the arrays and the groups."""

    def __init__(self, grid: _Grid, grouped: Mapping[str, Sequence[str]]) -> None:
        self.grid = grid
        self.grouped = {group: list(members) for group, members in grouped.items()}
        self._found: dict[str, dict[str, stats.GroupSummary]] = {}

    def __getstate__(self) -> dict[str, Any]:
        return {"grid": self.grid, "grouped": self.grouped}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["grid"], state["grouped"])  # type: ignore[misc]

    def __len__(self) -> int:
        return len(self.grouped)

    def __iter__(self) -> Iterator[str]:
        return iter(self.grouped)

    def __getitem__(self, group: str) -> dict[str, stats.GroupSummary]:
        found = self._found.get(group)
        if found is None:
            import numpy as np

            grid = self.grid
            members = self.grouped[group]
            position = {label: j for j, label in enumerate(grid.labels)}
            compared = grid.compared
            relative = np.where(grid.has_relative[compared], grid.relative[compared], np.nan)
            keys = [key for key, is_compared in zip(grid.keys, compared.tolist(), strict=True) if is_compared]
            summaries = _summaries(relative, [position[label] for label in members], members)
            found = self._found[group] = dict(zip(keys, summaries, strict=True))
        return found

    def by_run(self) -> ByRun:
        return ByRun(self)

    def __repr__(self) -> str:
        return repr({group: self[group] for group in self})


class ByRun(Mapping[tuple[str, str], stats.GroupSummary]):
    """``GroupSummaries`` as ``stats.ComparisonResult.summaries`` holds them: (group, compared column) → summary,
    column by column."""

    def __init__(self, groups: GroupSummaries) -> None:
        self.groups = groups

    def __len__(self) -> int:
        return len(self.groups) * int(self.groups.grid.compared.sum())

    def __iter__(self) -> Iterator[tuple[str, str]]:
        grid = self.groups.grid
        keys = [key for key, is_compared in zip(grid.keys, grid.compared.tolist(), strict=True) if is_compared]
        return iter([(group, key) for key in keys for group in self.groups])

    def __repr__(self) -> str:
        return repr(dict(self.items()))

    def __getitem__(self, key: tuple[str, str]) -> stats.GroupSummary:
        group, column = key
        if group not in self.groups.grouped:
            raise KeyError(key)
        return self.groups[group][column]


def _summaries(relative: np.ndarray, at: list[int], members: list[str]) -> list[stats.GroupSummary]:
    """``stats.summarize`` of one group for each compared column (a row of ``relative``, NaN where missing): the
    group's labels ``members``, at the columns ``at``."""
    import numpy as np

    values = relative[:, at]
    missing = np.isnan(values)
    infinite = np.isinf(values)
    finite = ~missing & ~infinite
    present = ~missing.all(axis=1) if len(at) else np.zeros(len(values), dtype=bool)
    with np.errstate(invalid="ignore"):
        low = np.where(missing, np.inf, values).min(axis=1, initial=np.inf)
        high = np.where(missing, -np.inf, values).max(axis=1, initial=-np.inf)
        # The first of the min (max) in the group's order, as a scan keeping the first of equal values finds it.
        low_at = np.argmax(~missing & (values == low[:, None]), axis=1) if len(at) else np.zeros(len(values), int)
        high_at = np.argmax(~missing & (values == high[:, None]), axis=1) if len(at) else np.zeros(len(values), int)
    total = len(members)
    found = []
    any_missing, any_infinite = missing.any(axis=1).tolist(), infinite.any(axis=1).tolist()
    for i, (row, keep) in enumerate(zip(values.tolist(), finite.tolist(), strict=True)):
        finite_values = list(compress(row, keep))
        avg = median = None
        if finite_values:
            avg = math.fsum(finite_values) / len(finite_values)
            finite_values.sort()
            median = stats.median_of_sorted(finite_values)
        gone = tuple(compress(members, missing[i].tolist())) if any_missing[i] else ()
        has = present[i]
        found.append(
            stats.GroupSummary(
                min=row[low_at[i]] if has else None,
                max=row[high_at[i]] if has else None,
                avg=avg,
                median=median,
                n=total - len(gone),
                total=total,
                min_label=members[low_at[i]] if has else None,
                max_label=members[high_at[i]] if has else None,
                missing=gone,
                infinite=tuple(compress(members, infinite[i].tolist())) if any_infinite[i] else (),
            )
        )
    return found


def _flag_cells(grid: _Grid, repeated: bool, greyed: Collection[tuple[str, str]], noise_k: float) -> None:
    """Each compared cell's flag after the noise and the suite's marking. With repeats, a change inside k × the
    combined spread is not flagged (shown grey, marked noisy); a cell the suite greys (in its column or in the
    base) is never red or green."""
    import numpy as np

    if repeated:
        base = grid.base
        cv, has_cv, relative = grid.cv.tolist(), grid.has_cv.tolist(), grid.relative.tolist()
        for c, j in zip(*(a.tolist() for a in np.nonzero((grid.flags == _RED) | (grid.flags == _GREEN))), strict=True):
            base_cv = cv[base][j] if has_cv[base][j] else None
            own_cv = cv[c][j] if has_cv[c][j] else None
            # noisy: a red or green change that the spread of the repeats explains; shown grey, marked ≈.
            if not stats.outside_noise(relative[c][j], base_cv, own_cv, noise_k):
                grid.noisy[c, j] = True
                grid.flags[c, j] = _GREY
    if greyed:
        column_of = {key: c for c, key in enumerate(grid.keys)}
        position = {label: j for j, label in enumerate(grid.labels)}
        for key, label in greyed:
            c, j = column_of.get(key), position.get(label)
            if c is None or j is None:
                continue
            if c == grid.base:
                grid.flags[grid.compared, j] = _GREY
            elif grid.compared[c]:
                grid.flags[c, j] = _GREY


def _scan_eras(series: Series, labels: Sequence[str]) -> dict[str, list[str]]:
    """The runs of each scan formula when the table mixes both and reads each run by its era's (a suite whose
    scan QPS had two formulas, sysbench's); {} otherwise."""
    if series.spec.scan_formula != "era" or not suites.get(series.suite).scan_eras:
        return {}
    return scan_eras(series.runs, labels)


SCAN_FORMULA_CHOICES = ("era", "spec")


def scan_qps(row: SeriesResult, run: SeriesRun, formula: str) -> float:
    """A result's QPS as the comparison reads it: stored QPS is the spec's, so only a scan of a run whose own
    scripts used another formula changes, and only when each run is read by its own era's formula (for a suite
    whose scan had two, ``Suite.scan_eras``: the rule is the suite's, ``suites.sysbench.eras``)."""
    if formula == "spec" or not eras.other_era(run.scan_formula) or not suites.get(row.suite).scan_eras:
        return row.qps
    return eras.era_qps(row.test, row.range_size, row.qps, row.tps, run.scan_formula, run.commands or {})


def scan_eras(runs: Sequence[SeriesRun], labels: Sequence[str]) -> dict[str, list[str]]:
    """The runs of each scan formula when a table with scan in it mixes both; {} when it does not."""
    return eras.eras_of([(run.name, run.scan_formula) for run in runs], labels)


# Said on the comparison page beside the concurrency it chose.
CONCURRENCY_RULE = (
    "the concurrency at which the base measured the most microbenchmarks, warm-ups not counted; "
    "a tie goes to the fewest clients"
)


def main_concurrency(base_labels: Mapping[int, Collection[str]], every_dop: Collection[int]) -> int:
    """The concurrency a comparison uses when none is asked for (``CONCURRENCY_RULE``).

    ``base_labels``: per concurrency, the base's microbenchmarks that are not warm-ups. Warm-ups never count,
    whether or not the comparison shows them, so the page, its exports (which keep warm-ups, as the reference
    scripts do) and the API all compare at the same concurrency. A base with nothing but warm-ups falls back to
    the fewest clients of the series.
    """
    counted = {dop: len(labels) for dop, labels in base_labels.items() if labels}
    if not counted:
        return min(every_dop)
    return max(counted, key=lambda d: (counted[d], -d))


def _label_order(label: str) -> tuple[int, str]:
    block = reference_block(label)
    return (REFERENCE_BLOCKS.index(block) if block in REFERENCE_BLOCKS else 3, "".join(ls_sort_key(label)))


def _workload_warnings(runs: Sequence[SeriesRun]) -> list[str]:
    """Relative QPS is meaningless when the runs differ in workload parameters: say so loudly."""
    warnings = []
    versions = [r.sysbench_version for r in runs if r.sysbench_version]
    if len(set(versions)) > 1:
        warnings.append(f"runs used different sysbench versions: {', '.join(sorted(set(versions)))}")
    return warnings


def resolve_run(
    name: str,
    *,
    server: str | None = None,
    workload: str | None = None,
    dop: int | None = None,
    variant: str | None = None,
    near: Run | None = None,
) -> Run:
    """The run a user means by its result-directory name (``x.my5651_rel_o2nofp.z12a_c8r32.pk1``) or id.

    A name several summary tables share is resolved by the table context (``dop``, ``variant``, or the table of
    ``near``, the base) or refused with its candidates (``reports.run_identity.choose``)."""
    runs = Run.objects.select_related("server", "workload")
    if name.isdigit():
        pk = row_id(name)
        found = runs.filter(pk=pk).first() if pk is not None else None
        if found is None:
            raise ComparisonError(f"no run with id {name}")
        return found
    runs = runs.filter(name=name)
    if server:
        runs = runs.filter(server__name=server)
    if workload:
        runs = runs.filter(workload__name=workload)
    candidates = list(runs.order_by("started_at", "pk")[:50])
    if not candidates:
        similar = list(
            Run.objects.filter(name__icontains=name.split(".")[1] if "." in name else name)
            .values_list("name", flat=True)
            .distinct()[:5]
        )
        hint = f"; similar: {', '.join(similar)}" if similar else ""
        raise ComparisonError(f"no run named {name!r}{hint}")
    series = {(r.server_id, r.workload_id) for r in candidates}
    if len(series) > 1:
        where = "; ".join(sorted({f"--server {r.server.name!r} --workload {r.workload.name!r}" for r in candidates}))
        raise ComparisonError(f"{name!r} exists on several servers/workloads; choose one with {where}")
    try:
        return run_identity.choose(name, candidates, dop=dop, variant=variant, near=near)
    except run_identity.AmbiguousRun as exc:
        raise ComparisonError(str(exc)) from None
