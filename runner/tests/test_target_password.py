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
