"""``manage.py fill_scan_formula``: decide what runs imported before benchdash recorded it do not say, from their
stored archives: the scan formula their own sb.r.qps.scan used, and the start their sb.ps samples record.

A command, not a migration: only the archive holds a run directory's sb.r.qps.scan and sb.ps samples, and
reading them means unpacking and parsing each bundle again with the importer's own parser (``parse_bundle``,
the code a migration must not depend on), minutes for a large bundle. Migration 0015 marks the runs it could
not decide from their stored results as "unknown"; this command reads their bundles once each, may be run
again at any time (a run it decided is not read again) and changes nothing else of a run. What it cannot
decide (an archive that no longer parses, a run not found in it) stays "unknown", and the run's page says so.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from django.core.management.base import BaseCommand, CommandParser
from django.db.migrations.recorder import MigrationRecorder
from django.db.models import Q

from runs import archive_store
from runs.models import Bundle, Run
from runs.parse import ParsedRun, bad_input, parse_bundle
from suites.base import STARTED_CONTENT, STARTED_FILE_TIME
from suites.sysbench import parse as sysbench

# Until this migration sysbench runs' starts were the oldest file's time (its sb.ps clocks were not read).
_STARTS_RECORDED = "0013_run_start_from_content_or_file_time"


def undecided() -> Any:
    """Runs of sysbench directories whose scan formula is unknown, or whose start was never looked for in its
    samples (imported before 0013)."""
    raw = Run.objects.filter(from_summary=False, workload__suite="sysbench")
    wanted = Q(scan_formula=sysbench.SCAN_UNKNOWN)
    applied = (
        MigrationRecorder.Migration.objects.filter(app="runs", name=_STARTS_RECORDED)
        .values_list("applied", flat=True)
        .first()
    )
    if applied is not None:
        wanted |= Q(created_at__lt=applied, started_from__in=(STARTED_FILE_TIME, ""))
    return raw.filter(wanted).order_by("bundle_id", "pk")


class Command(BaseCommand):
    help = (
        "Decide the scan formula (and the start recorded in the samples) of sysbench runs imported before "
        "benchdash recorded them, by reading their stored archives again."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--dry-run", action="store_true", help="say what would change, change nothing")

    def handle(self, *args: Any, **options: Any) -> None:
        by_bundle: dict[int, list[Run]] = defaultdict(list)
        for run in undecided():
            by_bundle[run.bundle_id].append(run)
        decided = left = 0
        for bundle in Bundle.objects.filter(pk__in=by_bundle).order_by("pk"):
            runs = by_bundle[bundle.pk]
            try:
                with archive_store.archive_file(bundle) as archive:
                    parsed = parse_bundle(archive, name=bundle.original_name, overrides=bundle.overrides)
            except bad_input() as exc:
                left += len(runs)
                self.stdout.write(
                    f"bundle {bundle.pk} ({bundle.original_name}): not readable again ({exc}); {len(runs)} runs left"
                )
                continue
            found = {(p.path, p.name): p for p in parsed.runs if p.sysbench is not None}
            for run in runs:
                p = found.get((run.path, run.name))
                if p is None:
                    left += 1
                    self.stdout.write(f"run {run.pk} {run.name}: not found in bundle {bundle.pk}'s archive; left")
                    continue
                changes = _changes(run, p)
                if changes and not options["dry_run"]:
                    Run.objects.filter(pk=run.pk).update(**changes)
                decided += 1
                said = ", ".join(f"{key} {value!s}" for key, value in changes.items()) or "nothing to change"
                self.stdout.write(f"run {run.pk} {run.name}: {said}")
        verb = "would be decided" if options["dry_run"] else "decided"
        self.stdout.write(f"{decided} runs {verb}, {left} left undecided")


def _changes(run: Run, parsed: ParsedRun) -> dict[str, Any]:
    """What the archive decides of ``run``: its scan formula when unknown, its start when the samples record it."""
    assert parsed.sysbench is not None
    changes: dict[str, Any] = {}
    if run.scan_formula == sysbench.SCAN_UNKNOWN:
        changes["scan_formula"] = parsed.sysbench.scan_formula
    if run.started_from != STARTED_CONTENT and parsed.started_from == STARTED_CONTENT:
        changes["started_at"] = parsed.started_at
        changes["started_from"] = STARTED_CONTENT
    return changes
