"""Moving Bug, Regression and TriageEvent from reports to regressions keeps their rows and the permissions on them."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from regressions.models import Bug, Regression, TriageEvent

# The state just before the move: every migration the moving ones depend on, none of them.
BEFORE = [("reports", "0004_series_summaries"), ("runs", "0007_role_permissions")]


def _migrate(targets: list[tuple[str, str | None]]) -> MigrationExecutor:
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor


@pytest.mark.django_db(transaction=True)
def test_records_bugs_triage_and_group_permissions_survive_the_move() -> None:
    _migrate([("regressions", None)])
    old = MigrationExecutor(connection).loader.project_state(BEFORE).apps
    dbms = old.get_model("runs", "Dbms").objects.create(name="MySQL")
    Version = old.get_model("runs", "Version")
    before = Version.objects.create(dbms=dbms, text="8.0.28", sort_key="0008.0000.0028")
    after = Version.objects.create(dbms=dbms, text="8.0.43", sort_key="0008.0000.0043")
    server = old.get_model("runs", "Server").objects.create(name="8-core server")
    workload = old.get_model("runs", "Workload").objects.create(name="sysbench 1 table")
    bug = old.get_model("reports", "Bug").objects.create(
        tracker="mysql", key="102037", url="https://bugs.mysql.com/bug.php?id=102037"
    )
    regression = old.get_model("reports", "Regression").objects.create(
        server=server,
        workload=workload,
        group="point queries",
        kind="regression",
        arrived_in=after,
        previous_version=before,
        change=-0.12,
        state="bug_filed",
        evidence={"members": ["point-query"]},
    )
    regression.bugs.add(bug)
    old.get_model("reports", "TriageEvent").objects.create(
        regression=regression, from_state="new", to_state="bug_filed", note="linked 102037"
    )
    Permission = old.get_model("auth", "Permission")
    group = old.get_model("auth", "Group").objects.create(name="moved-triagers")
    group.permissions.add(Permission.objects.get(content_type__app_label="reports", codename="change_regression"))

    executor = MigrationExecutor(connection)
    _migrate(executor.loader.graph.leaf_nodes())

    moved = Regression.objects.get(pk=regression.pk)
    assert (moved.group, moved.arrived_in.text, moved.previous_version.text, moved.change) == (  # type: ignore[union-attr]
        "point queries",
        "8.0.43",
        "8.0.28",
        -0.12,
    )
    assert moved.evidence == {"members": ["point-query"]}
    assert list(moved.bugs.values_list("key", flat=True)) == ["102037"]
    assert Bug.objects.get(pk=bug.pk).regressions.get() == moved
    assert list(TriageEvent.objects.filter(regression=moved).values_list("note", flat=True)) == ["linked 102037"]
    granted = Group.objects.get(name="moved-triagers").permissions.values_list("content_type__app_label", "codename")
    assert list(granted) == [("regressions", "change_regression")]
    user = get_user_model().objects.create_user("moved-triager")
    user.groups.add(Group.objects.get(name="moved-triagers"))
    assert user.has_perm("regressions.change_regression")
