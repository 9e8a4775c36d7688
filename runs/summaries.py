"""When a run arrives both as its result directory and as a column of a summary table.

The summary is printed from the directory, rounded, and without latencies,
command lines or settings, so the directory's copy is always the one to keep.
Two copies are the same run when they have the run directory's name (which
spells build, config and pk mode) on the same server, and their workloads agree
or one of them is not known (a summary table never says its workload). This
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


R = TypeVar("R", bound=RunCopy)


def workloads_agree(a: str, b: str) -> bool:
    return a == b or UNKNOWN_WORKLOAD in (a, b)


def same_run(a: RunCopy, b: RunCopy) -> bool:
    return a.name == b.name and a.server == b.server and workloads_agree(a.workload, b.workload)


def keep_raw_over_summary(runs: Sequence[R]) -> tuple[list[R], list[str]]:
    """The bundle's runs without the summary copies of its run directories, and a warning for each copy dropped.

    A summary run of a bundle that also holds run directories takes their workload when the manifest did not
    name one and they all ran one workload on its server: the tables were printed from those directories.
    """
    raw = [run for run in runs if not run.from_summary]
    kept: list[R] = []
    warnings: list[str] = []
    for run in runs:
        if not run.from_summary:
            kept.append(run)
            continue
        directory = next((other for other in raw if same_run(run, other)), None)
        if directory is not None:
            warnings.append(
                f"{run.name}: in the summary tables and as a run directory of this bundle; the run directory's "
                "results were imported, the summary's copy skipped"
            )
            continue
        workloads = {other.workload for other in raw if other.server == run.server}
        if run.workload == UNKNOWN_WORKLOAD and len(workloads) == 1:
            run = dataclasses.replace(run, workload=workloads.pop())  # type: ignore[type-var]
        kept.append(run)
    unknown = [run.name for run in kept if run.from_summary and run.workload == UNKNOWN_WORKLOAD]
    if unknown:
        shown = ", ".join(unknown[:5]) + (f" and {len(unknown) - 5} more" if len(unknown) > 5 else "")
        warnings.append(
            f"the summary tables do not say the workload of {shown}; set workload in benchdash.toml to compare "
            "them with runs imported from their directories"
        )
    return kept, warnings
