"""The page cache cannot be flooded: the red-team pass's 180 made-up comparison URLs made 360 keys and 20 MB.
Values are written one way, bounded, and a value or a y_max_<group> the page does not offer is answered
without a kept copy; anonymous renders are budgeted per address. On the real Redis cache when it is set."""

from __future__ import annotations

import random
import time
from typing import Any

import pytest
from django.core.cache import cache
from django.test import Client

from benchdash import pagecache
from runs.models import Run

pytestmark = pytest.mark.django_db

BUDGET = 40


def _kept_bytes() -> tuple[int, int]:
    """(keys, bytes) of kept pages under the test's cache prefix: Redis's own count, else local memory's."""
    backend: Any = cache._cache  # type: ignore[attr-defined]
    if hasattr(backend, "get_client"):
        client = backend.get_client(None, write=False)
        keys = list(client.scan_iter(match=f"{cache.key_prefix}:*:page:*", count=500))
        return len(keys), sum(client.memory_usage(key) or 0 for key in keys)
    pages = [key for key in backend if ":page:" in key]
    return len(pages), sum(len(str(backend[key])) for key in pages)


@pytest.mark.parametrize(
    ("kind", "given", "written"),
    [
        (pagecache.number(0, 100), "1.50", "1.5"),
        (pagecache.number(0, 100), "+1.5e0", "1.5"),
        (pagecache.number(0, 100), "01", "1"),
        (pagecache.number(0, 100), "2.0000000", "2"),
        (pagecache.integer(1, 10), "007", "7"),
        (pagecache.flag, "true", "on"),
        (pagecache.flag, "0", ""),
        (pagecache.choice("lines", "bars"), "bars", "bars"),
    ],
)
def test_values_are_written_one_way(kind: pagecache.Canon, given: str, written: str) -> None:
    assert kind(given) == written


@pytest.mark.parametrize(
    ("kind", "given"),
    [
        (pagecache.number(0, 100), "nan"),
        (pagecache.number(0, 100), "inf"),
        (pagecache.number(0, 100), "1e308"),
        (pagecache.number(0, 100), "-1"),
        (pagecache.number(0, 100), "x"),
        (pagecache.integer(1, 10), "11"),
        (pagecache.integer(1, 10), "١"),
        (pagecache.choice("lines", "bars"), "pie"),
        (pagecache.text, "x" * 201),
    ],
)
def test_a_value_out_of_range_or_unknown_is_refused(kind: pagecache.Canon, given: str) -> None:
    with pytest.raises(ValueError, match=r"."):
        kind(given)


def test_spellings_of_one_query_share_one_copy_and_bad_values_get_none(small_base: Run) -> None:
    url = f"/compare/?base={small_base.pk}"
    assert Client().get(f"{url}&y_max=2.5").templates  # rendered and kept
    for spelling in ("2.50", "+2.5", "2.5e0", "0002.5000"):
        assert not Client().get(f"{url}&y_max={spelling}").templates, spelling  # the kept copy
    keys = _kept_bytes()[0]
    for bad in ("view=pie", "y_max=nan", "y_max=-3", "dop=0", "red=1e99", "y_max_writes=abc"):
        first, again = Client().get(f"{url}&{bad}"), Client().get(f"{url}&{bad}")
        assert first.status_code == again.status_code == 200, bad  # the page says what is wrong
        assert again.templates, bad  # rendered again: no copy was kept
    assert _kept_bytes()[0] == keys  # none of them kept anything


def test_a_y_max_name_no_chart_of_the_page_offers_is_rendered_but_never_kept(small_base: Run) -> None:
    url = f"/compare/?base={small_base.pk}"
    Client().get(url)
    keys = _kept_bytes()[0]
    for name in ("y_max_madeup", "y_max_g001", "y_max_zz"):
        first, second = Client().get(f"{url}&{name}=2"), Client().get(f"{url}&{name}=2")
        assert first.status_code == second.status_code == 200
        assert second.templates  # rendered again: nothing was kept for it
    assert _kept_bytes()[0] == keys
    # A real group's own top is kept (the page offers its control).
    assert Client().get(f"{url}&y_max_writes=1.25").templates
    assert not Client().get(f"{url}&y_max_writes=1.250").templates


@pytest.mark.slow(20)
def test_a_thousand_distinct_anonymous_urls_grow_the_cache_by_a_bounded_amount(small_base: Run, settings: Any) -> None:
    settings.BENCHDASH_ANONYMOUS_RENDERS_PER_MINUTE = BUDGET
    url = f"/compare/?base={small_base.pk}"
    Client().get(url)
    keys_before, bytes_before = _kept_bytes()
    rng = random.Random(30)
    statuses: dict[int, int] = {}
    client = Client()
    first_minute = int(time.time() // 60)
    for i in range(1000):
        # What the red team sent: new numbers, new made-up names, new junk parameters, each URL different.
        query = rng.choice(
            [
                f"y_max={rng.uniform(0.5, 5):.6f}",
                f"y_max_{rng.getrandbits(40):x}=2",
                f"red={rng.uniform(0, 1):.6f}&utm={i}",
                f"view=v{i}",
                f"dop={rng.randint(1, 10**9)}",
            ]
        )
        status = client.get(f"{url}&{query}&n={i}").status_code
        statuses[status] = statuses.get(status, 0) + 1
    keys_after, bytes_after = _kept_bytes()
    # The budget is per minute: on a slow machine the 1,000 requests may span more than one.
    minutes = int(time.time() // 60) - first_minute + 1
    # At most the budget's renders were kept (two encodings each).
    assert keys_after - keys_before <= 2 * BUDGET * minutes, (keys_after - keys_before, statuses, minutes)
    assert statuses.get(429, 0) >= 1000 - BUDGET * minutes - 5, (statuses, minutes)
    assert set(statuses) <= {200, 429}, statuses
    print(
        f"1,000 URLs: {statuses}; cache +{keys_after - keys_before} keys, +{(bytes_after - bytes_before) / 1e6:.1f} MB"
    )


def test_signed_in_users_are_not_budgeted(small_base: Run, settings: Any, user_with_role: Any) -> None:
    settings.BENCHDASH_ANONYMOUS_RENDERS_PER_MINUTE = 3
    client = Client()
    client.force_login(user_with_role("viewer"))
    url = f"/compare/?base={small_base.pk}"
    assert all(client.get(f"{url}&y_max={i + 1}").status_code == 200 for i in range(8))
    anonymous = [Client().get(f"{url}&y_max={i + 20}").status_code for i in range(8)]
    assert anonymous[:3] == [200] * 3 and set(anonymous[3:]) == {429}
    assert int(Client().get(f"{url}&y_max=99")["Retry-After"]) <= 60
