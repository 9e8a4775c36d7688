"""The Redis cache shares its database with others (the broker's queues by default): it touches only its own keys."""

from __future__ import annotations

import uuid

import pytest
import redis
from django.conf import settings
from django.core.cache import cache

from conftest import services_required

pytestmark = pytest.mark.services


@pytest.fixture
def cache_redis() -> redis.Redis:
    if not settings.REDIS_CACHE_URL:
        if services_required():
            pytest.fail("REDIS_URL is not set")
        pytest.skip("REDIS_URL is not set: the cache is in memory")
    return redis.Redis.from_url(settings.REDIS_CACHE_URL)


def test_clearing_the_cache_deletes_its_own_keys_and_leaves_a_queue_in_the_same_database(
    cache_redis: redis.Redis,
) -> None:
    queue = f"test-queue-{uuid.uuid4().hex[:8]}"
    cache_redis.rpush(queue, b"a task message")
    try:
        for n in range(1200):  # more than one SCAN batch
            cache.set(f"page-{n}", n, 60)
        assert cache.get("page-1199") == 1199
        cache.clear()
        assert cache.get("page-0") is None and cache.get("page-1199") is None
        assert not list(cache_redis.scan_iter(match=f"{settings.CACHE_KEY_PREFIX}:*", count=1000))
        assert cache_redis.lrange(queue, 0, -1) == [b"a task message"]
    finally:
        cache_redis.delete(queue)


def test_the_cache_uses_only_the_databases_it_is_given() -> None:
    """REDIS_CACHE_URL when set, else the broker's own database: never a number derived from it."""
    if settings.REDIS_URL:
        assert settings.CACHES["default"]["LOCATION"] in {settings.REDIS_URL, settings.REDIS_CACHE_URL}
        assert settings.CACHES["default"]["KEY_PREFIX"]


def test_each_test_process_keeps_its_cache_keys_under_a_prefix_of_its_own(cache_redis: redis.Redis) -> None:
    """Under pytest-xdist the processes share the Redis database: one's ``cache.clear()`` must miss the others'."""
    import os

    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if not worker:
        pytest.skip("not run by pytest-xdist: one process, one prefix")
    assert settings.CACHES["default"]["KEY_PREFIX"] == settings.CACHE_KEY_PREFIX == os.environ["BENCHDASH_CACHE_PREFIX"]
    assert settings.CACHE_KEY_PREFIX.endswith(f"-{worker}")
    other = f"{settings.CACHE_KEY_PREFIX}x:1:page"  # another process's prefix may extend this one's
    cache_redis.set(other, b"theirs")
    try:
        cache.set("page", "ours", 60)
        cache.clear()
        assert cache.get("page") is None
        assert cache_redis.get(other) == b"theirs"
    finally:
        cache_redis.delete(other)
