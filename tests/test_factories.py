"""The factories make valid records with their related records, and a target with its password encrypted."""

from __future__ import annotations

import pytest

from tests.factories import RunFactory, TargetFactory

pytestmark = pytest.mark.django_db


def test_a_run_from_the_factory_is_stored_with_its_build_config_server_workload_and_bundle():
    first, second = RunFactory(), RunFactory()
    assert first.pk and second.pk and first.name != second.name
    assert first.build.version.dbms.name == "MySQL"
    assert first.workload == second.workload  # one workload unless a test asks for another


def test_a_target_from_the_factory_keeps_its_password_and_takes_the_postgres_trait():
    mariadb, postgres = TargetFactory(), TargetFactory(postgres=True)
    assert (mariadb.kind, mariadb.port) == ("mariadb", 3306)
    assert (postgres.kind, postgres.port, postgres.build_label) == ("postgres", 5432, "pg1520_rel")
    assert type(postgres).objects.get(pk=postgres.pk).password == "factory-secret"
