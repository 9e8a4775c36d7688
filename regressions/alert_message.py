"""What an alert about a new regression story says, as plain text and as a webhook's JSON body.

Pure: the facts come in as plain values (``regressions.alerts`` reads them from a record), so the wording
and the bodies are tested without a database. A performance engineer reading the alert must be able to
act without opening the page: which series, which microbenchmark or group, how large a step, the
version it arrived in against the last version at the old level, how noisy the measurement is, which
builds the levels rest on and which bugs are linked. The link opens the story for the rest.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

if TYPE_CHECKING:  # the facts carry a story's figures, built by regressions.figures
    from regressions.figures import Figures

JSON, SLACK = "json", "slack"
FORMATS = {JSON: "JSON (benchdash's own body)", SLACK: 'Slack-compatible ({"text": …})'}

# Deliberately loose: the mail server has the last word; this only catches what is plainly not an address.
_ADDRESS = re.compile(r"^[^@\s,;<>]+@[^@\s,;<>]+\.[^@\s,;<>]+$")


@dataclass(frozen=True)
class BugLink:
    label: str
    url: str


@dataclass(frozen=True)
class AlertFacts:
    story_id: int
    url: str  # absolute
    dbms: str
    server: str
    workload: str
    subject: str
    is_group: bool
    kind: str
    change: float | None
    level_before: float | None
    level_after: float | None
    arrived_in: str
    previous_version: str | None
    noise: float | None
    noise_source: str
    threshold: float | None
    builds: Sequence[str] = ()
    bugs: Sequence[BugLink] = field(default_factory=tuple)
    summary: str = ""
    # The labelled figures (step at arrival, now, base) the story page and the JSON print too.
    figures: Figures | None = None


def percent(value: float | None) -> str:
    """A relative change as the write-ups print it: ``−12.1%``; unknown is ``–``."""
    return "–" if value is None else f"{value:+.1%}".replace("-", "−")


def subject_line(facts: AlertFacts) -> str:
    what = f"group {facts.subject}" if facts.is_group else facts.subject
    line = (
        f"[benchdash] {facts.kind} {percent(facts.change)} in {facts.dbms} {facts.arrived_in}: {what} on {facts.server}"
    )
    # One line whatever the names hold: a line break in a mail header is refused (header injection).
    return " ".join(line.split())


def text(facts: AlertFacts) -> str:
    """The alert as lines of text: the e-mail's body and the Slack message."""
    was = f" (vs {facts.previous_version})" if facts.previous_version else " (no earlier version at the old level)"
    noise = "unknown" if facts.noise is None else f"σ {facts.noise:.1%} per point"
    if facts.noise_source:
        noise += f" ({facts.noise_source})"
    if facts.threshold is not None:
        noise += f"; the step had to pass {facts.threshold:.1%}"
    lines = [
        f"New {facts.kind} story: {facts.summary}" if facts.summary else f"New {facts.kind} story",
        f"Series: {facts.dbms} on {facts.server}, workload {facts.workload}",
        f"Subject: {'group ' if facts.is_group else 'microbenchmark '}{facts.subject}",
        *_figure_lines(facts),
        f"Arrived in: {facts.arrived_in}{was}",
        f"Noise: {noise}",
        f"Builds: {', '.join(facts.builds) if facts.builds else '–'}",
        "Bugs: " + (", ".join(f"{bug.label} <{bug.url}>" for bug in facts.bugs) if facts.bugs else "none linked"),
        f"Story: {facts.url}",
    ]
    return "\n".join(lines)


def _figure_lines(facts: AlertFacts) -> list[str]:
    """The story's figures, each labelled: the step at arrival (between the two versions it names), the level
    now, the base. Facts without them (made by hand) say the step alone."""
    if facts.figures is None:
        return [f"Step at arrival: {percent(facts.change)}"]
    return [f"{label}: {value}" for label, value in facts.figures.labelled()]


def webhook_body(facts: AlertFacts, body_format: str) -> dict[str, Any]:
    """The JSON a webhook receives: Slack's ``{"text": …}`` shape, or every fact by name."""
    if body_format == SLACK:
        escaped = slack_escaped(facts)
        return {"text": f"{subject_line(escaped)}\n{text(escaped)}"}
    if body_format != JSON:
        raise ValueError(f"unknown webhook format {body_format!r}")
    return {
        "event": "story_opened",
        "story": {
            "id": facts.story_id,
            "url": facts.url,
            "kind": facts.kind,
            "summary": facts.summary,
            "dbms": facts.dbms,
            "server": facts.server,
            "workload": facts.workload,
            "subject": facts.subject,
            "is_group": facts.is_group,
            "change": facts.change,
            "level_before": facts.level_before,
            "level_after": facts.level_after,
            "arrived_in": facts.arrived_in,
            "previous_version": facts.previous_version,
            "noise": facts.noise,
            "noise_source": facts.noise_source,
            "threshold": facts.threshold,
            "builds": list(facts.builds),
            "bugs": [{"label": bug.label, "url": bug.url} for bug in facts.bugs],
            "figures": facts.figures.as_json() if facts.figures is not None else None,
        },
        "text": text(facts),
    }


def slack_escape(value: str) -> str:
    """Text as Slack's message format wants it: ``&``, ``<`` and ``>`` as entities, so a name can neither
    mention (``<!channel>``) nor make a link (``<https://…|disguised>``); the rest is Slack's to show."""
    return value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def slack_escaped(facts: AlertFacts) -> AlertFacts:
    """``facts`` with every text Slack-escaped. The links the message makes itself (``<url>`` after a bug's
    label) stay links: only their URLs are escaped."""
    e = slack_escape
    return replace(
        facts,
        url=e(facts.url),
        dbms=e(facts.dbms),
        server=e(facts.server),
        workload=e(facts.workload),
        subject=e(facts.subject),
        kind=e(facts.kind),
        arrived_in=e(facts.arrived_in),
        noise_source=e(facts.noise_source),
        summary=e(facts.summary),
        previous_version=e(facts.previous_version) if facts.previous_version is not None else None,
        builds=tuple(e(build) for build in facts.builds),
        bugs=tuple(BugLink(e(bug.label), e(bug.url)) for bug in facts.bugs),
    )


def webhook_url_problem(url: str) -> str | None:
    """Why ``url`` cannot be a webhook (only http and https with a host), or None."""
    parts = urlsplit(url.strip())
    if parts.scheme.lower() not in ("http", "https"):
        found = f"this one starts with {parts.scheme}:" if parts.scheme else "this one has no scheme"
        return f"a webhook URL must start with http:// or https:// ({found})"
    if not parts.hostname:
        return "a webhook URL needs a host"
    try:
        parts.port  # noqa: B018  (raises on a port that is no number or out of range)
    except ValueError:
        return "the webhook URL's port is not a number from 1 to 65535"
    return None


def masked_url(url: str) -> str:
    """``https://hooks.slack.com/…XXXX``: enough to tell two webhooks apart without showing their token."""
    parts = urlsplit(url)
    tail = (parts.path + ("?" + parts.query if parts.query else "")).rstrip("/")
    if len(tail) <= 1:
        return url
    return f"{parts.scheme}://{parts.netloc}/…{tail[-4:]}"


def split_addresses(raw: str) -> list[str]:
    """E-mail addresses as people paste them: separated by commas, semicolons, spaces or lines."""
    return [part for part in re.split(r"[\s,;]+", raw.strip()) if part]


def bad_addresses(addresses: Iterable[str]) -> list[str]:
    return [address for address in addresses if not _ADDRESS.match(address)]


def backoff(attempt: int, base: float, cap: float) -> float:
    """Seconds to wait before attempt ``attempt + 1`` after ``attempt`` failed ones: base, 2×, 4×, … up to cap."""
    return float(min(cap, base * 2 ** max(0, attempt - 1)))
