"""When a run arrives both as its result directory and as a column of a summary table.

The summary is printed from the directory, rounded, and without latencies,
command lines or settings, so the directory's copy is always the one to keep.
Two copies are the same run when they have the run directory's name (which
spells build, config and pk mode) on the same server, their workloads agree
or one of them is not known (a summary table never says its workload), and
they share a concurrency. This
module decides that for the runs of one bundle, with no database behind it;
``runs.summary_store`` decides it against the runs already stored.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Protocol, TypeVar

from suites.summary.parse import UNKNOWN_WORKLOAD


class RunCopy(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def server(self) -> str: ...

    @property
    def workload(self) -> str: ...

    @property
    def from_summary(self) -> bool: ...

    @property
    def server_named(self) -> bool: ...

    @property
    def summary_sources(self) -> dict[str, str]: ...

    @property
    def dops(self) -> frozenset[int]: ...

    @property
    def warnings(self) -> list[str]: ...


R = TypeVar("R", bound=RunCopy)


# Where a summary run's server or workload came from when it took the run directories' of its bundle.
BESIDE = "from the run directories beside the tables in the bundle"

# What a run is on when neither its files nor the bundle's manifest name a server (``runs.parse``).
UNKNOWN_SERVER = "unknown server"


def workloads_agree(a: str, b: str) -> bool:
    return a == b or UNKNOWN_WORKLOAD in (a, b)


def same_run(a: RunCopy, b: RunCopy) -> bool:
    """The same run directory on the same server and workload, measured at a concurrency both have (the author's
    archives hold the same directory name once per concurrency, ``dop1/x.…``, ``dop16/x.…``)."""
    return (
        a.name == b.name and a.server == b.server and workloads_agree(a.workload, b.workload) and bool(a.dops & b.dops)
    )


def keep_raw_over_summary(runs: Sequence[R]) -> tuple[list[R], list[str], set[str]]:
    """The bundle's runs without the summary copies of its run directories, a warning for each copy dropped, and
    the warnings of its runs that no longer hold (no server named, where the directories' server was taken).

    The tables of a bundle that also holds run directories were printed from those directories: a summary run
    the manifest gave no server (or workload) is on the directories' server (and runs their workload) when they
    are all on one (and all ran one).
    """
    raw = [run for run in runs if not run.from_summary]
    servers = {run.server for run in raw}
    kept: list[R] = []
    warnings: list[str] = []
    stale: set[str] = set()
    for run in runs:
        if not run.from_summary:
            kept.append(run)
            continue
        # Unless the manifest or the upload named it, a summary run's server (none, or its folder's name) is the
        # directories', whatever they are called, so the copies of them are recognised.
        if not run.server_named and len(servers) == 1 and run.server not in servers:
            said = [w for w in run.warnings if "no server named" in w]
            stale.update(said)
            run = dataclasses.replace(  # type: ignore[type-var]
                run,
                server=next(iter(servers)),
                warnings=[w for w in run.warnings if w not in said],
                summary_sources={**run.summary_sources, "server": BESIDE},
            )
        workloads = {other.workload for other in raw if other.server == run.server}
        if run.workload == UNKNOWN_WORKLOAD and len(workloads) == 1:
            run = dataclasses.replace(  # type: ignore[type-var]
                run, workload=next(iter(workloads)), summary_sources={**run.summary_sources, "workload": BESIDE}
            )
        if any(same_run(run, other) for other in raw):
            warnings.append(
                f"{run.name}: in the summary tables and as a run directory of this bundle; the run directory's "
                "results were imported, the summary's copy skipped"
            )
            continue
        kept.append(run)
    unknown = [run.name for run in kept if run.from_summary and run.workload == UNKNOWN_WORKLOAD]
    if unknown:
        shown = ", ".join(unknown[:5]) + (f" and {len(unknown) - 5} more" if len(unknown) > 5 else "")
        warnings.append(
            f"the summary tables do not say the workload of {shown}; set workload in benchdash.toml to compare "
            "them with runs imported from their directories"
        )
    return kept, warnings, stale
