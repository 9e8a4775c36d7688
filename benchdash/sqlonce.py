"""A query's SQL compiled once per process and run again with other values: for the hot pages' reads, where
Django's query builder costs more CPU than PostgreSQL spends on the query.

``compile_once(queryset, stand_ins)`` compiles a queryset built with stand-ins in place of the values that vary
(ids no row has, texts no row holds) and returns a ``Statement``; ``Statement.bind`` puts the real values where
the stand-ins were. Every other parameter the compiler wrote (a setting's pattern, a flag) is a constant of the
statement: a caller whose constants can change keys its cache by them. The rows come as the database driver
returns them, without the queryset's converters: callers read columns that need none on their backend.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.db.models import QuerySet

# Ids no row has: a statement's stand-ins for the ids it is run with.
ID_STAND_INS = tuple(-7_000_001 - i for i in range(8))


@dataclass(frozen=True)
class Statement:
    """SQL compiled once: its parameters, each a constant or the index of the value ``bind`` puts there."""

    sql: str
    params: tuple[Any, ...]
    slots: tuple[int | None, ...]  # per parameter: the index of its value in bind's, or None (a constant)
    # Of a values_list queryset whose SELECT lists its columns in another order (annotations come last there):
    # where each asked column is in a row, as the queryset reorders them.
    order: tuple[int, ...] | None = None

    def bind(self, *values: Any) -> list[Any]:
        """The parameters to run the statement with: ``values`` in the stand-ins' places, in their order."""
        return [param if slot is None else values[slot] for param, slot in zip(self.params, self.slots, strict=True)]

    def fetch(self, *values: Any) -> list[tuple[Any, ...]]:
        """The statement's rows run with ``values``, each in the order the queryset's values_list asked for."""
        from django.db import connection

        with connection.cursor() as cursor:
            cursor.execute(self.sql, self.bind(*values))
            rows = cursor.fetchall()
        if self.order is None:
            return rows
        order = self.order
        return [tuple([row[at] for at in order]) for row in rows]


def compile_once(query: QuerySet[Any] | Any, stand_ins: Sequence[Any]) -> Statement:
    """The SQL of ``query`` (a queryset) built with ``stand_ins`` for the values that vary; refused when a stand-in
    is missing from the compiled parameters, or one equals another (they could not be told apart)."""
    if len(set(map(_identity, stand_ins))) != len(stand_ins):
        raise ValueError(f"stand-ins must differ: {stand_ins!r}")
    compiler = query.query.get_compiler(using=query.db)
    sql, params = compiler.as_sql()
    where = {_identity(value): at for at, value in enumerate(stand_ins)}
    slots = tuple(where.get(_identity(param)) for param in params)
    missing = set(range(len(stand_ins))) - set(slots)
    if missing:
        raise ValueError(f"the query does not take the stand-ins {[stand_ins[i] for i in sorted(missing)]!r}")
    return Statement(str(sql), tuple(params), slots, _row_order(query, compiler))


def _row_order(query: Any, compiler: Any) -> tuple[int, ...] | None:
    """Where each column a values_list asked for is in the SELECT's rows (by the compiled columns' aliases), or
    None when they are in that order already or the queryset asked for no columns."""
    fields = getattr(query, "_fields", None)
    if not fields:
        return None
    aliases = [alias for _expression, _sql, alias in compiler.select]
    if list(fields) == aliases:
        return None
    return tuple(aliases.index(name) for name in fields)


def _identity(value: Any) -> tuple[type, Any]:
    # By type and value: the stand-in id 1 is not the flag True, nor the text "1".
    return type(value), value if isinstance(value, int | str | float | bool | None) else repr(value)
