"""What the runner tests need of the real services: where they are, and how a missing one is reported.

A missing server or a missing sysbench is a skip, unless CI sets
BENCHDASH_REQUIRE_SERVICES=1, which makes it a failure.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import NoReturn

import pytest

from runner.models import Target

MARIADB_HOST, MARIADB_PORT, MARIADB_ADMIN = "127.0.0.1", 3306, "root"
POSTGRES_HOST, POSTGRES_PORT, POSTGRES_ADMIN = "127.0.0.1", 5432, "postgres"
# One user per test process too: each (re)creates it with a password of its own.
RUNNER_USER = f"benchdash_runner_{os.getpid()}"


def services_required() -> bool:
    return os.environ.get("BENCHDASH_REQUIRE_SERVICES") == "1"


def missing(reason: str) -> NoReturn:
    if services_required():
        pytest.fail(f"BENCHDASH_REQUIRE_SERVICES=1 but {reason}")
    pytest.skip(reason)


def scratch_database() -> str:
    # One per test process (and xdist worker): two test runs on one machine never drop each other's tables.
    return f"benchdash_runner_test_{os.getpid()}"


@dataclass(frozen=True)
class Server:
    """A reachable database server with a scratch database: what a Target needs."""

    kind: str
    host: str
    port: int
    user: str
    password: str
    database: str

    def target(self, **overrides: object) -> Target:
        values: dict[str, object] = {
            "name": f"{self.kind} under test",
            "kind": self.kind,
            "host": self.host,
            "port": self.port,
            "user": self.user,
            "password": self.password,
            "database": self.database,
            "build_label": "ma101119_rel" if self.kind == "mariadb" else "pg1520_rel",
            "config_label": "tiny",
            "server_name": "runner-test-host",
        }
        values.update(overrides)
        return Target.objects.create(**values)
