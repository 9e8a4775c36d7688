"""The ibench suite as the registry knows it."""

from __future__ import annotations

import suites.groups as groups
from suites.base import Suite
from suites.ibench import parse


def _no_warmups(test: str) -> bool:
    return False  # every step is measured; none is run only to warm the server up


SUITE = Suite(
    name="ibench",
    label="Insert Benchmark",
    parse_error=parse.ParseError,
    is_warmup=_no_warmups,
    group_sets=(groups.IBENCH,),
)
