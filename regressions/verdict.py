"""The CI verdict on one run: each microbenchmark and group against a baseline run, judged by the noise model.

Pure: no Django. ``regressions.verdict_load`` picks the baseline (the newest run of the base branch on the same
server, workload and config, else the newest run of the previous version), reads both runs' QPS and the base
branch's recent history, and hands plain values here; the API, the pull-request comment and the command-line
client all read the one ``Verdict`` this module makes.

The rule for one microbenchmark at one concurrency:

- relative QPS r = QPS(run) / QPS(baseline), change = r − 1, coloured red ≤ ``red`` and green ≥ ``green``
  like every comparison;
- σ, the relative noise of one run, from the base branch's last runs of that microbenchmark (their neighbour
  differences, ``changepoints.series_noise``: needs more than ``SHORT_SERIES`` runs), else the default 2 %;
- the gate is max(min change, k · σ · √2) (k = 3, min change 5 %: detection's; √2 because a difference of two
  runs carries the noise of both). A change beyond it is a **regression** or an **improvement**; a coloured
  change within it is **within noise**; the rest is **unchanged**.

A group moves when the median of its members' relative QPS passes the gate of its members' median σ (not
divided by √n: one run's tests share the run's disturbances).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from regressions import changepoints
from reports import stats

Movement = Literal["regression", "improvement", "within noise", "unchanged", "missing"]
FailOn = Literal["regression", "flag", "never"]
FAIL_ON: tuple[FailOn, ...] = ("regression", "flag", "never")


@dataclass(frozen=True)
class Rule:
    red: float = stats.DEFAULT_RED
    green: float = stats.DEFAULT_GREEN
    min_change: float = changepoints.DEFAULT_MIN_CHANGE
    k: float = changepoints.DEFAULT_K
    default_noise: float = changepoints.DEFAULT_NOISE

    def gate(self, sigma: float) -> float:
        return max(self.min_change, self.k * sigma * math.sqrt(2))

    def movement(self, relative: float | None, sigma: float) -> Movement:
        if relative is None or not math.isfinite(relative):
            return "missing" if relative is None else "improvement"
        change = relative - 1
        if abs(change) > self.gate(sigma):
            return "regression" if change < 0 else "improvement"
        if stats.flag(relative, self.red, self.green) in ("red", "green"):
            return "within noise"
        return "unchanged"


@dataclass(frozen=True)
class Noise:
    sigma: float
    source: Literal["series", "default"]
    runs: int  # how many base-branch runs it was measured over

    @property
    def text(self) -> str:
        if self.source == "series":
            return f"σ {self.sigma:.1%} from {self.runs} runs"
        return f"σ {self.sigma:.1%} (default: {self.runs} runs are too few to measure it)"


def noise_of(history: Sequence[float | None], rule: Rule) -> Noise:
    """σ of one microbenchmark from the base branch's recent QPS values (oldest first)."""
    sigma, source = changepoints.series_noise(history, default_noise=rule.default_noise)
    runs = sum(1 for v in history if v is not None and math.isfinite(v))
    return Noise(sigma, "series" if source == "series" else "default", runs)


@dataclass(frozen=True)
class Cell:
    """One microbenchmark at one concurrency: this run against the baseline."""

    label: str
    group: str | None
    dop: int
    qps: float | None
    base_qps: float | None
    noise: Noise
    relative: float | None
    flag: stats.Flag
    gate: float
    movement: Movement
    microbenchmark_id: int | None = None

    @property
    def change(self) -> float | None:
        return None if self.relative is None or not math.isfinite(self.relative) else self.relative - 1


@dataclass(frozen=True)
class GroupVerdict:
    name: str
    dop: int
    summary: stats.GroupSummary
    sigma: float
    gate: float
    movement: Movement

    @property
    def change(self) -> float | None:
        return None if self.summary.median is None else self.summary.median - 1


@dataclass(frozen=True)
class RunRef:
    id: int
    name: str
    url: str
    dbms: str
    version: str
    build: str
    config: str
    commit: str = ""
    branch: str = ""
    pull_request: int | None = None
    commit_url: str = ""
    pull_request_url: str = ""
    commit_time: str = ""

    @property
    def title(self) -> str:
        where = f" {self.branch}" if self.branch else ""
        commit = f" @ {self.commit[:10]}" if self.commit else ""
        return f"{self.dbms} {self.version} ({self.build}){where}{commit}"


@dataclass(frozen=True)
class StoryRef:
    id: int
    url: str
    kind: str
    subject: str
    change: float | None
    arrived_in: str
    summary: str
    # Stories of runs from a benchmark host wait for their confirmation runs before anyone is told.
    confirmation: str = ""


@dataclass(frozen=True)
class RunVerdict:
    run: RunRef
    server: str
    workload: str
    baseline: RunRef | None
    against: str  # in words: "the newest run of main", "the previous version, 8.0.36"
    cells: tuple[Cell, ...] = ()
    groups: tuple[GroupVerdict, ...] = ()
    stories: tuple[StoryRef, ...] = ()
    page: str = ""  # the verdict's page for this run (every microbenchmark, anchors per row)

    def moved(self, *movements: Movement) -> list[Cell]:
        return [c for c in self.cells if c.movement in movements]

    def groups_moved(self, *movements: Movement) -> list[GroupVerdict]:
        return [g for g in self.groups if g.movement in movements]

    @property
    def regressed(self) -> bool:
        new_regression = any(s.kind == "regression" for s in self.stories)
        return bool(self.moved("regression") or self.groups_moved("regression") or new_regression)

    @property
    def flagged(self) -> bool:
        return self.regressed or any(c.flag == "red" for c in self.cells)


@dataclass(frozen=True)
class Verdict:
    bundle_id: int
    bundle_url: str
    state: Literal["ready", "pending", "failed"]
    detail: str = ""  # why pending or failed
    runs: tuple[RunVerdict, ...] = ()
    rule: Rule = field(default_factory=Rule)

    def fails(self, fail_on: FailOn) -> bool:
        if fail_on == "never" or self.state != "ready":
            return False
        if fail_on == "regression":
            return any(r.regressed for r in self.runs)
        return any(r.flagged for r in self.runs)


def judge_cells(
    this: Mapping[tuple[str, int], float | None],
    base: Mapping[tuple[str, int], float | None],
    history: Mapping[tuple[str, int], Sequence[float | None]],
    group_of: Mapping[str, str | None],
    rule: Rule,
    ids: Mapping[str, int] | None = None,
) -> list[Cell]:
    """Every (label, dop) either run has, in label then concurrency order."""
    cells = []
    for label, dop in sorted(set(this) | set(base), key=lambda key: (key[0], key[1])):
        noise = noise_of(history.get((label, dop), ()), rule)
        relative = stats.relative_qps(this.get((label, dop)), base.get((label, dop)))
        cells.append(
            Cell(
                label=label,
                group=group_of.get(label),
                dop=dop,
                qps=this.get((label, dop)),
                base_qps=base.get((label, dop)),
                noise=noise,
                relative=relative,
                flag=stats.flag(relative, rule.red, rule.green),
                gate=rule.gate(noise.sigma),
                movement=rule.movement(relative, noise.sigma),
                microbenchmark_id=(ids or {}).get(label),
            )
        )
    return cells


def judge_groups(cells: Sequence[Cell], groups: Sequence[str], rule: Rule) -> list[GroupVerdict]:
    """Each group at each concurrency its members were measured at, in the group set's order."""
    verdicts = []
    for dop in sorted({c.dop for c in cells}):
        for group in groups:
            members = [c for c in cells if c.group == group and c.dop == dop]
            if not members:
                continue
            summary = stats.summarize({c.label: c.relative for c in members})
            sigma = statistics.median(c.noise.sigma for c in members)
            movement = rule.movement(summary.median, sigma) if summary.median is not None else "missing"
            verdicts.append(GroupVerdict(group, dop, summary, sigma, rule.gate(sigma), movement))
    return verdicts
