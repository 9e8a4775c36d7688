"""Groups over a fixed member set: a version that lacks a member is incomplete (n of N) and moves no group story."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from django.test import Client

from regressions import stories as st
from regressions.detection import detect_regressions
from regressions.models import Regression
from regressions.views import evidence_table
from runs.importer import archive_directory, submit_and_import
from runs.models import Bundle, Run

pytestmark = pytest.mark.django_db

NEWEST = "x.my9500_rel_o2nofp.z12a_c8r32.pk1"


def test_a_version_without_one_member_is_no_point_of_the_group_median() -> None:
    versions = ("1.0", "2.0", "3.0")
    a = st.Series("a", tuple(st.Point(v, x) for v, x in zip(versions, (1.0, 0.8, 0.8), strict=True)), group="g")
    b = st.Series("b", tuple(st.Point(v, x) for v, x in zip(versions, (1.0, 0.8, 0.8), strict=True)), group="g")
    c = st.Series("c", tuple(st.Point(v, x) for v, x in zip(versions, (1.0, 0.8, None), strict=True)), group="g")
    assert [p.value for p in st.group_series("g", [a, b, c]).points] == [1.0, 0.8, None]


def test_mysql_9_5_0_without_a_point_query_is_incomplete_and_tells_nothing_new(corpus: Path, tmp_path: Path) -> None:
    # One archive's 9.5.0 lacks random-points_range=1000: every other member moved −7 % … +2 % there.
    series = tmp_path / "sysbench-mysql-small"
    shutil.copytree(corpus / "sysbench-mysql-small", series)
    for name in ("sb.o.random-points.range1000.pk1.dop1", "sb.met.random-points.range1000.pk1.dop1"):
        (series / NEWEST / name).unlink()
    submit_and_import(archive_directory(series), name="small.tar.gz", source=Bundle.Source.COMMAND)
    base = Run.objects.get(name="x.my5651_rel_o2nofp.z12a_c8r32.pk1")
    detect_regressions(base.server_id, base.workload_id, view="all")

    group = Regression.objects.get(microbenchmark=None, group="point queries", metric="qps", releases="all")
    assert all(e["version"] != "9.5.0" for e in group.story_events), group.summary
    assert "9.5.0" not in group.summary
    rows = {row["point"].version: row for row in evidence_table(group)["rows"]}
    assert rows["9.5.0"]["phase"] == "incomplete: 8 of 9 members, no point of the group"
    assert rows["8.4.7"]["phase"] == "after"
    assert "incomplete: 8 of 9 members" in Client().get(group.get_absolute_url()).content.decode()
