"""What /healthz reports: the database, the broker and the cache, each checked on its own, quickly.

A load balancer or an operator reads one answer and learns which part is
down. Each check has a short timeout so a dead service costs the probe about
a second, never a hang; none needs a login or touches user data.
"""

from __future__ import annotations

import secrets

import redis
from django.conf import settings
from django.core.cache import cache
from django.db import connection

TIMEOUT_SECONDS = 1.0
OK = "ok"


def _failed(exc: BaseException) -> str:
    # The class only: messages can carry hosts and ports, which are none of a prober's business.
    return f"unavailable ({type(exc).__name__})"


def database() -> str:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except Exception as exc:
        return _failed(exc)
    return OK


def broker() -> str:
    """The Celery broker answers a PING. Without one (tasks run in the web process) there is nothing to be down."""
    url = settings.CELERY_BROKER_URL
    if settings.CELERY_TASK_ALWAYS_EAGER or not url.startswith(("redis://", "rediss://")):
        return OK
    try:
        client = redis.Redis.from_url(url, socket_connect_timeout=TIMEOUT_SECONDS, socket_timeout=TIMEOUT_SECONDS)
        try:
            client.ping()
        finally:
            client.close()
    except Exception as exc:
        return _failed(exc)
    return OK


def cache_state() -> str:
    """A value written to the cache reads back (the Redis cache has its own short socket timeouts)."""
    key, value = "healthz:probe", secrets.token_hex(8)
    try:
        cache.set(key, value, 30)
        if cache.get(key) != value:
            return "unavailable (a value written did not read back)"
    except Exception as exc:
        return _failed(exc)
    return OK


def report() -> dict[str, str]:
    return {"database": database(), "broker": broker(), "cache": cache_state()}
