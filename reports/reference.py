"""The Markdown summary of a comparison, for write-ups, and the escaping of imported names in Markdown.

Sysbench's tables in the reference author's layouts are ``suites.sysbench.layout``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence

from reports.stats import ComparisonResult, GroupSummary, RunKey

# --------------------------------------------------------------------------- Markdown


def md_number(value: float | None) -> str:
    if value is None:
        return "n/a"
    if math.isinf(value):
        return "∞"
    return f"{value:.2f}"


# Names in a write-up come from imported bundles, and write-ups are pasted into blogs and chats: every name is
# text there, never markup. HTML's three as entities (CommonMark renders them as the characters); Markdown's
# punctuation that can start markup anywhere in a line (a link, emphasis, code, a cell), backslash-escaped;
# "_" only where it could open or close emphasis (inside a word it cannot: build names such as ma1104_240723
# stay as they are); "://" and "www." so no bare URL becomes a link; control characters (a line break would
# end a table row) as spaces.
_MD_HTML = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
_MD_MARKUP = re.compile(r"[\\`*\[\]|~]|(?<![0-9A-Za-z])_|_(?![0-9A-Za-z])")
_MD_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def md_text(text: object) -> str:
    plain = _MD_CONTROL.sub(" ", str(text))
    plain = re.sub(r"[&<>]", lambda m: _MD_HTML[m.group()], plain)
    plain = _MD_MARKUP.sub(lambda m: "\\" + m.group(), plain)
    return plain.replace("://", "\\://").replace("www.", "www\\.")


def md_label(label: str | None) -> str:
    # Code spans keep "_range=" from being read as emphasis and make labels easy to copy. The span's fence is
    # longer than any run of backticks in the label, so none can end it; "|" is escaped (GFM tables split on it
    # even inside a code span); no line break may end the row.
    if label is None:
        return ""
    text = _MD_CONTROL.sub(" ", label).replace("|", "\\|")
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def md_url(url: str) -> str:
    """A link target: http(s) only (anything else becomes ``#``), with the characters that could end the
    target or the link percent-encoded."""
    if not re.match(r"(?i)^https?://", url):
        return "#"
    return re.sub(r"[\x00-\x20()<>\[\]\\`\"'\x7f]", lambda m: f"%{ord(m.group()):02X}", url)


def format_markdown_summary(
    result: ComparisonResult[RunKey],
    names: Mapping[RunKey, str] | None = None,
    bugs: Mapping[str, Sequence[str]] | None = None,
    heading: str = "###",
    images: Mapping[str, str] | None = None,
) -> str:
    """Per group a Markdown table of its summaries, one row per compared version, as the page shows them.

    Columns: version | min | max | avg | median | n | min at | max at. Numbers
    have 2 decimals; n is ``9`` or ``7 of 9`` when results are missing, and the
    missing labels are listed under the table; avg and median leave out
    infinite ratios (listed too). ``names`` gives display names of run keys
    (default ``str(run)``); ``bugs`` the lines naming each group's linked bug
    keys, printed under its table; ``heading`` the level of the groups' headings;
    ``images`` a chart's path per group, shown above its table.
    """

    def name(run: RunKey) -> str:
        return names.get(run, str(run)) if names else str(run)

    sections: list[str] = []
    for group in result.groups:
        if all(result.summaries[(group, run)].total == 0 for run in result.runs):
            continue  # a group of the set that these runs did not measure, as on the page
        lines = [f"{heading} {md_text(group)} (relative to {md_text(name(result.base))})", ""]
        if images and group in images:
            lines += [f"![{md_text(group)}]({images[group]})", ""]
        lines += [
            "| version | min | max | avg | median | n | min at | max at |",
            "|---|---:|---:|---:|---:|---:|---|---|",
        ]
        notes: list[str] = []
        for run in result.runs:
            summary: GroupSummary = result.summaries[(group, run)]
            lines.append(
                "| "
                + " | ".join(
                    [
                        md_text(name(run)),
                        md_number(summary.min),
                        md_number(summary.max),
                        md_number(summary.avg),
                        md_number(summary.median),
                        summary.count_text,
                        md_label(summary.min_label),
                        md_label(summary.max_label),
                    ]
                )
                + " |"
            )
            if summary.missing:
                notes.append(f"- {md_text(name(run))}: missing {', '.join(map(md_label, summary.missing))}")
            if summary.infinite:
                notes.append(
                    f"- {md_text(name(run))}: base is 0 for {', '.join(map(md_label, summary.infinite))}"
                    " (∞, left out of avg and median)"
                )
        if notes:
            lines.append("")
            lines.extend(notes)
        group_bugs = (bugs or {}).get(group, ())
        if group_bugs:
            lines.append("")
            lines.extend(f"- {line}" for line in group_bugs)
        sections.append("\n".join(lines) + "\n")
    if result.ungrouped:
        sections.append("Ungrouped: " + ", ".join(map(md_label, result.ungrouped)) + "\n")
    return "\n".join(sections)
