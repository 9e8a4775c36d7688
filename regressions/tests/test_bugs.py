"""Bug references as engineers type them expand to one tracker, key and link (regressions.bugs)."""

from __future__ import annotations

import pytest

from regressions.bugs import MARIADB_JIRA, MYSQL, PERCONA_JIRA, ROCKSDB_GITHUB, URL, BugRef, parse


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("MDEV-33894", BugRef(MARIADB_JIRA, "MDEV-33894", "https://jira.mariadb.org/browse/MDEV-33894")),
        ("PS-8822", BugRef(PERCONA_JIRA, "PS-8822", "https://perconadev.atlassian.net/browse/PS-8822")),
        ("MySQL bug 102037", BugRef(MYSQL, "102037", "https://bugs.mysql.com/bug.php?id=102037")),
        ("bug #102037", BugRef(MYSQL, "102037", "https://bugs.mysql.com/bug.php?id=102037")),
        ("RocksDB #12038", BugRef(ROCKSDB_GITHUB, "12038", "https://github.com/facebook/rocksdb/issues/12038")),
    ],
)
def test_each_documented_key_expands_to_its_tracker_and_link(text: str, expected: BugRef) -> None:
    assert parse(text) == expected


@pytest.mark.parametrize(
    ("text", "key"),
    [("mdev-33894", "MDEV-33894"), ("  MDEV-33894 ", "MDEV-33894"), ("ps-8822", "PS-8822"), ("Bug#102037", "102037")],
)
def test_case_and_spacing_do_not_make_another_bug(text: str, key: str) -> None:
    assert parse(text).key == key


def test_a_link_to_a_known_tracker_is_the_same_bug_as_its_key() -> None:
    assert parse("https://jira.mariadb.org/browse/MDEV-33894") == parse("MDEV-33894")
    assert parse("https://perconadev.atlassian.net/browse/PS-8822/") == parse("PS-8822")
    assert parse("https://bugs.mysql.com/bug.php?id=102037") == parse("MySQL bug 102037")
    assert parse("https://github.com/facebook/rocksdb/issues/12038") == parse("RocksDB #12038")


def test_any_other_http_url_is_accepted_as_itself() -> None:
    url = "https://smalldatum.blogspot.com/2025/01/mysql-regressions.html"
    assert parse(url) == BugRef(URL, url, url)
    assert parse("http://example.org/issue?id=7").url == "http://example.org/issue?id=7"


def test_labels_read_as_in_the_write_ups() -> None:
    assert parse("bug #102037").label == "MySQL bug #102037"
    assert parse("RocksDB #12038").label == "RocksDB #12038"
    assert parse("MDEV-33894").label == "MDEV-33894"


@pytest.mark.parametrize(
    "text",
    [
        "",
        "MDEV",
        "MDEV-x1",
        "102037",
        "ftp://example.org/bug",
        "javascript:alert(1)",
        "https://",
        "see MDEV-1",
        "http://a b",
    ],
)
def test_anything_else_is_a_clear_error(text: str) -> None:
    with pytest.raises(ValueError, match=r"not a bug reference|URL"):
        parse(text)


def test_an_overlong_url_is_refused_rather_than_cut() -> None:
    with pytest.raises(ValueError, match="at most 500"):
        parse("https://example.org/" + "a" * 600)
