"""``manage.py compare --base RUN``: relative QPS of a series, in the reference scripts' layouts or others."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from reports.compare import ComparisonError, ComparisonSpec, get_comparison, resolve_run
from reports.exports import FORMATS, export, spec_for_format


class Command(BaseCommand):
    help = (
        "Compare runs of one server and workload with a base run. RUN is a result-directory name "
        "(x.my5651_rel_o2nofp.z12a_c8r32.pk1) or a run id. tsv/csv print the reference scripts' qps.rel layout "
        "(qps.abs with --absolute), markdown the per-group summary tables of a write-up, json everything; "
        "--metrics prints the o.met layout of the HW metrics."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--base", required=True, help="the base run")
        parser.add_argument("--runs", nargs="+", default=[], help="runs to compare (default: the base's whole series)")
        parser.add_argument("--server", help="server name, when the run name exists on several servers")
        parser.add_argument("--workload", help="workload name, when the run name exists in several workloads")
        parser.add_argument("--group-set", default="auto", help="classic-42, current-32, a saved set, or auto")
        parser.add_argument("--dop", type=int, help="concurrency (default: the base run's)")
        parser.add_argument("--format", choices=FORMATS, default="tsv")
        parser.add_argument("--absolute", action="store_true", help="absolute QPS instead of relative (tsv/csv)")
        parser.add_argument("--metrics", action="store_true", help="HW metrics in the o.met layout")
        parser.add_argument("--include-warmups", action="store_true", help="keep warm-up tests (json/markdown)")
        parser.add_argument("--red", type=float, default=0.95, help="red at or below (default 0.95)")
        parser.add_argument("--green", type=float, default=1.05, help="green at or above (default 1.05)")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            base = resolve_run(options["base"], server=options["server"], workload=options["workload"])
            run_ids = tuple(
                resolve_run(name, server=base.server.name, workload=base.workload.name).pk for name in options["runs"]
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
        except ComparisonError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(
            export(comparison, options["format"], absolute=options["absolute"], metrics=options["metrics"]), ending=""
        )
        for warning in comparison.warnings:
            self.stderr.write(f"warning: {warning}")
