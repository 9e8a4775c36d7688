"""The CI verdict from the database: pick each run's baseline, read the QPS and the history the noise model
needs, collect the stories the bundle opened, and let ``regressions.verdict`` judge (a fixed number of queries
per run, whatever its number of microbenchmarks)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from urllib.parse import urlencode

from django.db.models import F, Q, QuerySet
from django.urls import reverse

import suites
from regressions.models import Regression
from regressions.verdict import Rule, RunRef, RunVerdict, StoryRef, Verdict, judge_cells, judge_groups
from runs import branches, confirmations, releases
from runs.derived import pending_series
from runs.models import Bundle, Result, Run
from suites.sysbench import parse as sysbench

# How many of the base branch's newest runs the noise of each microbenchmark is measured over.
HISTORY_RUNS = 20
RUN_RELATED = ("build__version__dbms", "config", "server", "workload", "bundle")
Absolute = Callable[[str], str]


def bundle_verdict(bundle: Bundle, *, base_branch: str, absolute: Absolute, rule: Rule | None = None) -> Verdict:
    """The verdict on every run of ``bundle`` (and on runs it held that were imported before, from other bundles)."""
    rule = rule or Rule()
    url = absolute(bundle.get_absolute_url())
    if bundle.status == Bundle.Status.FAILED:
        return Verdict(bundle.pk, url, "failed", bundle.error or "the import failed", rule=rule)
    if bundle.status != Bundle.Status.IMPORTED:
        return Verdict(bundle.pk, url, "pending", f"the import is {bundle.status}", rule=rule)
    own = list(Run.objects.filter(bundle=bundle).select_related(*RUN_RELATED).order_by("pk"))
    waiting = pending_series(own, bundle)
    if waiting:
        detail = f"regression detection has not yet run over {len(waiting)} of the bundle's series"
        return Verdict(bundle.pk, url, "pending", detail, rule=rule)
    held = [entry["id"] for entry in bundle.stats.get("skipped_runs", []) if entry.get("id")]
    earlier = list(Run.objects.filter(pk__in=held).select_related(*RUN_RELATED).order_by("pk")) if held else []
    runs = tuple(
        run_verdict(run, bundle, base_branch=base_branch, absolute=absolute, rule=rule) for run in own + earlier
    )
    return Verdict(bundle.pk, url, "ready", runs=runs, rule=rule)


def run_ref(run: Run, absolute: Absolute) -> RunRef:
    links = run.commit_links
    return RunRef(
        id=run.pk,
        name=run.name,
        url=absolute(run.get_absolute_url()),
        dbms=run.build.version.dbms.name,
        version=run.build.version.text,
        build=run.build.name,
        config=run.config.name,
        commit=run.commit,
        branch=run.branch,
        pull_request=run.pull_request,
        commit_url=links.commit_url,
        pull_request_url=links.pull_request_url,
        commit_time=run.commit_time.isoformat() if run.commit_time else "",
    )


def comparable(run: Run) -> QuerySet[Run]:
    """Runs a verdict may compare ``run`` with: the same DBMS, server, workload and config name, other bundles."""
    return (
        Run.objects.filter(
            server_id=run.server_id,
            workload_id=run.workload_id,
            config__name=run.config.name,
            build__version__dbms_id=run.build.version.dbms_id,
        )
        .exclude(bundle_id=run.bundle_id)
        .exclude(pk=run.pk)
    )


def _newest_first(runs: QuerySet[Run]) -> QuerySet[Run]:
    return runs.order_by(F("commit_time").desc(nulls_last=True), "-created_at", "-pk")


def branch_runs(run: Run, branch: str) -> QuerySet[Run]:
    """The branch's runs ``run`` may be judged against, newest first; a run of the branch itself is judged
    against the branch's runs before it (by commit time, else by when they were stored)."""
    runs = comparable(run).filter(branch=branch)
    if run.branch == branch:
        runs = runs.filter(commit_time__lt=run.commit_time) if run.commit_time else runs.filter(pk__lt=run.pk)
    return _newest_first(runs)


def find_baseline(run: Run, base_branch: str) -> tuple[Run | None, str]:
    """The newest run of the base branch, else the newest main-line run of the previous version (runs.branches);
    and that in words."""
    if base_branch:
        newest = branch_runs(run, base_branch).select_related(*RUN_RELATED).first()
        if newest is not None:
            return newest, f"the newest run of {base_branch}"
    previous = (
        comparable(run)
        .filter(branches.main_line(), build__version__sort_key__lt=run.build.version.sort_key)
        .select_related(*RUN_RELATED)
        .order_by("-build__version__sort_key", F("commit_time").desc(nulls_last=True), "-created_at", "-pk")
        .first()
    )
    if previous is not None:
        return previous, f"the previous version, {previous.build.version.text}"
    branch = f"no run of {base_branch} and " if base_branch else ""
    return None, f"{branch}no run of an earlier version on this server, workload and config"


def _history(run: Run, baseline: Run) -> list[int]:
    """The runs the noise is measured over, oldest first: the baseline and the runs of its branch before it (of
    its version, when it has no branch)."""
    if baseline.branch:
        runs = branch_runs(run, baseline.branch)
    else:
        runs = _newest_first(comparable(run).filter(branches.main_line(), build__version_id=baseline.build.version_id))
    ids = list(runs.values_list("pk", flat=True)[:HISTORY_RUNS])
    if baseline.pk not in ids:
        ids = [baseline.pk, *ids[: HISTORY_RUNS - 1]]
    return list(reversed(ids))


def _qps(run_ids: Iterable[int]) -> dict[int, dict[tuple[str, int], float | None]]:
    """run id → (label, dop) → QPS, warm-ups and the load step left out; plus each label's microbenchmark id."""
    by_run: dict[int, dict[tuple[str, int], float | None]] = defaultdict(dict)
    rows = (
        Result.objects.filter(run_id__in=list(run_ids), microbenchmark__is_warmup=False)
        .values_list("run_id", "microbenchmark__test", "microbenchmark__range_size", "dop", "qps")
        .order_by()
    )
    for run_id, test, range_size, dop, value in rows:
        if sysbench.is_load(test):
            continue
        label = f"{test}_range={range_size}" if range_size is not None else test
        by_run[run_id][(label, dop)] = value
    return by_run


def _microbenchmark_ids(run: Run) -> dict[str, int]:
    rows = Result.objects.filter(run=run).values_list(
        "microbenchmark_id", "microbenchmark__test", "microbenchmark__range_size"
    )
    return {(f"{t}_range={r}" if r is not None else t): mb for mb, t, r in rows.distinct().order_by()}


def _groups(suite: str, labels: Sequence[str]) -> tuple[list[str], dict[str, str | None]]:
    try:
        group_set = suites.get(suite).choose_group_set(labels)
    except LookupError:
        return [], {}
    grouped, _ungrouped = group_set.partition(labels)
    return list(group_set.groups), {label: group for group, members in grouped.items() for label in members}


def run_verdict(run: Run, bundle: Bundle, *, base_branch: str, absolute: Absolute, rule: Rule) -> RunVerdict:
    baseline, against = find_baseline(run, base_branch)
    ref, server, workload = run_ref(run, absolute), run.server.name, run.workload.name
    stories = tuple(new_stories(run, bundle, absolute))
    page = absolute(reverse("regressions:run_verdict", args=[run.pk])) + "?" + urlencode({"base_branch": base_branch})
    if baseline is None:
        return RunVerdict(ref, server, workload, baseline=None, against=against, stories=stories, page=page)
    history_ids = _history(run, baseline)
    qps = _qps({run.pk, baseline.pk, *history_ids})
    this, base = qps.get(run.pk, {}), qps.get(baseline.pk, {})
    history: dict[tuple[str, int], list[float | None]] = {key: [] for key in set(this) | set(base)}
    for run_id in history_ids:
        values = qps.get(run_id, {})
        for key, series in history.items():
            series.append(values.get(key))
    labels = sorted({label for label, _dop in history})
    groups, group_of = _groups(run.workload.suite, labels)
    cells = judge_cells(this, base, history, group_of, rule, _microbenchmark_ids(run))
    return RunVerdict(
        ref,
        server,
        workload,
        baseline=run_ref(baseline, absolute),
        against=against,
        cells=tuple(cells),
        groups=tuple(judge_groups(cells, groups, rule)),
        stories=stories,
        page=page,
    )


def new_stories(run: Run, bundle: Bundle, absolute: Absolute) -> list[StoryRef]:
    """The stories detection opened once this bundle arrived that arrived with this run's build or version."""
    found = list(
        Regression.objects.filter(
            server_id=run.server_id,
            workload_id=run.workload_id,
            releases=releases.DEFAULT_VIEW,
            metric="qps",
            folded_into__isnull=True,
            outlier=False,
            no_longer_detected=False,
            created_at__gte=bundle.uploaded_at,
        )
        .filter(Q(arrived_in_build_id=run.build_id) | Q(arrived_in_id=run.build.version_id))
        .select_related("microbenchmark", "arrived_in")
        .order_by("change", "pk")
    )
    # Stories of runs from a benchmark host: their confirmation runs' state (runs.confirmations).
    notes = confirmations.notes([story.pk for story in found])
    return [
        StoryRef(
            id=story.pk,
            url=absolute(reverse("regressions:regression", args=[story.pk])),
            kind=story.kind,
            subject=story.subject,
            change=story.change,
            arrived_in=story.arrived_in.text,
            summary=story.summary,
            confirmation=notes.get(story.pk, ""),
        )
        for story in found
    ]
