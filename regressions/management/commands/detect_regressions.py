"""``manage.py detect_regressions``: find steps in relative QPS and store them as regression records."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from regressions.detection import detect_regressions
from regressions.filters import in_release_view
from regressions.models import Regression
from regressions.records import record_as_dict
from regressions.viewnote import view_note
from reports.compare import ComparisonError, resolve_run
from runs import releases
from runs.models import Run, Server, Workload

# The switch to the other release view, as this command spells it.
SWITCH_TEXT_OPTION = {"long-term": "--releases all for every release", "all": "--releases long-term for the default"}


class Command(BaseCommand):
    help = (
        "Detect regression and improvement stories across versions (regressions/stories.py) and store one record "
        "per story; running it again updates the same records. Without options every server and workload is "
        "examined, each DBMS against its oldest version, over its long-term release lines "
        "(runs/releases.py)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--server", help="server name (default: every server)")
        parser.add_argument("--workload", help="workload name (default: every workload)")
        parser.add_argument("--base", help="base run name or id (default: the oldest version of each DBMS)")
        parser.add_argument(
            "--releases",
            choices=releases.RELEASE_VIEWS,
            default=releases.DEFAULT_VIEW,
            help="long-term: the long-term lines of a series that mixes both and its newest release, provisional "
            "when short-term (default); all: every release (stored beside the default view's records)",
        )
        parser.add_argument(
            "--experimental-builds",
            action="store_true",
            help="let an experimental build (a flavour beyond the known build types) be a version's point",
        )
        parser.add_argument(
            "--format", choices=("text", "json"), default="text", help="json: one array of the records kept"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        base_id = None
        shown = options["releases"]
        series = Run.objects.values_list("server_id", "workload_id").distinct().order_by("server_id", "workload_id")
        try:
            if options["base"]:
                base = resolve_run(options["base"], server=options["server"], workload=options["workload"])
                base_id = base.pk
                series = series.filter(server_id=base.server_id, workload_id=base.workload_id)
            if options["server"]:
                if not Server.objects.filter(name=options["server"]).exists():
                    raise CommandError(f"no server named {options['server']!r}")
                series = series.filter(server__name=options["server"])
            if options["workload"]:
                if not Workload.objects.filter(name=options["workload"]).exists():
                    raise CommandError(f"no workload named {options['workload']!r}")
                series = series.filter(workload__name=options["workload"])
            pairs = list(series)
            if not pairs:
                raise CommandError("no runs match")
            kept: list[int] = []
            for server_id, workload_id in pairs:
                summary = detect_regressions(
                    server_id,
                    workload_id,
                    base_id,
                    view=options["releases"],
                    experimental=options["experimental_builds"],
                )
                kept.extend(summary.regression_ids)
                if options["format"] == "json":
                    continue
                self._print(summary.regression_ids, shown)
                self.stdout.write(
                    f"server {Server.objects.get(pk=server_id)}, workload {Workload.objects.get(pk=workload_id)}: "
                    f"{summary.found} stories ({summary.created} new, {summary.updated} updated, "
                    f"{summary.unchanged} unchanged; {len(summary.opened)} newly open), {summary.removed} no longer "
                    f"found and removed, {summary.stale} no longer found but triaged (kept)"
                )
        except ComparisonError as exc:
            raise CommandError(str(exc)) from exc
        if options["format"] == "json":
            records = Regression.objects.filter(in_release_view(shown), pk__in=kept).select_related(
                "microbenchmark",
                "arrived_in__dbms",
                "previous_version",
                "fixed_in",
                "persists_until",
                "server",
                "base_run",
            )
            records = records.select_related("workload").order_by(
                "server__name", "workload__name", "arrived_in__sort_key", "group", "microbenchmark__test", "kind"
            )
            self.stdout.write(json.dumps([record_as_dict(r) for r in records], indent=1, ensure_ascii=False))
        # Which releases the view left out, in one line: on stderr beside JSON, which stays one array.
        note = view_note(shown, server=options["server"] or "").line(SWITCH_TEXT_OPTION[shown])
        (self.stderr if options["format"] == "json" else self.stdout).write(note)

    def _print(self, ids: list[int], view: str) -> None:
        records = Regression.objects.filter(in_release_view(view), pk__in=ids).select_related(
            "microbenchmark", "arrived_in__dbms", "previous_version", "fixed_in", "persists_until"
        )
        for r in records.order_by("arrived_in__sort_key", "microbenchmark__test", "group", "kind"):
            subject = f"{r.group} (group)" if r.is_group else r.subject
            kind = "outlier" if r.outlier else r.kind
            folded = " (folded into its group's story)" if r.folded_into_id else ""
            self.stdout.write(f"{kind:<11}  {subject:<44}  {r.summary}{folded}  [{r.get_state_display()}] #{r.pk}")
