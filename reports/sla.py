"""The Insert Benchmark's SLA samples as stored: read once per comparison, checked by the suite's pure rule
(``suites.ibench.sla``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import suites
from runs.models import Result
from suites.ibench.sla import SlaCheck, SlaSample, checks_of, missed_cells


def load_samples(run_ids: Iterable[int], dop: int | None = None) -> list[SlaSample]:
    """The SLA fields of every Insert Benchmark result of the runs (at ``dop`` when given): one query."""
    rows = Result.objects.filter(run_id__in=list(run_ids), microbenchmark__suite=suites.IBENCH.name)
    if dop is not None:
        rows = rows.filter(dop=dop)
    return [
        SlaSample(*row)
        for row in rows.values_list(
            "run_id",
            "microbenchmark__test",
            "dop",
            "extra__ips",
            "extra__target_rate",
            "extra__clients",
            "extra__clients_estimated",
        )
    ]


def sla_checks(column_of_run: Mapping[int, str], dop: int) -> list[SlaCheck]:
    """The SLA of every query step of the runs at concurrency ``dop`` (one query)."""
    return checks_of(load_samples(column_of_run, dop), column_of_run, dop)


def sla_missed_cells(column_of_run: Mapping[int, str], dop: int) -> set[tuple[str, str]]:
    return missed_cells(sla_checks(column_of_run, dop))
