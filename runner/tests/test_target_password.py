"""Target passwords are stored encrypted and read back in clear by the runner only."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection

from runner.models import Target

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.django_db
def test_a_target_password_is_encrypted_in_the_database_and_clear_in_python() -> None:
    target = Target.objects.create(
        name="t", kind="mariadb", host="127.0.0.1", port=3306, user="root", password="s3cret pw", database="test"
    )
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT password FROM {Target._meta.db_table} WHERE id = %s", [target.pk])
        stored = cursor.fetchone()[0]
    assert stored.startswith("fernet:") and "s3cret" not in stored
    assert Target.objects.get(pk=target.pk).password == "s3cret pw"


@pytest.mark.django_db
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


def _stored(target: Target) -> str:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT password FROM {Target._meta.db_table} WHERE id = %s", [target.pk])
        return str(cursor.fetchone()[0])


@pytest.mark.django_db
def test_keys_rotate_the_first_encrypts_every_one_decrypts_and_the_command_moves_all_to_the_first(
    settings: Any,
) -> None:
    settings.BENCHDASH_ENCRYPTION_KEYS = ["old key"]
    target = Target.objects.create(
        name="r", kind="mariadb", host="127.0.0.1", port=3306, user="root", password="pw one", database="test"
    )
    under_old = _stored(target)
    settings.BENCHDASH_ENCRYPTION_KEYS = ["new key", "old key"]
    assert Target.objects.get(pk=target.pk).password == "pw one"  # the old key still decrypts
    out = io.StringIO()
    call_command("reencrypt_secrets", stdout=out)
    assert "re-encrypted 1 stored secret(s)" in out.getvalue()
    assert _stored(target) != under_old
    settings.BENCHDASH_ENCRYPTION_KEYS = ["new key"]  # the old key dropped: everything still reads
    assert Target.objects.get(pk=target.pk).password == "pw one"


@pytest.mark.django_db
def test_a_secret_no_key_decrypts_stops_the_command_and_nothing_changes(settings: Any) -> None:
    settings.BENCHDASH_ENCRYPTION_KEYS = ["lost key"]
    lost = Target.objects.create(
        name="lost", kind="mariadb", host="127.0.0.1", port=3306, user="root", password="pw", database="test"
    )
    settings.BENCHDASH_ENCRYPTION_KEYS = ["other key"]
    kept = Target.objects.create(
        name="kept", kind="mariadb", host="127.0.0.1", port=3306, user="root", password="pw2", database="test"
    )
    before = (_stored(lost), _stored(kept))
    settings.BENCHDASH_ENCRYPTION_KEYS = ["newest", "other key"]
    with pytest.raises(CommandError, match=rf"runner_target row {lost.pk}"):
        call_command("reencrypt_secrets")
    assert (_stored(lost), _stored(kept)) == before
    with pytest.raises(ValueError, match="the key it was stored with is gone"):
        Target.objects.get(pk=lost.pk)


_ON_SQLITE = """
from runner.models import Target
Target.objects.create(name="t", kind="mariadb", host="127.0.0.1", port=3306, user="root", password="pw", database="x")
"""


def test_the_command_rotates_on_the_embedded_default_too(tmp_path: Path) -> None:
    # SQLite has no FOR UPDATE: the command must still run there (make demo's database), not fail on its syntax.
    env = {
        **{key: os.environ[key] for key in ("PATH", "HOME", "LANG") if key in os.environ},
        "DJANGO_SETTINGS_MODULE": "benchdash.settings",
        "BENCHDASH_VAR_DIR": str(tmp_path),
        "BENCHDASH_ENCRYPTION_KEYS": "old key",
    }

    def manage(*args: str, keys: str = "old key") -> str:
        done = subprocess.run(
            [sys.executable, "manage.py", *args],
            cwd=ROOT,
            env={**env, "BENCHDASH_ENCRYPTION_KEYS": keys},
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    manage("migrate", "--noinput", "-v0")
    manage("shell", "-c", _ON_SQLITE)
    assert "re-encrypted 1 stored secret(s)" in manage("reencrypt_secrets", keys="new key,old key")
    read = "from runner.models import Target; print(Target.objects.get(name='t').password)"
    assert manage("shell", "-c", read, keys="new key").splitlines()[-1] == "pw"
