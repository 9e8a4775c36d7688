"""Start, execute, cancel and import triggered benchmark runs: the one code path behind the pages and the tasks.

``execute`` claims a queued run with a conditional update (a second delivery of
the same task finds it claimed and does nothing), runs ``sysbench_runner`` in a
private temporary directory while a thread watches the row for a cancel, and
imports a complete result directory through ``runs.importer`` exactly as an
upload would be. A cancelled or failed run keeps its partial output beside the
row and imports nothing.
"""

from __future__ import annotations

import logging
import shutil
import tempfile
import threading
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any

from celery.exceptions import SoftTimeLimitExceeded
from django.db import DatabaseError, connection, transaction
from django.utils import timezone

from reports.compare import ComparisonError, ComparisonSpec, get_comparison
from runner import confirm, experiments, hosts, sysbench_runner
from runner.models import BenchmarkHost, BenchmarkOutput, BenchmarkRun, Schedule
from runs import branches
from runs.importer import BundleBusy, ImportFailed, archive_directory, import_bundle, store_bundle
from runs.models import Bundle, Run
from runs.signals import announce_import
from runs.submit import submit_bundle

log = logging.getLogger(__name__)

State = BenchmarkRun.State
# How often the watcher thread reads the run's state: the longest a cancel waits to be seen.
WATCH_SECONDS = 1.0


# --------------------------------------------------------------------------- starting and cancelling


def create_run(
    target: Any,
    *,
    requested_by: Any = None,
    base_run: Run | None = None,
    host: BenchmarkHost | None = None,
    **parameters: Any,
) -> BenchmarkRun:
    """A queued run of ``target`` on its benchmark host (``hosts.choose_host``: HostChoiceError when several
    reach it and none is named)."""
    run = BenchmarkRun(target=target, base_run=base_run, host=hosts.choose_host(target, host), **parameters)
    if getattr(requested_by, "is_authenticated", False):
        run.requested_by = requested_by
    run.progress = sysbench_runner.plan(run.parameters()).as_dict()
    run.save()
    return run


def cancel(run_id: int) -> str:
    """Ask a run to stop; returns its state afterwards. A queued run is cancelled at once."""
    now = timezone.now()
    with transaction.atomic():
        if BenchmarkRun.objects.filter(pk=run_id, state=State.QUEUED).update(
            state=State.CANCELLED, finished_at=now, error="cancelled before it started"
        ):
            progress = BenchmarkRun.objects.values_list("progress", flat=True).get(pk=run_id) or {}
            for step in progress.get("steps", []):
                step["state"] = "skipped"
            progress["phase"] = State.CANCELLED
            BenchmarkRun.objects.filter(pk=run_id).update(progress=progress)
            return State.CANCELLED
    # The worker's watcher sees this within WATCH_SECONDS and stops sysbench.
    BenchmarkRun.objects.filter(pk=run_id, state=State.RUNNING).update(state=State.CANCELLING)
    return BenchmarkRun.objects.values_list("state", flat=True).get(pk=run_id)


# --------------------------------------------------------------------------- executing


class CancelWatcher(threading.Thread):
    """Polls the run's row and sets ``stop`` once someone asked for a cancel."""

    def __init__(self, run_id: int, stop: threading.Event, interval: float = WATCH_SECONDS) -> None:
        super().__init__(name=f"cancel-watcher-{run_id}", daemon=True)
        self.run_id = run_id
        self.stop = stop
        self.interval = interval
        self.done = threading.Event()

    def run(self) -> None:
        try:
            while not self.done.wait(self.interval):
                try:
                    state = BenchmarkRun.objects.filter(pk=self.run_id).values_list("state", flat=True).first()
                except DatabaseError:
                    # A database blip must not end the benchmark; the next poll tries again.
                    log.warning("cancel watcher of run %s could not read its state", self.run_id, exc_info=True)
                    continue
                if state in (State.CANCELLING, State.CANCELLED):
                    self.stop.set()
                    return
        finally:
            connection.close()  # this thread's own connection

    def finish(self) -> None:
        self.done.set()
        self.join(timeout=10)


def execute(run_id: int, *, task_id: str = "", worker: str = "") -> str | None:
    """Claim, run and import one benchmark run; the state it ended in, or None when it was not ours to run.
    HostBusy when its host is running another benchmark (the run stays queued)."""
    if not hosts.claim(run_id, task_id=task_id, worker=worker):
        _fail_if_lost(run_id)
        return None
    run = BenchmarkRun.objects.select_related("target").get(pk=run_id)
    workdir = Path(tempfile.mkdtemp(prefix="benchdash-run-"))  # mode 0700: only this user reads it
    stop = threading.Event()
    watcher = CancelWatcher(run_id, stop)
    watcher.start()
    outcome: sysbench_runner.Outcome | None = None
    error = ""
    try:
        try:
            conn = run.target.connection()
            # A settings experiment's run: the old version's settings on the server while it runs, then back.
            with experiments.old_settings(run, conn):
                outcome = sysbench_runner.run(
                    conn,
                    run.parameters(),
                    build=run.target.build_label,
                    config=run.target.config_label,
                    workdir=workdir,
                    stop=stop,
                    on_progress=_progress_saver(run_id),
                    sample_metrics=run.target.sample_host_metrics,
                    devices=run.target.devices,
                )
        except SoftTimeLimitExceeded:
            error = "the run took longer than its time limit and was stopped"
        except sysbench_runner.RunnerError as exc:
            error = str(exc)
        except Exception as exc:
            # Anything else still ends the run as failed, never stuck in "running".
            log.exception("benchmark run %s failed", run_id)
            error = f"internal error: {exc.__class__.__name__}: {exc}"
        finally:
            watcher.finish()
        return _finish(run, outcome, error, workdir / run.target.run_dir_name)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _progress_saver(run_id: int) -> Callable[[sysbench_runner.Progress], None]:
    def save(progress: sysbench_runner.Progress) -> None:
        try:
            BenchmarkRun.objects.filter(pk=run_id).update(progress=progress.as_dict())
        except DatabaseError:
            # Progress is for people watching; a failed update must not end an hour-long benchmark.
            log.warning("could not save the progress of benchmark run %s", run_id, exc_info=True)

    return save


def _fail_if_lost(run_id: int) -> None:
    """A redelivered task finding its run 'running' long past any time limit: the worker died with it."""
    run = BenchmarkRun.objects.filter(pk=run_id, state__in=[State.RUNNING, State.CANCELLING]).first()
    if run is None or run.started_at is None or timezone.now() - run.started_at < run.lost_after():
        return
    BenchmarkRun.objects.filter(pk=run_id, state=run.state).update(
        state=State.FAILED, error="the worker running it was lost", finished_at=timezone.now()
    )


def _finish(run: BenchmarkRun, outcome: sysbench_runner.Outcome | None, error: str, run_dir: Path) -> str:
    now = timezone.now()
    if outcome is not None and outcome.state == "complete":
        state = _import(run, outcome, now)
        if state == State.IMPORTED:
            try:
                record_red_flags(run.pk)
            except Exception as exc:
                # The import stands; only the comparison is missing, and the page says so.
                log.exception("comparing benchmark run %s with its base failed", run.pk)
                BenchmarkRun.objects.filter(pk=run.pk).update(comparison_note=f"comparison failed: {exc}")
        return state
    cancelled = outcome is not None and outcome.state == "cancelled"
    state = State.CANCELLED if cancelled else State.FAILED
    progress = outcome.progress.as_dict() if outcome else _interrupted(run.pk)
    with transaction.atomic():
        BenchmarkRun.objects.filter(pk=run.pk, state__in=[State.RUNNING, State.CANCELLING]).update(
            state=state, error=(outcome.error if outcome else "") or error, progress=progress, finished_at=now
        )
        if run_dir.is_dir():
            _keep_output(run.pk, run_dir, partial=True)
    return state


def _interrupted(run_id: int) -> dict[str, Any]:
    """The last saved progress with its running step marked failed (the runner could not say so itself)."""
    progress = BenchmarkRun.objects.values_list("progress", flat=True).get(pk=run_id) or {}
    for step in progress.get("steps", []):
        if step.get("state") == "running":
            step["state"] = "failed"
    progress["phase"] = "failed"
    return progress


def _keep_output(run_id: int, run_dir: Path, *, partial: bool) -> None:
    name = f"{run_dir.name}{'.partial' if partial else ''}.tar.gz"
    BenchmarkOutput.objects.update_or_create(
        benchmark_run_id=run_id, defaults={"name": name, "content": archive_directory(run_dir)}
    )


def _import(run: BenchmarkRun, outcome: sysbench_runner.Outcome, now: Any) -> str:
    """Store and import the result directory, unless a cancel arrived after the last test."""
    archive = archive_directory(outcome.run_dir)
    progress = outcome.progress.as_dict()
    with transaction.atomic():
        # Locked, so a cancel arriving now waits and then finds the run imported.
        state = BenchmarkRun.objects.select_for_update().values_list("state", flat=True).get(pk=run.pk)
        if state != State.RUNNING:
            BenchmarkRun.objects.filter(pk=run.pk).update(
                state=State.CANCELLED,
                error="cancelled after the last test; not imported",
                progress=progress,
                finished_at=now,
            )
            _keep_output(run.pk, outcome.run_dir, partial=False)
            return State.CANCELLED
        if run.host_id is not None:
            return _import_elsewhere(run, archive, outcome.run_dir.name, progress, now)
        bundle, _created = store_bundle(
            archive,
            name=f"{outcome.run_dir.name}.tar.gz",
            source=Bundle.Source.TRIGGERED,
            user=run.requested_by,
            overrides=_overrides(run),
        )
        try:
            report = import_bundle(bundle.pk)
        except (ImportFailed, BundleBusy) as exc:
            BenchmarkRun.objects.filter(pk=run.pk).update(
                state=State.FAILED,
                bundle=bundle,
                error=f"the import failed: {exc}",
                progress=progress,
                finished_at=now,
            )
            return State.FAILED
        BenchmarkRun.objects.filter(pk=run.pk).update(
            state=State.IMPORTED, bundle=bundle, error="", progress=progress, finished_at=now
        )
        if not report.already_imported:
            # Home summary, comparisons and regression detection of the series, as after an upload (on commit).
            announce_import(bundle.pk)
    return State.IMPORTED


def _overrides(run: BenchmarkRun) -> dict[str, str]:
    """The server the results are filed under; an experiment's run also its branch, off the main line."""
    found = {"server": run.target.server_name}
    if run.settings_experiment_id is not None:
        found["branch"] = branches.experiment_branch(f"settings-{run.settings_experiment_id}")
    return found


def _import_elsewhere(run: BenchmarkRun, archive: bytes, name: str, progress: dict[str, Any], now: Any) -> str:
    """A host's results are stored here and imported by a general worker (the import task goes to the default
    queue after the commit): nothing but benchmarks runs on a benchmark host. The run is 'importing' until the
    bundle is imported (``runner.receivers``)."""
    submission = submit_bundle(
        archive,
        name=f"{name}.tar.gz",
        source=Bundle.Source.TRIGGERED,
        user=run.requested_by,
        overrides=_overrides(run),
    )
    bundle = submission.bundle
    if bundle.status == Bundle.Status.FAILED:
        BenchmarkRun.objects.filter(pk=run.pk).update(
            state=State.FAILED,
            bundle=bundle,
            error=f"the import failed: {bundle.error}",
            progress=progress,
            finished_at=now,
        )
        return State.FAILED
    state = State.IMPORTED if bundle.status == Bundle.Status.IMPORTED else State.IMPORTING
    BenchmarkRun.objects.filter(pk=run.pk).update(
        state=state, bundle=bundle, error="", progress=progress, finished_at=now
    )
    return state


def bundle_imported(bundle_id: int) -> None:
    """A host's run whose bundle a general worker imported: imported, and compared with its base."""
    for run_id in BenchmarkRun.objects.filter(bundle_id=bundle_id, state=State.IMPORTING).values_list("pk", flat=True):
        if BenchmarkRun.objects.filter(pk=run_id, state=State.IMPORTING).update(state=State.IMPORTED):
            try:
                record_red_flags(run_id)
            except Exception as exc:
                log.exception("comparing benchmark run %s with its base failed", run_id)
                BenchmarkRun.objects.filter(pk=run_id).update(comparison_note=f"comparison failed: {exc}")
            confirm.settle(run_id)


# --------------------------------------------------------------------------- comparing


def record_red_flags(run_id: int) -> None:
    """Compare the imported run against its base and keep the microbenchmarks flagged red for it."""
    run = BenchmarkRun.objects.get(pk=run_id)
    if run.base_run_id is None or run.bundle_id is None:
        return
    new_ids = list(Run.objects.filter(bundle_id=run.bundle_id).values_list("pk", flat=True))
    if not new_ids:
        return
    try:
        comparison = get_comparison(ComparisonSpec(base_run_id=run.base_run_id, run_ids=tuple(new_ids)))
    except ComparisonError as exc:
        BenchmarkRun.objects.filter(pk=run_id).update(comparison_note=f"no comparison with the base: {exc}")
        return
    flags: list[dict[str, Any]] = []
    notes: list[str] = []
    for new_id in new_ids:
        column = next(c for c in comparison.columns if new_id in c.run_ids)
        if column.key == comparison.base:
            # Same build and config as the base: the comparison averages them into one column.
            notes.append("the run has the base's build and config, so it is averaged with the base, not compared")
            continue
        for label in comparison.labels:
            if comparison.flags[column.key].get(label) == "red":
                flags.append({"run_id": new_id, "label": label, "relative": comparison.relative[column.key][label]})
    BenchmarkRun.objects.filter(pk=run_id).update(red_flags=flags, comparison_note="; ".join(notes))


# --------------------------------------------------------------------------- schedules


def run_for_schedule(schedule_id: int, *, day: date | None = None) -> BenchmarkRun | None:
    """Tonight's run of a schedule: created once per day, so a redelivered beat message finds the same run."""
    schedule = Schedule.objects.select_related("target").filter(pk=schedule_id, enabled=True).first()
    if schedule is None:
        return None
    try:
        host, error = hosts.choose_host(schedule.target), ""
    except hosts.HostChoiceError as exc:
        host, error = None, f"not run: {exc} (name the host on the target's hosts)"
    run, _created = BenchmarkRun.objects.get_or_create(
        schedule=schedule,
        schedule_slot=day or timezone.now().date(),
        defaults={
            "target": schedule.target,
            "host": host,
            **({"state": State.FAILED, "error": error, "finished_at": timezone.now()} if error else {}),
            "base_run_id": schedule.base_run_id,
            "requested_by": schedule.created_by,
            "progress": sysbench_runner.plan(schedule.parameters()).as_dict(),
            **schedule.parameter_fields(),
        },
    )
    return run
