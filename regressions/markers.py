"""Chart markers: the regression records of a comparison's series, placed on its columns for reports' pages
(registered with reports in ``RegressionsConfig.ready``)."""

from __future__ import annotations

import functools
from collections import defaultdict
from typing import TYPE_CHECKING, Any

from django.db import connection

from benchdash import urlpattern
from regressions import bugs as bugrefs
from regressions import stories
from regressions.models import Bug, Regression, TriageEvent
from reports import markers as record_markers
from runs import releases
from runs.models import Microbenchmark, Version

if TYPE_CHECKING:
    from reports.compare import Comparison  # the markers' provider is registered when Django starts: no comparisons


def comparison_markers(comparison: Comparison) -> dict[str, Any]:
    """Regressions of a comparison's series, placed on its columns: for charts, tables and the heatmap.

    Returns ``{"by_label": {label: [item]}, "by_group": {group: [item]}}`` where an
    item has the regression's id, url, kind, state, the column keys where it
    arrived and was fixed, and its bugs as (key, url). One query, whatever the
    number of regressions.
    """
    column_of_version: dict[str, str] = {}
    for column in comparison.columns:
        column_of_version.setdefault(column.version, column.key)
    # Plain values, not records (a record carries its evidence, megabytes for a long series, and four models), in
    # one query with their bugs, its SQL written once: building two querysets cost more than running them.
    # Charts and tables plot QPS: a metric's own story has its tab on the list, not a marker there.
    with connection.cursor() as cursor:
        cursor.execute(
            _markers_sql(),
            [comparison.server_id, comparison.workload_id, releases.DEFAULT_VIEW, False, stories.QPS],
        )
        rows = cursor.fetchall()
    found: list[list[Any]] = []
    bugs: dict[int, list[tuple[str, str]]] = defaultdict(list)
    for *row, tracker, key, url in rows:
        if not found or found[-1][0] != row[0]:
            found.append(row)
        if tracker is not None:
            bugs[row[0]].append((bugrefs.label(tracker, key), url))
    by_label: dict[str, list[dict[str, Any]]] = {}
    by_group: dict[str, list[dict[str, Any]]] = {}
    record_url = urlpattern.by_id("regressions:regression")
    for pk, kind, state, arrived, fixed, microbenchmark_id, test, range_size, group in found:
        item = {
            "id": pk,
            "url": record_url(pk),
            "kind": kind,
            "state": state,
            "arrived": column_of_version.get(arrived),
            "arrived_version": arrived,
            "fixed": column_of_version.get(fixed) if fixed is not None else None,
            "bugs": bugs.get(pk, []),
        }
        if microbenchmark_id is not None:
            label = f"{test}_range={range_size}" if range_size is not None else test
            by_label.setdefault(label, []).append(item)
        elif group:
            by_group.setdefault(group, []).append(item)
    return {"by_label": by_label, "by_group": by_group}


@functools.cache
def _markers_sql() -> str:
    """The series' QPS records of the default release view still detected, in the records' order (their arrival,
    group, id), each with its bugs in the bugs' order (a row per bug, or one without)."""
    q = connection.ops.quote_name
    regression, version, microbenchmark = (
        Regression._meta.db_table,
        Version._meta.db_table,
        Microbenchmark._meta.db_table,
    )
    through, bug = Regression.bugs.through._meta.db_table, Bug._meta.db_table
    return (
        f"SELECT r.id, r.kind, r.state, a.text, f.text, r.microbenchmark_id, m.test, m.range_size, r.{q('group')},"
        " b.tracker, b.key, b.url"
        f" FROM {regression} r JOIN {version} a ON a.id = r.arrived_in_id"
        f" LEFT JOIN {version} f ON f.id = r.fixed_in_id"
        f" LEFT JOIN {microbenchmark} m ON m.id = r.microbenchmark_id"
        f" LEFT JOIN {through} rb ON rb.regression_id = r.id LEFT JOIN {bug} b ON b.id = rb.bug_id"
        " WHERE r.server_id = %s AND r.workload_id = %s AND r.releases = %s AND r.no_longer_detected = %s"
        " AND r.metric = %s"
        f" ORDER BY a.sort_key, r.{q('group')}, r.id, b.tracker, b.key"
    )


class MarkerProvider:
    """What the regressions app pins onto reports' pages (registered in RegressionsConfig.ready)."""

    def markers(self, comparison: Comparison) -> dict[str, Any]:
        return comparison_markers(comparison)

    def stamp_sql(self) -> str:
        """Changes with the series' regression records (their number, the newest change, which bug links
        and triage make too) and their triage events."""
        regression, event = Regression._meta.db_table, TriageEvent._meta.db_table
        return (
            "(SELECT CAST(COUNT(r.id) AS TEXT) || '|' || COALESCE(CAST(MAX(r.updated_at) AS TEXT), '')"
            " || '|' || COALESCE(CAST(MAX(e.id) AS TEXT), '')"
            f" FROM {regression} r LEFT JOIN {event} e ON e.regression_id = r.id"
            " WHERE r.server_id = series.server_id AND r.workload_id = series.workload_id)"
        )

    def records(
        self, server_id: int, workload_id: int, microbenchmark_id: int | None, group: str, every_metric: bool = False
    ) -> list[record_markers.Record]:
        subject: dict[str, Any] = (
            {"microbenchmark_id": microbenchmark_id}
            if microbenchmark_id is not None
            else {"group": group, "microbenchmark__isnull": True}
        )
        metric: dict[str, Any] = {} if every_metric else {"metric": stories.QPS}
        found = (
            # One view's records: on a series that mixes release kinds the other view tells some stories again.
            # A superseded record is reached through its successor.
            Regression.objects.filter(
                server_id=server_id,
                workload_id=workload_id,
                releases=releases.DEFAULT_VIEW,
                superseded_by__isnull=True,
                **metric,
                **subject,
            )
            .select_related("arrived_in", "fixed_in")
            .prefetch_related("bugs")
            .order_by("arrived_in__sort_key")
            # What the rows below read: not the stories' evidence, events and steps (JSON of every version).
            .defer(*_UNREAD)
        )
        return [
            record_markers.Record(
                url=record.get_absolute_url(),
                kind=record.kind,
                kind_display=record.get_kind_display(),
                arrived=record.arrived_in.text,
                fixed=record.fixed_in.text if record.fixed_in else None,
                bugs=tuple((bug.label, bug.url) for bug in record.bugs.all()),
                summary=record.summary,
                state=record.get_state_display(),
                metric=record.metric,
                outlier=record.outlier,
                folded=record.folded_into_id is not None,
                no_longer_detected=record.no_longer_detected,
            )
            for record in found
        ]


# The JSON fields of a record that its row in a list does not read (decoding them was most of the list's cost).
_UNREAD = ("stored_evidence", "story_events", "outliers", "builds", "metric_steps")

MARKERS = MarkerProvider()
