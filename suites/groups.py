"""Group sets: which summary group a test belongs to; sysbench's two standard sets (each other suite keeps its own
in its package's ``groups`` module).

Every classifier takes a test name (``point-query.pre``) or a test label
(``point-query.pre_range=100``) and returns a group name, or None when the test
is in no group; callers list those as "ungrouped" rather than dropping them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from suites.sysbench.parse import MEASURED_SCAN, is_load, is_warmup

_LABEL_RANGE_RE = re.compile(r"_range=\d+$")
_WRITE_RE = re.compile(r"delete|insert|update|write")

POINT_1, POINT_2, RANGE_1, RANGE_2, WRITES = "point-1", "point-2", "range-1", "range-2", "writes"
POINT_QUERIES = "point queries"
RANGE_NO_AGG = "range queries without aggregation"
RANGE_AGG = "range queries with aggregation"

# current-32 is a fixed list of tests, not a pattern: an ad-hoc test must show up
# as ungrouped instead of silently changing a group's N.
_CURRENT_32: dict[str, str] = {
    **dict.fromkeys(
        (
            "hot-points",
            "point-query",
            "points-covered-pk",
            "points-covered-si",
            "points-notcovered-pk",
            "points-notcovered-si",
            "random-points",
        ),
        POINT_QUERIES,
    ),
    **dict.fromkeys(
        ("range-covered-pk", "range-covered-si", "range-notcovered-pk", "range-notcovered-si", "scan"),
        RANGE_NO_AGG,
    ),
    **dict.fromkeys(
        (
            "read-only",
            "read-only-count",
            "read-only-distinct",
            "read-only-order",
            "read-only-simple",
            "read-only-sum",
        ),
        RANGE_AGG,
    ),
    **dict.fromkeys(
        (
            "delete",
            "insert",
            "read-write",
            "update-index",
            "update-inlist",
            "update-nonindex",
            "update-one",
            "update-zipf",
            "write-only",
        ),
        WRITES,
    ),
}


def bare_test(name: str) -> str:
    """The test of a label (``read-only_range=10`` → ``read-only``); a bare test name is returned as is."""
    return _LABEL_RANGE_RE.sub("", name)


def is_pre(name: str) -> bool:
    """Run before the write-heavy phase: the test name ends with ``.pre`` (``.warmpre`` is a warm-up)."""
    return bare_test(name).endswith(".pre")


def classic_42(name: str, *, include_warmups: bool = False) -> str | None:
    """The classic-42 group: point-1/point-2, range-1/range-2 (``.pre`` / not) or writes.

    Point if the name contains "point", write if it matches
    ``delete|insert|update|write``, otherwise range. Warm-up tests belong to no
    group unless ``include_warmups``: they exist to warm caches, not to measure.
    """
    test = bare_test(name)
    # scan.warm is measured, not a warm-up (``sysbench.parse.is_warmup``), but no member of the standard group
    # sets: their counts (SPEC §3) are the author's, who reads it beside its groups.
    if is_load(test) or ((is_warmup(test) or test == MEASURED_SCAN) and not include_warmups):
        return None
    if "point" in test:
        return POINT_1 if is_pre(test) else POINT_2
    if _WRITE_RE.search(test):
        return WRITES
    return RANGE_1 if is_pre(test) else RANGE_2


def current_32(name: str) -> str | None:
    """The current-32 group (2025 on): point queries, range queries with/without aggregation, writes.

    Only the known tests without a phase suffix are grouped; ``.pre`` tests,
    warm-ups and ad-hoc tests give None (the caller lists them as ungrouped).
    """
    return _CURRENT_32.get(bare_test(name))


@dataclass(frozen=True)
class GroupSet:
    name: str
    groups: tuple[str, ...]
    """Group names in display order."""
    classify: Callable[[str], str | None]

    def partition(self, names: Iterable[str]) -> tuple[dict[str, list[str]], list[str]]:
        """Split test names or labels into ``{group: [names…]}`` (every group present, in order) and the ungrouped.

        Names keep their input order inside each group.
        """
        grouped: dict[str, list[str]] = {group: [] for group in self.groups}
        ungrouped: list[str] = []
        for name in names:
            group = self.classify(name)
            if group is None or group not in grouped:
                ungrouped.append(name)
            else:
                grouped[group].append(name)
        return grouped, ungrouped


CLASSIC_42 = GroupSet("classic-42", (POINT_1, POINT_2, RANGE_1, RANGE_2, WRITES), classic_42)
CURRENT_32 = GroupSet("current-32", (POINT_QUERIES, RANGE_NO_AGG, RANGE_AGG, WRITES), current_32)
STANDARD_GROUP_SETS = (CLASSIC_42, CURRENT_32)


def user_group_set(name: str, rules: Mapping[str, str | Sequence[str]]) -> GroupSet:
    """A user-defined group set: ``{group: rule}`` in display order; the first matching rule wins.

    A rule is either a regular expression written ``"re:<pattern>"`` (searched
    in the test name or label given to ``classify``) or a list of test names
    and/or labels. A listed test name also matches its labels
    (``read-only`` matches ``read-only_range=10``); a listed label matches only
    itself. A plain string without ``re:`` is one test name, not a list of
    characters. Raises ValueError on a bad pattern, naming the group.
    """
    matchers: list[tuple[str, re.Pattern[str] | frozenset[str]]] = []
    for group, rule in rules.items():
        if isinstance(rule, str) and rule.startswith("re:"):
            try:
                matchers.append((group, re.compile(rule[3:])))
            except re.error as exc:
                raise ValueError(f"group {group!r}: bad regular expression {rule[3:]!r}: {exc}") from exc
        else:
            matchers.append((group, frozenset([rule] if isinstance(rule, str) else rule)))

    def classify(item: str) -> str | None:
        test = bare_test(item)
        for group, matcher in matchers:
            if isinstance(matcher, frozenset):
                if item in matcher or test in matcher:
                    return group
            elif matcher.search(item):
                return group
        return None

    return GroupSet(name, tuple(rules), classify)
