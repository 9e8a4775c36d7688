"""What a benchmark suite brings to benchdash, as one small description every suite fills in.

A suite is a package under ``suites/`` with no Django in it: it parses its own
result files into plain values (its ``parse`` module), says which tests are
warm-ups, which group sets its microbenchmarks are read in, and which errors
mean "this bundle is bad". Its package builds a ``Suite`` and registers it
(``suites.register``); the rest of the code asks the registry rather than
naming suites, so adding one is adding a package and registering it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from suites.groups import GroupSet


@dataclass(frozen=True)
class Suite:
    name: str  # as stored on workloads and microbenchmarks (sysbench, ibench, db_bench, …)
    label: str  # as people say it
    parse_error: type[Exception]  # what its parser raises for a bad file: a bad bundle, never retried
    is_warmup: Callable[[str], bool]  # a warm-up test, left out of comparisons unless asked for
    group_sets: Sequence[GroupSet] = ()  # the suite's own group sets, the first one its default
    # Which of its group sets reads a series with these microbenchmark labels (None: the first).
    group_set_for: Callable[[Sequence[str]], GroupSet] | None = None

    def choose_group_set(self, labels: Sequence[str]) -> GroupSet:
        if self.group_set_for is not None:
            return self.group_set_for(labels)
        if not self.group_sets:
            raise LookupError(f"the {self.name} suite has no group set")
        return self.group_sets[0]
