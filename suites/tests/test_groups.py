"""Group sets: classic-42, current-32 and user-defined sets."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from suites.groups import (
    CLASSIC_42,
    CURRENT_32,
    bare_test,
    classic_42,
    current_32,
    user_group_set,
)
from suites.sysbench import parse as sysbench

_POINT_TESTS = [
    "point-query",
    "points-covered-pk",
    "points-covered-si",
    "points-notcovered-pk",
    "points-notcovered-si",
    "random-points_range=10",
    "random-points_range=100",
    "random-points_range=1000",
]
_RANGE_TESTS = [
    "range-covered-pk",
    "range-covered-si",
    "range-notcovered-pk",
    "range-notcovered-si",
    "read-only_range=10",
    "read-only_range=100",
    "read-only_range=10000",
]
_WRITE_TESTS = [
    "delete",
    "insert",
    "read-write_range=10",
    "read-write_range=100",
    "update-index",
    "update-inlist",
    "update-nonindex",
    "update-one",
    "update-zipf",
    "write-only",
]


def _with_pre(name: str) -> str:
    test, sep, rest = name.partition("_range=")
    return f"{test}.pre{sep}{rest}"


def _classic_list() -> list[str]:
    """The full classic list, reconstructed from the description of the classic layout.

    Post-write (no suffix): the 8 point tests plus hot-points, the 7 range
    tests plus scan, and the 10 writes. Pre-write (``.pre``): the same 8 point
    and 7 range tests, without hot-points and scan. The first reconstruction
    tried gave 8/9/7/8/10 as is, so nothing needed adjusting.
    """
    post = [*_POINT_TESTS, "hot-points", *_RANGE_TESTS, "scan", *_WRITE_TESTS]
    pre = [_with_pre(name) for name in (*_POINT_TESTS, *_RANGE_TESTS)]
    return pre + post


def _mysql_small_tests(corpus: Path) -> list[str]:
    """Test labels of one mysql-small result directory, from its sb.o file names."""
    run_dir = corpus / "sysbench-mysql-small" / "x.my5651_rel_o2nofp.z12a_c8r32.pk1"
    labels = []
    for path in sorted(run_dir.iterdir()):
        name = sysbench.parse_file_name(path.name)
        if name is not None and name.kind == "o":
            labels.append(sysbench.test_label(name.test, name.range_size))
    return labels


def test_the_classic_list_has_42_tests_in_groups_of_8_9_7_8_10():
    tests = _classic_list()
    assert len(tests) == len(set(tests)) == 42
    grouped, ungrouped = CLASSIC_42.partition(tests)
    assert ungrouped == []
    assert {group: len(members) for group, members in grouped.items()} == {
        "point-1": 8,
        "point-2": 9,
        "range-1": 7,
        "range-2": 8,
        "writes": 10,
    }


@pytest.mark.parametrize(
    ("name", "group"),
    [
        ("point-query.pre", "point-1"),
        ("point-query", "point-2"),
        ("hot-points_range=100", "point-2"),
        ("random-points.pre_range=1000", "point-1"),
        ("range-notcovered-si.pre_range=100", "range-1"),
        ("read-only_range=10000", "range-2"),
        ("scan", "range-2"),
        ("read-only-distinct", "range-2"),
        ("read-write_range=10", "writes"),
        ("write-only", "writes"),
        ("update-zipf", "writes"),
        ("delete", "writes"),
        ("insert", "writes"),
    ],
)
def test_classic_42_classifies_by_name_rules(name, group):
    assert classic_42(name) == group


@pytest.mark.parametrize("name", ["point-query.warm", "scan.warm", "scan.warmpre", "points-covered-si.warm_range=100"])
def test_classic_42_puts_warm_ups_in_no_group_by_default(name):
    assert classic_42(name) is None


def test_classic_42_can_include_warm_ups_when_asked():
    assert classic_42("point-query.warm", include_warmups=True) == "point-2"
    assert classic_42("scan.warm", include_warmups=True) == "range-2"


def test_current_32_groups_the_mysql_small_tests_9_5_8_10(corpus):
    labels = [
        label
        for label in _mysql_small_tests(corpus)
        if not sysbench.is_warmup(bare_test(label)) and not bare_test(label).endswith(".pre")
    ]
    # scan.warm is measured (SPEC §2) but in none of current-32's groups: the 32 are the author's grouped tests.
    assert "scan.warm_range=100" in labels
    labels.remove("scan.warm_range=100")
    assert len(labels) == 32
    grouped, ungrouped = CURRENT_32.partition(labels)
    assert ungrouped == []
    assert [len(grouped[group]) for group in CURRENT_32.groups] == [9, 5, 8, 10]
    assert CURRENT_32.groups == (
        "point queries",
        "range queries without aggregation",
        "range queries with aggregation",
        "writes",
    )


def test_current_32_sends_warm_ups_pre_tests_and_ad_hoc_tests_to_ungrouped(corpus):
    grouped, ungrouped = CURRENT_32.partition([*_mysql_small_tests(corpus), "update-rate_range=100"])
    assert sorted(map(bare_test, ungrouped)) == [
        "point-query.pre",
        "point-query.warm",
        "points-covered-si.warm",
        "range-notcovered-si.pre",
        "scan.warm",
        "scan.warmpre",
        "update-rate",
    ]
    assert sum(len(members) for members in grouped.values()) == 32


@pytest.mark.parametrize(
    ("name", "group"),
    [
        ("read-only", "range queries with aggregation"),
        ("read-only_range=10000", "range queries with aggregation"),
        ("read-only-sum_range=1000", "range queries with aggregation"),
        ("scan_range=100", "range queries without aggregation"),
        ("range-covered-si", "range queries without aggregation"),
        ("random-points_range=10", "point queries"),
        ("hot-points", "point queries"),
        ("read-write_range=100", "writes"),
    ],
)
def test_current_32_classifies_the_known_tests(name, group):
    assert current_32(name) == group


def test_a_user_group_set_matches_regexes_and_lists_in_rule_order():
    group_set = user_group_set(
        "mine",
        {
            "hot": ["hot-points"],
            "points": "re:point",
            "ro at 10": ["read-only_range=10"],
            "scan only": "scan",
        },
    )
    assert group_set.groups == ("hot", "points", "ro at 10", "scan only")
    assert group_set.classify("hot-points_range=100") == "hot"  # the list rule comes first
    assert group_set.classify("point-query.pre") == "points"
    assert group_set.classify("read-only_range=10") == "ro at 10"
    assert group_set.classify("read-only_range=100") is None  # a listed label matches only itself
    assert group_set.classify("scan_range=100") == "scan only"  # a bare string is one name
    assert group_set.classify("s") is None


def test_a_user_group_set_partitions_and_reports_ungrouped():
    group_set = user_group_set("w", {"writes": "re:^(delete|insert)"})
    grouped, ungrouped = group_set.partition(["insert", "scan", "delete"])
    assert grouped == {"writes": ["insert", "delete"]}
    assert ungrouped == ["scan"]


def test_a_user_group_set_with_a_bad_regex_names_the_group():
    with pytest.raises(ValueError, match="'broken'"):
        user_group_set("bad", {"broken": "re:(unclosed"})


def test_every_standard_group_set_classifies_into_its_own_groups():
    names = [*_classic_list(), "scan.warm", "read-only-count", "hot-points"]
    for group_set in (CLASSIC_42, CURRENT_32):
        found = Counter(group_set.classify(name) for name in names)
        assert set(found) - {None} <= set(group_set.groups)
