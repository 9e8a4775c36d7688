"""The Insert Benchmark's group set: load, writes, queries."""

from __future__ import annotations

from collections.abc import Iterable

from suites.groups import GroupSet
from suites.ibench import parse as ibench

IBENCH_LOAD, IBENCH_WRITES, IBENCH_QUERIES = "load", "writes", "queries"
_IBENCH_GROUPS = {"load": IBENCH_LOAD, "write": IBENCH_WRITES, "query": IBENCH_QUERIES}


def ibench_group(name: str) -> str | None:
    """The Insert Benchmark group of a step: load (l.i0, l.x), writes (l.i1, l.i2), queries (qr*, qp*, q100.1 …)."""
    if not ibench.is_step(name):
        return None
    return _IBENCH_GROUPS[ibench.step_kind(name)]


def is_ibench_series(names: Iterable[str]) -> bool:
    """Whether the tests are Insert Benchmark steps: every one is named like a step (l.i0, qr100, q100.1)."""
    names = list(names)
    return bool(names) and all(ibench.is_step(name) for name in names)


IBENCH = GroupSet("ibench", (IBENCH_LOAD, IBENCH_WRITES, IBENCH_QUERIES), ibench_group)
