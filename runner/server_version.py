"""Ask a target for its version and propose the run directory's build token (``ma101119_rel``).

``propose_build_label`` is pure and inverts ``suites.naming.parse_build``, so the
proposal always parses back to the version the server reported.
"""

from __future__ import annotations

import logging
import re

from runner.sysbench_runner import Connection

log = logging.getLogger(__name__)

CONNECT_TIMEOUT_SECONDS = 5

_VERSION_RE = re.compile(r"^(?P<major>\d+)\.(?P<minor>\d+)(?:\.(?P<patch>\d+))?(?P<pre>(?:alpha|beta|rc)\d*)?")
_PG_PRE_RE = re.compile(r"^(?P<major>\d+)(?P<pre>(?:alpha|beta|rc)\d*)")


class VersionError(Exception):
    """The server could not be asked, or its answer is not a version we can name."""


def propose_build_label(kind: str, version: str, *, flavour: str = "rel") -> str:
    """The build token for a reported version.

    ``10.11.19-MariaDB-0+deb12u1`` → ``ma101119_rel``, ``8.4.6`` → ``my8406_rel``,
    ``15.20 (Debian …)`` → ``pg1520_rel``. A server reporting MariaDB is named
    MariaDB even when the target says MySQL (both use the same driver).
    """
    text = version.strip()
    if kind == "postgres":
        code = "pg"
    elif kind == "mariadb" or "mariadb" in text.lower():
        code = "ma"
    else:
        code = "my"
    if code == "pg" and (pre := _PG_PRE_RE.match(text)):
        digits = f"{pre['major']}{pre['pre']}"
    else:
        match = _VERSION_RE.match(text)
        if not match:
            raise VersionError(f"cannot read a version number in {version!r}")
        major, minor, patch = int(match["major"]), int(match["minor"]), match["patch"]
        if code == "pg":
            # Postgres 10 and later: major.minor (pg174, pg1520); 9.x keeps three parts (pg9624).
            digits = f"{major}{minor}" if major >= 10 else f"{major}{minor}{int(patch or 0)}"
        elif code == "ma" and major >= 10:
            digits = f"{major:02d}{minor:02d}{int(patch or 0):02d}"
        else:
            digits = f"{major}{minor}{int(patch or 0):02d}"
        digits += match["pre"] or ""
    return f"{code}{digits}_{flavour}" if flavour else f"{code}{digits}"


def ask_server_version(conn: Connection) -> str:
    """``SELECT VERSION()`` (MySQL, MariaDB) or ``SHOW server_version`` (Postgres), with a short timeout.

    Only to the address runner.network checked (``conn.address``). A failure says what kind it was, never
    the driver's own words: those would turn the form into a probe of what answers where."""
    if not conn.address:
        raise VersionError(f"{conn.host} was not checked against the allowed networks")
    try:
        if conn.kind == "postgres":
            import psycopg

            with psycopg.connect(
                host=conn.host,
                hostaddr=conn.address,
                port=conn.port,
                user=conn.user,
                password=conn.password or None,
                dbname=conn.database,
                connect_timeout=CONNECT_TIMEOUT_SECONDS,
            ) as pg:
                row = pg.execute("SHOW server_version").fetchone()
        else:
            import pymysql

            my = pymysql.connect(
                host=conn.address,
                port=conn.port,
                user=conn.user,
                password=conn.password,
                database=conn.database,
                connect_timeout=CONNECT_TIMEOUT_SECONDS,
                read_timeout=CONNECT_TIMEOUT_SECONDS,
            )
            try:
                with my.cursor() as cursor:
                    cursor.execute("SELECT VERSION()")
                    row = cursor.fetchone()
            finally:
                my.close()
    except Exception as exc:
        # The driver's words are for the server's log only, without the password.
        detail = str(exc).replace(conn.password, "***") if conn.password else str(exc)
        log.info("asking %s:%s for its version failed: %s", conn.host, conn.port, detail)
        raise VersionError(f"could not ask {conn.host}:{conn.port} for its version: {summarise(exc)}") from None
    if not row or not row[0]:
        raise VersionError(f"{conn.host}:{conn.port} did not report a version")
    return str(row[0])


# Access denied (MySQL 1044, 1045, 1698) and Postgres' invalid password / authorization classes.
_AUTH_MYSQL_CODES = {1044, 1045, 1698}
_AUTH_TEXT = ("password authentication failed", "authentication failed", "no pg_hba.conf entry", "access denied")
_TIMEOUT_TEXT = ("timed out", "timeout")


def summarise(exc: BaseException) -> str:
    """All a caller learns of a failure: authentication failed, timed out, or could not connect."""
    text = str(exc).lower()
    code = exc.args[0] if exc.args and isinstance(exc.args[0], int) else None
    if code in _AUTH_MYSQL_CODES or getattr(exc, "sqlstate", None) in ("28P01", "28000"):
        return "authentication failed"
    if isinstance(exc, TimeoutError) or any(t in text for t in _TIMEOUT_TEXT):
        return "timed out"
    if any(t in text for t in _AUTH_TEXT):
        return "authentication failed"
    return "could not connect"
