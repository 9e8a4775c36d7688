"""Real database servers to run sysbench against, each with a scratch database the tests create and drop.

The servers are the local MariaDB (root, no password) and PostgreSQL (postgres, trust).
"""

from __future__ import annotations

import secrets
import shutil
from collections.abc import Iterator

import pytest

from runner.tests.services import (
    MARIADB_ADMIN,
    MARIADB_HOST,
    MARIADB_PORT,
    POSTGRES_ADMIN,
    POSTGRES_HOST,
    POSTGRES_PORT,
    RUNNER_USER,
    Server,
    missing,
    scratch_database,
)


@pytest.fixture(scope="session")
def sysbench_installed() -> None:
    if shutil.which("sysbench") is None:
        missing("sysbench is not installed")


@pytest.fixture(scope="session")
def mariadb(sysbench_installed: None) -> Iterator[Server]:
    """MariaDB with a scratch database and a user that has a real password (so redaction is tested for real)."""
    import pymysql

    try:
        admin = pymysql.connect(
            host=MARIADB_HOST, port=MARIADB_PORT, user=MARIADB_ADMIN, connect_timeout=3, autocommit=True
        )
    except pymysql.MySQLError as exc:
        missing(f"MariaDB is not reachable at {MARIADB_HOST}:{MARIADB_PORT}: {exc}")
    database = scratch_database()
    password = f"Runner-{secrets.token_hex(8)}"
    with admin.cursor() as cursor:
        cursor.execute(f"DROP DATABASE IF EXISTS `{database}`")
        cursor.execute(f"CREATE DATABASE `{database}`")
        for host in ("%", "localhost"):
            cursor.execute(f"DROP USER IF EXISTS '{RUNNER_USER}'@'{host}'")
            cursor.execute(f"CREATE USER '{RUNNER_USER}'@'{host}' IDENTIFIED BY {admin.escape(password)}")
            cursor.execute(f"GRANT ALL ON `{database}`.* TO '{RUNNER_USER}'@'{host}'")
    try:
        yield Server("mariadb", MARIADB_HOST, MARIADB_PORT, RUNNER_USER, password, database)
    finally:
        with admin.cursor() as cursor:
            cursor.execute(f"DROP DATABASE IF EXISTS `{database}`")
            for host in ("%", "localhost"):
                cursor.execute(f"DROP USER IF EXISTS '{RUNNER_USER}'@'{host}'")
        admin.close()


@pytest.fixture(scope="session")
def postgres(sysbench_installed: None) -> Iterator[Server]:
    """PostgreSQL with a scratch database. Local trust auth ignores passwords, so one is set all the same:
    sysbench receives it and every stored command line must hide it."""
    import psycopg

    try:
        admin = psycopg.connect(
            host=POSTGRES_HOST,
            port=POSTGRES_PORT,
            user=POSTGRES_ADMIN,
            dbname="postgres",
            connect_timeout=3,
            autocommit=True,
        )
    except psycopg.Error as exc:
        missing(f"PostgreSQL is not reachable at {POSTGRES_HOST}:{POSTGRES_PORT}: {exc}")
    database = scratch_database()
    admin.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
    admin.execute(f'CREATE DATABASE "{database}"')
    try:
        password = f"Runner-{secrets.token_hex(8)}"
        yield Server("postgres", POSTGRES_HOST, POSTGRES_PORT, POSTGRES_ADMIN, password, database)
    finally:
        admin.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
        admin.close()


@pytest.fixture(params=["mariadb", "postgres"])
def server(request: pytest.FixtureRequest) -> Server:
    return request.getfixturevalue(request.param)  # type: ignore[no-any-return]
