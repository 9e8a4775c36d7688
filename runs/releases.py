"""Release lines: how engineers read a product's version series, and which lines are long-term.

Semantic order puts a short-term release between two long-term ones (MariaDB
11.0 between 10.11 and 11.4), but the short-term one does not carry the
long-term line's later fixes: a step down in 11.0.6 "fixed in" 11.4.8 is two
lines of development side by side, not a regression story. Change-point
detection therefore reads, by default, the long-term lines of a series that
mixes both *plus the newest release of the series*, whatever its line
(``regressions.detection``), and the comparison's charts show, by default, the
same points (``reports.releaseview``): the author's own "latest" tables read
every long-term line and the newest release (MariaDB 10.2 … 11.8 and 12.1.1;
MySQL 5.6 … 8.4 and 9.5.0), because the newest release is what a reader opens
the dashboard to ask about. A newest release on a short-term line is
*provisional* in that view (``provisional_release``): once a newer release
arrives it is an ordinary short-term release again and leaves the view. The
table lives here, below both apps, so they read one table.

The table below comes from the vendors' published support policies:

- MariaDB: every series up to 10.6 was maintained for about five years; 10.7 to
  10.10 were short-term (one year); 10.11 is LTS; 11.0 to 11.3 short-term; 11.4
  LTS; 11.5 to 11.7 short-term rolling releases; 11.8 LTS; 12.0 to 12.2 rolling;
  12.3 the next LTS.
- MySQL: 5.5, 5.6, 5.7 and 8.0 are long-lived GA series; 8.1 to 8.3 are
  innovation releases; 8.4 is LTS; 9.0 to 9.6 innovation; 9.7 the next LTS.
- Postgres: every major (10, 11, …, 18; 9.6 and older are ``9.x`` majors) is
  supported for five years and its minor releases are bug-fix only: no line is
  short-term.
- Anything else (RocksDB, FB MyRocks, an unknown DBMS) has no published LTS
  scheme here: every line counts as long-term.

A line the table does not name (a future MySQL 10.0) counts as long-term: it is
better to show a step than to hide a release nobody classified.

Overrides, per DBMS or per series, come from the ``BENCHDASH_RELEASE_LINES``
setting (a JSON object in the environment variable of that name)::

    {"MariaDB": {"short_term": ["12.3"]},
     "MySQL @ 8-core server": {"long_term": ["9.5"]}}

A key is a DBMS name, or ``"<DBMS> @ <server>"`` for one server's series (it wins
over the DBMS's key); ``long_term`` and ``short_term`` list release lines
(``major.minor``, or the major alone for Postgres 10 and later) moved to that
side, whatever the table says.

Pure Python: no Django, so the rule can be tested and moved on its own.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

from runs.versions import VersionError, parse_version, sort_key

ReleaseView = Literal["long-term", "all"]
RELEASE_VIEWS: tuple[ReleaseView, ...] = ("long-term", "all")
# "long-term" is the default view: every long-term release and the newest release of the series.
DEFAULT_VIEW: ReleaseView = "long-term"
# What pages and scripts call each view.
VIEW_TEXT: dict[str, str] = {"long-term": "long-term releases and the newest", "all": "every release"}


def _minors(major: int, first: int, last: int) -> frozenset[str]:
    return frozenset(f"{major}.{minor}" for minor in range(first, last + 1))


# DBMS → release lines that are short-term; every other line of that DBMS is long-term.
SHORT_TERM_LINES: dict[str, frozenset[str]] = {
    "MariaDB": _minors(10, 7, 10) | _minors(11, 0, 3) | _minors(11, 5, 7) | _minors(12, 0, 2),
    "MySQL": _minors(8, 1, 3) | _minors(9, 0, 6),
    "Postgres": frozenset(),
}


@lru_cache(maxsize=4096)  # pages ask it for every version of a series, and a series is read many times
def release_line(dbms: str, version: str) -> str:
    """The release line of a version: ``major.minor``, or the major alone for Postgres 10 and later."""
    try:
        release = parse_version(version).release
    except VersionError:
        return version
    if dbms == "Postgres" and release[0] >= 10:
        return str(release[0])
    return ".".join(str(p) for p in release[:2])


@dataclass(frozen=True)
class ReleasePolicy:
    """Which release lines of one series are short-term: the table, with any override applied."""

    dbms: str
    short_term: frozenset[str]

    def is_long_term(self, version: str) -> bool:
        return release_line(self.dbms, version) not in self.short_term


def policy_for(dbms: str, server: str = "", overrides: Mapping[str, Any] | None = None) -> ReleasePolicy:
    """The policy of ``dbms`` on ``server``: the table, then the DBMS's override, then the series' override.

    Raises ValueError for an override that is not ``{"long_term": [...], "short_term": [...]}``, so a
    typo in the setting never silently changes nothing.
    """
    short = set(SHORT_TERM_LINES.get(dbms, frozenset()))
    overrides = overrides or {}
    for key in (dbms, f"{dbms} @ {server}"):
        override = overrides.get(key)
        if override is None:
            continue
        if not isinstance(override, Mapping) or set(override) - {"long_term", "short_term"}:
            raise ValueError(f"release-line override {key!r} must have only 'long_term' and 'short_term' lists")
        short -= set(_lines(override.get("long_term", ()), key))
        short |= set(_lines(override.get("short_term", ()), key))
    return ReleasePolicy(dbms=dbms, short_term=frozenset(short))


def _lines(value: Any, key: str) -> list[str]:
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise ValueError(f'release-line override {key!r}: give a list of lines such as ["11.0", "11.1"]')
    return [str(line) for line in value]


def newest_version(versions: Iterable[str]) -> str | None:
    """The newest of ``versions`` in semantic order (a text that is no version is never the newest)."""
    newest, key = None, None
    for version in versions:
        parsed = sort_key(version)
        if parsed.startswith("~"):  # no version: sorts after every real one, but is none
            continue
        if key is None or parsed > key:
            newest, key = version, parsed
    return newest


def provisional_release(versions: Sequence[str], policy: ReleasePolicy) -> str | None:
    """The newest version when it is a short-term release that the default view reads only because it is the
    newest: provisional until a newer release arrives. None when the newest is long-term, or when the series
    has no long-term release at all (then it is read as it is)."""
    newest = newest_version(versions)
    if newest is None or policy.is_long_term(newest) or not any(policy.is_long_term(v) for v in versions):
        return None
    return newest


def points_in_view(
    versions: Sequence[str], policy: ReleasePolicy, view: ReleaseView, keep: int | None = None
) -> list[bool]:
    """Per version, whether it is a point of the series in ``view``.

    "all" keeps every version. "long-term" drops short-term releases when the
    series mixes both kinds, except the newest release of the series (every build
    of it), which that view always reads; a series of short-term releases only
    is read as it is (there is nothing else to read). ``keep`` (the base) is
    always a point.
    """
    if view not in RELEASE_VIEWS:
        raise ValueError(f"unknown release view {view!r}; one of {', '.join(RELEASE_VIEWS)}")
    long_term = [policy.is_long_term(v) for v in versions]
    if view == "all" or all(long_term) or not any(long_term):
        return [True] * len(versions)
    newest = newest_version(versions)
    return [lt or i == keep or v == newest for i, (v, lt) in enumerate(zip(versions, long_term, strict=True))]


def left_out(versions: Sequence[str], policy: ReleasePolicy, view: ReleaseView, keep: int | None = None) -> list[str]:
    """The versions ``view`` leaves out of a series, once each, in the order given."""
    kept = points_in_view(versions, policy, view, keep)
    return list(dict.fromkeys(v for v, k in zip(versions, kept, strict=True) if not k))
