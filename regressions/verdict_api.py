"""``GET /api/verdict/{bundle_id}``: the CI verdict on an uploaded bundle, as JSON, Markdown or plain text."""

from __future__ import annotations

import math
from typing import Any, Literal

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404
from ninja import Field, Query, Router, Schema

from benchdash.api_errors import responses
from regressions import verdict_text
from regressions.verdict import FAIL_ON, Cell, GroupVerdict, RunRef, RunVerdict, StoryRef, Verdict
from regressions.verdict_load import bundle_verdict
from runs.models import Bundle

router = Router(tags=["verdict"])


class VerdictParams(Schema):
    base_branch: str = Field(
        "main",
        max_length=200,
        description="the branch each run is judged against (its newest run on the same server, workload and "
        "config); empty, or no run of it: the newest run of the previous version",
    )
    format: Literal["json", "markdown", "text"] = Field(
        "json", description="markdown: a pull-request comment; text: what a terminal shows"
    )


class RunRefOut(Schema):
    id: int
    name: str
    url: str
    dbms: str
    version: str
    build: str
    config: str
    commit: str
    branch: str
    pull_request: int | None
    commit_url: str
    pull_request_url: str
    commit_time: str = Field(description="ISO 8601, empty when unknown")


class CellOut(Schema):
    label: str = Field(description="the microbenchmark, as the reference tables label it")
    group: str | None
    dop: int
    qps: float | None
    base_qps: float | None
    relative: float | str | None = Field(description="QPS / baseline QPS; the string inf over a baseline of 0")
    change: float | None = Field(description="relative − 1")
    flag: str = Field(description="red, green, grey or missing (the comparison colours)")
    sigma: float = Field(description="relative noise of one run of this microbenchmark")
    noise_source: str = Field(description="series (measured over the base branch's recent runs) or default")
    noise_runs: int
    gate: float = Field(description="the |change| a move must pass: max(min change, k·σ·√2)")
    movement: str = Field(description="regression, improvement, within noise, unchanged or missing")


class GroupOut(Schema):
    name: str
    dop: int
    median: float | None
    min: float | str | None
    min_label: str | None
    max: float | str | None
    max_label: str | None
    n: int
    total: int
    change: float | None = Field(description="median − 1")
    sigma: float
    gate: float
    movement: str


class StoryOut(Schema):
    id: int
    url: str
    kind: str
    subject: str
    change: float | None
    arrived_in: str
    summary: str
    confirmation: str = Field(description="for runs from a benchmark host: the confirmation runs' outcome")


class RunVerdictOut(Schema):
    run: RunRefOut
    server: str
    workload: str
    baseline: RunRefOut | None
    against: str = Field(description="what the baseline is, in words")
    regressed: bool = Field(description="a microbenchmark or group moved down beyond noise, or a story opened")
    flagged: bool = Field(description="regressed, or a microbenchmark is red")
    cells: list[CellOut]
    groups: list[GroupOut]
    stories: list[StoryOut] = Field(description="the stories detection opened with this run's build or version")


class VerdictOut(Schema):
    bundle_id: int
    bundle_url: str
    state: str = Field(description="ready; pending (import or detection not done: ask again); failed")
    detail: str
    base_branch: str
    headline: str
    fails: dict[str, bool] = Field(description="whether each --fail-on choice (regression, flag, never) is met")
    runs: list[RunVerdictOut]


def _number(value: float | None) -> float | str | None:
    return "inf" if value is not None and math.isinf(value) else value


def _ref(ref: RunRef) -> RunRefOut:
    return RunRefOut(**ref.__dict__)


def _cell(cell: Cell) -> CellOut:
    return CellOut(
        label=cell.label,
        group=cell.group,
        dop=cell.dop,
        qps=cell.qps,
        base_qps=cell.base_qps,
        relative=_number(cell.relative),
        change=cell.change,
        flag=cell.flag,
        sigma=cell.noise.sigma,
        noise_source=cell.noise.source,
        noise_runs=cell.noise.runs,
        gate=cell.gate,
        movement=cell.movement,
    )


def _group(group: GroupVerdict) -> GroupOut:
    s = group.summary
    return GroupOut(
        name=group.name,
        dop=group.dop,
        median=s.median,
        min=_number(s.min),
        min_label=s.min_label,
        max=_number(s.max),
        max_label=s.max_label,
        n=s.n,
        total=s.total,
        change=group.change,
        sigma=group.sigma,
        gate=group.gate,
        movement=group.movement,
    )


def _story(story: StoryRef) -> StoryOut:
    return StoryOut(**story.__dict__)


def _run(run: RunVerdict) -> RunVerdictOut:
    return RunVerdictOut(
        run=_ref(run.run),
        server=run.server,
        workload=run.workload,
        baseline=None if run.baseline is None else _ref(run.baseline),
        against=run.against,
        regressed=run.regressed,
        flagged=run.flagged,
        cells=[_cell(c) for c in run.cells],
        groups=[_group(g) for g in run.groups],
        stories=[_story(s) for s in run.stories],
    )


def verdict_out(verdict: Verdict, base_branch: str) -> VerdictOut:
    return VerdictOut(
        bundle_id=verdict.bundle_id,
        bundle_url=verdict.bundle_url,
        state=verdict.state,
        detail=verdict.detail,
        base_branch=base_branch,
        headline=verdict_text.headline(verdict),
        fails={choice: verdict.fails(choice) for choice in FAIL_ON},
        runs=[_run(r) for r in verdict.runs],
    )


_TEXT = {
    200: {"content": {"text/markdown": {"schema": {"type": "string"}}, "text/plain": {"schema": {"type": "string"}}}}
}


@router.get(
    "/verdict/{int:bundle_id}",
    response=responses({200: VerdictOut}, not_found=True),
    openapi_extra={"responses": _TEXT},
)
def get_verdict(request: HttpRequest, bundle_id: int, params: Query[VerdictParams]) -> Any:
    """The CI verdict on a bundle: each run, per microbenchmark and group, against the newest run of the base
    branch on the same server, workload and config (else the previous version), judged by the noise model, with
    the stories it opened. ``state`` is pending until the import and regression detection are done: ask again
    (``benchdash-submit`` does). ``fails`` says whether each ``--fail-on`` choice is met. ``format=markdown`` is
    the pull-request comment, ``format=text`` the client's terminal report."""
    bundle = get_object_or_404(Bundle, pk=bundle_id)
    verdict = bundle_verdict(bundle, base_branch=params.base_branch.strip(), absolute=request.build_absolute_uri)
    if params.format == "markdown":
        return HttpResponse(verdict_text.markdown(verdict), content_type="text/markdown; charset=utf-8")
    if params.format == "text":
        return HttpResponse(verdict_text.text(verdict), content_type="text/plain; charset=utf-8")
    return verdict_out(verdict, params.base_branch.strip())
