from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from django.apps import AppConfig

if TYPE_CHECKING:
    from runs.confirmations import StoryFacts
    from runs.experiments import RunPair, SettingsSplit


# The confirmation runs' code (with the runner, its tasks and Celery) is imported when a story is held or its
# notes are read, not when Django starts: every process starts Django, few hold stories.
def hold_for_confirmation(stories: Sequence[StoryFacts]) -> dict[int, str]:
    """Stories a benchmark host's run opened are measured again there before anyone is told."""
    from runner import confirm, tasks

    return confirm.hold(stories, enqueue=tasks.enqueue)


def confirmation_notes(story_ids: Sequence[int]) -> dict[int, str]:
    from runner import confirm

    return confirm.notes(story_ids)


def settings_split_for(pair: RunPair) -> SettingsSplit | None:
    """What a story or run-diff page shows of "settings or code?" for two runs (``runner.experiments``)."""
    from runner import experiments

    return experiments.split_for(pair)


class RunnerConfig(AppConfig):
    name = "runner"
    verbose_name = "Triggered benchmark runs"

    def ready(self) -> None:
        from benchdash import hooks
        from runner import receivers  # noqa: F401  (connects the receivers)

        # New stories of a benchmark host's runs are measured again before they are told (runs.confirmations).
        hooks.provide(hooks.CONFIRMATION_HOLDERS, "runner.apps.hold_for_confirmation")
        hooks.provide(hooks.CONFIRMATION_NOTES, "runner.apps.confirmation_notes")
        # Story and run-diff pages offer "settings or code?" and show its split.
        hooks.provide(hooks.SETTINGS_SPLITS, "runner.apps.settings_split_for")
        # A worker's heartbeats start when it is ready: connected by runner.tasks, which every worker imports before
        # it is (Celery's signals, with Celery's core, are not for every process's start).
