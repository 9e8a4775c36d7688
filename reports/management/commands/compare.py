"""``manage.py compare --base RUN``: relative QPS of a series, in the reference scripts' layouts or others."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db.models import Q

import suites
from reports import releaseview
from reports.compare import ComparisonError, ComparisonSpec, get_comparison, resolve_run
from reports.exports import FORMATS, export, spec_for_format
from runs.models import Run
from runs.releases import RELEASE_VIEWS
from runs.versions import sort_key


class Command(BaseCommand):
    help = (
        "Compare runs of one server and workload with a base run. RUN is a result-directory name "
        "(x.my5651_rel_o2nofp.z12a_c8r32.pk1) or a run id. tsv/csv print the reference scripts' qps.rel layout "
        "(qps.abs with --absolute), markdown the per-group summary tables of a write-up, json everything; "
        "--metrics prints the o.met layout of the HW metrics. With --suite db_bench, RUN is a RocksDB version "
        "(9.8.4), a build (9.8.4.clang) or a build directory (9.8.clang), and --workload may be byrx, iobuf or "
        "iodir; tsv/csv then print the db_bench scripts' sum.abs0 layout (sum.abs1 with --absolute). With --suite "
        "ibench, RUN is a run (100m.my8022.cx6d), its tag without the rows (my8022.cx6d), a build (my8022) or a "
        "version (8.0.22); tsv/csv print the Insert Benchmark scripts' rel.<step> tables of every metric column "
        "(mrg.<step> with --absolute), one step with --step."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--base", required=True, help="the base run")
        parser.add_argument(
            "--suite",
            choices=[suites.SYSBENCH.name, suites.DBBENCH.name, suites.IBENCH.name],
            default=suites.SYSBENCH.name,
        )
        parser.add_argument("--step", help="Insert Benchmark: print this step's table only (l.i1, qr100, q100.2)")
        parser.add_argument("--runs", nargs="+", default=[], help="runs to compare (default: the base's whole series)")
        parser.add_argument("--server", help="server name, when the run name exists on several servers")
        parser.add_argument("--workload", help="workload name, when the run name exists in several workloads")
        parser.add_argument(
            "--variant",
            help="a word of a summary table's name (prep1), when several tables of an archive share the run names",
        )
        parser.add_argument("--group-set", default="auto", help="classic-42, current-32, a saved set, or auto")
        parser.add_argument(
            "--dop",
            type=int,
            help=(
                "concurrency (default: the one at which the base measured the most microbenchmarks, "
                "warm-ups not counted; a tie goes to the fewest clients)"
            ),
        )
        parser.add_argument(
            "--releases",
            choices=RELEASE_VIEWS,
            default="all",
            help="all (default) or long-term: the long-term releases and the newest release of a series that "
            "mixes both",
        )
        parser.add_argument("--format", choices=FORMATS, default="tsv")
        parser.add_argument("--absolute", action="store_true", help="absolute QPS instead of relative (tsv/csv)")
        parser.add_argument("--metrics", action="store_true", help="HW metrics in the o.met layout")
        parser.add_argument("--include-warmups", action="store_true", help="keep warm-up tests (json/markdown)")
        parser.add_argument("--red", type=float, default=0.95, help="red at or below (default 0.95)")
        parser.add_argument("--green", type=float, default=1.05, help="green at or above (default 1.05)")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            if options["suite"] == suites.IBENCH.name:
                base = resolve_ibench_run(options["base"], server=options["server"], workload=options["workload"])
                run_ids = tuple(resolve_ibench_run(name, series=base).pk for name in options["runs"])
            elif options["suite"] == suites.DBBENCH.name:
                base = resolve_dbbench_run(options["base"], server=options["server"], workload=options["workload"])
                run_ids = tuple(resolve_dbbench_run(name, series=base).pk for name in options["runs"])
            else:
                base = resolve_run(
                    options["base"],
                    server=options["server"],
                    workload=options["workload"],
                    dop=options["dop"],
                    variant=options["variant"],
                )
                run_ids = tuple(
                    resolve_run(
                        name, server=base.server.name, workload=base.workload.name, dop=options["dop"], near=base
                    ).pk
                    for name in options["runs"]
                )
            spec = ComparisonSpec(
                base_run_id=base.pk,
                run_ids=run_ids,
                group_set=options["group_set"],
                dop=options["dop"],
                red=options["red"],
                green=options["green"],
                include_warmups=options["include_warmups"],
            )
            spec = spec_for_format(spec, options["format"], metrics=options["metrics"])
            comparison = get_comparison(spec)
            comparison = releaseview.in_view(
                comparison, options["releases"], settings.BENCHDASH_RELEASE_LINES
            ).comparison
        except (ComparisonError, ValueError) as exc:
            raise CommandError(str(exc)) from exc
        try:
            text = export(
                comparison,
                options["format"],
                absolute=options["absolute"],
                metrics=options["metrics"],
                step=options["step"],
            )
        except ValueError as exc:  # a step the comparison does not have
            raise CommandError(str(exc)) from exc
        self.stdout.write(text, ending="")
        for warning in comparison.warnings:
            self.stderr.write(f"warning: {warning}")


def resolve_dbbench_run(
    name: str, *, server: str | None = None, workload: str | None = None, series: Run | None = None
) -> Run:
    """A db_bench run by version, build (``9.8.4.clang``) or build directory (``9.8.clang``).

    A version selects its run only when one build of the series has it (several
    runs of that build are repeats, compared as one column); otherwise the error
    lists the builds to choose from. ``series``: look only beside that run.
    """
    runs = Run.objects.filter(workload__suite=suites.DBBENCH.name).select_related(
        "server", "workload", "build__version"
    )
    if series is not None:
        runs = runs.filter(server_id=series.server_id, workload_id=series.workload_id)
    if server:
        runs = runs.filter(server__name=server)
    if workload:
        runs = runs.filter(Q(workload__name=workload) | Q(workload__params__workload=workload))
    matches = list(
        runs.filter(Q(build__version__text=name) | Q(build__name=name) | Q(name=name)).order_by("started_at", "pk")
    )
    if not matches:
        versions = sorted(set(runs.values_list("build__version__text", flat=True)[:1000]), key=sort_key)
        hint = f"; versions: {', '.join(versions[:30])}" if versions else "; no db_bench runs match --server/--workload"
        raise ComparisonError(f"no db_bench run with version, build or build directory {name!r}{hint}")
    where = {(r.server.name, r.workload.name) for r in matches}
    if len(where) > 1:
        choices = "; ".join(f"--server {s!r} --workload {w!r}" for s, w in sorted(where))
        raise ComparisonError(f"{name!r} exists on several servers/workloads; choose one with {choices}")
    by_version = [r for r in matches if r.build.version.text == name]
    builds = sorted({r.build.name for r in by_version})
    if len(builds) > 1:
        raise ComparisonError(
            f"version {name} has {len(builds)} builds here: {', '.join(builds)}; pass one of them as the build"
        )
    if by_version:
        return by_version[0]
    return next((r for r in matches if r.build.name == name), matches[0])


def resolve_ibench_run(
    name: str, *, server: str | None = None, workload: str | None = None, series: Run | None = None
) -> Run:
    """An Insert Benchmark run by name (``100m.my8022.cx6d``), tag without the rows (``my8022.cx6d``), build
    (``my8022``) or version (``8.0.22``); ambiguous names are an error listing the choices. ``series``: look only
    beside that run."""
    runs = Run.objects.filter(workload__suite=suites.IBENCH.name).select_related("server", "workload", "build__version")
    if series is not None:
        runs = runs.filter(server_id=series.server_id, workload_id=series.workload_id)
    if server:
        runs = runs.filter(server__name=server)
    if workload:
        runs = runs.filter(workload__name=workload)
    matches = list(
        runs.filter(
            Q(name=name) | Q(name__endswith=f".{name}") | Q(build__name=name) | Q(build__version__text=name)
        ).order_by("started_at", "pk")
    )
    exact = [r for r in matches if r.name == name]
    matches = exact or matches
    if not matches:
        names = sorted(set(runs.values_list("name", flat=True)[:1000]))
        hint = f"; runs: {', '.join(names[:30])}" if names else "; no Insert Benchmark runs match --server/--workload"
        raise ComparisonError(f"no Insert Benchmark run named {name!r}{hint}")
    where = {(r.server.name, r.workload.name) for r in matches}
    if len(where) > 1:
        choices = "; ".join(f"--server {s!r} --workload {w!r}" for s, w in sorted(where))
        raise ComparisonError(f"{name!r} exists on several servers/workloads; choose one with {choices}")
    names = sorted({r.name for r in matches})
    if len(names) > 1:
        raise ComparisonError(f"{name!r} matches {len(names)} runs here: {', '.join(names)}; pass one of them")
    return matches[0]
