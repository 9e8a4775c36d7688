"""The series matrix: every result of a series (server + workload) that a comparison reads, stored as compact
arrays when the series is refreshed, so that a comparison reads one row instead of one row per result.

``store`` writes it under the series' stamp (its number of runs and newest run id, ``reports.compare.
series_stamp``), taken from the runs it read; ``results`` reads it only in the query that finds the series still
at that stamp, so a run imported or deleted since the refresh sends the comparison back to the results table
until the next refresh. What it returns is, row for row, what ``reports.compare.load_series`` reads from the
results table (the order aside, which the comparison does not depend on): the same floats, None where the
database has NULL.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.db.models import Field, Model

from reports.models import SeriesMatrix
from runs.models import Result, Run

if TYPE_CHECKING:
    import numpy as np

# The HW metrics a comparison reads of each result, in the order of SeriesResult.metrics.
HW_METRICS = ("cpu_o", "cs_o", "r_o", "rkb_o", "wkb_o", "o_s")
# The float columns of each result: QPS, the HW metrics, transactions/s (scan's tps × rows / 1000 reads it).
VALUES = ("qps", *HW_METRICS, "tps")
# Bump with any change to the arrays' layout or what they hold: rows of another format are never read.
FORMAT = 1

# One result as ``load_series`` reads it: run id, microbenchmark id, test, range size, concurrency, QPS, the HW
# metrics, suite, warm-up, transactions/s (reports.compare.SeriesResult's fields, in order).
Row = tuple[int, int, str, "int | None", int, float, tuple["float | None", ...], str, bool, "float | None"]

_INTS = "<i8"  # numpy dtypes by name: numpy is imported where arrays are made or read, not with the module
_FLOATS = "<f8"


def encode(rows: Iterable[Sequence[Any]]) -> tuple[list[list[Any]], bytes]:
    """The microbenchmarks and the arrays of ``rows``, each (run id, microbenchmark id, test, range size, suite,
    warm-up, concurrency, *VALUES)."""
    import numpy as np

    # Column by column rather than row by row: a series of 300 runs has 12,600 results, each read once here.
    found = list(rows)
    if not found:
        return [], np.array([0], dtype=_INTS).tobytes()
    run_ids, microbenchmark_ids, _tests, _range_sizes, _suites, _warmups, dops, *floats = zip(*found, strict=True)
    # Each microbenchmark in the order of its first result; every row of it describes it alike (a join).
    row_of = dict(zip(microbenchmark_ids, found, strict=True))
    described = [[m, row[2], row[3], row[4], bool(row[5])] for m, row in row_of.items()]
    index_of = {m: n for n, m in enumerate(row_of)}
    # Results × VALUES, row by row as before: 0 and a set null bit where the database had NULL.
    table = np.column_stack([_floats(column) for column in floats])
    nulls = np.column_stack([_nulls(column) for column in floats])
    arrays = (
        np.array([len(run_ids)], dtype=_INTS).tobytes()
        + np.array(run_ids, dtype=_INTS).tobytes()
        + np.array([index_of[m] for m in microbenchmark_ids], dtype=_INTS).tobytes()
        + np.array(dops, dtype=_INTS).tobytes()
        + table.tobytes()
        + np.packbits(nulls, axis=None).tobytes()
    )
    return described, arrays


def _floats(column: Sequence[float | None]) -> np.ndarray:
    """One column of ``encode``'s VALUES as floats, 0 where the database had NULL."""
    import numpy as np

    if None in column:
        return np.array([0.0 if v is None else v for v in column], _FLOATS)
    return np.array(column, _FLOATS)


def _nulls(column: Sequence[float | None]) -> np.ndarray:
    """Where one column of ``encode``'s VALUES is NULL."""
    import numpy as np

    if None in column:
        return np.array([v is None for v in column], bool)
    return np.zeros(len(column), bool)


@dataclass(frozen=True)
class Table:
    """Results as arrays, what a comparison computes from: result i is run ``runs[i]``'s of the microbenchmark
    ``microbenchmarks[indexes[i]]`` (id, test, range size, suite, warm-up) at concurrency ``dops[i]``, its VALUES
    ``values[i]`` (0 where ``nulls[i]``: NULL in the database)."""

    microbenchmarks: tuple[tuple[int, str, int | None, str, bool], ...]
    runs: np.ndarray  # <i8
    indexes: np.ndarray  # <i8, into microbenchmarks
    dops: np.ndarray  # <i8
    values: np.ndarray  # <f8, (results, len(VALUES))
    nulls: np.ndarray  # bool, (results, len(VALUES))

    def __len__(self) -> int:
        return len(self.runs)

    def column(self, name: str) -> list[float | None]:
        """One of VALUES as Python floats, None where the database had NULL."""
        j = VALUES.index(name)
        return _with_nulls(self.values[:, j], self.nulls[:, j])

    def rows(self) -> list[Row]:
        """Row by row, as ``reports.compare.load_series`` reads them from the results table."""
        columns = [_with_nulls(self.values[:, j], self.nulls[:, j]) for j in range(len(VALUES))]
        found = [self.microbenchmarks[i] for i in self.indexes.tolist()]
        return list(
            zip(
                self.runs.tolist(),
                [m[0] for m in found],
                [m[1] for m in found],
                [m[2] for m in found],
                self.dops.tolist(),
                columns[0],
                zip(*columns[1 : 1 + len(HW_METRICS)], strict=True),
                [m[3] for m in found],
                [m[4] for m in found],
                columns[-1],
                strict=True,
            )
        )

    @classmethod
    def of_rows(cls, rows: Iterable[Sequence[Any]]) -> Table:
        """The table of rows as ``load_series`` reads them (``Row``: the HW metrics one tuple)."""
        import numpy as np

        microbenchmarks: dict[tuple[Any, ...], int] = {}
        run_ids: list[int] = []
        indexes: list[int] = []
        dops: list[int] = []
        values: list[list[float | None]] = []
        for run_id, microbenchmark_id, test, range_size, dop, qps, metrics, suite, is_warmup, tps in rows:
            described = (microbenchmark_id, test, range_size, suite, bool(is_warmup))
            index = microbenchmarks.setdefault(described, len(microbenchmarks))
            run_ids.append(run_id)
            indexes.append(index)
            dops.append(dop)
            values.append([qps, *metrics, tps])
        width = len(VALUES)
        return cls(
            tuple(microbenchmarks),
            np.array(run_ids, dtype=_INTS),
            np.array(indexes, dtype=_INTS),
            np.array(dops, dtype=_INTS),
            np.array([[0.0 if v is None else v for v in row] for row in values], _FLOATS).reshape(-1, width),
            np.array([[v is None for v in row] for row in values], bool).reshape(-1, width),
        )


def decode_table(
    microbenchmarks: Sequence[Sequence[Any]], arrays: bytes, run_ids: Collection[int], *, include_warmups: bool
) -> Table:
    """The results of the runs ``run_ids`` (without the warm-up microbenchmarks' unless ``include_warmups``)."""
    import numpy as np

    n = int(np.frombuffer(arrays, _INTS, 1)[0])
    offset = 8  # the count, one <i8
    runs = np.frombuffer(arrays, _INTS, n, offset)
    indexes = np.frombuffer(arrays, _INTS, n, offset + n * 8)
    dops = np.frombuffer(arrays, _INTS, n, offset + 2 * n * 8)
    table = np.frombuffer(arrays, _FLOATS, n * len(VALUES), offset + 3 * n * 8).reshape(n, len(VALUES))
    packed = np.frombuffer(arrays, np.uint8, offset=offset + 3 * n * 8 + table.nbytes)
    nulls = np.unpackbits(packed, count=n * len(VALUES)).astype(bool).reshape(n, len(VALUES))
    keep = np.isin(runs, np.fromiter(run_ids, _INTS, len(run_ids)))
    if not include_warmups:
        warmups = np.array([bool(m[4]) for m in microbenchmarks], dtype=bool)
        if warmups.any():
            keep &= ~warmups[indexes]
    described = tuple((m[0], m[1], m[2], m[3], bool(m[4])) for m in microbenchmarks)
    return Table(described, runs[keep], indexes[keep], dops[keep], table[keep], nulls[keep])


def decode(
    microbenchmarks: Sequence[Sequence[Any]], arrays: bytes, run_ids: Collection[int], *, include_warmups: bool
) -> list[Row]:
    """``decode_table``'s results row by row."""
    return decode_table(microbenchmarks, arrays, run_ids, include_warmups=include_warmups).rows()


def _with_nulls(values: np.ndarray, nulls: np.ndarray) -> list[float | None]:
    """One column as Python floats, None where the database had NULL."""
    floats: list[float | None] = values.tolist()
    if nulls.all():
        return [None] * len(floats)
    if nulls.any():
        return [None if null else value for value, null in zip(floats, nulls.tolist(), strict=True)]
    return floats


def store(server_id: int, workload_id: int) -> SeriesMatrix | None:
    """Read every result of the series and store its matrix in place of the one before; None when the series has
    no runs (its matrix, if any, is dropped)."""
    runs = list(Run.objects.filter(server_id=server_id, workload_id=workload_id).values_list("pk", flat=True))
    if not runs:
        SeriesMatrix.objects.filter(server_id=server_id, workload_id=workload_id).delete()
        return None
    # Only the runs just read: a run imported meanwhile waits for its own refresh. The stamp is these runs': a
    # run deleted meanwhile leaves the series at another stamp, under which this row is never read.
    rows = (
        Result.objects.filter(run_id__in=runs)
        .order_by()
        .values_list(
            "run_id",
            "microbenchmark_id",
            "microbenchmark__test",
            "microbenchmark__range_size",
            "microbenchmark__suite",
            "microbenchmark__is_warmup",
            "dop",
            *VALUES,
        )
    )
    microbenchmarks, arrays = encode(rows.iterator(chunk_size=5000))
    matrix, _ = SeriesMatrix.objects.update_or_create(
        server_id=server_id,
        workload_id=workload_id,
        defaults={
            "runs": len(runs),
            "last_run_id": max(runs),
            "format": FORMAT,
            "microbenchmarks": microbenchmarks,
            "arrays": arrays,
        },
    )
    return matrix


def results(server_id: int, workload_id: int, run_ids: Collection[int], *, include_warmups: bool) -> Table | None:
    """The results of the runs ``run_ids`` of the series as its matrix holds them, in one query; None when the
    series has no matrix at its current stamp (changed since its refresh, or never refreshed)."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(_stamped_sql(), [server_id, workload_id, FORMAT, server_id, workload_id, server_id, workload_id])
        found = cursor.fetchone()
    if found is None:
        return None
    microbenchmarks, arrays = found
    if isinstance(microbenchmarks, str):  # the JSON as the database sends it, not decoded by the field
        microbenchmarks = json.loads(microbenchmarks)
    return decode_table(microbenchmarks, bytes(arrays), run_ids, include_warmups=include_warmups)


@functools.cache
def _stamped_sql() -> str:
    """The series' matrix row, only while the series is at its stamp (its number of runs and newest run id), in
    one statement written once: the query builder cost more than the query."""
    from django.db import connection

    quote = connection.ops.quote_name

    def column(model: type[Model], name: str) -> str:
        field = model._meta.get_field(name)
        if not isinstance(field, Field) or field.column is None:
            raise TypeError(f"{model.__name__}.{name} is no column")
        return quote(field.column)

    matrix, run = quote(SeriesMatrix._meta.db_table), quote(Run._meta.db_table)
    in_series = f"FROM {run} r WHERE r.{column(Run, 'server')} = %s AND r.{column(Run, 'workload')} = %s"
    return (
        f"SELECT m.{column(SeriesMatrix, 'microbenchmarks')}, m.{column(SeriesMatrix, 'arrays')} FROM {matrix} m "
        f"WHERE m.{column(SeriesMatrix, 'server')} = %s AND m.{column(SeriesMatrix, 'workload')} = %s "
        f"AND m.{column(SeriesMatrix, 'format')} = %s "
        f"AND m.{column(SeriesMatrix, 'runs')} = (SELECT COUNT(*) {in_series}) "
        f"AND m.{column(SeriesMatrix, 'last_run_id')} = (SELECT MAX(r.{column(Run, 'id')}) {in_series})"
    )
