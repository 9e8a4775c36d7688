"""Summary copies of runs against the runs already stored (``runs.summaries`` says what a copy is).

- A summary run whose run is already stored (from its directory, or from an
  earlier summary) is skipped, and the bundle's warnings say which run holds it.
- A run directory arriving after a summary copy of it replaces that copy: the
  directory's results are stored as a new run, whatever pointed at the summary
  copy (saved reports, regression records) is moved to it, and the copy is
  deleted, all in the import's transaction. The summary's numbers are the
  directory's, rounded, so nothing is lost; the bundle's warnings say so.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from django.db import models, transaction

import suites
from runs.models import Result, Run, RunFile
from runs.parse import ParsedRun
from runs.signals import announce_import
from runs.summaries import workloads_agree


@dataclass
class Plan:
    remaining: list[ParsedRun] = field(default_factory=list)
    skipped: list[tuple[ParsedRun, Run]] = field(default_factory=list)  # summary copies of stored runs
    replaces: dict[int, Run] = field(default_factory=dict)  # id() of a run directory's ParsedRun → its summary copy


def plan(parsed: Sequence[ParsedRun]) -> Plan:
    """Which parsed runs are summary copies of stored runs, and which stored summary copies they replace.

    Two queries, whatever the number of runs. Only stored runs that can match are read: those on a server the
    bundle's runs name, and, when the bundle holds no summary, only summary copies (a run directory replaces
    a copy and nothing else). Read by name alone, every run of that name on every server came back with the
    concurrencies of all their results: at 25,000 runs, hundreds of thousands of rows per bundle."""
    result = Plan()
    stored = _stored_candidates([p for p in parsed if p.suite == suites.SYSBENCH.name])
    dops = _dops_of([run.pk for runs in stored.values() for run in runs])
    taken: set[int] = set()
    for p in parsed:
        matches = [
            run
            for run in stored.get(p.name, [])
            if p.suite == suites.SYSBENCH.name
            and run.server.name == p.server
            and workloads_agree(run.workload.name, p.workload)
            and p.dops & dops.get(run.pk, set())
            and run.pk not in taken
        ]
        if p.from_summary and matches:
            # The directory's copy first, if there is one: it is the run that holds the results.
            result.skipped.append((p, min(matches, key=lambda run: (run.from_summary, run.pk))))
            continue
        copy = next((run for run in matches if run.from_summary), None)
        if not p.from_summary and copy is not None:
            taken.add(copy.pk)
            result.replaces[id(p)] = copy
        result.remaining.append(p)
    return result


def _stored_candidates(sysbench_runs: Sequence[ParsedRun]) -> dict[str, list[Run]]:
    """The stored sysbench runs of the parsed runs' names on their servers (only summary copies when the bundle
    holds no summary), by name, oldest first."""
    names = {p.name for p in sysbench_runs}
    stored: dict[str, list[Run]] = {}
    if not names:
        return stored
    rows = (
        Run.objects.filter(
            name__in=names,
            server__name__in={p.server for p in sysbench_runs},
            workload__suite=suites.SYSBENCH.name,
        )
        .select_related("server", "workload")
        .order_by("pk")
    )
    if not any(p.from_summary for p in sysbench_runs):
        rows = rows.filter(from_summary=True)
    for run in rows:
        stored.setdefault(run.name, []).append(run)
    return stored


def _dops_of(candidates: list[int]) -> dict[int, set[int]]:
    """The concurrencies each stored run was measured at: a run at another is not the same run."""
    dops: dict[int, set[int]] = {}
    if candidates:
        for run_id, dop in Result.objects.filter(run_id__in=candidates).values_list("run_id", "dop").distinct():
            dops.setdefault(run_id, set()).add(dop)
    return dops


def skipped_warning(p: ParsedRun, holder: Run) -> str:
    source = "a summary" if holder.from_summary else "its run directory"
    return (
        f"{p.name}: already imported from {source} as run {holder.pk} (bundle {holder.bundle_id}); the summary's "
        "copy was skipped"
    )


def holder_details(holder: Run) -> dict[str, Any]:
    return {
        "id": holder.pk,
        "name": holder.name,
        "server": holder.server.name,
        "workload": holder.workload.name,
        "bundle_id": holder.bundle_id,
    }


def replace_copies(stored: Sequence[tuple[ParsedRun, Run]], the_plan: Plan) -> list[str]:
    """Move what pointed at each replaced summary copy to the run stored from its directory, then delete the
    copy; the warnings that say so. Inside the import's transaction."""
    warnings = []
    for p, run in stored:
        copy = the_plan.replaces.get(id(p))
        if copy is None:
            continue
        copy_id, copy_bundle = copy.pk, copy.bundle_id
        moved = (copy.server_id, copy.workload_id) != (run.server_id, run.workload_id)
        _move_references(copy, run)
        copy.delete()
        if moved and copy_bundle != run.bundle_id:
            # The copy left a series this import does not touch (its workload was not known): the rest of the
            # summary's runs are announced again, so that series is refreshed without it.
            transaction.on_commit(functools.partial(announce_import, copy_bundle))
        warnings.append(
            f"{p.name}: replaces run {copy_id} imported from a summary (bundle {copy.bundle_id}), whose numbers "
            "are this run directory's, rounded"
        )
    return warnings


def _move_references(old: Run, new: Run) -> None:
    """Point every row that refers to ``old`` at ``new``, whichever app it belongs to (runs knows none of
    them by name); the copy's own results and files go with it.

    Hidden relations are included: a foreign key without a reverse name and a many-to-many field's own
    table are both foreign keys to the run."""
    for relation in Run._meta.get_fields(include_hidden=True):
        if not isinstance(relation, models.ManyToOneRel) or relation.related_model in (Result, RunFile):
            continue
        name = relation.field.name
        relation.related_model._default_manager.filter(**{name: old}).update(**{name: new})  # type: ignore[union-attr]
