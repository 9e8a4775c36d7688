"""One microbenchmark's QPS by run date: nightly runs of a version (or branch) over time, regressions marked.

The comparison pages put versions on the x axis and average a version's runs into one point. A nightly job
runs the same version again and again; what matters there is the date. Here every run of the series (server,
workload and DBMS of the base) is one point at its start time, one trace per version, and each regression
record of the microbenchmark is a vertical line at the first run of the version it arrived in (and of the
one that fixed it). The figure is a plain dict for plotly.js, like the other charts.

A run's time is its commit's time when CI said it (``Run.commit_time``: builds of one version from a branch,
nightlies, are ordered by the code they were built from, not by when a machine got round to running them); else
``Run.started_at``: the start its files record where they carry one, else the oldest result file's time, which
the page marks "file time" since it is when the files were written, not read from their content. Runs without
any of those fall back to their import time and say so.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from datetime import datetime, timedelta
from itertools import pairwise
from typing import Any

from django.db.models import QuerySet

from reports import markers
from reports.markers import Record
from runs import branches
from runs.models import Microbenchmark, Result, Run

RUN_FIELDS = (
    "pk",
    "name",
    "started_at",
    "started_from",
    "created_at",
    "build__version__text",
    "build__version__sort_key",
    "commit",
    "branch",
    "pull_request",
    "commit_time",
)
# The runs of one series follow each other and each takes minutes at least: the result files of two runs written
# less than this apart were copied or unpacked together, so their times say nothing about when either ran.
RUNS_APART = timedelta(minutes=1)
PALETTE = ("#2457c5", "#d9730d", "#1b7f3b", "#9b3fb5", "#c62828", "#00838f", "#6d4c41", "#546e7a")


@dataclass(frozen=True)
class Point:
    run_id: int
    run: str
    version: str
    sort_key: str
    when: datetime
    file_time: bool  # True: Run.started_at (recorded start or result files' time); False: the import time
    qps: float
    change: float | None  # relative to the previous run of the same version
    recorded: bool = False  # ``when`` is a start the run's files record, not a file or import time
    commit: str = ""
    branch: str = ""
    committed: bool = False  # ``when`` is the commit's time

    @property
    def hover(self) -> str:
        """The run, and its commit and branch when CI said them, for the chart's hover label."""
        code = " ".join(part for part in (self.branch, self.commit[:10]) if part)
        return f"{self.run} ({code})" if code else self.run


def _series(base: Run) -> QuerySet[Run]:
    """The runs of the base's series (its DBMS): the main line, and the base's own lane when it is a pull request's
    run (runs.branches)."""
    return Run.objects.filter(
        branches.series_of(base.branch, base.pull_request),
        server_id=base.server_id,
        workload_id=base.workload_id,
        build__version__dbms_id=base.build.version.dbms_id,
    )


def _dop(microbenchmark: Microbenchmark, runs: list[int], wanted: int | None) -> int | None:
    dops = sorted(
        set(Result.objects.filter(run_id__in=runs, microbenchmark=microbenchmark).values_list("dop", flat=True))
    )
    if not dops:
        return None
    return wanted if wanted in dops else dops[-1]


def points(base: Run, microbenchmark: Microbenchmark, dop: int | None = None) -> tuple[list[Point], int | None]:
    """Every run of the base's series with a result for ``microbenchmark``, oldest first (three queries)."""
    runs: list[dict[str, Any]] = [dict(row) for row in _series(base).values(*RUN_FIELDS)]
    by_id = {r["pk"]: r for r in runs}
    chosen = _dop(microbenchmark, list(by_id), dop)
    if chosen is None:
        return [], None
    qps: dict[int, list[float]] = {}
    for run_id, value in Result.objects.filter(run_id__in=by_id, microbenchmark=microbenchmark, dop=chosen).values_list(
        "run_id", "qps"
    ):
        qps.setdefault(run_id, []).append(value)
    found: list[tuple[dict[str, Any], float]] = []
    for run_id, values in qps.items():
        r = by_id[run_id]
        found.append((r, statistics.fmean(values)))
    return _as_points(found), chosen


def group_points(base: Run, microbenchmark_ids: list[int], dop: int) -> list[Point]:
    """Every run of the base's series at its date with the median, over the group's microbenchmarks, of its
    QPS relative to the base run's (two queries). ``Point.qps`` holds that median relative QPS."""
    runs: dict[int, dict[str, Any]] = {r["pk"]: dict(r) for r in _series(base).values(*RUN_FIELDS)}
    qps: dict[int, dict[int, list[float]]] = {}
    for run_id, mb_id, value in Result.objects.filter(
        run_id__in=runs, microbenchmark_id__in=microbenchmark_ids, dop=dop
    ).values_list("run_id", "microbenchmark_id", "qps"):
        qps.setdefault(run_id, {}).setdefault(mb_id, []).append(value)
    base_qps = {mb: statistics.fmean(v) for mb, v in qps.get(base.pk, {}).items()}
    found: list[tuple[dict[str, Any], float]] = []
    for run_id, by_mb in qps.items():
        ratios = [statistics.fmean(v) / base_qps[mb] for mb, v in by_mb.items() if base_qps.get(mb)]
        if ratios:
            found.append((runs[run_id], statistics.median(ratios)))
    return _as_points(found)


def _when(run: dict[str, Any]) -> datetime:
    when: datetime = run["commit_time"] or run["started_at"] or run["created_at"]
    return when


def _as_points(found: list[tuple[dict[str, Any], float]]) -> list[Point]:
    found.sort(key=lambda item: (_when(item[0]), item[0]["pk"]))
    out: list[Point] = []
    last: dict[str, float] = {}
    for r, value in found:
        # A pull request's runs (or another branch's) are a trace of their own beside their version's main line.
        lane = branches.lane(r["branch"], r["pull_request"])
        version = f"{r['build__version__text']} [{lane}]" if lane else r["build__version__text"]
        previous = last.get(version)
        out.append(
            Point(
                run_id=r["pk"],
                run=r["name"],
                version=version,
                sort_key=r["build__version__sort_key"],
                when=_when(r),
                file_time=r["commit_time"] is not None or r["started_at"] is not None,
                recorded=r["commit_time"] is None and r["started_from"] == Run.StartedFrom.CONTENT,
                qps=value,
                change=value / previous if previous else None,
                commit=r["commit"],
                branch=r["branch"],
                committed=r["commit_time"] is not None,
            )
        )
        last[version] = value
    return out


def dates_order_runs(found: list[Point]) -> bool:
    """Whether the points' dates say in which order the runs ran: some run has a commit time or a start its files
    record, or no two runs' file (or import) times lie less than ``RUNS_APART`` apart."""
    if any(p.committed or p.recorded for p in found):
        return True
    return runs_apart([p.when for p in found])


def runs_apart(whens: list[datetime]) -> bool:
    """Whether no two of these runs' file times lie less than ``RUNS_APART`` apart (so they could be when the
    runs ran, not when their files were copied together)."""
    return all(later - earlier >= RUNS_APART for earlier, later in pairwise(sorted(whens)))


def in_version_order(found: list[Point]) -> list[Point]:
    """The points by version (semantic order), a version's runs by date: the order to show when the dates say
    nothing (``dates_order_runs``)."""
    return sorted(found, key=lambda p: (p.sort_key, p.when, p.run_id))


def _x_values(found: list[Point], by_version: bool) -> dict[int, str]:
    """Each run's x: its date, or by version its version (and "(2)", "(3)" for a version's further runs)."""
    if not by_version:
        return {p.run_id: p.when.isoformat() for p in found}
    seen: dict[str, int] = {}
    out: dict[int, str] = {}
    for p in found:
        seen[p.version] = seen.get(p.version, 0) + 1
        out[p.run_id] = p.version if seen[p.version] == 1 else f"{p.version} ({seen[p.version]})"
    return out


def regressions(base: Run, microbenchmark: Microbenchmark | None, group: str = "") -> list[Record]:
    """The regression records of a microbenchmark, or of a group (as a whole) when ``microbenchmark`` is None."""
    return markers.records(
        base.server_id, base.workload_id, microbenchmark.pk if microbenchmark is not None else None, group
    )


def figure(
    found: list[Point],
    records: list[Record],
    *,
    title: str,
    y_title: str = "QPS",
    y_format: str = ",.0f",
    by_version: bool = False,
) -> dict[str, Any]:
    """QPS by date, one trace per version (oldest version first), with the regressions as vertical lines;
    ``by_version`` (``found`` in version order) with the runs along the x axis in that order instead of dates."""
    x_of = _x_values(found, by_version)
    x_hover = "" if by_version else "%{x}<br>"
    versions = sorted({p.version for p in found}, key=lambda v: next(p.sort_key for p in found if p.version == v))
    data = []
    for i, version in enumerate(versions):
        mine = [p for p in found if p.version == version]
        colour = PALETTE[i % len(PALETTE)]
        data.append(
            {
                "type": "scatter",
                "mode": "lines+markers",
                "name": version,
                "x": [x_of[p.run_id] for p in mine],
                "y": [round(p.qps, 3) for p in mine],
                "customdata": [p.hover for p in mine],
                "line": {"color": colour, "width": 1.5},
                "marker": {"color": colour, "size": 7},
                "hovertemplate": f"%{{customdata}}<br>{x_hover}{y_title} %{{y:{y_format}}}<extra>{version}</extra>",
            }
        )
    shapes: list[dict[str, Any]] = []
    labels: list[dict[str, Any]] = []
    first_run_of: dict[str, str] = {}
    for p in found:
        first_run_of.setdefault(p.version, x_of[p.run_id])
    for record in records:
        marks: tuple[tuple[str | None, str, str], ...] = (
            (
                record.arrived,
                ("▲ " if record.improvement else "▼ ") + record.arrived,
                "#1b7f3b" if record.improvement else "#c62828",
            ),
            (record.fixed, f"fixed in {record.fixed}" if record.fixed else "", "#5b6475"),
        )
        for at, text, colour in marks:
            if at is None or at not in first_run_of:
                continue
            when = first_run_of[at]
            bugs = ", ".join(label for label, _ in record.bugs)
            shapes.append(
                {
                    "type": "line",
                    "xref": "x",
                    "yref": "paper",
                    "x0": when,
                    "x1": when,
                    "y0": 0,
                    "y1": 1,
                    "line": {"color": colour, "width": 1.5, "dash": "dot"},
                }
            )
            labels.append(
                {
                    "x": when,
                    "y": 1,
                    "xref": "x",
                    "yref": "paper",
                    "yanchor": "bottom",
                    # Every other label a line higher: two versions run hours apart would print over each other.
                    "yshift": 14 * (len(labels) % 2),
                    "showarrow": False,
                    "font": {"size": 11, "color": colour},
                    "text": text + (f" ({bugs})" if bugs else ""),
                }
            )
    return {
        "data": data,
        "layout": {
            "title": {"text": title, "font": {"size": 14}},
            "height": 420,
            "margin": {"l": 60, "r": 20, "t": 70, "b": 50},
            "xaxis": _x_axis(found, x_of, by_version),
            "yaxis": {"title": {"text": y_title}, "rangemode": "tozero", "gridcolor": "#e5e8ee"},
            "legend": {"orientation": "h", "y": -0.2},
            "shapes": shapes,
            "annotations": labels,
            "plot_bgcolor": "#fff",
            "paper_bgcolor": "#fff",
        },
    }


def _x_axis(found: list[Point], x_of: dict[int, str], by_version: bool) -> dict[str, Any]:
    if by_version:
        return {
            "type": "category",
            "categoryorder": "array",
            "categoryarray": [x_of[p.run_id] for p in found],
            "title": {"text": "version (no run dates)"},
            "gridcolor": "#e5e8ee",
        }
    kinds = {
        "commit" if p.committed else "start" if p.recorded else "file time" if p.file_time else "import time"
        for p in found
    }
    what = "run date" + (f" ({next(iter(kinds))})" if len(kinds) == 1 and "start" not in kinds else "")
    return {"type": "date", "title": {"text": what}, "gridcolor": "#e5e8ee"}
