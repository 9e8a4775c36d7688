"""What /healthz reports: the database, the broker and the cache, each checked on its own, quickly.

A load balancer or an operator reads one answer and learns which part is
down. Each check has a short timeout so a dead service costs the probe about
a second, never a hang; none needs a login or touches user data.

Probes share nothing: each makes its own connections and its own cache key, so
any number of them at once (a load balancer per instance, compose, an
operator) each get the true answer. A PostgreSQL server that accepts and never
answers cannot hold a probe either: the query runs under asyncio with a
deadline, which closes the connection when it passes (libpq's own timeouts do
not cover a server that acknowledges packets and says nothing).
"""

from __future__ import annotations

import asyncio
import secrets
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import redis
from django.conf import settings
from django.core.cache import cache
from django.db import connections

TIMEOUT_SECONDS = 1.0
OK = "ok"
# What of Django's connection parameters libpq reads; the rest are Python-side objects (adapters, cursors).
_PYTHON_SIDE = ("context", "cursor_factory", "prepare_threshold")


def _failed(exc: BaseException) -> str:
    # The class only: messages can carry hosts and ports, which are none of a prober's business.
    return f"unavailable ({type(exc).__name__})"


async def _postgresql_select_one(params: dict[str, Any]) -> None:
    import psycopg

    connection = await psycopg.AsyncConnection.connect(**params, autocommit=True)
    try:
        await (await connection.execute("SELECT 1")).fetchone()
    finally:
        await connection.close()


def _probe_postgresql(params: dict[str, Any]) -> None:
    asyncio.run(asyncio.wait_for(_postgresql_select_one(params), TIMEOUT_SECONDS))


def _postgresql(params: dict[str, Any]) -> str:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        running = False
    else:
        running = True
    try:
        if running:
            # An event loop already runs in this thread (an async server's, a browser driver's): asyncio.run would
            # refuse, so the probe gets a thread and a loop of its own.
            with ThreadPoolExecutor(max_workers=1) as pool:
                pool.submit(_probe_postgresql, params).result()
        else:
            _probe_postgresql(params)
    except TimeoutError:
        return "unavailable (no answer)"
    except Exception as exc:
        return _failed(exc)
    return OK


def _other_database() -> str:
    # SQLite (the demo): a file, nothing to hang on; a connection of the probe's own.
    try:
        connection = connections.create_connection("default")
        try:
            with connection.cursor() as cursor:
                cursor.execute("SELECT 1")
                cursor.fetchone()
        finally:
            connection.close()
    except Exception as exc:
        return _failed(exc)
    return OK


def database() -> str:
    wrapper = connections["default"]
    if wrapper.vendor != "postgresql":
        return _other_database()
    params = {k: v for k, v in wrapper.get_connection_params().items() if k not in _PYTHON_SIDE}
    params["connect_timeout"] = max(1, int(TIMEOUT_SECONDS))
    return _postgresql(params)


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
    """A value written to the cache reads back, under a key of this probe's own (the Redis cache has its own
    short socket timeouts)."""
    value = secrets.token_hex(8)
    key = f"healthz:probe:{value}"
    try:
        cache.set(key, value, 30)
        try:
            if cache.get(key) != value:
                return "unavailable (a value written did not read back)"
        finally:
            cache.delete(key)
    except Exception as exc:
        return _failed(exc)
    return OK


def report() -> dict[str, str]:
    return {"database": database(), "broker": broker(), "cache": cache_state()}
