"""Which runs make a series' main line: the runs of its base branches, and the runs no CI described.

A run uploaded from a pull request, or from a branch that is not a base branch, is judged against the base
branch (the CI verdict, ``regressions.verdict``) but never joins the base branch's series: it is no repeat of
the main line's build of the same name, is no point of the series detection reads, and opens no story there.
A comparison that names it, or is based on it, shows it as a column of its own (its *lane*, "PR #42").

The base branches are ``BENCHDASH_BASE_BRANCHES``, a regular expression a whole branch name must match
(default: main, master, trunk and release branches named by their version, such as 10.11).

An experiment's runs (a settings experiment re-runs a new version with an old version's settings, ``runner``)
carry a branch beginning ``experiment:``. A colon is in no git branch name (``git check-ref-format``), so no CI
branch is ever taken for one, and whatever ``BENCHDASH_BASE_BRANCHES`` says, such a run is never on the main line:
no point of a series, no new version, no story of its own.
"""

from __future__ import annotations

import re

from django.conf import settings
from django.db.models import Q

DEFAULT_BASE_BRANCHES = r"main|master|trunk|[0-9]+(\.[0-9]+)*"
EXPERIMENT_PREFIX = "experiment:"


def pattern() -> str:
    return str(getattr(settings, "BENCHDASH_BASE_BRANCHES", DEFAULT_BASE_BRANCHES) or DEFAULT_BASE_BRANCHES)


def is_experiment(branch: str) -> bool:
    return branch.startswith(EXPERIMENT_PREFIX)


def experiment_branch(name: str) -> str:
    """The branch an experiment's runs are stored under (``experiment:settings-7``)."""
    return f"{EXPERIMENT_PREFIX}{name}"


def is_base_branch(branch: str) -> bool:
    return not is_experiment(branch) and re.fullmatch(f"(?:{pattern()})", branch) is not None


def in_main_line(branch: str, pull_request: int | None) -> bool:
    """A run without a pull request whose branch is a base branch, or that has no branch at all."""
    return pull_request is None and (not branch or is_base_branch(branch))


def main_line(prefix: str = "") -> Q:
    """The runs of the main line (``prefix``: the lookup path to the run, such as ``run__``)."""
    return (
        Q(**{f"{prefix}pull_request__isnull": True})
        & (Q(**{f"{prefix}branch": ""}) | Q(**{f"{prefix}branch__regex": f"^({pattern()})$"}))
        & ~Q(**{f"{prefix}branch__startswith": EXPERIMENT_PREFIX})
    )


def lane(branch: str, pull_request: int | None) -> str:
    """What sets an off-main-line run apart in a comparison ("PR #42", "branch feature-x"); "" on the main line."""
    if in_main_line(branch, pull_request):
        return ""
    if is_experiment(branch):
        return branch[len(EXPERIMENT_PREFIX) :].replace("-", " ")
    return f"PR #{pull_request}" if pull_request is not None else f"branch {branch}"


def same_lane(branch: str, pull_request: int | None) -> Q:
    """The runs of the same pull request (or, without one, of the same branch outside pull requests)."""
    if pull_request is not None:
        return Q(pull_request=pull_request, branch=branch)
    return Q(pull_request__isnull=True, branch=branch)


def series_of(branch: str, pull_request: int | None) -> Q:
    """The runs a series based on a run of this branch and pull request reads: the main line, and the base's own
    lane when the base is off it (a pull request's run is compared against the main line)."""
    runs = main_line()
    if not in_main_line(branch, pull_request):
        runs |= same_lane(branch, pull_request)
    return runs
