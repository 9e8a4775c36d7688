"""Which runs a comparison's columns are, and in which order: what tells runs with one name apart.

The author reuses run names in every summary table of an archive (one folder per
client count, or variants in the file names): a name alone may mean several
runs, each a column of another table (``Run.summary_table``). These rules keep
them apart — a name is resolved by the table context (``--dop``, a variant) or
refused with the candidates; runs of different tables are never one column, so
never averaged as repeats — and keep the columns in the order a user asked for.
Kept apart from ``reports.compare`` so its computation and these rules change
independently.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, TypeVar

from django.db.models import Q, QuerySet

from runs import branches
from runs.models import Run


class ComparisonRun(Protocol):
    @property
    def id(self) -> int: ...

    @property
    def build_id(self) -> int: ...

    @property
    def config_id(self) -> int: ...

    @property
    def summary_table(self) -> str: ...

    @property
    def lane(self) -> str: ...


R = TypeVar("R", bound=ComparisonRun)


class AmbiguousRun(ValueError):
    """A run name that means several runs the context does not choose between; the message lists them."""


def column_key(run: ComparisonRun) -> tuple[int, int, str, str]:
    """What makes runs one column: the same build and config (repeats, averaged) of the same table, if any, and
    the same lane. Runs of two summary tables are two experiments, whatever their names; a pull request's run
    (or another branch's) is never a repeat of the main line's build of the same name (``runs.branches``)."""
    return (run.build_id, run.config_id, run.summary_table, run.lane)


def series_filter(base: Run) -> Q:
    """The runs a default comparison of ``base`` reads beside it: the main line (``runs.branches``), and the
    base's own lane when the base is off it (a pull request's run is compared against the main line); a summary
    run's series is its own table (and any run directories), runs of the archive's other tables are other
    experiments."""
    runs = branches.series_of(base.branch, base.pull_request)
    if not base.summary_table:
        return runs
    return runs & (Q(summary_table="") | Q(summary_table=base.summary_table))


def in_asked_order(runs: Sequence[R], base_id: int, asked: Sequence[int]) -> list[R]:
    """``runs`` in the order ``--runs`` named them, the base first (the author's tables are relative to their
    first column); ``runs`` as they are when nothing was asked."""
    if not asked:
        return list(runs)
    order = list(dict.fromkeys((base_id, *asked)))
    rank = {run_id: at for at, run_id in enumerate(order)}
    return sorted(runs, key=lambda run: rank.get(run.id, len(rank)))


def table_words(table: str) -> set[str]:
    """The words a table context can name: ``in.dop8`` → {"in", "dop8", "in.dop8"}."""
    return {table, *table.split(".")} if table else set()


def choose(
    name: str, candidates: Sequence[Run], *, dop: int | None = None, variant: str | None = None, near: Run | None = None
) -> Run:
    """The one run ``name`` means among ``candidates`` (runs of that name in one series).

    Repeats of one table (same build, config and table) are one run for this purpose; runs of several tables are
    chosen between by ``--dop`` (the table's concurrency), ``variant`` (a word of the table's name, or its whole
    identity) or ``near`` (the run of the same table as the base), else refused with the candidates listed.
    """
    tables = {run.summary_table for run in candidates}
    if len(tables) <= 1:
        return candidates[0]
    chosen = _narrowed(candidates, dop=dop, variant=variant, near=near)
    if chosen and len({run.summary_table for run in chosen}) == 1:
        return chosen[0]
    listed = ", ".join(f"{run.summary_table or 'a run directory'} (run {run.pk})" for run in candidates[:20])
    asked = " and ".join(
        part for part in (f"--dop {dop}" if dop else "", f"--variant {variant}" if variant else "") if part
    )
    if asked and not chosen:
        raise AmbiguousRun(f"no run named {name!r} in a table of {asked}; its tables: {listed}")
    raise AmbiguousRun(
        f"{name!r} names runs of {len(tables)} summary tables: {listed}; choose one with --dop N (the table's "
        "concurrency), --variant WORD (a word of its table's name) or the run id"
    )


def _narrowed(candidates: Sequence[Run], *, dop: int | None, variant: str | None, near: Run | None) -> list[Run]:
    """The candidates of the table ``dop`` and ``variant`` say, and of the base's table when several are left."""
    chosen = list(candidates)
    if dop is not None:
        chosen = [run for run in chosen if f"dop{dop}" in table_words(run.summary_table) or not run.summary_table]
    if variant:
        chosen = [run for run in chosen if variant in table_words(run.summary_table)]
    if near is not None and len({run.summary_table for run in chosen}) > 1:
        same = [run for run in chosen if run.summary_table == near.summary_table]
        chosen = same or chosen
    return chosen


def runs_named(runs: QuerySet[Run], name: str) -> list[Run]:
    return list(runs.filter(name=name).order_by("started_at", "pk")[:50])
