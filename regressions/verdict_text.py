"""The CI verdict in words: a pull-request comment (Markdown) and a terminal's plain text.

Pure, from ``regressions.verdict.Verdict`` alone: the API's Markdown and the command-line client's output are
these texts, so a figure in the comment is the figure on the page.
"""

from __future__ import annotations

from collections.abc import Sequence

from regressions.verdict import Cell, GroupVerdict, RunVerdict, Verdict

# Moved microbenchmarks listed per run before the rest are only counted (a comment must stay readable).
MOVED_LISTED = 30
_MARK = {"regression": "🔴", "improvement": "🟢", "within noise": "⚪"}


def pct(value: float | None) -> str:
    return "–" if value is None else f"{value:+.1%}".replace("-", "−")


def qps(value: float | None) -> str:
    if value is None:
        return "–"
    return f"{value:,.0f}" if value >= 100 else f"{value:,.2f}"


def headline(verdict: Verdict) -> str:
    if verdict.state == "pending":
        return f"benchdash: bundle {verdict.bundle_id} is not judged yet ({verdict.detail})"
    if verdict.state == "failed":
        return f"benchdash: bundle {verdict.bundle_id} failed: {verdict.detail}"
    regressions = sum(len(r.moved("regression")) for r in verdict.runs)
    improvements = sum(len(r.moved("improvement")) for r in verdict.runs)
    judged = [r for r in verdict.runs if r.baseline is not None]
    if not judged:
        return f"benchdash: nothing to compare in bundle {verdict.bundle_id} (no baseline run)"
    parts = [f"{regressions} regression{'s' if regressions != 1 else ''}"]
    if improvements:
        parts.append(f"{improvements} improvement{'s' if improvements != 1 else ''}")
    stories = sum(len(r.stories) for r in verdict.runs)
    if stories:
        parts.append(f"{stories} new stor{'ies' if stories != 1 else 'y'}")
    return f"benchdash: {', '.join(parts)} beyond noise in bundle {verdict.bundle_id}"


def _link(text: str, url: str) -> str:
    return f"[{text}]({url})" if url else text


def _moved_rows(cells: Sequence[Cell], anchor: str) -> list[str]:
    rows = [
        "| Microbenchmark | dop | QPS | baseline QPS | change | noise gate | |",
        "|---|--:|--:|--:|--:|--:|---|",
    ]
    for cell in cells[:MOVED_LISTED]:
        name = _link(f"`{cell.label}`", f"{anchor}#{cell_anchor(cell)}" if anchor else "")
        rows.append(
            f"| {name} | {cell.dop} | {qps(cell.qps)} | {qps(cell.base_qps)} | **{pct(cell.change)}** | "
            f"±{cell.gate:.1%} ({cell.noise.text}) | {_MARK.get(cell.movement, '')} {cell.movement} |"
        )
    if len(cells) > MOVED_LISTED:
        rows.append(f"| … {len(cells) - MOVED_LISTED} more on the verdict page | | | | | | |")
    return rows


def _group_rows(groups: Sequence[GroupVerdict]) -> list[str]:
    rows = ["| Group | dop | median | min | max | n | |", "|---|--:|--:|--:|--:|--:|---|"]
    for g in groups:
        s = g.summary
        low = f"{pct(None if s.min is None else s.min - 1)} ({s.min_label})" if s.min_label else "–"
        high = f"{pct(None if s.max is None else s.max - 1)} ({s.max_label})" if s.max_label else "–"
        rows.append(
            f"| {g.name} | {g.dop} | **{pct(g.change)}** | {low} | {high} | {s.count_text} | "
            f"{_MARK.get(g.movement, '')} {g.movement} |"
        )
    return rows


def cell_anchor(cell: Cell) -> str:
    return f"mb-{cell.label}-{cell.dop}".replace("=", "-").replace(".", "-")


def _run_markdown(run: RunVerdict) -> list[str]:
    lines = [f"#### {_link(run.run.title, run.run.url)}", ""]
    if run.run.pull_request_url or run.run.commit_url:
        refs = [_link(f"PR #{run.run.pull_request}", run.run.pull_request_url)] if run.run.pull_request else []
        refs += [_link(f"commit {run.run.commit[:10]}", run.run.commit_url)] if run.run.commit else []
        lines += [" · ".join(refs), ""]
    lines.append(f"Server **{run.server}**, workload **{run.workload}**, config **{run.run.config}**.")
    if run.baseline is None:
        return [*lines, "", f"No baseline: {run.against}.", ""]
    lines += [
        f"Against {run.against}: {_link(run.baseline.title, run.baseline.url)} · {_link('every result', run.page)}.",
        "",
    ]
    moved = run.moved("regression", "improvement")
    noisy = run.moved("within noise")
    if moved:
        lines += _moved_rows(moved, run.page)
    else:
        lines.append(f"No microbenchmark moved beyond its noise gate ({len(run.cells)} compared).")
    if noisy:
        listed = ", ".join(f"`{c.label}` dop {c.dop} {pct(c.change)}" for c in noisy[:MOVED_LISTED])
        lines += ["", f"Past the colour thresholds but within noise: {listed}"]
    missing = run.moved("missing")
    if missing:
        lines += ["", "Missing on one side: " + ", ".join(f"`{c.label}` dop {c.dop}" for c in missing[:MOVED_LISTED])]
    groups_moved = run.groups_moved("regression", "improvement")
    if run.groups:
        lines += ["", f"Groups ({len(groups_moved)} moved):", "", *_group_rows(run.groups)]
    if run.stories:
        lines += ["", "New stories:"]
        for story in run.stories:
            waiting = f" — {story.confirmation}" if story.confirmation else ""
            lines.append(f"- {_link(story.summary or story.subject, story.url)} ({pct(story.change)}){waiting}")
    return [*lines, ""]


def markdown(verdict: Verdict) -> str:
    """The pull-request comment: which benchmarks moved, by how much, against what, with links."""
    lines = [f"### {headline(verdict)}", ""]
    if verdict.state != "ready":
        return "\n".join([*lines, _link("The bundle's page", verdict.bundle_url), ""])
    for run in verdict.runs:
        lines += _run_markdown(run)
    rule = verdict.rule
    lines.append(
        f"<sub>Noise gate: max({rule.min_change:.0%}, {rule.k:g}·σ·√2), σ from the base branch's recent runs of "
        f"each microbenchmark (default {rule.default_noise:.0%}); colours at ≤{rule.red:g} and ≥{rule.green:g}. "
        f"{_link('The bundle', verdict.bundle_url)}.</sub>"
    )
    return "\n".join(lines) + "\n"


def text(verdict: Verdict) -> str:
    """A terminal's report: the headline, then per run what moved, one line each."""
    lines = [headline(verdict)]
    for run in verdict.runs:
        lines.append(f"{run.run.title} on {run.server} / {run.workload} / {run.run.config}: {run.run.url}")
        if run.baseline is None:
            lines.append(f"  no baseline: {run.against}")
            continue
        lines.append(f"  against {run.against}: {run.baseline.title} {run.baseline.url}")
        for cell in run.moved("regression", "improvement"):
            lines.append(
                f"  {cell.movement.upper():<12} {cell.label} dop {cell.dop}: {qps(cell.base_qps)} → {qps(cell.qps)} "
                f"QPS ({pct(cell.change)}, gate ±{cell.gate:.1%}, {cell.noise.text})"
            )
        for group in run.groups_moved("regression", "improvement"):
            movement = group.movement.upper()
            lines.append(f"  {movement:<12} group {group.name} dop {group.dop}: median {pct(group.change)}")
        for story in run.stories:
            lines.append(f"  new story: {story.summary or story.subject} {story.url}")
        quiet = len(run.moved("unchanged", "within noise"))
        lines.append(f"  {quiet} of {len(run.cells)} microbenchmark results within noise")
    return "\n".join(lines) + "\n"
