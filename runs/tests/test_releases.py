"""Release lines (runs.releases): which lines are long-term, overrides, and which versions a view reads."""

from __future__ import annotations

import pytest

from regressions import changepoints as cp
from runs import releases as rl

# MariaDB 10.11 → 12.1 as engineers benchmark it: the first and last minor of each line.
MARIADB = ["10.11.4", "10.11.14", "11.0.2", "11.0.6", "11.4.2", "11.4.8", "11.7.2", "11.8.3", "12.0.2", "12.1.1"]


def test_release_lines_are_major_minor_except_for_postgres_10_and_later() -> None:
    assert rl.release_line("MariaDB", "10.11.14") == "10.11"
    assert rl.release_line("MySQL", "8.0.43") == "8.0"
    assert rl.release_line("Postgres", "17.4") == "17"
    assert rl.release_line("Postgres", "9.6.24") == "9.6"
    assert rl.release_line("Postgres", "18beta1") == "18"


def test_the_table_follows_the_vendors_policies() -> None:
    maria = rl.policy_for("MariaDB")
    assert [v for v in MARIADB if maria.is_long_term(v)] == ["10.11.4", "10.11.14", "11.4.2", "11.4.8", "11.8.3"]
    assert all(maria.is_long_term(v) for v in ("10.2.44", "10.3.39", "10.4.34", "10.5.27", "10.6.20", "12.3.1"))
    mysql = rl.policy_for("MySQL")
    assert [mysql.is_long_term(v) for v in ("5.6.51", "5.7.44", "8.0.43", "8.3.0", "8.4.7", "9.4.0", "9.7.0")] == [
        True,
        True,
        True,
        False,
        True,
        False,
        True,
    ]
    assert all(rl.policy_for("Postgres").is_long_term(v) for v in ("10.23", "11.22", "17.4", "18.1"))
    # No published scheme (RocksDB), or a line the table does not know: read, never hidden.
    assert rl.policy_for("RocksDB").is_long_term("9.8.4") and mysql.is_long_term("10.0.0")


def test_an_override_moves_lines_per_dbms_and_a_servers_series_wins() -> None:
    overrides = {
        "MariaDB": {"short_term": ["12.3"], "long_term": ["11.7"]},
        "MariaDB @ lab-24": {"long_term": ["12.3"]},
    }
    everywhere = rl.policy_for("MariaDB", "c2d-32", overrides)
    assert not everywhere.is_long_term("12.3.1") and everywhere.is_long_term("11.7.2")
    assert rl.policy_for("MariaDB", "lab-24", overrides).is_long_term("12.3.1")
    assert not rl.policy_for("MariaDB", "c2d-32", {}).is_long_term("11.7.2")


@pytest.mark.parametrize("override", [{"short": ["11.0"]}, {"short_term": "11.0"}, ["11.0"]])
def test_a_malformed_override_is_refused_not_ignored(override: object) -> None:
    with pytest.raises(ValueError, match="release-line override 'MariaDB'"):
        rl.policy_for("MariaDB", "", {"MariaDB": override})


def test_the_long_term_view_drops_short_term_releases_only_when_the_series_mixes_both() -> None:
    maria = rl.policy_for("MariaDB")
    kept = rl.points_in_view(MARIADB, maria, "long-term", keep=0)
    # Every long-term release, and the newest release whatever its line (the author's "latest" tables).
    assert [v for v, k in zip(MARIADB, kept, strict=True) if k] == [
        "10.11.4",
        "10.11.14",
        "11.4.2",
        "11.4.8",
        "11.8.3",
        "12.1.1",
    ]
    assert rl.left_out(MARIADB, maria, "long-term", keep=0) == ["11.0.2", "11.0.6", "11.7.2", "12.0.2"]
    assert all(rl.points_in_view(MARIADB, maria, "all"))
    # Only rolling releases: nothing else to read, so they are the series.
    assert all(rl.points_in_view(["11.5.2", "11.6.2", "11.7.2"], maria, "long-term"))
    # The base is a point even on a short-term line.
    assert rl.points_in_view(["11.0.6", "11.4.8"], maria, "long-term", keep=0) == [True, True]
    with pytest.raises(ValueError, match="unknown release view"):
        rl.points_in_view(MARIADB, maria, "lts")  # type: ignore[arg-type]


def test_the_newest_release_is_provisional_in_the_default_view_until_a_newer_one_arrives() -> None:
    maria, mysql = rl.policy_for("MariaDB"), rl.policy_for("MySQL")
    assert rl.provisional_release(MARIADB, maria) == "12.1.1"
    # A newer release arrives: 12.1.1 is an ordinary short-term release again and leaves the view.
    later = [*MARIADB, "12.2.1"]
    assert rl.provisional_release(later, maria) == "12.2.1"
    assert "12.1.1" in rl.left_out(later, maria, "long-term", keep=0)
    # A newest release on a long-term line is no provisional one; nor is a series of short-term releases only.
    assert rl.provisional_release([*MARIADB, "12.3.1"], maria) is None
    assert rl.provisional_release(["9.4.0", "9.5.0"], mysql) is None
    nov25 = ["5.6.51", "5.7.44", "8.0.43", "8.0.44", "8.4.6", "8.4.7", "9.4.0", "9.5.0"]
    assert rl.left_out(nov25, mysql, "long-term", keep=0) == ["9.4.0"]
    # Every build of the newest version is a point (the build choice comes after).
    assert rl.points_in_view(["8.4.7", "9.5.0", "9.5.0"], mysql, "long-term", keep=0) == [True, True, True]
    assert rl.newest_version(["8.0.9", "8.0.10", "not a version"]) == "8.0.10"


def test_a_short_term_release_makes_no_arrive_and_fix_pair_in_the_long_term_view() -> None:
    # Writes: 11.0 is 41.5% down and the long-term lines never were; semantic order reads "arrived in 11.0.2,
    # fixed in 11.4.2".
    writes = [1.0, 1.01, 0.585, 0.59, 0.99, 1.0, 0.97, 0.99, 0.6, 0.61]
    every = cp.detect(writes, MARIADB)
    assert next((s.version, s.ended_version) for s in every.reported_steps) == ("11.0.2", "11.4.2")
    kept = rl.points_in_view(MARIADB, rl.policy_for("MariaDB"), "long-term", keep=0)
    versions = [v for v, k in zip(MARIADB, kept, strict=True) if k]
    values = [x for x, k in zip(writes, kept, strict=True) if k]
    # No pair at 11.0 / 11.4; the newest release's own drop (12.1.1, read by the default view) is a step.
    assert [(s.version, s.ended_version) for s in cp.steps(values, versions)] == [("12.1.1", None)]
