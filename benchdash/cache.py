"""The Redis cache backend of benchdash: Django's, except that clearing deletes only its own keys, and that
its Redis client object is made once, not on every call.

Django's ``RedisCache.clear()`` empties the whole Redis database. benchdash's
cache may share a database with the Celery broker (its queues, unacknowledged
tasks) or with anything else its operator put there, so ``clear`` deletes the
keys under the cache's own prefix, found with SCAN, and nothing else.

Django's client makes a new ``redis.Redis`` for every cache call; making one
builds its table of reply parsers, about a third of a millisecond, as much as
the rest of a page served from the cache. A ``redis.Redis`` is safe to share
(each command takes a connection from the pool), so one is kept per pool.
"""

from __future__ import annotations

import re
from typing import Any

from django.core.cache.backends.redis import RedisCache, RedisCacheClient
from django.core.exceptions import ImproperlyConfigured

_BATCH = 500


def delete_keys_under(client: Any, prefix: str) -> None:
    """Delete every key of the client's database that begins with ``prefix``, in batches; no other key."""
    # Redis MATCH is a glob: the prefix's own glob characters are escaped.
    pattern = re.sub(r"([*?\[\]\\])", r"\\\1", prefix) + "*"
    batch: list[bytes] = []
    for key in client.scan_iter(match=pattern, count=_BATCH):
        batch.append(key)
        if len(batch) >= _BATCH:
            client.delete(*batch)
            batch.clear()
    if batch:
        client.delete(*batch)


class ReusedClientRedisCacheClient(RedisCacheClient):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._clients: dict[int, Any] = {}

    def get_client(self, key: Any = None, *, write: bool = False) -> Any:
        pool = self._get_connection_pool(write)  # type: ignore[attr-defined]  # private in Django, not in its stubs
        client = self._clients.get(id(pool))  # the pools live as long as this object: their ids stay theirs
        if client is None:
            client = self._clients[id(pool)] = self._client(connection_pool=pool)  # type: ignore[attr-defined]
        return client


class PrefixedRedisCache(RedisCache):
    def __init__(self, server: str, params: dict[str, Any]) -> None:
        super().__init__(server, params)
        self._class = ReusedClientRedisCacheClient
        if not self.key_prefix:
            raise ImproperlyConfigured("the Redis cache needs a KEY_PREFIX: clearing it deletes only those keys")

    def clear(self) -> bool:  # type: ignore[override]  # django-redis's clear answers too; callers may ignore it
        delete_keys_under(self._cache.get_client(None, write=True), f"{self.key_prefix}:")
        return True
