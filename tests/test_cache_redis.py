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
