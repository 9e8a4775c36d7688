"""``manage.py reencrypt_secrets``: every encrypted value (target passwords) put under the first key of
BENCHDASH_ENCRYPTION_KEYS, the last step of a key rotation before the old keys are dropped.

All or nothing: a value no key decrypts is named and nothing is changed. Values are rewritten under a row
lock as tokens (MultiFernet's rotate), never through the models, so nothing else of a row changes. Safe to
run again: a value already under the first key is written again under it.
"""

from __future__ import annotations

from typing import Any

from django.apps import apps
from django.core.management.base import BaseCommand, CommandError
from django.db import connection, transaction

from runner.fields import PREFIX, EncryptedTextField, reencrypted


def _encrypted_columns() -> list[tuple[str, str, str]]:
    """(table, primary key column, column) of every EncryptedTextField."""
    return [
        (model._meta.db_table, str(model._meta.pk.column), str(field.column))  # type: ignore[union-attr]
        for model in apps.get_models()
        for field in model._meta.concrete_fields
        if isinstance(field, EncryptedTextField)
    ]


class Command(BaseCommand):
    help = "Re-encrypt every stored secret (target passwords) under the first key of BENCHDASH_ENCRYPTION_KEYS."

    def handle(self, *args: Any, **options: Any) -> None:
        quote = connection.ops.quote_name
        # Row locks where the database has them; SQLite has no FOR UPDATE and locks the whole database for the
        # transaction's first write anyway.
        lock = " FOR UPDATE" if connection.features.has_select_for_update else ""
        changed, failed = 0, []
        with transaction.atomic(), connection.cursor() as cursor:
            for table, pk, column in _encrypted_columns():
                cursor.execute(
                    f"SELECT {quote(pk)}, {quote(column)} FROM {quote(table)} WHERE {quote(column)} LIKE %s "
                    f"ORDER BY {quote(pk)}{lock}",
                    [PREFIX + "%"],
                )
                for row_id, stored in cursor.fetchall():
                    try:
                        token = reencrypted(stored)
                    except ValueError:
                        failed.append(f"{table} row {row_id}")
                        continue
                    cursor.execute(
                        f"UPDATE {quote(table)} SET {quote(column)} = %s WHERE {quote(pk)} = %s", [token, row_id]
                    )
                    changed += 1
            if failed:
                raise CommandError(
                    "nothing was changed: no key of BENCHDASH_ENCRYPTION_KEYS decrypts " + ", ".join(failed)
                )
        self.stdout.write(f"re-encrypted {changed} stored secret(s) under the first key")
