"""Confirmation of new stories before anyone is told: a hook between the app that opens stories (regressions)
and the app that can measure again (runner), which import neither each other nor anything above runs.

Regressions hands each new open story's facts to the holders provided (``benchdash.hooks``) before announcing
it; a holder that will re-measure the story says why it waits, and later sends ``confirmation_done``
(``story_id``, ``confirmed``, ``text``), on which the story is announced or dismissed as noise. Pages ask
``notes`` what to say meanwhile.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from django.dispatch import Signal

from benchdash import hooks


@dataclass(frozen=True)
class StoryFacts:
    story_id: int
    server_id: int
    workload_id: int
    kind: str  # regression or improvement
    labels: tuple[str, ...]  # the microbenchmarks to measure again (a group story: its members)
    arrived_in_build_id: int | None
    previous_version_id: int | None
    threshold: float  # the gate |change| passed
    noise: float | None  # σ of one point


Holder = Callable[[Sequence[StoryFacts]], dict[int, str]]
Notes = Callable[[Sequence[int]], dict[int, str]]

# Sent with story_id, confirmed (bool) and text ("confirmed: 3 of 3 repeats below the gate (σ 1.2%)").
confirmation_done = Signal()


def hold(stories: Sequence[StoryFacts]) -> dict[int, str]:
    """story id → why its announcement waits, for the stories some holder will confirm first."""
    held: dict[int, str] = {}
    holders: tuple[Holder, ...] = hooks.provided(hooks.CONFIRMATION_HOLDERS)
    for holder in holders:
        held.update(holder([s for s in stories if s.story_id not in held]))
    return held


def notes(story_ids: Sequence[int]) -> dict[int, str]:
    """story id → its confirmation's state in words (waiting, confirmed, dismissed), where it has one."""
    found: dict[int, str] = {}
    providers: tuple[Notes, ...] = hooks.provided(hooks.CONFIRMATION_NOTES)
    for provider in providers:
        found.update(provider(story_ids))
    return found
