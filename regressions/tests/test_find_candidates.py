"""Detection's candidates come from loaded data alone: hand-built series, no database."""

from __future__ import annotations

from dataclasses import replace

from regressions.detection import SeriesData, SeriesPoint, find_candidates

VERSIONS = ["8.0.20", "8.0.25", "8.0.30", "8.0.35", "8.0.40", "8.0.40"]


def _series() -> SeriesData:
    # Six columns, five versions: 8.0.40 has a second, experimental build that is not a point.
    points = [
        SeriesPoint(
            key=f"c{i}",
            dbms="MySQL",
            version=version,
            build=f"my{version.replace('.', '')}{'_asan' if i == 5 else ''}",
            flavour="asan" if i == 5 else "rel_o2nofp",
            config="c8r32",
            repeats=1,
            version_id=100 + i,
            build_id=200 + i,
        )
        for i, version in enumerate(VERSIONS)
    ]
    relative = {
        # Two of the three point queries lose 20% in 8.0.30; the third holds.
        "point-query": [1.0, 1.0, 0.8, 0.8, 0.8, 0.5],
        "hot-points": [1.0, 1.01, 0.79, 0.8, 0.8, 0.5],
        "random-points": [1.0, 1.0, 1.0, 1.0, 1.0, 0.5],
        # A scan alone in its group gains 30% in 8.0.35.
        "scan": [1.0, 1.0, 1.0, 1.3, 1.3, 2.0],
    }
    return SeriesData(
        server="8-core server",
        base="c0",
        base_run_id=7,
        dop=1,
        group_set="auto",
        points=points,
        labels=list(relative),
        groups=["point queries", "scans"],
        group_of={
            "point-query": "point queries",
            "hot-points": "point queries",
            "random-points": "point queries",
            "scan": "scans",
        },
        microbenchmark_ids={"point-query": 1, "hot-points": 2, "random-points": 3, "scan": 4},
        relative=relative,
        cv={label: [0.01] * len(points) for label in relative},
    )


def test_each_story_is_one_candidate_and_member_stories_point_at_their_group_story() -> None:
    candidates, noise = find_candidates(_series())
    by_subject = {(c.microbenchmark_id, c.group, c.kind): c for c in candidates}
    assert set(by_subject) == {
        (None, "point queries", "regression"),
        (1, "point queries", "regression"),
        (2, "point queries", "regression"),
        (None, "scans", "improvement"),
        (4, "scans", "improvement"),
    }
    group = by_subject[(None, "point queries", "regression")]
    assert group.arrived_in_id == 102 and group.key == (None, "point queries", "regression", 102, "qps")
    assert group.opened and group.folded_into_key is None
    values = group.values
    assert (values["previous_version_id"], values["persists_until_id"], values["fixed_in_id"]) == (101, 104, None)
    assert values["arrived_in_build_id"] == 202 and values["base_run_id"] == 7
    assert values["change"] < -0.15 and values["story_events"][0]["kind"] == "arrival"
    assert values["noise_source"] and values["noise_rule"].startswith("σ ")
    evidence = group.evidence
    assert evidence is not None and evidence.is_group
    assert sorted(evidence.labels) == ["hot-points", "point-query"] and evidence.members_total == 3
    assert values["builds"][:2] == ["my8020", "my8025"] and "my8040_asan" not in values["builds"]
    assert [p.used for p in evidence.points] == [True] * 5 + [False]
    assert evidence.points[5].unused_because == "another build of this version"
    for member in (by_subject[(1, "point queries", "regression")], by_subject[(2, "point queries", "regression")]):
        assert member.folded_into_key == group.key and not member.opened

    scan = by_subject[(4, "scans", "improvement")]
    assert scan.arrived_in_id == 103 and scan.values["previous_version_id"] == 102
    assert abs(scan.values["change"] - 0.3) < 1e-9
    assert scan.evidence is not None and scan.evidence.values == {"scan": [1.0, 1.0, 1.0, 1.3, 1.3, 2.0]}
    assert scan.evidence.level(4) == 1.3 and scan.evidence.level(5) is None
    assert noise is not None


def test_a_metric_step_at_the_arrival_is_attached_to_the_story() -> None:
    series = _series()
    cs = [10.0, 10.0, 31.0, 31.0, 31.0, 50.0]
    metrics = {label: {"cs/o": cs if label == "scan" else [10.0] * 6} for label in series.labels}
    series = replace(series, metrics=metrics)
    candidates, _ = find_candidates(series)
    scan = next(c for c in candidates if c.microbenchmark_id == 4)
    # cs/o triples at 8.0.30, one version before the scan's gain: no coincidence.
    assert scan.values["metric_steps"] == []
    metrics["scan"]["cs/o"] = [10.0, 10.0, 10.0, 3.0, 3.0, 50.0]
    candidates, _ = find_candidates(replace(series, metrics=metrics))
    scan = next(c for c in candidates if c.microbenchmark_id == 4)
    (step,) = scan.values["metric_steps"]
    assert step["metric"] == "cs/o" and step["explains"] and step["at"] == "arrival"


def test_a_point_whose_background_inserts_missed_their_sla_is_no_point() -> None:
    series = _series()
    # The scan's gain rests on 8.0.35 and 8.0.40; with both runs missing their SLA there is nothing to tell.
    missed = {label: [False] * 6 for label in series.labels}
    missed["scan"] = [False, False, False, True, True, False]
    candidates, _ = find_candidates(replace(series, sla_missed=missed))
    assert not [c for c in candidates if c.microbenchmark_id == 4 or c.group == "scans"]
