"""A comparison as a performance blog post: Markdown in the shape of the corpus author's write-ups, and a
.zip of that Markdown with every group chart drawn as SVG.

The post reads top to bottom as those posts do: what was compared, the builds, configuration and
hardware, then the results (per group a min/max/avg/median table with rows = versions, every
microbenchmark's relative QPS, HW efficiency) and the regression stories still open, with their bugs.
Everything here is computed from values handed in (the comparison, the runs' provenance, the open
stories); the view gathers them.

Open stories come from the regressions app, which reports must not import: it provides a source at
start-up (``benchdash.hooks.OPEN_STORIES``), as it does for markers and the search.
"""

from __future__ import annotations

import io
import math
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from benchdash import hooks
from reports import markers, reference
from reports.reference import md_label, md_number, md_text, md_url

# The comparisons (with the HW metrics) are imported where a write-up is made: the regressions app provides its
# open stories here when Django starts, which every process does.
if TYPE_CHECKING:
    from reports.compare import Comparison

MARKDOWN_NAME = "writeup.md"
CHARTS_DIR = "charts"


@dataclass(frozen=True)
class OpenStory:
    """A regression story of the series that is still open, as a write-up lists it."""

    subject: str  # a microbenchmark label, or a group's name when ``is_group``
    is_group: bool
    arrived_in: str
    previous_version: str | None
    change: str  # e.g. "−12.4%": the level since the arrival against the level before it
    state: str
    url: str
    bugs: tuple[tuple[str, str], ...] = ()  # (key, url)


# ``source(server_id, workload_id)``: the open regression stories of that series, oldest arrival first.
OpenStoriesSource = Callable[[int, int], list[OpenStory]]


def open_stories(server_id: int, workload_id: int) -> list[OpenStory]:
    sources: tuple[OpenStoriesSource, ...] = hooks.provided(hooks.OPEN_STORIES)
    return [story for source in sources for story in source(server_id, workload_id)]


@dataclass(frozen=True)
class RunProvenance:
    """Where one run of the comparison came from, as its run page tells it."""

    column: str  # the comparison column the run belongs to
    version_label: str
    run: str
    url: str
    build: str
    flavour: str
    config: str
    server: str
    cpus: int | None
    time: str  # "2025-03-02 10:20 UTC", or "" when unknown
    time_source: str  # what the time is: the result files' time, or the start the results record
    recorded: bool  # the time is a start the results record, not the result files' time


@dataclass(frozen=True)
class ServerFacts:
    name: str
    cpus: int | None
    ram_gb: int | None
    storage: str
    os: str


@dataclass
class Writeup:
    """Everything the post says, gathered by the view."""

    comparison: Comparison
    server: ServerFacts
    workload_params: dict[str, Any]
    runs: list[RunProvenance]
    runs_apart: bool  # the runs' file times lie far enough apart to be when they ran (timeline.runs_apart)
    stories: list[OpenStory]
    markers: dict[str, Any]
    link: Callable[[str], str]  # a benchdash path as the post links it (absolute when a base URL is set)
    compare_path: str
    hw_path: str
    regressions_path: str
    charts: dict[str, str] = field(default_factory=dict)  # group → path of its SVG inside the zip


def title(comparison: Comparison) -> str:
    """ "MySQL 5.6.51 → 9.5.0 on pn53: cached, 1 table, 1 client": the series, as the posts' titles name it."""
    columns = comparison.columns
    dbms = " / ".join(dict.fromkeys(c.dbms for c in columns))
    first, last = columns[0].version, columns[-1].version
    versions = first if first == last else f"{first} → {last}"
    return f"{dbms} {versions} on {comparison.server}: {comparison.workload}, concurrency {comparison.dop}"


def _row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def _header(names: Sequence[str], numeric_from: int) -> list[str]:
    rule = ["---" if i < numeric_from else "---:" for i in range(len(names))]
    return [_row([md_text(n) for n in names]), _row(rule)]


def _qps(value: float | None) -> str:
    if value is None:
        return "missing"
    if not math.isfinite(value):
        return "∞"
    return f"{value:.0f}"


def _rel(value: float | None) -> str:
    # The page's word for a result a run lacks: never 0, never n/a.
    return "missing" if value is None else md_number(value)


def _relative_cell(c: Comparison, key: str, label: str) -> str:
    """As the page says it: "no base" where the version has a result and the base none."""
    if c.relative[key][label] is None and c.qps[key].get(label) is not None:
        return "no base"
    return _rel(c.relative[key][label])


def markdown(w: Writeup) -> str:
    """The write-up as Markdown: the introduction, the builds, the results per group and per microbenchmark, HW
    efficiency, the open regression stories."""
    c = w.comparison
    names = {column.key: c.version_label(column.key) for column in c.columns}
    out = [
        *_introduction(w, names),
        *_builds(w),
        *_results(w, names),
        *_hw_efficiency(w, names),
        *_open_stories(w),
    ]
    return "\n".join(out).rstrip("\n") + "\n"


def _introduction(w: Writeup, names: dict[str, str]) -> list[str]:
    """What is compared with what, how to read the numbers, links, and the comparison's warnings."""
    c = w.comparison
    others = c.others
    base_label = names[c.base]
    out: list[str] = [f"# {md_text(title(c))}", ""]
    out += [
        f"This has results for {len(others)} version{'s' if len(others) != 1 else ''} of "
        f"{md_text(' / '.join(dict.fromkeys(col.dbms for col in c.columns)))} compared with "
        f"{md_text(base_label)} on the server {md_text(c.server)}, workload {md_text(c.workload)}, "
        f"at concurrency {c.dop}, with the {md_text(c.group_set)} group set.",
        "",
        f"The numbers are relative QPS: (QPS for a version) / (QPS for {md_text(base_label)}). "
        f"A value below 1.0 means that version is slower than the base. Red is at or below {c.spec.red}, "
        f"green at or above {c.spec.green}.",
        "",
        f"On benchdash: [the comparison]({w.link(w.compare_path)}) · [HW efficiency]({w.link(w.hw_path)}) · "
        f"[regressions]({w.link(w.regressions_path)})",
        "",
    ]
    for warning in c.warnings:
        out += [f"> ⚠ {md_text(warning)}", ""]

    return out


def _builds(w: Writeup) -> list[str]:
    """The server, the workload and every run compared."""
    c = w.comparison
    out: list[str] = ["## Builds, configuration, hardware", ""]
    s = w.server
    facts = [f"{s.cpus} CPUs" if s.cpus else "", f"{s.ram_gb}G RAM" if s.ram_gb else "", s.storage, s.os]
    described = ", ".join(md_text(f) for f in facts if f)
    out.append(f"The server is {md_text(s.name)}" + (f": {described}." if described else "."))
    params = ", ".join(f"{md_text(k)} {md_text(v)}" for k, v in sorted(w.workload_params.items()))
    out.append(f"The workload is {md_text(c.workload)}" + (f" ({params})." if params else "."))
    out += ["", *_header(["version", "run", "build", "flavour", "config", "server", "date"], 99)]
    for run in w.runs:
        when = _run_date(run)
        server = run.server + (f", {run.cpus} CPUs" if run.cpus else "")
        out.append(
            _row(
                [
                    md_text(run.version_label),
                    f"[{md_text(run.run)}]({w.link(run.url)})",
                    md_text(run.build),
                    md_text(run.flavour or "–"),
                    md_text(run.config),
                    md_text(server),
                    md_text(when),
                ]
            )
        )
    out.append("")
    if not w.runs_apart and any(run.time and not run.recorded for run in w.runs):
        out += [
            "The runs dated by file time record no start of their own, and their result files' times lie less "
            "than a minute apart: the files were copied or unpacked together, so those dates say when that "
            "happened, not when the runs ran. The tables follow version order.",
            "",
        ]

    return out


def _run_date(run: RunProvenance) -> str:
    """When the run started, where its results record it; else its result files' time, said to be that."""
    if not run.time:
        return "unknown"
    if run.recorded:
        return f"started {run.time} ({run.time_source})"
    return f"file time {run.time} (the {run.time_source}'s; the run records no start)"


def _results(w: Writeup, names: dict[str, str]) -> list[str]:
    """Per group the summaries of relative QPS, then every microbenchmark's."""
    c = w.comparison
    others = c.others
    out: list[str] = ["## Results per group", ""]
    out.append(
        "Per group the min, max, average and median of its microbenchmarks' relative QPS, one row per version; "
        "n says how many of the group's microbenchmarks had a result."
    )
    out.append("")
    bugs = markers.bug_lines(c, w.markers)
    out.append(reference.format_markdown_summary(c.result, names, bugs, heading="###", images=w.charts))
    out += ["## Relative QPS per microbenchmark", ""]
    out += _header(["group", "microbenchmark", "base QPS", *(names[col.key] for col in others)], 2)
    for label in c.labels:
        out.append(
            _row(
                [
                    md_text(c.group_of.get(label) or "ungrouped"),
                    md_label(label),
                    _qps(c.qps[c.base].get(label)),
                    *(_relative_cell(c, col.key, label) for col in others),
                ]
            )
        )
    out.append("")

    return out


def _hw_efficiency(w: Writeup, names: dict[str, str]) -> list[str]:
    """Each HW metric relative to the base: per group, then per microbenchmark."""
    from reports import hw

    c = w.comparison
    others = c.others
    values = hw.hw_values(c)
    out: list[str] = []
    out += ["## HW efficiency", ""]
    if not values["metrics"]:
        out += ["No HW metrics were measured for these runs.", ""]
    else:
        metric_names = [name for _, name in values["metrics"]]
        out.append(
            "Each metric is a cost per operation relative to the base (more is worse): per group the median "
            "ratio of its microbenchmarks, then every microbenchmark per metric. cpu/o is only comparable "
            "on the same server."
        )
        out.append("")
        for group, rows in values["groups"]:
            out += [f"### {md_text(group)}", "", *_header(["version", *metric_names], 1)]
            out += [_row([md_text(names[key]), *(_rel(v) for v in ratios)]) for key, ratios in rows]
            out.append("")
        for (_key, name), (_, rows) in zip(values["metrics"], values["per_metric"], strict=True):
            out += [f"### {md_text(name)} per microbenchmark", ""]
            out += _header(["group", "microbenchmark", *(names[col.key] for col in others)], 2)
            out += [
                _row([md_text(group), md_label(label), *(_rel(v) for v in ratios)]) for group, label, ratios in rows
            ]
            out.append("")

    return out


def _open_stories(w: Writeup) -> list[str]:
    """The series' open regression stories, with their bugs."""
    out: list[str] = ["## Open regression stories", ""]
    if not w.stories:
        out += ["No regression story of this series is open.", ""]
    else:
        out += _header(["microbenchmark or group", "arrived in", "change", "state", "bugs"], 99)
        for story in w.stories:
            subject = f"group {md_text(story.subject)}" if story.is_group else md_label(story.subject)
            arrived = md_text(story.arrived_in) + (
                f" (after {md_text(story.previous_version)})" if story.previous_version else ""
            )
            bug_links = ", ".join(f"[{md_text(key)}]({md_url(url)})" for key, url in story.bugs) or "none linked"
            out.append(
                _row(
                    [
                        f"[{subject}]({w.link(story.url)})",
                        arrived,
                        md_text(story.change or "–"),
                        md_text(story.state),
                        bug_links,
                    ]
                )
            )
        out.append("")
    return out


def on_white(svg: str) -> str:
    """The chart on a white ground: on the page it sits on a card, in a blog (or a dark theme) on anything."""
    end = svg.index(">") + 1
    return f'{svg[:end]}<rect width="100%" height="100%" fill="#fff"/>{svg[end:]}'


def zip_bytes(text: str, charts: dict[str, str]) -> bytes:
    """The .zip of a write-up: ``writeup.md`` and ``charts/<name>.svg`` per entry of ``charts`` (path → SVG)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(MARKDOWN_NAME, text)
        for path, svg in charts.items():
            archive.writestr(path, svg)
    return buffer.getvalue()
