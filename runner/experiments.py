"""Settings experiments, "settings or code?": a story's new version measured again, on the host and with the
target that measured it, with the old version's server settings applied, so its change splits into what the
changed defaults did and what the code did (``runs.experiments`` says how, and carries the answer to the pages).

Offered for two runs (a story's old and new version, a run diff's A and B) when:

- their captured server settings differ (``SHOW GLOBAL VARIABLES``, else the config files; identities such as
  version, paths and host names excepted);
- the new run was made here by a benchmark target (its parameters and its host are the experiment's): the
  experiment runs on the same host's queue, or on the general workers when the run did;
- that target takes settings (``runner.server_settings.takes_settings``: MySQL/MariaDB dynamic global variables
  on a target that allows it), and at least one differing setting is one it could take.

Settings the target cannot take are listed as not applied, with why, and the split says it is partial. The
experiment's run is stored under a branch of its own (``runs.branches``: off the main line), so it is no point of
the series, no new version, and opens no story.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

from django.db.models import Q
from django.urls import reverse

from reports.diff import RunDiff, RunSettings, SourceDiff, diff_runs
from reports.run_settings import load_run_settings
from runner import server_settings, server_version, sysbench_runner
from runner.models import BenchmarkRun, SettingsExperiment
from runs.experiments import MicrobenchmarkSplit, RunPair, SettingRow, SettingsSplit
from runs.models import Result

log = logging.getLogger(__name__)
State = BenchmarkRun.State
# The sources whose differences an experiment applies, in order of preference: the values the servers ran with
# when both runs captured them, else their config files.
_SOURCES = ("variables", "config")
_STATES = {
    State.QUEUED: "queued",
    State.RUNNING: "running",
    State.CANCELLING: "running",
    State.IMPORTING: "importing",
    State.IMPORTED: "done",
    State.FAILED: "failed",
    State.CANCELLED: "cancelled",
}


# --------------------------------------------------------------------------- what differs


def _source(diff: RunDiff) -> SourceDiff | None:
    by_name = {s.source: s for s in diff.sources if s.compared}
    return next((by_name[name] for name in _SOURCES if name in by_name), None)


def differences(old: RunSettings, new: RunSettings) -> list[SettingRow]:
    """The settings the two runs differ in: those an experiment may try (``applied`` None) and those it cannot
    (``applied`` False, with why)."""
    diff = diff_runs(old, new)
    source = _source(diff)
    rows: list[SettingRow] = []
    if source is not None:
        for d in source.changed:
            rows.append(_row(d.name, d.a, d.b))
        for d in source.renamed:
            # The old value under the new version's name for it.
            rows.append(_row(d.name_b or d.name, d.a, d.b))
        for d in source.only_a:
            rows.append(SettingRow(d.name, d.a, None, False, "the new version has no such setting"))
        for d in source.only_b:
            rows.append(_row(d.name, None, d.b))
    for other in diff.sources:
        if other.source == "hugepages" and other.compared and other.differences:
            rows.append(SettingRow("huge pages", "", "", False, "the operating system's, not the server's"))
    return rows


def _row(name: str, old: str | None, new: str | None) -> SettingRow:
    name = name.replace("-", "_")  # my.cnf spells options with dashes, SET GLOBAL with underscores
    reason = server_settings.refusal(name, old)
    return SettingRow(name, old, new, False if reason else None, reason or "")


# --------------------------------------------------------------------------- the offer


def source_run(new_run_id: int) -> BenchmarkRun | None:
    """The benchmark run (not an experiment's) whose bundle holds the new version's run."""
    return (
        BenchmarkRun.objects.filter(bundle__runs=new_run_id, settings_experiment__isnull=True)
        .filter(state__in=[State.IMPORTED, State.IMPORTING])
        .select_related("target", "host")
        .order_by("pk")
        .first()
    )


def _unavailable(source: BenchmarkRun | None, pair: RunPair, rows: Sequence[SettingRow]) -> str:
    """Why the new version cannot be measured again with the old settings; "" when it can."""
    if source is None:
        return "the new version's run was not made by a benchmark target here, so there is nothing to run it with"
    reason = server_settings.takes_settings(source.target.kind, source.target.settings_experiments)
    if reason:
        return f"{source.target.name}: {reason}"
    if not any(row.applied is None for row in rows):
        return "none of the differing settings is one a target can take"
    if not _labels(pair):
        return "none of the story's microbenchmarks is one benchdash can run"
    return ""


def _labels(pair: RunPair) -> list[str]:
    return [label for label in pair.labels if label in sysbench_runner.CATALOGUE]


def _loaded(pair: RunPair) -> tuple[RunSettings | None, RunSettings | None]:
    """The two runs' parsed settings (two queries), None for a run that is gone."""
    loaded = load_run_settings([pair.old_run_id, pair.new_run_id])
    old, new = loaded.get(pair.old_run_id), loaded.get(pair.new_run_id)
    return (old[1] if old else None), (new[1] if new else None)


def split_for(pair: RunPair) -> SettingsSplit | None:
    """What a page shows of "settings or code?" for two runs: None when their settings do not differ."""
    old, new = _loaded(pair)
    rows = differences(old, new) if old is not None and new is not None else []
    if old is None or new is None or not rows:
        return None
    source = source_run(pair.new_run_id)
    reason = _unavailable(source, pair, rows)
    offered = SettingsSplit(
        state="unavailable" if reason else "offered",
        reason=reason,
        old_version=old.version,
        new_version=new.version,
        target=source.target.name if source else "",
        host=source.host.name if source and source.host else "",
        settings=tuple(rows),
        sigma=pair.noise,
        start_url="" if reason else reverse("runner:settings_experiment_start"),
        form={}
        if reason
        else {
            "old_run": str(pair.old_run_id),
            "new_run": str(pair.new_run_id),
            "story": "" if pair.story_id is None else str(pair.story_id),
            "labels": ",".join(_labels(pair)),
        },
    )
    experiment = (
        SettingsExperiment.objects.filter(old_run_id=pair.old_run_id, new_run_id=pair.new_run_id)
        .select_related("target", "host")
        .order_by("-pk")
        .first()
    )
    return offered if experiment is None else _outcome(experiment, offered)


def _outcome(experiment: SettingsExperiment, offered: SettingsSplit) -> SettingsSplit:
    """The latest experiment of the pair: its run's state, and once imported its split (offered again once its
    run has ended, when it still can be)."""
    run = experiment.runs.order_by("-pk").first()
    if run is None:
        return replace(offered, state="failed", reason="its run is gone")
    state = _STATES.get(State(run.state), str(run.state))
    tests, missing = _tests(experiment, run) if state == "done" else ([], [])
    return replace(
        offered,
        state=state,
        reason=run.error,
        target=experiment.target.name,
        host=experiment.host.name if experiment.host else "",
        settings=tuple(_settings_of(experiment)),
        tests=tuple(tests),
        missing=tuple(missing),
        run_url=run.get_absolute_url(),
        run_id=run.pk,
        restore_error=experiment.restore_error,
        # One experiment of a pair at a time: no button while its run is under way.
        start_url="" if run.active else offered.start_url,
        form={} if run.active else offered.form,
    )


def _settings_of(experiment: SettingsExperiment) -> list[SettingRow]:
    """What the experiment applied (read back) and did not, once its run set them; before that, what it will try."""
    new_of = {w["name"]: w.get("new") for w in experiment.wanted}
    rows = [SettingRow(r["name"], r.get("old"), r.get("new"), False, r["reason"]) for r in experiment.refused]
    if not experiment.applied and not experiment.not_applied:
        return [SettingRow(w["name"], w["old"], w.get("new"), None) for w in experiment.wanted] + rows
    for a in experiment.applied:
        rows.append(SettingRow(a["name"], a["value"], new_of.get(a["name"]), True, now=a["now"]))
    for n in experiment.not_applied:
        rows.append(SettingRow(n["name"], n["value"], new_of.get(n["name"]), False, n["reason"]))
    return sorted(rows, key=lambda r: (r.applied is not True, r.name))


def _qps(run_filter: Q, labels: Sequence[str]) -> dict[tuple[str, int], float]:
    found: dict[tuple[str, int], list[float]] = {}
    rows = Result.objects.filter(run_filter).values_list(
        "microbenchmark__test", "microbenchmark__range_size", "dop", "qps"
    )
    for test, range_size, dop, qps in rows:
        label = f"{test}_range={range_size}" if range_size is not None else test
        if label in labels and qps:
            found.setdefault((label, dop), []).append(qps)
    return {key: sum(values) / len(values) for key, values in found.items()}


def _tests(experiment: SettingsExperiment, run: BenchmarkRun) -> tuple[list[MicrobenchmarkSplit], list[str]]:
    """Per microbenchmark and concurrency: the old run's, the new run's and the experiment's QPS."""
    labels = list(experiment.labels)
    old = _qps(Q(run_id=experiment.old_run_id), labels)
    new = _qps(Q(run_id=experiment.new_run_id), labels)
    trial = _qps(Q(run__bundle_id=run.bundle_id), labels) if run.bundle_id else {}
    tests = [
        MicrobenchmarkSplit(label, dop, old[(label, dop)], new[(label, dop)], trial[(label, dop)])
        for label, dop in sorted(trial)
        if (label, dop) in old and (label, dop) in new
    ]
    measured = {t.label for t in tests}
    return tests, [label for label in labels if label not in measured]


# --------------------------------------------------------------------------- starting


class ExperimentRefused(Exception):
    """The two runs cannot be split (the reason is the message)."""


def start(pair: RunPair, *, requested_by: Any = None) -> tuple[BenchmarkRun, bool]:
    """Queue the new version's re-run with the old settings (the caller sends it, ``runner.tasks.enqueue``);
    (its run, whether it is new): a pair whose experiment is still under way gets that one back."""
    old, new = _loaded(pair)
    rows = differences(old, new) if old is not None and new is not None else []
    if not rows:
        raise ExperimentRefused("the two runs' settings do not differ: there is nothing to split")
    source = source_run(pair.new_run_id)
    reason = _unavailable(source, pair, rows)
    if reason or source is None:
        raise ExperimentRefused(reason)
    running = BenchmarkRun.objects.filter(
        settings_experiment__old_run_id=pair.old_run_id,
        settings_experiment__new_run_id=pair.new_run_id,
        state__in=BenchmarkRun.ACTIVE,
    ).first()
    if running is not None:
        return running, False
    labels = _labels(pair)
    experiment = SettingsExperiment.objects.create(
        story_id=pair.story_id,
        old_run_id=pair.old_run_id,
        new_run_id=pair.new_run_id,
        target=source.target,
        host=source.host,
        labels=labels,
        wanted=[{"name": r.name, "old": r.old, "new": r.new} for r in rows if r.applied is None],
        refused=[{"name": r.name, "old": r.old, "new": r.new, "reason": r.reason} for r in rows if r.applied is False],
        requested_by=requested_by if getattr(requested_by, "is_authenticated", False) else None,
    )
    params = {**source.parameter_fields(), "microbenchmarks": labels}
    run = BenchmarkRun.objects.create(
        target=source.target,
        host=source.host,
        settings_experiment=experiment,
        requested_by=experiment.requested_by,
        **params,
    )
    run.progress = sysbench_runner.plan(run.parameters()).as_dict()
    run.save(update_fields=["progress"])
    return run, True


# --------------------------------------------------------------------------- running


@contextmanager
def old_settings(run: BenchmarkRun, conn: sysbench_runner.Connection) -> Iterator[None]:
    """An experiment's run: its old settings set before the run (what the server refused recorded) and put back
    after it, whatever happens; any other run: nothing."""
    if run.settings_experiment_id is None:
        yield
        return
    experiment = SettingsExperiment.objects.get(pk=run.settings_experiment_id)
    reason = server_settings.takes_settings(run.target.kind, run.target.settings_experiments)
    if reason:
        raise sysbench_runner.RunnerError(f"the old settings cannot be applied: {reason}")
    wanted = [(w["name"], w["old"]) for w in experiment.wanted]
    # A run before this one (its host went silent) set them and never put them back: theirs are the values to restore.
    before = {} if experiment.restored else {a["name"]: a["was"] for a in experiment.applied}
    try:
        applied, refused = server_settings.apply(conn, wanted)
    except Exception as exc:
        why = server_version.summarise(exc)
        raise sysbench_runner.RunnerError(f"could not apply the old settings: {why}") from None
    applied = [replace(a, was=before.get(a.name, a.was)) for a in applied]
    SettingsExperiment.objects.filter(pk=experiment.pk).update(
        applied=[{"name": a.name, "value": a.value, "was": a.was, "now": a.now} for a in applied],
        not_applied=[{"name": n.name, "value": n.value, "reason": n.reason} for n in refused],
        restore_error="",
        restored=False,
    )
    try:
        if not applied:
            raise sysbench_runner.RunnerError("the server took none of the old settings: nothing to measure")
        yield
    finally:
        error = server_settings.restore(conn, applied)
        if error:
            log.error("settings experiment %s: restoring the server's settings failed: %s", experiment.pk, error)
        SettingsExperiment.objects.filter(pk=experiment.pk).update(restore_error=error, restored=not error)
