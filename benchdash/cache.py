"""The Redis cache backend of benchdash: Django's, except that clearing deletes only its own keys.

Django's ``RedisCache.clear()`` empties the whole Redis database. benchdash's
cache may share a database with the Celery broker (its queues, unacknowledged
tasks) or with anything else its operator put there, so ``clear`` deletes the
keys under the cache's own prefix, found with SCAN, and nothing else.
"""

from __future__ import annotations

import re
from typing import Any

from django.core.cache.backends.redis import RedisCache
from django.core.exceptions import ImproperlyConfigured

_BATCH = 500


class PrefixedRedisCache(RedisCache):
    def __init__(self, server: str, params: dict[str, Any]) -> None:
        super().__init__(server, params)
        if not self.key_prefix:
            raise ImproperlyConfigured("the Redis cache needs a KEY_PREFIX: clearing it deletes only those keys")

    def clear(self) -> bool:  # type: ignore[override]  # django-redis's clear answers too; callers may ignore it
        client = self._cache.get_client(None, write=True)
        # Redis MATCH is a glob: the prefix's own glob characters are escaped.
        pattern = re.sub(r"([*?\[\]\\])", r"\\\1", self.key_prefix) + ":*"
        batch: list[bytes] = []
        for key in client.scan_iter(match=pattern, count=_BATCH):
            batch.append(key)
            if len(batch) >= _BATCH:
                client.delete(*batch)
                batch.clear()
        if batch:
            client.delete(*batch)
        return True
