"""``check_beat``, compose's beat health check: healthy only while the requeue schedule really runs."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.utils import timezone
from django_celery_beat.models import IntervalSchedule, PeriodicTask

from runs.management.commands.check_beat import SCHEDULE_NAME

pytestmark = pytest.mark.django_db


def _schedule(last_run_seconds_ago: float | None) -> PeriodicTask:
    every = IntervalSchedule.objects.create(every=60, period=IntervalSchedule.SECONDS)
    last = None if last_run_seconds_ago is None else timezone.now() - timedelta(seconds=last_run_seconds_ago)
    return PeriodicTask.objects.create(
        name=SCHEDULE_NAME, task="runs.tasks.requeue_bundles", interval=every, last_run_at=last
    )


def test_it_fails_before_beat_has_registered_the_schedule() -> None:
    with pytest.raises(CommandError, match="has not registered"):
        call_command("check_beat")


def test_it_fails_while_the_schedule_has_never_run() -> None:
    _schedule(None)
    with pytest.raises(CommandError, match="never run"):
        call_command("check_beat")


def test_it_fails_when_the_last_run_is_older_than_the_limit() -> None:
    _schedule(400)
    with pytest.raises(CommandError, match=r"last ran 'requeue-queued-bundles' 40\d s ago"):
        call_command("check_beat")
    call_command("check_beat", "--max-age", "600")


def test_it_passes_when_beat_ran_the_schedule_recently() -> None:
    _schedule(30)
    call_command("check_beat")
