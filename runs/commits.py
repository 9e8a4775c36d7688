"""Where a run's code came from: a commit of a repository, on a branch, maybe for a pull request.

Pure: what the manifest, the upload form and the API accept (``check_commit``) and the links the run page and
the CI verdict show (``CommitLinks``). A repository is ``owner/name`` (a GitHub repository) or the URL of its
web page on any forge. Commits are linked at ``<repository>/commit/<id>`` (GitHub, GitLab and Gitea all answer
it), pull requests at ``/pull/<n>``, or ``/-/merge_requests/<n>`` when the repository's URL is a GitLab one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# A full or abbreviated git object name (SHA-1 or SHA-256).
COMMIT_RE = re.compile(r"[0-9a-f]{7,64}")
# owner/name as GitHub spells them.
OWNER_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9_.-]+")
URL_RE = re.compile(r"https?://[^\s/]+(/[^\s]*)?")


def check_commit(value: str) -> str:
    """The commit id, lower-cased; ValueError saying what a commit id is otherwise."""
    commit = value.strip().lower()
    if not COMMIT_RE.fullmatch(commit):
        raise ValueError(f"{value!r} is not a git commit id (7 to 64 hexadecimal digits)")
    return commit


def check_repository(value: str) -> str:
    """``owner/name`` or an http(s) URL, without a trailing slash or ``.git``; ValueError otherwise."""
    repository = value.strip().removesuffix("/").removesuffix(".git")
    if OWNER_NAME_RE.fullmatch(repository) or URL_RE.fullmatch(repository):
        return repository
    raise ValueError(f"{value!r}: give the repository as owner/name or as the URL of its web page")


def repository_url(repository: str) -> str:
    """The repository's web page; empty when there is no repository."""
    if not repository:
        return ""
    if URL_RE.fullmatch(repository):
        return repository
    return f"https://github.com/{repository}"


@dataclass(frozen=True)
class CommitLinks:
    """The links of one run's commit fields (empty strings where a field or the repository is missing)."""

    repository: str
    commit: str
    pull_request: int | None

    @property
    def repository_url(self) -> str:
        return repository_url(self.repository)

    @property
    def commit_url(self) -> str:
        base = self.repository_url
        return f"{base}/commit/{self.commit}" if base and self.commit else ""

    @property
    def pull_request_url(self) -> str:
        base = self.repository_url
        if not base or self.pull_request is None:
            return ""
        if "gitlab" in base:
            return f"{base}/-/merge_requests/{self.pull_request}"
        return f"{base}/pull/{self.pull_request}"

    @property
    def short_commit(self) -> str:
        return self.commit[:10]
