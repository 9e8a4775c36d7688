"""What the header's search finds among regression records: bugs by key, title or link, and the open
records of a group. Registered with reports.search in RegressionsConfig.ready."""

from __future__ import annotations

from django.db.models import Q
from django.urls import reverse

from regressions import bugs as bugrefs
from regressions.models import Bug, Regression
from reports.search import LIMIT, Hit


def find_bugs(q: str) -> list[Hit]:
    wanted = Q(key__icontains=q) | Q(title__icontains=q) | Q(url__icontains=q)
    try:
        parsed = bugrefs.parse(q)
    except ValueError:
        parsed = None
    if parsed is not None:
        # "bug #102037" or a pasted tracker link find the bug stored under its key.
        wanted |= Q(tracker=parsed.tracker, key__iexact=parsed.key)
    hits = []
    for bug in Bug.objects.filter(wanted).prefetch_related(
        "regressions__microbenchmark", "regressions__server", "regressions__arrived_in"
    )[:LIMIT]:
        links = [
            (
                f"{r.microbenchmark.label if r.microbenchmark else r.group} on {r.server.name}, "
                f"{r.kind} in {r.arrived_in.text}",
                reverse("regressions:regression", args=[r.pk]),
            )
            for r in bug.regressions.all()
        ]
        detail = " · ".join(part for part in (bug.get_tracker_display(), bug.title, bug.status) if part)
        hits.append(Hit(title=bug.label, url=bug.url, detail=detail, links=links))
    return hits


# The header's search finds bugs first (benchdash.hooks.SEARCH_SECTIONS).
BUGS_SECTION = ("bugs", "Bugs", find_bugs)


def open_records_note(group: str) -> str:
    count = Regression.objects.filter(group=group).exclude(state__in=Regression.CLOSED_STATES).count()
    return f"{count} open regression records" if count else ""
