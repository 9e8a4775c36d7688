"""The test database's flush after a transactional test (conftest._sql_flush_by_delete): every table is emptied,
the small ones by DELETE, a big one by TRUNCATE, and a flush that resets sequences is PostgreSQL's own."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import Group
from django.core.management import call_command
from django.core.management.color import no_style
from django.db import connection

from conftest import FLUSH_TRUNCATE_ABOVE_BYTES, corpus_archive
from runs.importer import submit_and_import
from runs.models import Bundle, BundleChunk, Result, Run
from tests import live

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


def _rows() -> dict[str, int]:
    """Rows in each of Django's tables."""
    tables = connection.introspection.django_table_names(only_existing=True, include_views=False)
    with connection.cursor() as cursor:
        counts = {}
        for table in tables:
            cursor.execute(f"SELECT count(*) FROM {connection.ops.quote_name(table)}")
            counts[table] = cursor.fetchone()[0]
    return counts


def test_a_flush_deletes_the_rows_of_small_tables_truncates_a_big_one_and_leaves_every_table_empty(
    user_with_role: Callable[..., Any], corpus: Path
) -> None:
    live.require_postgresql()
    user_with_role("admin")
    submit_and_import(corpus_archive(corpus / "sysbench-mysql-small"), name="small.tar.gz", source="command")
    # The bundle table grows past the threshold (incompressible, stored out of line): a big table that the runs
    # reference, themselves referenced by their results, so truncating it cascades to tables with rows.
    Bundle.objects.update(stats={"padding": os.urandom(FLUSH_TRUNCATE_ABOVE_BYTES).hex()})
    BundleChunk.objects.create(bundle=Bundle.objects.get(), seq=99, data=b"a small chunk")
    before = _rows()
    assert all(before[model._meta.db_table] for model in (Bundle, BundleChunk, Run, Result, Group))

    tables = sorted(before)
    statements = connection.ops.sql_flush(no_style(), tables)
    bundles, groups = (connection.ops.quote_name(model._meta.db_table) for model in (Bundle, Group))
    assert statements[0].startswith("TRUNCATE ") and bundles in statements[0] and statements[0].endswith(" CASCADE")
    assert groups not in statements[0] and f"DELETE FROM {groups}" in statements[1:]

    call_command("flush", interactive=False, inhibit_post_migrate=True, verbosity=0)
    assert {table: n for table, n in _rows().items() if n} == {}


def test_a_flush_that_resets_sequences_is_postgresql_s_truncate() -> None:
    live.require_postgresql()
    tables = sorted(_rows())
    statements = connection.ops.sql_flush(no_style(), tables, reset_sequences=True)
    assert len(statements) == 1 and statements[0].startswith("TRUNCATE ") and "RESTART IDENTITY" in statements[0]


def test_the_migrated_state_put_back_after_a_flush_leaves_each_sequence_past_its_rows() -> None:
    """conftest's restore before a rolled-back test (flush, the migrated rows deserialized with their ids): a row
    a test then makes gets a new id, not the first id again (the role groups hold ids from 1)."""
    import conftest

    live.require_postgresql()
    call_command("flush", interactive=False, inhibit_post_migrate=True, verbosity=0)
    connection.creation.deserialize_db_from_string(conftest._MIGRATED["default"])
    conftest._sequences_past_restored_rows(connection)
    assert Group.objects.filter(pk=1).exists(), "the role groups of the data migration, with their ids"

    made = Group.objects.create(name="a group of the test's own")

    assert made.pk > max(Group.objects.exclude(pk=made.pk).values_list("pk", flat=True))
