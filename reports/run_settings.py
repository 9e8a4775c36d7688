"""Runs and their parsed settings, read from the database for the run diff and the explanations of a change."""

from __future__ import annotations

from collections.abc import Iterable

from reports.compare import Comparison
from reports.diff import RunDiff, RunSettings, diff_runs, run_settings
from runs.models import Run, RunFile


def load_run_settings(run_ids: Iterable[int]) -> dict[int, tuple[Run, RunSettings]]:
    """Runs and their parsed settings in two queries, whatever their number of files or settings."""
    ids = set(run_ids)
    runs = {
        run.pk: run
        for run in Run.objects.filter(pk__in=ids).select_related(
            "build__version__dbms", "config", "server", "workload", "bundle"
        )
    }
    files = _files(runs)
    return {
        pk: (
            run,
            run_settings(
                run.name,
                run.build.version.dbms.name,
                run.build.version.text,
                files[pk],
                config_text=run.config.text,
                commands=run.commands,
                sysbench_version=run.sysbench_version,
            ),
        )
        for pk, run in runs.items()
    }


def _files(run_ids: Iterable[int]) -> dict[int, list[tuple[str, str, str]]]:
    """The stored settings files of each run, ``(name, kind, text)`` by name: one query."""
    files: dict[int, list[tuple[str, str, str]]] = {pk: [] for pk in run_ids}
    for run_id, name, kind, text in (
        RunFile.objects.filter(run_id__in=files)
        .exclude(kind=RunFile.Kind.OTHER)
        .order_by("run_id", "name")
        .values_list("run_id", "name", "kind", "text")
    ):
        files[run_id].append((name, kind, text))
    return files


def run_diff_for_column(comparison: Comparison, column_key: str) -> RunDiff:
    """Settings diff of the base run against the first run of a column (two queries).

    The runs are read as the few values their settings need, their DBMS and version taken from their columns:
    as model instances with every related row, a join of six tables took the database longer to plan than the
    rest of a drill-down's queries together."""
    column = comparison.column(column_key)
    base = comparison.column(comparison.base)
    run_id, base_id = column.run_ids[0], comparison.spec.base_run_id
    files = _files([base_id, run_id])
    loaded = {
        pk: run_settings(
            name,
            (base if pk == base_id else column).dbms,
            (base if pk == base_id else column).version,
            files[pk],
            config_text=config_text,
            commands=commands,
            sysbench_version=sysbench,
        )
        for pk, name, config_text, commands, sysbench in Run.objects.filter(pk__in=[base_id, run_id]).values_list(
            "pk", "name", "config__text", "commands", "sysbench_version"
        )
    }
    return diff_runs(loaded[base_id], loaded[run_id])
