"""RocksDB db_bench's group set: load, read-only, read-while-writing, write."""

from __future__ import annotations

from collections.abc import Iterable

from suites.dbbench import parse as dbbench
from suites.groups import GroupSet, bare_test

LOAD, READ_ONLY, READ_WHILE_WRITING, WRITE = "load", "read-only", "read-while-writing", "write"
# Benchmarks by what they measure; anything else (an ad-hoc test) is ungrouped rather than guessed.
_DBBENCH_READ_ONLY = frozenset({"readrandom", "multireadrandom", "fwdrange", "revrange", "readseq", "seekrandom"})
_DBBENCH_WRITE = frozenset({"overwrite", "overwriteandwait", "updaterandom", "mergerandom", "deleterandom"})


def dbbench_group(name: str) -> str | None:
    """The db_bench group of a test: load, read-only, read-while-writing or write.

    The warm-up (revrange.t1) and overwritesome are in no group: the reference
    tables leave them out, so a summary must not count them either.
    """
    test = bare_test(name)
    if dbbench.is_excluded(test):
        return None
    benchmark = dbbench.benchmark_of(test)
    if benchmark.startswith("fill") or benchmark == "bulkload":
        return LOAD
    if "while" in benchmark:
        return READ_WHILE_WRITING
    if benchmark in _DBBENCH_READ_ONLY:
        return READ_ONLY
    if benchmark in _DBBENCH_WRITE:
        return WRITE
    return None


def is_dbbench_series(names: Iterable[str]) -> bool:
    """Whether the tests are db_bench's: none has a sysbench range, and each is named like a db_bench test."""
    names = list(names)
    return bool(names) and all("_range=" not in name and dbbench.is_dbbench_test(name) for name in names)


DBBENCH = GroupSet("db_bench", (LOAD, READ_ONLY, READ_WHILE_WRITING, WRITE), dbbench_group)
