"""``manage.py rebuild_series_summaries``: write the home page's series summaries for the runs already stored.

The worker keeps the summaries up to date as runs arrive; this fills them in for an archive imported
before they existed (or after the table was emptied). It reads every series once, so it is a command to
run once, not something a page does. ``--detect`` runs the whole after-import refresh instead (saved
reports and regression detection too).
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from reports.compare import ComparisonError
from reports.series import refresh_series, summarise_series
from runs.models import Run


class Command(BaseCommand):
    help = "Write the home page's series summaries for every series already stored."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--detect", action="store_true", help="run the whole refresh: saved reports and regression detection too"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        series = sorted(set(Run.objects.values_list("server_id", "workload_id").distinct()))
        written = 0
        for server_id, workload_id in series:
            try:
                if options["detect"]:
                    written += len(refresh_series(server_id, workload_id))
                else:
                    written += len(summarise_series(server_id, workload_id)[0])
            except ComparisonError as exc:
                # One series that cannot be compared must not keep the others from their summaries.
                self.stderr.write(f"series {server_id}/{workload_id} not summarised: {exc}")
        self.stdout.write(f"{written} series summaries written for {len(series)} server × workload pairs")
