"""Ask a target for its version and propose the run directory's build token (``ma101119_rel``).

``propose_build_label`` is pure and inverts ``runs.naming.parse_build``, so the
proposal always parses back to the version the server reported.
"""

from __future__ import annotations

import re

from runner.sysbench_runner import Connection

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
    """``SELECT VERSION()`` (MySQL, MariaDB) or ``SHOW server_version`` (Postgres), with a short timeout."""
    try:
        if conn.kind == "postgres":
            import psycopg

            with psycopg.connect(
                host=conn.host,
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
                host=conn.host,
                port=conn.port,
                user=conn.user,
                password=conn.password,
                database=conn.database,
                connect_timeout=CONNECT_TIMEOUT_SECONDS,
            )
            try:
                with my.cursor() as cursor:
                    cursor.execute("SELECT VERSION()")
                    row = cursor.fetchone()
            finally:
                my.close()
    except Exception as exc:
        # Driver messages name host and user, not the password; scrubbed all the same, as it is shown to the user.
        message = str(exc).replace(conn.password, "***") if conn.password else str(exc)
        raise VersionError(f"could not ask {conn.host}:{conn.port} for its version: {message}") from None
    if not row or not row[0]:
        raise VersionError(f"{conn.host}:{conn.port} did not report a version")
    return str(row[0])
