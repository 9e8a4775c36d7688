"""What the search box finds, by kind: bugs, servers, workloads, groups, microbenchmarks and runs.

Every kind is matched on a case-insensitive substring of what people type for it: a bug's key, title or
link (``MDEV-34178``, ``mdev-34178``, a pasted URL), a server's name and hardware notes (``8-core``), a
workload's name or suite, a group's name from any group set (``point queries``), a microbenchmark's
test name, and a run's name, version or DBMS, each word on its own (``mysql 9.5``). Each hit carries the
links that lead somewhere useful: a bug to the regressions it explains, a server or workload to its
series' comparisons, a group to the comparisons that show it. A bounded number of queries, whatever the
match count.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from django.db.models import Q
from django.urls import reverse
from django.utils.text import slugify

import suites
from benchdash import hooks
from reports.models import GroupSetDefinition, SeriesSummary
from runs.models import Microbenchmark, Run, Server, Workload

LIMIT = 50
RUN_LIMIT = 100


@dataclass
class Hit:
    """One thing found: what it is called, a line saying more, and links (label, url)."""

    title: str
    url: str = ""
    detail: str = ""
    links: list[tuple[str, str]] = field(default_factory=list)


# Apps above reports add what they own: a section found first (the regressions app: bugs) and a note on
# each group hit (its open regression records). Provided at start-up (benchdash.hooks); none provided, none shown.
Finder = Callable[[str], list[Hit]]


def _sections() -> tuple[tuple[str, str, Finder], ...]:
    """(kind, title, finder) of each section provided (``hooks.SEARCH_SECTIONS``)."""
    return hooks.provided(hooks.SEARCH_SECTIONS)


def _group_notes() -> tuple[Callable[[str], str], ...]:
    return hooks.provided(hooks.SEARCH_GROUP_NOTES)


@dataclass(frozen=True)
class Series:
    """One server × workload × DBMS series and the base its comparison links use."""

    server_id: int
    server: str
    workload_id: int
    workload: str
    suite: str
    dbms: str
    base_run_id: int
    microbenchmark_ids: frozenset[int] = frozenset()


def _series() -> list[Series]:
    """Every series the worker has summarised (one query over the summaries, none over the runs)."""
    summaries = SeriesSummary.objects.select_related("server", "workload", "dbms").order_by(
        "server__name", "workload__name", "dbms__name", "pk"
    )
    return [
        Series(
            server_id=s.server_id,
            server=s.server.name,
            workload_id=s.workload_id,
            workload=s.workload.name,
            suite=s.workload.suite,
            dbms=s.dbms.name,
            base_run_id=s.base_run_id,
            microbenchmark_ids=frozenset(s.microbenchmark_ids),
        )
        for s in summaries
    ]


def _compare_url(series: Series, **extra: str) -> str:
    query = "&".join(f"{k}={v}" for k, v in {"base": str(series.base_run_id), **extra}.items())
    return f"{reverse('reports:compare')}?{query}"


def _series_label(series: Series, *, server: bool = True, workload: bool = True) -> str:
    parts = [series.dbms]
    if workload:
        parts.insert(0, series.workload)
    if server:
        parts.insert(0, series.server)
    return " · ".join(parts)


def find_servers(q: str, summaries: list[Series]) -> list[Hit]:
    wanted = Q(name__icontains=q) | Q(storage__icontains=q) | Q(os__icontains=q) | Q(notes__icontains=q)
    hits = []
    for server in Server.objects.filter(wanted)[:LIMIT]:
        facts = [f"{server.cpus} CPUs" if server.cpus else "", f"{server.ram_gb} GB RAM" if server.ram_gb else ""]
        facts += [server.storage, server.os]
        links = [(_series_label(s, server=False), _compare_url(s)) for s in summaries if s.server_id == server.pk]
        hits.append(
            Hit(
                title=server.name,
                url=reverse("reports:server", args=[server.pk]),
                detail=" · ".join(f for f in facts if f),
                links=links,
            )
        )
    return hits


def find_workloads(q: str, summaries: list[Series]) -> list[Hit]:
    hits = []
    for workload in Workload.objects.filter(Q(name__icontains=q) | Q(suite__icontains=q))[:LIMIT]:
        links = [(_series_label(s, workload=False), _compare_url(s)) for s in summaries if s.workload_id == workload.pk]
        hits.append(Hit(title=workload.name, detail=workload.get_suite_display(), links=links))
    return hits


def _group_sets() -> list[tuple[str, tuple[str, ...], str | None]]:
    """(group set, its groups, the suite it belongs to or None for any) of the built-in and saved sets."""
    found: list[tuple[str, tuple[str, ...], str | None]] = [
        (s.name, s.groups, suite.name) for suite in suites.all() for s in suite.group_sets
    ]
    for definition in GroupSetDefinition.objects.all():
        rules = definition.rules
        names = tuple(str(n) for n in rules) if isinstance(rules, dict) else tuple(str(p[0]) for p in rules if p)
        found.append((definition.name, names, None))
    return found


def find_groups(q: str, summaries: list[Series]) -> list[Hit]:
    needle = q.lower()
    hits = []
    for set_name, names, suite in _group_sets():
        for group in names:
            if needle not in group.lower():
                continue
            links = [
                (_series_label(s), _compare_url(s, group_set=set_name) + f"#g-{slugify(group)}")
                for s in summaries
                if suite is None or s.suite == suite
            ]
            notes = [note for note in (add(group) for add in _group_notes()) if note]
            detail = " · ".join([f"group set {set_name}", *notes])
            hits.append(Hit(title=group, detail=detail, links=links))
    return hits


def find_microbenchmarks(q: str, summaries: list[Series]) -> list[Hit]:
    found = list(Microbenchmark.objects.filter(test__icontains=q).order_by("suite", "test", "range_size")[:LIMIT])
    hits = []
    for mb in found:
        links = [
            (_series_label(s), f"{reverse('reports:drilldown', args=[mb.pk])}?base={s.base_run_id}")
            for s in summaries
            if mb.pk in s.microbenchmark_ids
        ]
        hits.append(Hit(title=mb.label, detail=mb.get_suite_display(), links=links))
    return hits


def _run_matches(word: str) -> Q:
    return (
        Q(name__icontains=word)
        | Q(build__version__text__icontains=word)
        | Q(build__version__dbms__name__icontains=word)
    )


def find_runs(q: str) -> list[Run]:
    """Runs whose name, version or DBMS holds every word of ``q``: "mysql 9.5" is MySQL's 9.5.0, as people
    write a release, though no one field holds both words."""
    wanted = Q()
    for word in q.split():
        wanted &= _run_matches(word)
    return list(
        Run.objects.filter(wanted)
        .select_related("build__version__dbms", "server", "workload")
        .order_by("server__name", "build__version__sort_key")[:RUN_LIMIT]
    )


def search(q: str) -> dict[str, Any]:
    """Everything ``q`` finds, by kind, and how many hits in all."""
    q = q.strip()
    if not q:
        return {"sections": [], "runs": [], "total": 0}
    summaries = _series()
    sections = [
        *((kind, title, finder(q)) for kind, title, finder in _sections()),
        ("servers", "Servers", find_servers(q, summaries)),
        ("workloads", "Workloads", find_workloads(q, summaries)),
        ("groups", "Groups", find_groups(q, summaries)),
        ("microbenchmarks", "Microbenchmarks", find_microbenchmarks(q, summaries)),
    ]
    runs = find_runs(q)
    total = sum(len(hits) for _, _, hits in sections) + len(runs)
    return {
        "sections": [{"kind": kind, "title": title, "hits": hits} for kind, title, hits in sections],
        "runs": runs,
        "run_limit": RUN_LIMIT,
        "total": total,
    }
