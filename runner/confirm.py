"""Confirmation runs: a story opened by a benchmark host's run is measured again on that host before anyone is
told (Chromium's Pinpoint does this for a suspected regression).

The host runs the story's microbenchmarks ``BENCHDASH_CONFIRMATION_REPEATS`` times (3) with the target and
parameters of the run that opened it. Each repeat is judged against the previous version's stored QPS of the
series (the mean of its runs at the repeat's concurrency) with the story's own gate: a repeat is beyond it when
its change passes the gate in the story's direction (a group story: the median of its members' changes). All
repeats beyond it: "confirmed: 3 of 3 repeats below the gate (σ 1.2%)", and the story is told; otherwise it is
dismissed as noise, saying how many were. The repeats are imported as ordinary runs of the series either way:
repeated runs of one build are what the noise model measures σ from.
"""

from __future__ import annotations

import logging
import statistics
from collections import defaultdict
from collections.abc import Callable, Sequence

from django.conf import settings
from django.db import transaction
from django.db.models import Avg, F
from django.utils import timezone

from runner import sysbench_runner
from runner.models import BenchmarkRun, Confirmation, Target
from runs import branches
from runs.confirmations import StoryFacts, confirmation_done
from runs.models import Build, Result

log = logging.getLogger(__name__)
State = BenchmarkRun.State
SETTLED = (State.IMPORTED, State.FAILED, State.CANCELLED)


def repeats() -> int:
    return int(getattr(settings, "BENCHDASH_CONFIRMATION_REPEATS", 3))


def _opened_by(stories: Sequence[StoryFacts]) -> dict[int, BenchmarkRun]:
    """Story id → the host's run (not itself a repeat) whose results carry the build the story arrived with, for
    the stories some host's run opened: one query per series, however many stories it opened."""
    wanted: dict[tuple[int, int], dict[int, list[int]]] = defaultdict(lambda: defaultdict(list))
    for facts in stories:
        if facts.arrived_in_build_id is not None:
            wanted[(facts.server_id, facts.workload_id)][facts.arrived_in_build_id].append(facts.story_id)
    found: dict[int, BenchmarkRun] = {}
    for (server_id, workload_id), by_build in wanted.items():
        # Newest first: each build's first row is its run (a run appears once per run of its bundle with the build).
        candidates = (
            BenchmarkRun.objects.filter(
                host__isnull=False,
                confirmation__isnull=True,
                settings_experiment__isnull=True,
                state__in=[State.IMPORTING, State.IMPORTED],
                bundle__runs__server_id=server_id,
                bundle__runs__workload_id=workload_id,
                bundle__runs__build_id__in=list(by_build),
            )
            .annotate(story_build_id=F("bundle__runs__build_id"))
            .select_related("host", "target")
            .order_by("-finished_at", "-pk")
        )
        for source in candidates:
            for story_id in by_build.pop(source.story_build_id, ()):
                found[story_id] = source
    return found


def hold(stories: Sequence[StoryFacts], *, enqueue: Callable[[BenchmarkRun], None]) -> dict[int, str]:
    """Start the confirmation of each story a host's run opened (each repeat sent by ``enqueue``); story id →
    why its announcement waits."""
    held: dict[int, str] = {}
    n = repeats()
    batch = [facts.story_id for facts in stories]
    opened_by = _opened_by(stories)
    for facts in stories:
        source = opened_by.get(facts.story_id)
        labels = [label for label in facts.labels if label in sysbench_runner.CATALOGUE]
        if source is None or source.host is None or not labels or n < 1:
            continue
        # A story the repeats' own import opened is not confirmed again: that would never end.
        earlier = Confirmation.objects.filter(
            server_id=facts.server_id, workload_id=facts.workload_id, created_at__gte=source.finished_at
        ).exclude(story_id__in=batch)
        if earlier.exists():
            continue
        with transaction.atomic():
            confirmation, created = Confirmation.objects.get_or_create(
                story_id=facts.story_id,
                defaults={
                    "host": source.host,
                    "target": source.target,
                    "kind": facts.kind,
                    "labels": labels,
                    "server_id": facts.server_id,
                    "workload_id": facts.workload_id,
                    "previous_version_id": facts.previous_version_id,
                    "previous_target": _previous_target(source, facts),
                    "threshold": facts.threshold,
                    "noise": facts.noise,
                },
            )
            if created:
                params = {**source.parameter_fields(), "microbenchmarks": labels}
                # Old, new, old, new, …: the host's queue runs them in this order, each pair side by side.
                pairs = (
                    [confirmation.previous_target, source.target] if confirmation.previous_target else [source.target]
                )
                for _ in range(n):
                    for target in pairs:
                        run = BenchmarkRun.objects.create(
                            target=target,
                            host=source.host,
                            confirmation=confirmation,
                            requested_by=source.requested_by,
                            progress=sysbench_runner.plan(source.parameters()).as_dict(),
                            **params,
                        )
                        enqueue(run)
        held[facts.story_id] = f"waiting for {n} confirmation runs on {source.host.name}"
    return held


def _previous_target(source: BenchmarkRun, facts: StoryFacts) -> Target | None:
    """A target of the same host whose build is of the story's previous version (same config and server)."""
    if facts.previous_version_id is None or source.host is None:
        return None
    builds = Build.objects.filter(version_id=facts.previous_version_id).values("name")
    return (
        source.host.targets.filter(
            build_label__in=builds, config_label=source.target.config_label, server_name=source.target.server_name
        )
        .order_by("name")
        .first()
    )


def notes(story_ids: Sequence[int]) -> dict[int, str]:
    found = Confirmation.objects.filter(story_id__in=list(story_ids))
    return {c.story_id: c.text or f"waiting for confirmation runs on host {c.host_id}" for c in found}


def settle(benchmark_run_id: int) -> str | None:
    """Once every repeat of a run's confirmation has ended, judge them (once) and tell the story's app."""
    confirmation_id = BenchmarkRun.objects.filter(pk=benchmark_run_id).values_list("confirmation_id", flat=True).first()
    if confirmation_id is None:
        return None
    rows = list(BenchmarkRun.objects.filter(confirmation_id=confirmation_id).values_list("state", "target_id"))
    states, targets = [state for state, _ in rows], [target_id for _, target_id in rows]
    if any(state not in SETTLED for state in states):
        return None
    confirmation = Confirmation.objects.get(pk=confirmation_id)
    below, measured = _beyond_gate(confirmation)
    sigma = f"σ {confirmation.noise:.1%}" if confirmation.noise is not None else "σ unknown"
    word = "below" if confirmation.kind == "regression" else "above"
    tried = sum(1 for target_id in targets if target_id != confirmation.previous_target_id)
    if measured == 0:
        confirmed, text = True, f"not confirmed: no repeat finished ({tried} tried); told as found"
    elif below == measured == tried:
        confirmed, text = True, f"confirmed: {below} of {measured} repeats {word} the gate ({sigma})"
    else:
        confirmed = False
        text = (
            f"dismissed as noise: {below} of {measured} repeats {word} the gate ({sigma}, gate "
            f"{confirmation.threshold:.1%}); the repeats are kept as runs"
        )
    state = Confirmation.State.CONFIRMED if confirmed else Confirmation.State.DISMISSED
    done = Confirmation.objects.filter(pk=confirmation.pk, state=Confirmation.State.PENDING).update(
        state=state, below=below, text=text, finished_at=timezone.now()
    )
    if done:
        log.info("story %s: %s", confirmation.story_id, text)
        confirmation_done.send(sender=Confirmation, story_id=confirmation.story_id, confirmed=confirmed, text=text)
    return text


def _qps_by_repeat(confirmation: Confirmation) -> list[tuple[int, dict[tuple[str, int], float]]]:
    """(target id, (label, concurrency) → QPS) of each imported repeat, in the order they ran."""
    repeats = list(
        BenchmarkRun.objects.filter(confirmation=confirmation, state=State.IMPORTED)
        .order_by("started_at", "pk")
        .values_list("target_id", "bundle_id")
    )
    found: dict[int, dict[tuple[str, int], float]] = defaultdict(dict)
    rows = Result.objects.filter(run__bundle_id__in=[b for _, b in repeats]).values_list(
        "run__bundle_id", "microbenchmark__test", "microbenchmark__range_size", "dop", "qps"
    )
    for bundle_id, test, range_size, dop, qps in rows:
        found[bundle_id][(f"{test}_range={range_size}" if range_size is not None else test, dop)] = qps
    return [(target_id, found.get(bundle_id, {})) for target_id, bundle_id in repeats]


def _beyond_gate(confirmation: Confirmation) -> tuple[int, int]:
    """(new-version repeats beyond the gate in the story's direction, new-version repeats measured). Each is
    judged against the previous version's repeat run just before it, else the previous version's stored QPS."""
    stored = _reference_qps(confirmation)
    reference: dict[tuple[str, int], float] = {}
    below = measured = 0
    for target_id, qps in _qps_by_repeat(confirmation):
        if target_id == confirmation.previous_target_id:
            reference = qps
            continue
        changes = [
            value / before - 1
            for key, value in qps.items()
            if key[0] in confirmation.labels and (before := reference.get(key) or stored.get(key))
        ]
        if not changes:
            continue
        measured += 1
        change = statistics.median(changes)
        if (confirmation.kind == "regression" and change < -confirmation.threshold) or (
            confirmation.kind != "regression" and change > confirmation.threshold
        ):
            below += 1
    return below, measured


def _reference_qps(confirmation: Confirmation) -> dict[tuple[str, int], float]:
    """The previous version's mean QPS per (label, concurrency) in the series' main line (none without a previous
    version): a pull request's runs of it are no reference."""
    if confirmation.previous_version_id is None:
        return {}
    rows = (
        Result.objects.filter(
            branches.main_line("run__"),
            run__server_id=confirmation.server_id,
            run__workload_id=confirmation.workload_id,
            run__build__version_id=confirmation.previous_version_id,
        )
        .values("microbenchmark__test", "microbenchmark__range_size", "dop")
        .annotate(mean=Avg("qps"))
        .order_by()
    )
    wanted = set(confirmation.labels)
    found = {}
    for row in rows:
        test, range_size = row["microbenchmark__test"], row["microbenchmark__range_size"]
        label = f"{test}_range={range_size}" if range_size is not None else test
        if label in wanted:
            found[(label, row["dop"])] = row["mean"]
    return found
