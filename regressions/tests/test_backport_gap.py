"""Release lines as sequences of their own (rule 9): a regression fixed in one maintained line and still open in
another has a backport gap, said on the list, the story page and in JSON."""

from __future__ import annotations

from regressions import stories as st
from regressions.detection import SeriesData, SeriesPoint, find_candidates
from regressions.evidence import Evidence
from runs import releases

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
