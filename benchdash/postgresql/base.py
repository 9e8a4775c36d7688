"""Django's PostgreSQL backend, whose waits on the server are guarded by ``benchdash.dbwatchdog``.

Queries (through Django's execute wrappers), the health check of a reused connection, commits and rollbacks
each wait at most the statement timeout plus a grace (settings ``BENCHDASH_DB_STATEMENT_TIMEOUT``,
``BENCHDASH_DB_HANG_GRACE``); connecting is bounded by libpq's ``connect_timeout``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.db.backends.postgresql import base

from benchdash.dbwatchdog import guarded

HEALTH_CHECK_SECONDS = 2.0


def hang_limit() -> float:
    """Seconds a wait on the server may last before its connection is cut (0: never)."""
    timeout = float(getattr(settings, "BENCHDASH_DB_STATEMENT_TIMEOUT", 0) or 0)
    return timeout + float(getattr(settings, "BENCHDASH_DB_HANG_GRACE", 2.0)) if timeout > 0 else 0.0


class DatabaseWrapper(base.DatabaseWrapper):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.execute_wrappers.insert(0, self._guarded_execute)

    def _fileno(self) -> int:
        return self.connection.fileno() if self.connection is not None else -1

    def _guarded_execute(self, execute: Callable[..., Any], sql: str, params: Any, many: bool, context: Any) -> Any:
        with guarded(self._fileno, hang_limit()):
            return execute(sql, params, many, context)

    def is_usable(self) -> bool:
        # "SELECT 1" on a reused connection answers at once from any server that is up: a short limit, so a
        # request finds a hung server in seconds and goes on to connect afresh (bounded by connect_timeout).
        with guarded(self._fileno, min(hang_limit(), HEALTH_CHECK_SECONDS) or HEALTH_CHECK_SECONDS):
            return bool(super().is_usable())

    def _commit(self) -> None:
        with guarded(self._fileno, hang_limit()):
            super()._commit()  # type: ignore[misc]  # not in the stubs

    def _rollback(self) -> None:
        with guarded(self._fileno, hang_limit()):
            super()._rollback()  # type: ignore[misc]  # not in the stubs
