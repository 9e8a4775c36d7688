"""One way to narrow regression records, shared by the list page and the API.

Both doors take the same filters (any of them may be left out): ``tab``, which
stories to show — ``open`` (the default: open regression stories, neither
fixed, nor outliers, nor member stories folded into their group's story, nor
records detection no longer finds), ``improvements``, ``fixed``, ``outliers``
(these four tell QPS), ``metrics`` (HW metric stories of their own: a cost per
operation that stepped where QPS did not), ``all`` —, ``metric`` (one metric:
qps, cpu/o, cs/o, rKB/o, …), ``releases`` (the release view the records were detected over:
``long-term``, the default — every long-term release and the newest release of the
series —, or ``all``, which lists a series with no short-term
release by its long-term records), ``state`` (triage: open — the
default on the open tab, leaving out fixed, expected and noise —, any — the
default on the other tabs —, or one state),
``kind``, ``dbms``, ``server``, ``workload``, ``group``, ``microbenchmark`` (a
label such as point-query_range=100, or a bare test) and ``q`` (part of a
microbenchmark's test or group name).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from django.db.models import Q, QuerySet

from regressions.models import Regression
from regressions.stories import QPS
from runs import releases

OPEN, ANY = "open", "any"
STATE_CHOICES = (OPEN, ANY, *Regression.State.values)
TABS = {
    "open": "Open regressions",
    "improvements": "Improvements",
    "fixed": "Fixed",
    "outliers": "Outliers",
    "metrics": "HW metrics",
    "all": "All",
}
RELEASE_VIEWS = releases.VIEW_TEXT
# The QPS tabs stay as quiet as they were: a metric's own story is listed on the HW metrics tab.
_QPS = Q(metric=QPS)
_LISTED = _QPS & Q(outlier=False, folded_into__isnull=True)
# What the list shows by default; the write-up's open stories read the same filter.
OPEN_STORIES = _LISTED & Q(kind="regression", fixed_in__isnull=True, no_longer_detected=False)
_TAB_FILTERS = {
    "open": OPEN_STORIES,
    "improvements": _LISTED & Q(kind="improvement"),
    "fixed": _LISTED & Q(kind="regression", fixed_in__isnull=False),
    "outliers": _QPS & Q(outlier=True),
    "metrics": ~_QPS & Q(outlier=False, folded_into__isnull=True),
    "all": Q(),
}


def in_release_view(view: str) -> Q:
    """The records a release view lists. Over every release: the "all" records of series that mix long-term
    and short-term releases, and the long-term records of series that do not (both views read the same points
    there, so detection stores them once)."""
    if view == "all":
        return Q(releases="all") | Q(releases="long-term", same_over_every_release=True)
    return Q(releases=view)


@dataclass(frozen=True)
class RegressionFilters:
    tab: str = OPEN
    releases: str = "long-term"
    state: str = ""
    kind: str = ""
    metric: str = ""
    dbms: str = ""
    server: str = ""
    workload: str = ""
    group: str = ""
    microbenchmark: str = ""
    q: str = ""

    @classmethod
    def from_mapping(cls, data: Any) -> RegressionFilters:
        """From a form's cleaned data or a schema's fields; absent and empty values filter nothing."""
        get = data.get if hasattr(data, "get") else lambda name: getattr(data, name, None)
        return cls(**{f.name: str(get(f.name) or f.default) for f in fields(cls)})

    def apply(self, regressions: QuerySet[Regression]) -> QuerySet[Regression]:
        if self.tab not in TABS:
            raise ValueError(f"tab must be one of {', '.join(TABS)}")
        if self.releases not in RELEASE_VIEWS:
            raise ValueError(f"releases must be one of {', '.join(RELEASE_VIEWS)}")
        regressions = regressions.filter(_TAB_FILTERS[self.tab]).filter(in_release_view(self.releases))
        state = self.state or (OPEN if self.tab == OPEN else ANY)
        if state == OPEN:
            regressions = regressions.exclude(state__in=Regression.CLOSED_STATES)
        elif state != ANY:
            if state not in Regression.State.values:
                raise ValueError(f"state must be {OPEN}, {ANY} or one of {', '.join(Regression.State.values)}")
            regressions = regressions.filter(state=state)
        exact = {
            "kind": self.kind,
            "metric": self.metric,
            "arrived_in__dbms__name": self.dbms,
            "server__name": self.server,
            "workload__name": self.workload,
            "group": self.group,
        }
        regressions = regressions.filter(**{name: value for name, value in exact.items() if value})
        if self.microbenchmark:
            test, _, size = self.microbenchmark.partition("_range=")
            regressions = regressions.filter(microbenchmark__test=test)
            if size.isdigit():
                regressions = regressions.filter(microbenchmark__range_size=int(size))
        if self.q:
            regressions = regressions.filter(Q(microbenchmark__test__icontains=self.q) | Q(group__icontains=self.q))
        return regressions
