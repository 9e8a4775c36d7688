"""Release lines as sequences of their own (rule 9): a regression fixed in one maintained line and still open in
another has a backport gap, said on the list, the story page and in JSON."""

from __future__ import annotations

import io
import json
import re
import shutil
from collections.abc import Sequence
from pathlib import Path

import pytest
from django.core.management import call_command
from django.test import Client

from regressions import stories as st
from regressions.detection import SeriesData, SeriesPoint, detect_regressions, find_candidates
from regressions.evidence import Evidence
from regressions.models import Regression
from regressions.views import evidence_table, story_figure
from reports import charts
from runs import releases
from runs.importer import archive_directory, submit_and_import
from runs.models import Bundle, Run

# A MariaDB test that lost 20 % in 10.11.13: the 10.11 line got the fix back in 10.11.14, the 11.4 line has not.
VERSIONS = ("10.6.19", "10.6.20", "10.11.12", "10.11.13", "10.11.14", "11.4.6", "11.4.7", "11.4.8")
VALUES = (1.0, 1.0, 1.0, 0.8, 1.0, 0.8, 0.8, 0.8)


def test_each_line_is_its_own_sequence_for_fixes() -> None:
    series = st.Series("point-query_range=100", tuple(map(st.Point, VERSIONS, VALUES)))
    (story,) = st.build_stories(series)
    lines = st.line_states(story, series, lambda v: releases.release_line("MariaDB", v))
    assert [(x.line, x.version, x.fixed) for x in lines] == [("10.11", "10.11.14", True), ("11.4", "11.4.8", False)]
    # Semantic order reads 10.11.13's loss as an outlier before 11.4.6's arrival; the lines read it as it was.
    assert story.arrived_in == "11.4.6" and story.outliers == ("10.11.13",)
    story = st.replace(story, lines=lines)
    assert story.backport_gap == "fixed in 10.11.14, still open in 11.4.8" and story.backport_gap in story.summary
    # One line only: nothing a single sequence does not say.
    one = st.Series("t", tuple(map(st.Point, ("10.11.1", "10.11.2", "10.11.3"), (1.0, 0.8, 0.8))))
    assert st.line_states(st.build_stories(one)[0], one, lambda v: releases.release_line("MariaDB", v)) == ()


def test_detection_keeps_the_gap_in_the_evidence_and_the_summary() -> None:
    points = [
        SeriesPoint(
            key=f"c{i}",
            dbms="MariaDB",
            version=v,
            build=f"ma{i}",
            flavour="rel",
            config="c8r32",
            repeats=1,
            version_id=100 + i,
            build_id=200 + i,
        )
        for i, v in enumerate(VERSIONS)
    ]
    relative = {"point-query_range=100": list(VALUES)}
    series = SeriesData(
        server="s",
        base="c0",
        base_run_id=1,
        dop=1,
        group_set="auto",
        points=points,
        labels=list(relative),
        groups=[],
        group_of={},
        microbenchmark_ids={"point-query_range=100": 1},
        relative=relative,  # type: ignore[arg-type]
        cv={"point-query_range=100": [None] * len(VERSIONS)},
    )
    (candidate,) = [c for c in find_candidates(series, view="all")[0] if c.kind == "regression"]
    assert candidate.evidence is not None
    assert candidate.evidence.backport_gap == "fixed in 10.11.14, still open in 11.4.8"
    assert "fixed in 10.11.14, still open in 11.4.8" in candidate.values["summary"]
    stored = candidate.evidence.as_json()
    assert stored["lines"][0] == {"line": "10.11", "version": "10.11.14", "fixed": True}
    assert Evidence.from_json(stored).backport_gap == candidate.evidence.backport_gap


# --------------------------------------------------------------------------- real data
#
# The corpus's MySQL dop1 series is the one real series with two maintained lines of several points each: 8.0
# (8.0.43, 8.0.44) and 8.4 (8.4.6, 8.4.7), released pairwise on the same days (8.0.43 with 8.4.6, 8.0.44 with
# 8.4.7), beside the innovation releases 9.4.0 and 9.5.0. No MariaDB release series is in the corpus, and this
# one holds no backport fix: no test moved in one of those lines and not in the other. So the tests read it as it
# is (each line its own sequence; a newest point of a line never an outlier), and for the gap edit one line's
# later point in the real data: 8.0.44 given 5.7.44's value, as a fix backported to 8.0 alone would.

SMALL = "sysbench-mysql-small"
MYSQL_VERSIONS = ("5.6.51", "5.7.44", "8.0.43", "8.0.44", "8.4.6", "8.4.7", "9.4.0", "9.5.0")
MYSQL_LINES = tuple(releases.release_line("MySQL", v) for v in MYSQL_VERSIONS)
TIPS = ("8.0.44", "8.4.7")  # each line's newest point after its first, with another line after it


def real_rows(corpus: Path) -> dict[str, list[float]]:
    """The author's relative QPS per test (base 5.6.51 = 1.0) over the eight versions, as his table has them."""
    rows = {}
    for line in (corpus / SMALL / "qps.rel.all.tsv").read_text().splitlines():
        parts = line.split("\t")
        if len(parts) == len(MYSQL_VERSIONS) and not parts[0].startswith("col"):
            rows[parts[-1]] = [1.0, *map(float, parts[:-1])]
    return rows


def every_release(label: str, values: Sequence[float], *, lines: bool = True) -> st.Series:
    return st.Series(
        label, tuple(map(st.Point, MYSQL_VERSIONS, values)), releases="all", lines=MYSQL_LINES if lines else ()
    )


def test_on_the_real_mysql_series_each_line_is_its_own_sequence(corpus: Path) -> None:
    rows = real_rows(corpus)
    assert len(rows) >= 30
    at = {v: i for i, v in enumerate(MYSQL_VERSIONS)}
    around = st.lineage(next(iter(rows.values())), MYSQL_LINES)
    # 8.0.44 is read after 8.0.43 and continues nothing: 8.4.6, out the same day as 8.0.43, never had its
    # changes, so 8.4.6 is read against 8.0.43, and 8.4.6 goes on into 8.4.7 and into the next line, 9.4.0.
    assert around.before[at["8.0.44"]] == at["8.0.43"] and at["8.0.44"] not in around.after
    assert around.before[at["8.4.6"]] == at["8.0.43"]
    assert around.after[at["8.4.6"]] == (at["8.4.7"], at["9.4.0"])
    assert around.before[at["8.4.7"]] == at["8.4.6"] and at["8.4.7"] not in around.after
    assert {MYSQL_VERSIONS[i] for i in around.tips} == set(TIPS)
    for label, values in rows.items():
        series = every_release(label, values)
        told = st.build_stories(series)
        # No line's newest point is an outlier, and no story steps from one line's newest point into another line
        # (8.0.44 → 8.4.6, 8.4.7 → 9.4.0): the lines are not read as fixes and returns of each other.
        assert not any(v in s.outliers for s in told for v in TIPS), (label, [s.summary for s in told])
        assert not any(e.previous_version in TIPS for s in told for e in s.events), (label, [s.summary for s in told])
        # On the real series the two lines moved together within noise: read by line, each regression story
        # that reaches them is in the same state in both (no gap where the data has none).
        for story in told:
            lines = st.line_states(story, series, lambda v: releases.release_line("MySQL", v))
            assert st.backport_gap_text(lines) == "", (label, story.summary, lines)


def test_an_outlier_is_judged_within_its_release_line_on_real_values(corpus: Path) -> None:
    # Where version order and the lines disagree: on every real test, 8.0.44 moved to 5.7.44's value (a fix
    # backported to 8.0 alone) sits between 8.0.43 and 8.4.6, which lack it. Version order counts its two steps
    # as noise of one sequence (or reads a one-version excursion there) and loses the real 8.0 loss; the lines
    # read 8.0.44 as the 8.0 line's newest point: never an outlier of another line, never a step into 8.4.6.
    rows = real_rows(corpus)
    arrivals = ("5.7.44", "8.0.43")  # the author's 5.7 and 8.0 losses
    found_by_order = found_by_line = 0
    for label, real in rows.items():
        values = list(real)
        values[MYSQL_VERSIONS.index("8.0.44")] = values[MYSQL_VERSIONS.index("5.7.44")]
        by_order = st.build_stories(every_release(label, values, lines=False))
        by_line = st.build_stories(every_release(label, values))
        told = [s for s in by_line if s.kind == "regression" and s.arrived_in in arrivals]
        found_by_order += any(s.kind == "regression" and s.arrived_in in arrivals for s in by_order)
        found_by_line += bool(told)
        assert not any(e.previous_version == "8.0.44" or e.version == "8.0.44" for s in by_line for e in s.events)
        # The line's newest point is no outlier of any story: a story's line state tells it (the 8.0 line fixed,
        # back at the level before the story), or else it is an outlier of its own, read against 8.0.43 in its
        # line, not "back" at 8.4.6 of another line.
        assert not any("8.0.44" in s.outliers for s in by_line if s.kind != "outlier"), label
        alone = [s for s in by_line if s.kind == "outlier" and s.arrived_in == "8.0.44"]
        for outlier in alone:
            assert outlier.previous_version == "8.0.43" and outlier.ended_in is None, label
            assert "newest version of its release line" in outlier.summary
        if not told:
            assert alone, label
    # Read by line, the real 8.0 loss survives the backport in most tests; read in version order, in few.
    assert found_by_line >= len(rows) * 3 // 4 and found_by_order <= len(rows) // 4, (found_by_line, found_by_order)


def test_a_fix_backported_to_one_real_line_is_a_backport_gap(corpus: Path) -> None:
    rows = real_rows(corpus)
    label = "point-query_range=100"
    values = list(rows[label])
    at = {v: i for i, v in enumerate(MYSQL_VERSIONS)}
    values[at["8.0.44"]] = values[at["5.7.44"]]
    series = every_release(label, values)
    (story,) = [s for s in st.build_stories(series) if s.kind == "regression"]
    # The 8.0 loss, against 5.7.44, read at the two versions it names; the 8.0 line's own fix no event of it.
    assert (story.arrived_in, story.previous_version) == ("8.0.43", "5.7.44")
    assert story.change == pytest.approx(values[at["8.0.43"]] / values[at["5.7.44"]] - 1)
    assert story.outliers == () and story.is_open
    maintained = {releases.release_line("MySQL", v) for v in MYSQL_VERSIONS if v != "9.4.0"}
    lines = st.line_states(story, series, lambda v: releases.release_line("MySQL", v), maintained=maintained)
    # Each line at its newest point: 8.0 back at 5.7.44's level, 8.4 and the newest release still down.
    assert [(x.line, x.version, x.fixed) for x in lines] == [
        ("8.0", "8.0.44", True),
        ("8.4", "8.4.7", False),
        ("9.5", "9.5.0", False),
    ]
    assert st.backport_gap_text(lines) == "fixed in 8.0.44, still open in 8.4.7, 9.5.0"
    # 9.4.0, an innovation release 9.5.0 replaced, is no maintained line: it is in no gap.
    every = st.line_states(story, series, lambda v: releases.release_line("MySQL", v))
    assert "9.4" in {x.line for x in every} and "9.4" not in {x.line for x in lines}


# A change that reached the 8.4 line in its newest point and the next line, branched from 8.4.6, in its first
# (8.4.7 and 9.4.0), and stayed (9.5.0): a loss (× 0.8), or a fix (back at 5.7.44's level, the level before the
# author's 8.0 loss). Version order reads 8.4.7 as where it arrived; the line sequence (5.6.51, 5.7.44, 8.0.43,
# 8.4.6, 9.4.0, 9.5.0, each line's first point after the point of the line it branched from) dates it at 9.4.0
# against 8.4.6, and 8.4.7 is the 8.4 line's own state.
LATER = ("8.4.7", "9.4.0", "9.5.0")
MAINTAINED = frozenset({"5.6", "5.7", "8.0", "8.4", "9.5"})


def _planted(real: Sequence[float], change: str) -> list[float]:
    values = list(real)
    at = {v: i for i, v in enumerate(MYSQL_VERSIONS)}
    for v in LATER:
        values[at[v]] = values[at[v]] * 0.8 if change == "loss" else values[at["5.7.44"]]
    return values


@pytest.mark.parametrize(("change", "event"), [("loss", "further"), ("fix", "fixed")])
def test_a_change_is_dated_where_it_first_appears_along_the_line_sequence(
    corpus: Path, change: str, event: str
) -> None:
    rows = real_rows(corpus)
    at = {v: i for i, v in enumerate(MYSQL_VERSIONS)}
    dated = by_order = 0
    for label, real in rows.items():
        values = _planted(real, change)
        series = st.replace(every_release(label, values), maintained=MAINTAINED)
        told = st.build_stories(series)
        # No event names the 8.4 line's newest point: it is no step of the line sequence.
        assert not any("8.4.7" in (e.version, e.previous_version) for s in told for e in s.events), label
        assert not any("8.4.7" in s.outliers for s in told if s.kind != "outlier"), label
        for story in [s for s in told if s.kind == "regression" and s.arrived_in == "8.0.43"]:
            steps = [e for e in story.events if e.version == "9.4.0"]
            if not steps:
                continue
            (step,) = steps
            dated += 1
            # Dated at 9.4.0, against the point it was branched from, the ratio between the two.
            assert (step.kind, step.previous_version) == (event, "8.4.6"), (label, story.summary)
            assert step.change == pytest.approx(values[at["9.4.0"]] / values[at["8.4.6"]] - 1)
            lines = st.line_states(story, series, lambda v: releases.release_line("MySQL", v), maintained=MAINTAINED)
            states = {x.line: (x.version, x.fixed) for x in lines}
            # The 8.4 line's newest point is that line's state: the change reached it there too.
            assert states["8.4"] == ("8.4.7", change == "fix"), (label, lines)
            # The newest release lost with it, or (fixed) is no line the loss hit.
            assert ("9.5" in states) == (change == "loss") and states.get("9.5", ("9.5.0", False))[0] == "9.5.0"
            # Told by the line state, it is no outlier of its own.
            assert not any(s.kind == "outlier" and s.arrived_in == "8.4.7" for s in told), label
        old = st.build_stories(every_release(label, values, lines=False))
        by_order += any(e.version == "8.4.7" for s in old for e in s.events)
    # Read in version order the same change arrives at 8.4.7, the 8.4 line's newest point; read by line, in 9.4.0.
    assert dated >= 4 and by_order >= dated, (dated, by_order)


def test_a_loss_in_one_lines_newest_point_alone_is_that_lines_state(corpus: Path) -> None:
    # 8.0.44 alone loses 20 % on every real test (a bad backport to 8.0 only): no story arrives, moves or ends
    # there; beyond the test's one-point gate it is an outlier of its own, read against 8.0.43, with no later
    # point of its line to be back at (within it, noise of its line).
    at = {v: i for i, v in enumerate(MYSQL_VERSIONS)}
    rows = real_rows(corpus)
    outliers = 0
    for label, real in rows.items():
        values = list(real)
        values[at["8.0.44"]] *= 0.8
        series = st.replace(every_release(label, values), maintained=MAINTAINED)
        told = st.build_stories(series)
        assert not any("8.0.44" in (e.version, e.previous_version) for s in told for e in s.events), label
        alone = [s for s in told if s.kind == "outlier" and s.arrived_in == "8.0.44"]
        gate = max(0.05, 3 * series.noise.sigma * 2**0.5)
        assert len(alone) == (abs(values[at["8.0.44"]] / values[at["8.0.43"]] - 1) > gate), (label, gate)
        for outlier in alone:
            assert (outlier.previous_version, outlier.ended_in) == ("8.0.43", None), label
            assert outlier.change == pytest.approx(values[at["8.0.44"]] / values[at["8.0.43"]] - 1)
            outliers += 1
    assert outliers >= len(rows) * 3 // 4, outliers


def _qps_line(path: Path) -> tuple[str, float]:
    line = next(x for x in path.read_text().splitlines() if "queries:" in x)
    return line, float(line.split("(")[1].split()[0])


@pytest.mark.django_db
def test_the_backport_gap_reads_the_same_on_the_list_the_story_page_and_in_json(corpus: Path, tmp_path: Path) -> None:
    # The real series imported, with 8.0.44's point-query QPS set to 5.7.44's own (sysbench's output edited in
    # place: a fix backported to the 8.0 line alone).
    series = tmp_path / SMALL
    shutil.copytree(corpus / SMALL, series)
    name = "sb.o.point-query.range100.pk1.dop1"
    _, fixed_qps = _qps_line(series / "x.my5744_rel_o2nofp.z12a_c8r32.pk1" / name)
    target = series / "x.my8044_rel_o2nofp.z12a_c8r32.pk1" / name
    old, old_qps = _qps_line(target)
    target.write_text(
        target.read_text().replace(old, old.replace(f"({old_qps:.2f} per sec.)", f"({fixed_qps:.2f} per sec.)"))
    )
    assert _qps_line(target)[1] == fixed_qps
    submit_and_import(archive_directory(series), name="small.tar.gz", source=Bundle.Source.COMMAND)
    base = Run.objects.get(name="x.my5651_rel_o2nofp.z12a_c8r32.pk1")
    detect_regressions(base.server_id, base.workload_id, view="all")

    record = Regression.objects.get(
        microbenchmark__test="point-query",
        microbenchmark__range_size=100,
        kind="regression",
        metric="qps",
        releases="all",
        outlier=False,
    )
    gap = record.backport_gap
    assert gap.startswith("fixed in 8.0.44, still open in 8.4.7") and "9.4.0" not in gap, record.summary
    assert "8.0.44" not in record.outliers and gap in record.summary

    client = Client()
    listed = client.get("/regressions/", {"releases": "all", "tab": "all", "microbenchmark": "point-query_range=100"})
    row = re.search(rf'<tr data-regression="{record.pk}">.*?</tr>', listed.content.decode(), re.S)
    assert row is not None and f"backport gap: {gap}" in row.group(0)
    assert record.change_text in row.group(0) and record.current_change_text in row.group(0)
    page = client.get(record.get_absolute_url()).content.decode()
    lines = re.search(r"<dd data-lines>(.*?)</dd>", page, re.S)
    assert lines is not None and f"backport gap: {gap}" in lines.group(0)
    assert "8.0: fixed at 8.0.44" in lines.group(0) and "8.4: <strong>still open</strong> at 8.4.7" in lines.group(0)
    assert record.change_text in page and record.current_change_text in page
    # The evidence table and the story's chart name 8.0.44 as the 8.0 line's own fix, not as a step of the story.
    (row_8044,) = [r for r in evidence_table(record)["rows"] if r["point"].version == "8.0.44" and r["used"]]
    assert row_8044["phase"] == "fixed in the 8.0 line"
    figure = story_figure(record, evidence_table(record))
    assert figure is not None
    assert [a["text"] for a in figure["layout"]["annotations"]] == ["arrived", "fixed in the 8.0 line"]

    out = io.StringIO()
    call_command("detect_regressions", "--releases", "all", "--format", "json", stdout=out)
    (as_json,) = [
        r
        for r in json.loads(out.getvalue())
        if r["subject"] == "point-query_range=100"
        and r["kind"] == "regression"
        and r["metric"] == "qps"
        and r["releases"] == "all"
        and not r["outlier"]
    ]
    assert as_json["backport_gap"] == gap
    assert as_json["change"] == pytest.approx(record.change) and as_json["current_change"] == pytest.approx(
        record.current_change
    )
    api = client.get("/api/regressions", {"releases": "all", "tab": "all", "microbenchmark": "point-query_range=100"})
    (listed_by_api,) = [r for r in api.json()["items"] if r["id"] == record.pk]
    assert listed_by_api["backport_gap"] == gap


@pytest.mark.django_db
def test_a_change_dated_along_the_line_sequence_reads_the_same_everywhere(corpus: Path, tmp_path: Path) -> None:
    # The real series imported, read-write's QPS at 8.4.7, 9.4.0 and 9.5.0 cut by a fifth (sysbench's output
    # edited in place): a loss that reached the 8.4 line in 8.4.7 and the line branched from 8.4.6 in 9.4.0.
    series = tmp_path / SMALL
    shutil.copytree(corpus / SMALL, series)
    name = "sb.o.read-write.range100.pk1.dop1"
    for build in ("my8407", "my9400", "my9500"):
        target = series / f"x.{build}_rel_o2nofp.z12a_c8r32.pk1" / name
        old, qps = _qps_line(target)
        cut = old.replace(f"({qps:.2f} per sec.)", f"({qps * 0.8:.2f} per sec.)")
        target.write_text(target.read_text().replace(old, cut))
        assert _qps_line(target)[1] == pytest.approx(qps * 0.8, abs=0.01)
    submit_and_import(archive_directory(series), name="small.tar.gz", source=Bundle.Source.COMMAND)
    base = Run.objects.get(name="x.my5651_rel_o2nofp.z12a_c8r32.pk1")
    detect_regressions(base.server_id, base.workload_id, view="all")

    found = Regression.objects.filter(
        microbenchmark__test="read-write", microbenchmark__range_size=100, metric="qps", releases="all"
    )
    (record,) = [r for r in found if any(e["version"] == "9.4.0" for e in r.story_events)]
    assert record.kind == "regression" and not record.outlier
    (step,) = [e for e in record.story_events if e["version"] == "9.4.0"]
    assert (step["kind"], step["previous_version"]) == ("further", "8.4.6")
    # No record names 8.4.7 as a step or an outlier: it is the 8.4 line's state, still open there.
    assert not any("8.4.7" in (e["version"], e["previous_version"]) for r in found for e in r.story_events)
    assert not any("8.4.7" in r.outliers for r in found)
    assert "worse in 9.4.0" in record.summary and "8.4.7" not in record.summary
    states = {x.line: (x.version, x.fixed) for x in Evidence.from_json(record.evidence).lines}
    assert states["8.4"] == ("8.4.7", False) and states["9.5"] == ("9.5.0", False)

    client = Client()
    listed = client.get("/regressions/", {"releases": "all", "tab": "all", "microbenchmark": "read-write_range=100"})
    row = re.search(rf'<tr data-regression="{record.pk}">.*?</tr>', listed.content.decode(), re.S)
    assert row is not None and record.change_text in row.group(0) and record.current_change_text in row.group(0)
    assert "8.4.7" not in row.group(0)
    page = client.get(record.get_absolute_url()).content.decode()
    assert "worse in 9.4.0" in page and "8.4: <strong>still open</strong> at 8.4.7" in page
    out = io.StringIO()
    call_command("detect_regressions", "--releases", "all", "--format", "json", stdout=out)
    (as_json,) = [r for r in json.loads(out.getvalue()) if r["id"] == record.pk]
    assert as_json["events"] == record.story_events and as_json["summary"] == record.summary
    api = client.get("/api/regressions", {"releases": "all", "tab": "all", "microbenchmark": "read-write_range=100"})
    (listed_by_api,) = [r for r in api.json()["items"] if r["id"] == record.pk]
    assert listed_by_api["story_events"] == record.story_events and listed_by_api["summary"] == record.summary


def test_neighbouring_event_labels_of_a_story_chart_take_two_rows() -> None:
    # At 390 px "arrived" at 8.0.43 and "fixed in the 8.0 line" at 8.0.44 would cover each other.
    points: list[charts.StoryPoint] = [
        {"version": v, "value": x, "level": None, "mark": mark}
        for v, x, mark in (
            ("5.7.44", 0.88, ""),
            ("8.0.43", 0.69, "arrived"),
            ("8.0.44", 0.88, "fixed in the 8.0 line"),
            ("8.4.6", 0.68, ""),
            ("8.4.7", 0.67, ""),
            ("9.5.0", 0.65, "worse"),
        )
    ]
    layout = charts.story_chart(points, title="t", y_title="relative QPS", kind="regression")["layout"]
    shifts = {a["text"]: a["yshift"] for a in layout["annotations"]}
    assert shifts["arrived"] == 0 and shifts["fixed in the 8.0 line"] > 0 and shifts["worse"] == 0
    # The second row has room of its own: the top margin grows over a chart whose labels fit one row.
    one_row: list[charts.StoryPoint] = [{**p, "mark": ""} if p["version"] == "8.0.44" else p for p in points]
    single = charts.story_chart(one_row, title="t", y_title="relative QPS", kind="regression")["layout"]
    assert layout["margin"]["t"] > single["margin"]["t"]


def test_a_story_charts_event_lines_stand_at_their_columns_when_versions_look_like_numbers() -> None:
    # Postgres versions: plotly.js reads a shape's x of "17.4" as the category axis's position 17.4, not the
    # column named 17.4, so the lines and labels stood far to the right of a three-column chart.
    points: list[charts.StoryPoint] = [
        {"version": v, "value": x, "level": x, "mark": mark}
        for v, x, mark in (("10.23", 1.0, ""), ("11.22", 1.44, "arrived"), ("17.4", 2.26, "better again"))
    ]
    layout = charts.story_chart(points, title="t", y_title="relative QPS", kind="improvement")["layout"]
    columns = layout["xaxis"]["categoryarray"]
    assert [(s["x0"], s["x1"]) for s in layout["shapes"]] == [(1, 1), (2, 2)]
    assert {a["text"]: columns[a["x"]] for a in layout["annotations"]} == {"arrived": "11.22", "better again": "17.4"}
