"""Cut a database connection whose server stopped answering, so the thread waiting on it is freed.

PostgreSQL's ``statement_timeout`` ends a slow query, but only a server that still answers can enforce it;
libpq's keepalives and ``tcp_user_timeout`` only notice a peer whose kernel stopped acknowledging. A server
that accepts and says nothing (hung, stopped, a proxy holding the line) holds the waiting thread for as long
as the outage lasts. Here each wait on the server is registered with a deadline (the statement timeout
plus a grace), and one thread per process shuts the socket of any wait past its deadline: the blocked call
then fails at once with the driver's connection error, which the site answers with a 503.

No Django: ``benchdash.postgresql`` registers its waits here.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator

log = logging.getLogger(__name__)

_TICK = 0.25  # seconds between looks: a cut comes at most this late


class Watchdog:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waits: dict[int, tuple[float, int]] = {}  # token → (deadline, socket's file descriptor)
        self._tokens = itertools.count()
        self._thread: threading.Thread | None = None
        self.cuts = 0

    @contextlib.contextmanager
    def guard(self, fileno: int, seconds: float) -> Iterator[None]:
        """While the block runs, the socket ``fileno`` is shut if the block takes more than ``seconds``."""
        if seconds <= 0 or fileno < 0:
            yield
            return
        token = next(self._tokens)
        with self._lock:
            self._waits[token] = (time.monotonic() + seconds, fileno)
            self._start()
        try:
            yield
        finally:
            with self._lock:
                self._waits.pop(token, None)

    def _start(self) -> None:
        # Under the lock. A forked process (a Celery child) starts its own thread: threads do not survive fork.
        if self._thread is None or not self._thread.is_alive():
            self._thread = threading.Thread(target=self._watch, name="db-watchdog", daemon=True)
            self._thread.start()

    def _watch(self) -> None:
        while True:
            time.sleep(_TICK)
            now = time.monotonic()
            with self._lock:
                overdue = [(token, fd) for token, (deadline, fd) in self._waits.items() if deadline <= now]
                for token, fd in overdue:
                    # Cut under the lock: the wait is still registered, so the descriptor is still its socket.
                    del self._waits[token]
                    _shut(fd)
                    self.cuts += 1
            for _token, fd in overdue:
                log.warning("database connection (fd %s) gave no answer in time: cut, its request fails", fd)


def _shut(fd: int) -> None:
    try:
        duplicate = os.dup(fd)
    except OSError:
        return
    with contextlib.suppress(OSError), socket.socket(fileno=duplicate) as sock:
        sock.shutdown(socket.SHUT_RDWR)


watchdog = Watchdog()


def guarded(fileno: Callable[[], int], seconds: float) -> contextlib.AbstractContextManager[None]:
    """``watchdog.guard`` for the socket ``fileno()`` names now (-1: not connected, nothing to guard)."""
    try:
        fd = fileno()
    except Exception:
        fd = -1
    return watchdog.guard(fd, seconds)
