"""Target passwords are stored encrypted and read back in clear by the runner only."""

from __future__ import annotations

import pytest
from django.db import connection

from runner.models import Target

pytestmark = pytest.mark.django_db


def test_a_target_password_is_encrypted_in_the_database_and_clear_in_python() -> None:
    target = Target.objects.create(
        name="t", kind="mariadb", host="127.0.0.1", port=3306, user="root", password="s3cret pw", database="test"
    )
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT password FROM {Target._meta.db_table} WHERE id = %s", [target.pk])
        stored = cursor.fetchone()[0]
    assert stored.startswith("fernet:") and "s3cret" not in stored
    assert Target.objects.get(pk=target.pk).password == "s3cret pw"


def test_an_empty_password_stays_empty() -> None:
    target = Target.objects.create(
        name="t2", kind="postgres", host="127.0.0.1", port=5432, user="postgres", database="x"
    )
    assert Target.objects.get(pk=target.pk).password == ""


@pytest.mark.django_db(transaction=True)
def test_passwords_stored_before_binding_existed_are_bound_to_their_targets_endpoint_by_the_migration() -> None:
    from django.db.migrations.executor import MigrationExecutor

    before, after = ("runner", "0002_encrypt_target_password"), ("runner", "0003_target_password_bound_to")
    executor = MigrationExecutor(connection)
    executor.migrate([before])
    try:
        old_target = executor.loader.project_state([before]).apps.get_model("runner", "Target")
        with_password = old_target.objects.create(
            name="old", kind="mariadb", host="DB1.lab.", port=3306, user="u", password="Old pw", database="d"
        )
        without = old_target.objects.create(name="none", kind="mariadb", host="db2", port=3306, user="u", database="d")
        executor = MigrationExecutor(connection)
        executor.migrate([after])
    finally:
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())

    target = Target.objects.get(pk=with_password.pk)
    assert target.password == "Old pw"
    assert target.stored_password_for("db1.lab", 3306, "u", "d") == "Old pw"
    assert target.stored_password_for("db1.lab", 3307, "u", "d") is None
    assert Target.objects.get(pk=without.pk).password_bound_to == ""
