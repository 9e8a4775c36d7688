"""Bulk writes for imports: find-or-create many rows at once, and insert many rows fast.

An archive of 60 runs holds ~2,500 results and ~300 rows the runs point at
(DBMS, version, build, config, server, workload). Written one ``get_or_create``
and one ``bulk_create`` at a time, that cost most of an import; here every
model is one or two statements, and results go to PostgreSQL with ``COPY``
(psycopg's C-accelerated copy of plain tuples), which skips Django's per-value
preparation. Other databases (SQLite in the demo) get ``bulk_create``.

Both run inside the caller's transaction: a failure later in the import rolls
all of it back.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

from django.db import connection, connections, models
from psycopg import sql

M = TypeVar("M", bound=models.Model)
K = TypeVar("K", bound=Hashable)


def find_or_create(
    model: type[M],
    wanted: Mapping[K, Callable[[], M]],
    *,
    fetch: Callable[[Sequence[K]], Iterable[tuple[K, M]]],
) -> dict[K, M]:
    """The row of every key in ``wanted``, creating the missing ones in one ``INSERT``.

    ``wanted[key]()`` builds the unsaved row for a key (its lookup fields and its
    defaults); ``fetch(keys)`` yields ``(key, row)`` for the rows already there.
    A row created meanwhile by a concurrent import is not an error: the insert
    skips conflicts on the unique constraints and the second fetch finds it.
    """
    keys = list(wanted)
    found = dict(fetch(keys))
    missing = [key for key in keys if key not in found]
    if missing:
        model._default_manager.bulk_create([wanted[key]() for key in missing], ignore_conflicts=True)
        found.update(fetch(missing))
        lost = [key for key in missing if key not in found]
        if lost:  # a unique constraint hit by something other than the lookup: a programming error
            raise RuntimeError(f"{model.__name__}: rows {lost[:3]} were neither found nor created")
    return found


def insert_rows(model: type[models.Model], fields: Sequence[str], rows: Iterable[Sequence[Any]]) -> int:
    """Insert plain tuples into ``model``'s table, ``fields`` being the attnames (``run_id``) in row order.

    JSON fields take Python values (dicts, lists). Returns the number of rows.
    """
    by_attname = {f.attname: f for f in model._meta.concrete_fields}
    columns = [by_attname[name] for name in fields]
    json_at = [i for i, f in enumerate(columns) if isinstance(f, models.JSONField)]
    count = 0
    if connection.vendor == "postgresql":
        statement = sql.SQL("COPY {} ({}) FROM STDIN").format(
            sql.Identifier(model._meta.db_table), sql.SQL(", ").join([sql.Identifier(str(f.column)) for f in columns])
        )
        with connection.cursor() as cursor, cursor.cursor.copy(statement) as copy:
            for row in rows:
                if json_at:
                    row = list(row)
                    for i in json_at:
                        # Most results' extra values are empty: their text without the encoder.
                        row[i] = "{}" if row[i] == {} else json.dumps(row[i])
                copy.write_row(row)
                count += 1
        return count
    objects = [model(**dict(zip(fields, row, strict=True))) for row in rows]
    model._default_manager.bulk_create(objects, batch_size=1000)
    return len(objects)


def create_rows(model: type[M], objs: Sequence[M]) -> list[M]:
    """Save new rows, like ``bulk_create``, with their primary keys set; on PostgreSQL through ``COPY``.

    Django's bulk insert sends each column as one array parameter, and psycopg
    escapes every element of a text array in Python, one regular expression
    substitution per quote: for runs, whose JSON columns (the command lines)
    are full of quotes, that was most of the cost of writing them. Here the
    ids are taken from the table's sequence in one statement and the rows,
    ids included, are copied, each value prepared by its field as Django would.
    """
    if connection.vendor != "postgresql" or len(objs) < 2:
        return model._default_manager.bulk_create(objs)
    meta = model._meta
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT nextval(pg_get_serial_sequence(%s, %s)) FROM generate_series(1, %s)",
            [meta.db_table, meta.pk.column, len(objs)],
        )
        ids = [row[0] for row in cursor.fetchall()]
    for obj, pk in zip(objs, ids, strict=True):
        obj.pk = pk
    fields = meta.concrete_fields
    statement = sql.SQL("COPY {} ({}) FROM STDIN").format(
        sql.Identifier(meta.db_table), sql.SQL(", ").join([sql.Identifier(str(f.column)) for f in fields])
    )
    # The connection itself, not its proxy: each field's preparation asks it for its operations, per value.
    db = connections[connection.alias]
    # Errors as Django's (an IntegrityError for a run imported meanwhile by another worker), as bulk_create's are.
    with db.wrap_database_errors, db.cursor() as cursor, cursor.cursor.copy(statement) as copy:
        for obj in objs:
            copy.write_row([f.get_db_prep_save(f.pre_save(obj, True), db) for f in fields])
    for obj in objs:
        obj._state.adding = False
        obj._state.db = connection.alias
    return list(objs)


def analyze_if_grown(added: Mapping[type[models.Model], int], *, fraction: float = 0.1) -> list[str]:
    """Refresh PostgreSQL's planner statistics of tables that ``added`` rows grew by more than ``fraction``.

    Autovacuum does this in time on most servers, but not right after a bulk
    import (nor at all where it is switched off), and without statistics the
    planner takes a freshly loaded million-row table for a small one and scans
    it whole. The growth is judged against the row count the statistics know
    (``pg_class.reltuples``: -1 for a table never analyzed). Returns the tables
    analyzed; does nothing on other databases.
    """
    if connection.vendor != "postgresql":
        return []
    names = {model._meta.db_table: rows for model, rows in added.items() if rows > 0}
    if not names:
        return []
    analyzed = []
    with connection.cursor() as cursor:
        cursor.execute("SELECT relname, reltuples FROM pg_class WHERE relname = ANY(%s)", [list(names)])
        for name, known in cursor.fetchall():
            if known < 0 or names[name] > fraction * known:
                cursor.execute(sql.SQL("ANALYZE {}").format(sql.Identifier(name)))
                analyzed.append(name)
    return analyzed
