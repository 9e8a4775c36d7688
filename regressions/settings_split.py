"""The two runs a story's "settings or code?" reads: the old version's and the new version's runs of its series'
main line (those detection read), with the story's microbenchmarks and its noise model's σ (``runs.experiments``)."""

from __future__ import annotations

from regressions.models import Regression
from runs import branches, experiments
from runs.experiments import RunPair, SettingsSplit
from runs.models import Run


def story_pair(regression: Regression) -> RunPair | None:
    if regression.previous_version_id is None or regression.arrived_in_build_id is None or regression.metric != "qps":
        return None
    runs = Run.objects.filter(branches.main_line(), server_id=regression.server_id, workload_id=regression.workload_id)
    before = runs.filter(build__version_id=regression.previous_version_id).order_by("pk")
    old = before.filter(build__name__in=regression.builds or []).first() or before.first()
    new = runs.filter(build_id=regression.arrived_in_build_id).order_by("pk").first()
    if old is None or new is None:
        return None
    if regression.microbenchmark is not None:
        labels: tuple[str, ...] = (regression.microbenchmark.label,)
    else:
        members = regression.folded_members.select_related("microbenchmark").order_by("pk")
        labels = tuple(m.microbenchmark.label for m in members if m.microbenchmark is not None)
    return RunPair(old.pk, new.pk, labels, story_id=regression.pk, noise=regression.noise)


def story_split(regression: Regression) -> SettingsSplit | None:
    """None when the story's two runs differ in no setting (or it has no two runs)."""
    pair = story_pair(regression)
    return experiments.split_for(pair) if pair is not None else None
