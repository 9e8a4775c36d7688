"""The Insert Benchmark's background-insert SLA: did a query step's inserts keep up with clients × the rate?

A query step whose background inserts missed their target rate ran another write load than its base, so its
relative QPS is no regression signal. Pure: the samples are read from the database by the caller
(``reports.sla.load_samples``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from suites.ibench import parse as ibench


@dataclass(frozen=True)
class SlaSample:
    """What one run recorded for one step at one concurrency, as stored (not yet checked)."""

    run_id: int
    step: str
    dop: int
    ips: object
    rate: object
    clients: object
    clients_estimated: object


@dataclass(frozen=True)
class SlaCheck:
    """One query step of one run: did its background inserts keep up with clients × the per-client rate?"""

    column: str
    step: str
    rate: int  # per client
    clients: int
    clients_estimated: bool
    ips: float | None

    @property
    def target_ips(self) -> int:
        return self.clients * self.rate

    @property
    def threshold(self) -> float:
        return ibench.sla_threshold(self.clients, self.rate)

    @property
    def met(self) -> bool | None:
        return ibench.meets_sla(self.ips, self.clients, self.rate)


def checks_of(samples: Iterable[SlaSample], column_of_run: Mapping[int, str], dop: int) -> list[SlaCheck]:
    """The SLA of every query step at concurrency ``dop``; load and write steps have no insert target."""
    checks = []
    for sample in samples:
        if sample.dop != dop or sample.run_id not in column_of_run or not ibench.is_query_step(sample.step):
            continue
        rate = sample.rate if isinstance(sample.rate, int) and sample.rate > 0 else ibench.target_rate(sample.step)
        if rate is None:
            continue
        clients = sample.clients
        checks.append(
            SlaCheck(
                column=column_of_run[sample.run_id],
                step=sample.step,
                rate=rate,
                clients=clients if isinstance(clients, int) and clients > 0 else dop,
                clients_estimated=bool(sample.clients_estimated),
                ips=float(sample.ips) if isinstance(sample.ips, int | float) else None,
            )
        )
    return checks


def no_signal(samples: Iterable[SlaSample], column_of_run: Mapping[int, str], dop: int) -> set[tuple[str, str]]:
    """The suite's marking of a comparison (``Suite.no_signal``): the cells whose inserts missed the SLA."""
    return missed_cells(checks_of(samples, column_of_run, dop))


def missed_cells(checks: Iterable[SlaCheck]) -> set[tuple[str, str]]:
    """(column, step) of every query step whose inserts missed the SLA; a column of repeats misses if one does."""
    return {(check.column, check.step) for check in checks if check.met is False}
