"""Noise measured against a test's own real steps (rule 2): residuals within its levels, not neighbour differences."""

from __future__ import annotations

from pathlib import Path

from regressions import stories as st

VERSIONS = ("5.6.51", "5.7.44", "8.0.43", "8.0.44", "8.4.6", "8.4.7", "9.4.0", "9.5.0")


def _insert(corpus: Path) -> tuple[float, ...]:
    """insert_range=100 of the real MySQL series, relative to 5.6.51, from the author's own table."""
    line = next(
        row
        for row in (corpus / "sysbench-mysql-small" / "qps.rel.all.tsv").read_text().splitlines()
        if row.endswith("\tinsert_range=100")
    )
    return (1.0, *(float(v) for v in line.split("\t")[:-1]))


def test_a_20_percent_step_after_two_real_steps_is_found_with_every_real_step(corpus: Path) -> None:
    real = _insert(corpus)
    assert len(real) == len(VERSIONS)
    # The real series (−19 % in 5.7.44, −32 % in 8.0.43) with a −20 % step added from 8.4.7 on.
    stepped = real[:5] + tuple(v * 0.8 for v in real[5:])
    series = st.Series("insert_range=100", tuple(map(st.Point, VERSIONS, stepped)))
    assert series.noise.source == "MAD" and series.noise.sigma < 0.03, series.noise.text
    assert "residual" in series.noise.text
    (story,) = st.build_stories(series)
    assert [(e.kind, e.version) for e in story.events][:3] == [
        ("arrival", "5.7.44"),
        ("further", "8.0.43"),
        ("further", "8.4.7"),
    ]
    assert abs(story.events[2].change - (0.8 * real[5] / real[4] - 1)) < 1e-12


def test_the_residual_noise_is_never_above_the_neighbour_differences() -> None:
    flat = (1.0, 1.03, 0.98, 1.01, 0.97, 1.02, 0.99, 1.0)
    series = st.Series("t", tuple(map(st.Point, VERSIONS, flat)))
    neighbours = st.changepoints.robust_noise(flat)
    assert neighbours is not None and series.noise.sigma <= neighbours
    assert st.build_stories(series) == []
