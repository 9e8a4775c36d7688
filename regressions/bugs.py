"""Bug references as engineers write them, expanded to tracker, key and link.

``MDEV-33894`` (MariaDB Jira), ``PS-8822`` (Percona Jira), ``MySQL bug 102037`` or
``bug #102037`` (MySQL bug system), ``RocksDB #12038`` (GitHub issue), or any
http(s) URL. A URL of one of those trackers is recognised as that tracker's
key, so pasting the link and typing the key give the same bug. No Django here.
"""

from __future__ import annotations

import re
from typing import NamedTuple
from urllib.parse import parse_qs, urlsplit

MARIADB_JIRA = "mariadb-jira"
PERCONA_JIRA = "percona-jira"
MYSQL = "mysql"
ROCKSDB_GITHUB = "rocksdb-github"
URL = "url"

# Tracker id → what the UI calls it; regressions.models uses these as the choices.
TRACKERS: dict[str, str] = {
    MARIADB_JIRA: "MariaDB Jira",
    PERCONA_JIRA: "Percona Jira",
    MYSQL: "MySQL bugs",
    ROCKSDB_GITHUB: "RocksDB GitHub",
    URL: "link",
}

_MARIADB_RE = re.compile(r"^(MDEV)-(\d+)$", re.IGNORECASE)
_PERCONA_RE = re.compile(r"^(PS)-(\d+)$", re.IGNORECASE)
_MYSQL_RE = re.compile(r"^(?:mysql\s*)?bug\s*#?\s*(\d+)$", re.IGNORECASE)
_ROCKSDB_RE = re.compile(r"^rocksdb\s*#\s*(\d+)$", re.IGNORECASE)

# Bug.key and Bug.url hold a free URL whole: longer ones are refused rather than cut.
MAX_URL_LENGTH = 500

ACCEPTED = "MDEV-33894, PS-8822, 'MySQL bug 102037', 'bug #102037', 'RocksDB #12038' or an http(s) URL"


class BugRef(NamedTuple):
    tracker: str
    key: str
    url: str

    @property
    def label(self) -> str:
        return label(self.tracker, self.key)


def label(tracker: str, key: str) -> str:
    """How a bug is written in a write-up: ``MDEV-33894``, ``MySQL bug #102037``, ``RocksDB #12038``, the URL."""
    if tracker == MYSQL:
        return f"MySQL bug #{key}"
    if tracker == ROCKSDB_GITHUB:
        return f"RocksDB #{key}"
    return key


def mariadb(key: str) -> BugRef:
    return BugRef(MARIADB_JIRA, key, f"https://jira.mariadb.org/browse/{key}")


def percona(key: str) -> BugRef:
    return BugRef(PERCONA_JIRA, key, f"https://perconadev.atlassian.net/browse/{key}")


def mysql(number: str) -> BugRef:
    return BugRef(MYSQL, number, f"https://bugs.mysql.com/bug.php?id={number}")


def rocksdb(number: str) -> BugRef:
    return BugRef(ROCKSDB_GITHUB, number, f"https://github.com/facebook/rocksdb/issues/{number}")


def parse(text: str) -> BugRef:
    """Expand a bug key or URL; raises ValueError naming the accepted forms for anything else."""
    text = (text or "").strip()
    if match := _MARIADB_RE.match(text):
        return mariadb(f"MDEV-{int(match[2])}")
    if match := _PERCONA_RE.match(text):
        return percona(f"PS-{int(match[2])}")
    if match := _MYSQL_RE.match(text):
        return mysql(str(int(match[1])))
    if match := _ROCKSDB_RE.match(text):
        return rocksdb(str(int(match[1])))
    if re.match(r"^https?://", text, re.IGNORECASE):
        return _from_url(text)
    raise ValueError(f"not a bug reference: {text!r}; use {ACCEPTED}")


def _from_url(text: str) -> BugRef:
    if any(c.isspace() for c in text):
        raise ValueError(f"a URL cannot contain spaces: {text!r}")
    if len(text) > MAX_URL_LENGTH:
        raise ValueError(f"a URL of at most {MAX_URL_LENGTH} characters, please (this one has {len(text)})")
    parts = urlsplit(text)
    host = (parts.hostname or "").lower()
    if not host or "." not in host:
        raise ValueError(f"not a URL with a host name: {text!r}")
    path = parts.path.rstrip("/")
    # Links to the known trackers become their keys, so the same bug is one row however it was entered.
    if host == "jira.mariadb.org" and (match := re.fullmatch(r"/browse/(MDEV-\d+)", path, re.IGNORECASE)):
        return parse(match[1])
    if host in ("perconadev.atlassian.net", "jira.percona.com") and (
        match := re.fullmatch(r"/browse/(PS-\d+)", path, re.IGNORECASE)
    ):
        return parse(match[1])
    if host == "bugs.mysql.com":
        ids = parse_qs(parts.query).get("id", [])
        if path == "/bug.php" and len(ids) == 1 and ids[0].isdigit():
            return mysql(str(int(ids[0])))
        if match := re.fullmatch(r"/(\d+)", path):
            return mysql(str(int(match[1])))
    if host == "github.com" and (match := re.fullmatch(r"/facebook/rocksdb/issues/(\d+)", path, re.IGNORECASE)):
        return rocksdb(str(int(match[1])))
    return BugRef(URL, text, text)
