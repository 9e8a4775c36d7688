"""What a benchmark suite brings to benchdash, as one small description every suite fills in.

A suite is a package under ``suites/`` with no Django in it: it parses its own
result files into plain values (its ``parse`` module), says which tests are
warm-ups, which group sets its microbenchmarks are read in, and which errors
mean "this bundle is bad". Its package builds a ``Suite`` and registers it
(``suites.register``); the rest of the code asks the registry rather than
naming suites, so adding one is adding a package and registering it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

# Where a run's start time came from (the values the runs table stores), here for the suites' parsers.
from suites.names import STARTED_CONTENT as STARTED_CONTENT
from suites.names import STARTED_FILE_TIME as STARTED_FILE_TIME

if TYPE_CHECKING:
    from suites.groups import GroupSet
    from suites.tables import TableLayout


class ResultFile(Protocol):
    """One result file of a bundle that a suite recognised: where it is, when it was written, its bytes."""

    @property
    def path(self) -> str: ...  # inside the bundle: its folders often say the server, workload or build

    @property
    def mtime(self) -> float: ...

    def read(self) -> bytes: ...

    # Like ``bytes.decode``: a parser that decodes the file itself never holds its bytes and its text at once.
    def decode(self, encoding: str = "utf-8", errors: str = "strict") -> str: ...


@dataclass
class SuiteRun:
    """One run a suite found in its files, as plain values; the import applies the bundle's manifests over it."""

    name: str
    source: str  # the file it was found in (the first one when several): messages and manifests start there
    content_sha256: str  # the same results found again (in another file or bundle) are the same run
    dbms: str
    version: str
    build: str
    flavour: str
    config: str
    workload: str
    workload_params: dict[str, Any]
    results: list[dict[str, Any]]  # one row per microbenchmark and concurrency: test, range_size, dop, qps, …
    started_at: datetime | None = None
    started_from: str = STARTED_FILE_TIME
    server: str | None = None  # when the files' folders name it
    warnings: list[str] = field(default_factory=list)
    # Said only when the manifest does not name the DBMS: the build name was read to guess it.
    name_warnings: list[str] = field(default_factory=list)
    # Said only when the manifest does not name the workload: the files did not say it.
    workload_warnings: list[str] = field(default_factory=list)
    # Said only when the manifest does not name the concurrency: the files did not say it, and the results' dop
    # of 1 stands in for it (the manifest's ``concurrency`` replaces it).
    dop_warnings: list[str] = field(default_factory=list)
    # Where the run's concurrency, server and workload came from, when the files are not the run's own (summary
    # tables): what → where, in words for the run's page. The import puts the manifest's part over it.
    sources: dict[str, str] = field(default_factory=dict)
    # Another registered suite whose run this is (a document saying it ran sysbench); None: the parsing suite's.
    suite: str | None = None
    config_text: str = ""  # the DBMS configuration's text, when the files carry it
    cpus: int | None = None  # the server's CPUs, when the files say them
    # The server's other details the files say (ram_gb, storage, os): a server the import creates gets them.
    server_details: dict[str, Any] = field(default_factory=dict)
    notes: str = ""  # what the files say of the run in words (an open-format document's notes)
    # Of a run read from a summary table: what tells its table apart from the archive's others, the concurrency
    # aside (``pgo.prep1``; "" for the only one).
    table: str = ""
    # Of a run read from a summary table, how the author printed it, so exports print it so: "decimals" (test
    # label → decimals of its QPS cell, where not 0: scan's millions of rows/s had 3 in 2021-2025), "pre_rows"
    # (the table has the .pre tests' rows), "met_order" (its o.met blocks in the file's order).
    layout: dict[str, Any] = field(default_factory=dict)


@dataclass
class SuiteParse:
    runs: list[SuiteRun]
    warnings: list[str]
    # (path in the bundle, why) of each file recognised but not read (a copy of another file, someone's notes):
    # listed with the files of run directories that were not read, on the bundle page and in the import output.
    not_read: list[tuple[str, str]] = field(default_factory=list)
    # (path in the bundle, what was read of it) of each file the suite read: the import report lists them.
    read: list[tuple[str, str]] = field(default_factory=list)


@dataclass(frozen=True)
class Suite:
    name: str  # as stored on workloads and microbenchmarks (sysbench, ibench, db_bench, …)
    label: str  # as people say it
    parse_error: type[Exception]  # what its parser raises for a bad file: a bad bundle, never retried
    is_warmup: Callable[[str], bool]  # a warm-up test, left out of comparisons unless asked for
    group_sets: Sequence[GroupSet] = ()  # the suite's own group sets, the first one its default
    # Which of its group sets reads a series with these microbenchmark labels (None: the first).
    group_set_for: Callable[[Sequence[str]], GroupSet] | None = None
    # Whether a file of a bundle (its path's parts, compression suffix removed) is one of this suite's results.
    # None: the suite's files are found some other way (sysbench's run directories, by their names).
    recognise: Callable[[Sequence[str]], bool] | None = None
    # Its result files as a bundle's author is told to add them when a bundle holds nothing benchdash reads.
    files_hint: str = ""
    # The suite's recognised files of one bundle → its runs. ``required``: they are all the bundle has, so
    # finding no run is the suite's parse_error rather than a warning. ``bundle`` names the bundle in messages.
    parse_files: Callable[..., SuiteParse] | None = None
    # Microbenchmarks stored but left out of comparisons by default (None: the warm-ups).
    is_excluded: Callable[[str], bool] | None = None
    # A microbenchmark label's place in the suite's own order (None: the label is placed like a sysbench test).
    label_order: Callable[[str], tuple[int, str] | None] | None = None
    # Which of the author's table layouts exports use: "qps" (tests × versions of QPS), "steps" (a table per
    # step with every metric column), "sum" (the db_bench summaries' tests × versions).
    reference_layout: str = "qps"
    # Its tests × columns tsv/csv export (its package's ``layout`` module), from plain values
    # (``suites.tables.ExportTable``). None: sysbench's QPS table. A "steps" layout reads more than a comparison
    # holds (each step's metric columns, from the database), so reports builds it.
    export_table: TableLayout | None = None
    # Its measured steps ran against a target rate (the Insert Benchmark's background inserts): a step that missed
    # it is no regression signal.
    checks_sla: bool = False
    # The cells of a comparison that are no regression signal by the suite's own rule: (its samples, the column
    # of each run, the concurrency) → {(column, label)}; they are never flagged red or green. None: every cell is
    # a signal. The Insert Benchmark's: the query steps whose background inserts missed their target rate (its
    # samples are read when ``checks_sla``).
    no_signal: Callable[[Sequence[Any], Mapping[int, str], int], set[tuple[str, str]]] | None = None
    # Its own per-result metrics (kept in Result.extra) worth a ratio to the base on the drill-down, in order.
    extra_metrics: tuple[str, ...] = ()
    # (metric, what it is called) where a name means something else in another suite; pairs keep a Suite hashable.
    metric_labels: tuple[tuple[str, str], ...] = ()
    # Its files are summary tables of another suite's results (named here): its runs are stored as that suite's,
    # marked as coming from a summary, so they compare with the runs imported from their own files.
    summary_of: str | None = None
    # Its scan microbenchmark's QPS was computed by two formulas over the years (the author's sysbench scripts):
    # comparisons offer reading it by either. Meaningless for any other suite, whose pages do not offer it.
    scan_eras: bool = False

    def excluded(self, test: str) -> bool:
        return (self.is_excluded or self.is_warmup)(test)

    def metric_label(self, name: str) -> str:
        return dict(self.metric_labels).get(name, name)

    def table_layout(self) -> TableLayout:
        """The function that prints the suite's tests × columns table (sysbench's QPS table unless it has its own)."""
        if self.export_table is not None:
            return self.export_table
        from suites.sysbench.layout import qps_table  # imported here: that package imports this module

        return qps_table

    def choose_group_set(self, labels: Sequence[str]) -> GroupSet:
        if self.group_set_for is not None:
            return self.group_set_for(labels)
        if not self.group_sets:
            raise LookupError(f"the {self.name} suite has no group set")
        return self.group_sets[0]
