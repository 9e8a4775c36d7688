"""The sysbench suite as the registry knows it."""

from __future__ import annotations

from collections.abc import Sequence

import suites.groups as groups
from suites import names
from suites.base import Suite
from suites.sysbench import layout, parse


def group_set_for(labels: Sequence[str]) -> groups.GroupSet:
    """classic-42 for the pre/post layout (several .pre point and range tests), else current-32.

    A series with one or two stray ``.pre`` tests (nov25 has point-query.pre and
    range-notcovered-si.pre) is a current-32 series: those two would otherwise
    make point-1 and range-1 groups of one test each.
    """
    pre = [label for label in labels if groups.is_pre(label)]
    point_pre = sum(1 for label in pre if "point" in label)
    return groups.CLASSIC_42 if point_pre >= 3 and len(pre) - point_pre >= 3 else groups.CURRENT_32


def not_compared(test: str) -> bool:
    """Warm-ups and the load step: kept and shown, but out of the comparisons unless warm-ups are asked for (and
    even then the load is in no group and no reference QPS table)."""
    return parse.is_warmup(test) or parse.is_load(test)


SUITE = Suite(
    name=names.SYSBENCH,
    label="sysbench",
    parse_error=parse.ParseError,
    is_warmup=parse.is_warmup,
    is_excluded=not_compared,
    group_sets=groups.STANDARD_GROUP_SETS,
    group_set_for=group_set_for,
    scan_eras=True,
    export_table=layout.qps_table,
)
