"""What /healthz reports: the database, the broker and the cache, each checked on its own, quickly.

A load balancer or an operator reads one answer and learns which part is
down. Each check has a short timeout so a dead service costs the probe about
a second, never a hang; none needs a login or touches user data.
"""

from __future__ import annotations

import secrets
import threading

import redis
from django.conf import settings
from django.core.cache import cache
from django.db import connections

TIMEOUT_SECONDS = 1.0
OK = "ok"


def _failed(exc: BaseException) -> str:
    # The class only: messages can carry hosts and ports, which are none of a prober's business.
    return f"unavailable ({type(exc).__name__})"


# A database that accepts connections and never answers would hold the probe (and its web thread) for
# as long as TCP lets it. The query therefore runs on a thread of its own, on a connection of its own,
# and the probe waits TIMEOUT_SECONDS for it. At most one such thread exists per process: while an
# earlier one still waits on a silent server, the probe answers at once instead of starting another.
_probe_lock = threading.Lock()


def _select_one(outcome: list[str]) -> None:
    try:
        connection = connections.create_connection("default")
        try:
            with connection.cursor() as cursor:
                cursor.execute("SELECT 1")
                cursor.fetchone()
        finally:
            connection.close()
        outcome.append(OK)
    except Exception as exc:
        outcome.append(_failed(exc))
    finally:
        _probe_lock.release()


def database() -> str:
    if not _probe_lock.acquire(blocking=False):
        return "unavailable (an earlier check is still waiting for an answer)"
    outcome: list[str] = []
    thread = threading.Thread(target=_select_one, args=(outcome,), name="healthz-database", daemon=True)
    try:
        thread.start()
    except BaseException:
        _probe_lock.release()
        raise
    thread.join(TIMEOUT_SECONDS * 2)
    if outcome:
        return outcome[0]
    return "unavailable (no answer)"


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
