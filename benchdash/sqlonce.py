"""A query's SQL compiled once per process and run again with other values: for the hot pages' reads, where
Django's query builder costs more CPU than PostgreSQL spends on the query.

``compile_once(queryset, stand_ins)`` compiles a queryset built with stand-ins in place of the values that vary
(ids no row has, texts no row holds) and returns a ``Statement``; ``Statement.bind`` puts the real values where
the stand-ins were. Every other parameter the compiler wrote (a setting's pattern, a flag) is a constant of the
statement: a caller whose constants can change keys its cache by them. The rows come as the database driver
returns them, without the queryset's converters: callers read columns that need none on their backend.
``instances_once`` does the same for a queryset of model instances (its related ones followed), which it makes as
the queryset would, converters included.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from django.db import connections
from django.db.models import Model, QuerySet
from django.db.models.query import get_related_populators

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


@dataclass(frozen=True)
class Instances:
    """A queryset of model instances (``select_related`` followed) compiled once: its rows made into instances as
    the queryset makes them (``ModelIterable``: the fields' converters, the related instances), on the
    connection it was compiled for (``instances_once``)."""

    statement: Statement
    compiler: Any
    init_list: tuple[str, ...]
    fields: slice
    populators: tuple[Any, ...]

    def fetch(self, *values: Any) -> list[Model]:
        compiler = self.compiler
        with compiler.connection.cursor() as cursor:
            cursor.execute(self.statement.sql, self.statement.bind(*values))
            rows = cursor.fetchall()
        model, alias, found = compiler.klass_info["model"], compiler.connection.alias, []
        for row in compiler.results_iter(results=[rows]):
            instance = model.from_db(alias, self.init_list, row[self.fields])
            for populator in self.populators:
                populator.populate(row, instance)
            found.append(instance)
        return found


# Per connection (a thread's), what instances_once compiled on it, by key.
_INSTANCES: weakref.WeakKeyDictionary[Any, dict[Any, Instances]] = weakref.WeakKeyDictionary()


def instances_once(key: Any, build: Callable[[], QuerySet[Any]], stand_ins: Sequence[Any]) -> Instances:
    """The model instances of the queryset ``build()`` makes with ``stand_ins`` (see ``compile_once``), compiled
    once per connection and ``key``: its converters belong to the connection it runs on. A queryset with
    annotations, deferred fields or prefetches is refused (the instances would lack them)."""
    connection = connections["default"]
    compiled = _INSTANCES.setdefault(connection, {})
    found = compiled.get(key)
    if found is None:
        query = build()
        prefetched = query.__dict__.get("_prefetch_related_lookups")
        if query.query.annotation_select or query.query.deferred_loading[0] or prefetched:
            raise ValueError("only plain model instances (select_related followed) are compiled once")
        compiler = query.query.get_compiler(connection=connection)
        sql, params = compiler.as_sql()
        statement = _statement(sql, params, stand_ins, None)
        select, info = compiler.select, compiler.klass_info
        start, end = info["select_fields"][0], info["select_fields"][-1] + 1
        init_list = tuple(column[0].target.attname for column in select[start:end])
        populators = tuple(get_related_populators(info, select, query.db))  # type: ignore[call-arg]
        found = compiled[key] = Instances(statement, compiler, init_list, slice(start, end), populators)
    return found


def compile_once(query: QuerySet[Any] | Any, stand_ins: Sequence[Any]) -> Statement:
    """The SQL of ``query`` (a queryset) built with ``stand_ins`` for the values that vary; refused when a stand-in
    is missing from the compiled parameters, or one equals another (they could not be told apart)."""
    compiler = query.query.get_compiler(using=query.db)
    sql, params = compiler.as_sql()
    return _statement(sql, params, stand_ins, _row_order(query, compiler))


def _statement(sql: str, params: Sequence[Any], stand_ins: Sequence[Any], order: tuple[int, ...] | None) -> Statement:
    if len(set(map(_identity, stand_ins))) != len(stand_ins):
        raise ValueError(f"stand-ins must differ: {stand_ins!r}")
    where = {_identity(value): at for at, value in enumerate(stand_ins)}
    slots = tuple(where.get(_identity(param)) for param in params)
    missing = set(range(len(stand_ins))) - set(slots)
    if missing:
        raise ValueError(f"the query does not take the stand-ins {[stand_ins[i] for i in sorted(missing)]!r}")
    return Statement(str(sql), tuple(params), slots, order)


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
