"""SQL compiled once (benchdash.sqlonce) reads what the query builder reads: the comparison's runs in every shape."""

from __future__ import annotations

import datetime

import pytest
from django.test import override_settings

from benchdash import sqlonce
from reports import compare
from reports.compare import BASE_RELATED, ComparisonSpec
from runs.models import Run
from tests.factories import RunFactory, ServerFactory, VersionFactory

pytestmark = pytest.mark.django_db


def spec(base: Run, run_ids: tuple[int, ...] = ()) -> ComparisonSpec:
    return ComparisonSpec(
        base_run_id=base.pk,
        run_ids=run_ids,
        group_set="auto",
        dop=None,
        red=0.95,
        green=1.05,
        include_warmups=False,
        scan_formula="era",
    )


def series() -> list[Run]:
    server = ServerFactory()
    started = datetime.datetime(2025, 3, 1, tzinfo=datetime.UTC)
    runs = [
        RunFactory(
            server=server,
            build__version=VersionFactory(text=f"8.0.{n}"),
            started_at=started + datetime.timedelta(hours=n),
            commands={"scan_range=100": f"sysbench --table-size={n} oltp_scan.lua run"} if n % 2 else {},
            summary_layout={"columns": ["qps"]} if n == 3 else {},
        )
        for n in range(5)
    ]
    RunFactory(server=server, build=runs[1].build, branch="feature-x", pull_request=42)  # off the main line
    RunFactory(server=server, build__version__dbms__name="MariaDB")  # another DBMS on the server
    return [Run.objects.select_related(*BASE_RELATED).get(pk=run.pk) for run in runs]


@pytest.mark.parametrize("one_microbenchmark", [False, True])
def test_the_runs_read_by_sql_written_once_are_those_the_query_builder_reads(one_microbenchmark: bool) -> None:
    runs = series()
    off_main = Run.objects.select_related(*BASE_RELATED).get(pull_request=42)
    for base, asked in (
        (runs[0], ()),
        (runs[2], ()),
        (off_main, ()),  # the shape without a statement: through the query builder
        (runs[0], (runs[3].pk,)),
        (runs[4], (runs[1].pk, runs[4].pk, off_main.pk)),
    ):
        wanted = list(compare._run_values(compare._series_runs(spec(base, asked), base), one_microbenchmark))
        assert compare._series_run_rows(spec(base, asked), base, one_microbenchmark) == wanted
        assert wanted


def test_a_changed_base_branch_pattern_is_read_with_its_own_statement() -> None:
    runs = series()
    release = RunFactory(server=runs[0].server, branch="release-9", build__version=VersionFactory(text="8.0.99"))
    base = runs[0]
    assert release.pk not in [row[0] for row in compare._series_run_rows(spec(base), base, False)]
    with override_settings(BENCHDASH_BASE_BRANCHES="main|master|release-.*"):
        found = [row[0] for row in compare._series_run_rows(spec(base), base, False)]
        assert release.pk in found
        assert found == [row[0] for row in compare._run_values(compare._series_runs(spec(base), base), False)]


def test_a_statement_puts_the_values_where_its_stand_ins_were() -> None:
    first, second = sqlonce.ID_STAND_INS[:2]
    statement = sqlonce.compile_once(
        Run.objects.filter(server_id=first, workload_id=second, name__startswith="x.").values_list("pk", "name"),
        (first, second),
    )
    bound = statement.bind(5, 6)
    assert 5 in bound and 6 in bound and first not in bound and second not in bound and len(bound) == 3
    run = RunFactory()
    assert statement.fetch(run.server_id, run.workload_id) == [(run.pk, run.name)]


def test_a_query_without_its_stand_ins_or_with_two_equal_ones_is_refused() -> None:
    first, second = sqlonce.ID_STAND_INS[:2]
    with pytest.raises(ValueError, match="does not take"):
        sqlonce.compile_once(Run.objects.filter(server_id=first).values_list("pk"), (first, second))
    with pytest.raises(ValueError, match="must differ"):
        sqlonce.compile_once(Run.objects.filter(server_id=first).values_list("pk"), (first, first))


def test_a_statement_returns_the_columns_in_the_order_values_list_asked_for() -> None:
    run = RunFactory(commands={"a": "b"})
    (first,) = sqlonce.ID_STAND_INS[:1]
    runs = Run.objects.filter(pk=first)
    statement = sqlonce.compile_once(compare._run_values(runs, False), (first,))
    assert statement.fetch(run.pk) == list(compare._run_values(Run.objects.filter(pk=run.pk), False))


def fields_of(instance: object) -> dict[str, object]:
    return {name: value for name, value in vars(instance).items() if name != "_state"}


def test_a_base_run_read_once_is_the_instance_the_queryset_makes_with_its_related_ones() -> None:
    run = RunFactory(commands={"scan_range=100": "sysbench oltp_scan.lua run"}, summary_layout={"a": 1})
    found = compare.read_base_run(run.pk)
    wanted = Run.objects.select_related(*BASE_RELATED).get(pk=run.pk)
    assert found is not None and found._state.db == wanted._state.db and not found._state.adding
    for mine, theirs in (
        (found, wanted),
        (found.server, wanted.server),
        (found.workload, wanted.workload),
        (found.build, wanted.build),
        (found.build.version, wanted.build.version),
    ):
        assert fields_of(mine) == fields_of(theirs)
    assert found.commands == {"scan_range=100": "sysbench oltp_scan.lua run"}  # the JSON field's converter ran
    assert set(found._state.fields_cache) == set(wanted._state.fields_cache)
    assert compare.read_base_run(run.pk + 1000) is None


def test_instances_with_annotations_are_refused() -> None:
    from django.db.models import Count

    (first,) = sqlonce.ID_STAND_INS[:1]
    with pytest.raises(ValueError, match="plain model instances"):
        sqlonce.instances_once("annotated", lambda: Run.objects.filter(pk=first).annotate(n=Count("results")), (first,))
