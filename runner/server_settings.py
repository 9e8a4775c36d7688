"""Set an old version's server settings for the length of a settings experiment's run, and put them back.

What a target can take (``takes_settings``): a MySQL or MariaDB server's *dynamic global variables*, set with
``SET GLOBAL`` by the target's own user (it needs the privilege: SUPER, or SYSTEM_VARIABLES_ADMIN on MySQL 8), on
a target whose "allow settings experiments" is on. Every connection sysbench opens afterwards starts from them;
the run's own capture of the server's settings (``sb.gv.start``, taken after the load) shows them. A variable the
server refuses — read-only (set at start-up, such as innodb_log_file_size), session-only, unknown to this
version, a value it rejects, a privilege the user lacks — is not applied, with the server's reason. What is
applied is read back (a server rounds buffer sizes), and each variable's value from before is restored when the
run ends, whatever happened to it. PostgreSQL targets take none: their settings need ALTER SYSTEM and a reload,
or a restart, which benchdash does not do to a server.

Never set, whatever two runs differ in: what changes the server's availability or its logs, not its speed.
No Django here: the caller gives the connection and the settings.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from runner.sysbench_runner import Connection

CONNECT_TIMEOUT_SECONDS = 10
NEVER_SET = frozenset(
    {
        "read_only",
        "super_read_only",
        "offline_mode",
        "innodb_read_only",
        "init_connect",
        "event_scheduler",
        "general_log",
        "general_log_file",
        "slow_query_log",
        "slow_query_log_file",
        "log_output",
        "log_error",
    }
)
_NAME_RE = re.compile(r"^[A-Za-z0-9_]+$")
_NUMBER_RE = re.compile(r"^-?[0-9]+(\.[0-9]+)?$")


@dataclass(frozen=True)
class Applied:
    name: str
    value: str  # what was asked
    was: str  # the value before, put back after the run
    now: str  # the value read back


@dataclass(frozen=True)
class NotApplied:
    name: str
    value: str | None
    reason: str


def takes_settings(kind: str, allowed: bool) -> str | None:
    """Why a target takes no settings at all, or None when it takes dynamic global variables."""
    if kind == "postgres":
        return "a PostgreSQL target takes no settings: they need ALTER SYSTEM and a reload or a restart"
    if not allowed:
        return "the target does not allow settings experiments (its “allow settings experiments” is off)"
    return None


def refusal(name: str, value: str | None) -> str | None:
    """Why a setting is never tried, whatever the server would say; None when it may be."""
    if value is None:
        return "the old version has no such setting: the new version keeps its own"
    if not _NAME_RE.fullmatch(name):
        return "not a server variable name"
    if name.lower() in NEVER_SET:
        return "never changed by an experiment: it changes the server's availability or logs, not its speed"
    return None


def _connect(conn: Connection) -> Any:
    import pymysql

    return pymysql.connect(
        host=conn.connect_to,
        port=conn.port,
        user=conn.user,
        password=conn.password,
        database=conn.database,
        connect_timeout=CONNECT_TIMEOUT_SECONDS,
        autocommit=True,
    )


def _literal(db: Any, value: str) -> str:
    # Numbers bare (integer variables refuse a quoted '0'); words and lists quoted (ON, O_DIRECT, a,b,c).
    return value if _NUMBER_RE.fullmatch(value) else str(db.escape(value))


def _read(cursor: Any, name: str) -> str:
    cursor.execute(f"SELECT @@GLOBAL.`{name}`")
    row = cursor.fetchone()
    return "" if row is None or row[0] is None else _text(row[0])


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _reason(exc: BaseException, password: str) -> str:
    args: tuple[Any, ...] = tuple(exc.args)
    text = str(args[1]) if len(args) > 1 else str(exc)
    if password:
        text = text.replace(password, "***")
    return f"refused by the server: {text}"


def apply(conn: Connection, wanted: Sequence[tuple[str, str]]) -> tuple[list[Applied], list[NotApplied]]:
    """SET GLOBAL each (name, value); what was set (with its value before and read back) and what was not."""
    import pymysql

    applied: list[Applied] = []
    refused: list[NotApplied] = []
    db = _connect(conn)
    try:
        with db.cursor() as cursor:
            for name, value in wanted:
                reason = refusal(name, value)
                if reason is not None:
                    refused.append(NotApplied(name, value, reason))
                    continue
                try:
                    was = _read(cursor, name)
                    cursor.execute(f"SET GLOBAL `{name}` = {_literal(db, value)}")
                    applied.append(Applied(name, value, was, _read(cursor, name)))
                except pymysql.MySQLError as exc:
                    refused.append(NotApplied(name, value, _reason(exc, conn.password)))
    finally:
        db.close()
    return applied, refused


def restore(conn: Connection, applied: Sequence[Applied]) -> str:
    """Put every applied variable back to its value from before (last set, first restored); "" or what failed."""
    import pymysql

    failed: list[str] = []
    try:
        db = _connect(conn)
    except pymysql.MySQLError as exc:
        return f"could not connect to restore {', '.join(a.name for a in applied)}: {_reason(exc, conn.password)}"
    try:
        with db.cursor() as cursor:
            for item in reversed(applied):
                try:
                    cursor.execute(f"SET GLOBAL `{item.name}` = {_literal(db, item.was)}")
                except pymysql.MySQLError as exc:
                    failed.append(f"{item.name} (still {item.now}, was {item.was}): {_reason(exc, conn.password)}")
    finally:
        db.close()
    return "; ".join(failed)
