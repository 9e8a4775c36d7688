"""Suites: the registry knows the built-in ones, and a suite added as its own package is found through it."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pytest

import suites
from reports.compare import choose_group_set
from runs.importer import bad_input
from suites import groups
from suites.base import Suite


def test_the_registry_knows_each_built_in_suite_by_the_name_stored_on_workloads() -> None:
    from runs.models import Suite as StoredSuite

    assert {s.name for s in suites.all()} == {choice.value for choice in StoredSuite}
    assert suites.get("sysbench").is_warmup("point-query.warm") and not suites.get("sysbench").is_warmup("scan")
    assert suites.get("ibench").choose_group_set(["l.i0", "qr100"]) is groups.IBENCH
    assert suites.get("db_bench").choose_group_set(["fillseq"]) is groups.DBBENCH
    with pytest.raises(LookupError, match="no suite named 'nosuch'"):
        suites.get("nosuch")


def test_sysbench_picks_classic_42_only_for_the_pre_and_post_layout() -> None:
    pre_post = [f"{test}.pre_range=100" for test in ("point-query", "points-covered-pk", "points-covered-si")]
    pre_post += [f"{test}.pre_range=100" for test in ("range-covered-pk", "range-covered-si", "range-notcovered-pk")]
    assert choose_group_set("sysbench", pre_post) is groups.CLASSIC_42
    assert choose_group_set("sysbench", ["point-query.pre_range=100", "scan_range=100"]) is groups.CURRENT_32


class FakeParseError(ValueError):
    pass


FAKE_GROUPS = groups.user_group_set("fake-groups", {"reads": "re:^READ_", "writes": "re:^WRITE_"})


@pytest.fixture
def fake_suite() -> Iterator[Suite]:
    def pick(labels: Sequence[str]) -> groups.GroupSet:
        return FAKE_GROUPS

    suite = suites.register(
        Suite(
            name="fake",
            label="A team's own suite",
            parse_error=FakeParseError,
            is_warmup=lambda test: test.endswith(".warm"),
            group_sets=(FAKE_GROUPS,),
            group_set_for=pick,
        )
    )
    yield suite
    suites.unregister("fake")


def test_a_suite_registered_from_its_own_package_is_used_for_group_sets_and_bad_bundle_errors(
    fake_suite: Suite,
) -> None:
    assert suites.get("fake") is fake_suite
    # The comparison asks the registry for the group set: no suite name is spelled out in reports.
    assert choose_group_set("fake", ["READ_PK_POINT", "WRITE_ROW"]) is FAKE_GROUPS
    assert FAKE_GROUPS.classify("READ_PK_POINT") == "reads"
    # The importer's "bad bundle" errors include the suite's own parse error.
    assert FakeParseError in bad_input()
    suites.unregister("fake")
    assert FakeParseError not in bad_input()


def test_registering_a_different_suite_under_a_taken_name_is_refused() -> None:
    taken = suites.get("sysbench")
    with pytest.raises(ValueError, match="already registered"):
        suites.register(Suite(name="sysbench", label="other", parse_error=ValueError, is_warmup=taken.is_warmup))
    assert suites.get("sysbench") is taken
