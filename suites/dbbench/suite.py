"""The dbbench suite as the registry knows it."""

from __future__ import annotations

import suites.groups as groups
from suites.base import Suite
from suites.dbbench import parse

SUITE = Suite(
    name="db_bench",
    label="db_bench",
    parse_error=parse.ParseError,
    is_warmup=parse.is_warmup,
    group_sets=(groups.DBBENCH,),
)
