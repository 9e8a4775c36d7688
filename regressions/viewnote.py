"""Which releases a release view leaves out of the stored series, said in one line with the switch.

The regression list, ``GET /api/regressions`` and ``manage.py detect_regressions``
each say it: the default view reads every long-term release and the newest
release of each series (``runs.releases``), so a reader must see which
short-term releases it skipped (MySQL 9.4.0) and which newest release it reads
only provisionally (MySQL 9.5.0, until a newer one arrives).

Per server and DBMS the versions of its runs are read once (one query, the
distinct versions, never the results); the rule is ``runs.releases``'.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from django.conf import settings

from runs import releases
from runs.models import Run
from runs.versions import sort_key

# How each door names the switch to the other view.
SWITCH_TEXT = {"long-term": "releases=all for every release", "all": "releases=long-term for the default view"}


@dataclass(frozen=True)
class ViewNote:
    """What one release view leaves out, per series ("MySQL 9.4.0 on 8-core server"), and what it reads only
    provisionally (a newest release on a short-term line)."""

    releases: str
    left_out: tuple[str, ...]
    provisional: tuple[str, ...]

    def line(self, switch: str = "") -> str:
        """The note in one line; ``switch`` says how to ask for the other view (a door's own words)."""
        switch = switch or SWITCH_TEXT.get(self.releases, "")
        if self.releases == "all":
            return f"Every release, short-term ones included; {switch}."
        read = "Long-term releases and the newest"
        if self.provisional:
            read += f" ({', '.join(self.provisional)}: provisional until a newer release arrives)"
        gone = f"left out: {', '.join(self.left_out)}" if self.left_out else "no release left out"
        return f"{read}; {gone}; {switch}."


def view_note(view: str, *, dbms: str = "", server: str = "") -> ViewNote:
    """The note of ``view`` over every stored series (or those of one DBMS / server)."""
    if view == "all":
        return ViewNote(view, (), ())
    rows = Run.objects.values_list("server__name", "build__version__dbms__name", "build__version__text").distinct()
    if dbms:
        rows = rows.filter(build__version__dbms__name=dbms)
    if server:
        rows = rows.filter(server__name=server)
    versions: dict[tuple[str, str], set[str]] = defaultdict(set)
    for server_name, dbms_name, version in rows:
        versions[(server_name, dbms_name)].add(version)
    left_out: list[str] = []
    provisional: list[str] = []
    for (server_name, dbms_name), found in sorted(versions.items()):
        ordered = sorted(found, key=sort_key)
        policy = releases.policy_for(dbms_name, server_name, settings.BENCHDASH_RELEASE_LINES)
        left_out.extend(
            f"{dbms_name} {v} on {server_name}" for v in releases.left_out(ordered, policy, "long-term", keep=0)
        )
        newest = releases.provisional_release(ordered, policy)
        if newest is not None:
            provisional.append(f"{dbms_name} {newest} on {server_name}")
    return ViewNote(view, tuple(left_out), tuple(provisional))
