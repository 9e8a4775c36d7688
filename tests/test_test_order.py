"""The suite's own order under pytest-xdist (conftest.long_tests_first): the long tests lead the workers' shares."""

from __future__ import annotations

from conftest import long_tests_first

LONG = {"deploy": 120.0, "faults": 50.0, "flood": 40.0, "worker": 30.0, "submit": 25.0}


def seconds(name: str) -> float | None:
    return LONG.get(name)


def shares(order: list[str], workers: int) -> list[list[str]]:
    """How pytest-xdist's worksteal scheduler first deals ``order`` out: n // N, then (what is left) // (N - 1)..."""
    dealt, start = [], 0
    for remaining in range(workers, 0, -1):
        size = (len(order) - start) // remaining
        dealt.append(order[start : start + size])
        start += size
    return dealt


def test_each_share_starts_with_its_long_tests_longest_first_and_the_long_work_is_balanced() -> None:
    items = [f"t{n}" for n in range(40)]
    items[3:3] = ["flood"]
    items[17:17] = ["deploy", "submit"]
    items[30:30] = ["worker"]
    items.append("faults")
    order = long_tests_first(items, 2, seconds)
    assert sorted(order) == sorted(items)  # every test, once
    first, second = shares(order, 2)
    # 120 s against 50 + 40 + 30: the next long test goes to the first share again.
    assert first[:2] == ["deploy", "submit"] and second[:3] == ["faults", "flood", "worker"]
    # The short tests keep their order, whichever share they landed in.
    assert [t for t in order if t not in LONG] == [t for t in items if t not in LONG]


def test_three_workers_and_an_uneven_count() -> None:
    items = [*(f"t{n}" for n in range(10)), "deploy", "faults", "flood", "worker"]
    order = long_tests_first(items, 3, seconds)
    assert sorted(order) == sorted(items)
    assert [share[0] for share in shares(order, 3)] == ["deploy", "faults", "flood"]
    assert "worker" in shares(order, 3)[2][:2]  # the lightest share after the three longest


def test_without_parallel_workers_or_long_tests_the_order_is_kept() -> None:
    items = ["a", "deploy", "b"]
    assert long_tests_first(items, 0, seconds) == items
    assert long_tests_first(items, 1, seconds) == items
    assert long_tests_first(["a", "b", "c"], 2, seconds) == ["a", "b", "c"]


def test_more_long_tests_than_a_share_holds_still_runs_them_all() -> None:
    items = ["deploy", "faults", "flood", "worker", "t0"]
    order = long_tests_first(items, 2, seconds)
    assert sorted(order) == sorted(items)
    assert all(len(share) for share in shares(order, 2))


def test_the_long_tests_of_one_module_stay_together_in_one_share() -> None:
    module = {"deploy": "a", "faults": "b", "flood": "c", "worker": "b", "submit": "b"}
    items = ["faults", *(f"t{n}" for n in range(20)), "deploy", "worker", "flood", "submit"]
    order = long_tests_first(items, 2, seconds, lambda name: module.get(name, name))
    first, second = shares(order, 2)
    # Module a (120 s), then b (50 + 30 + 25 s) onto the other share, then c (40 s) onto the lighter one, b's.
    assert first[:2] == ["deploy", "t0"] and second[:4] == ["faults", "worker", "submit", "flood"]
    assert sorted(order) == sorted(items)
