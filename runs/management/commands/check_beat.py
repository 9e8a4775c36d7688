"""``manage.py check_beat``: exit 1 unless celery beat has run the requeue schedule recently (compose's health check).

A live beat process is not enough: it can run without ever sending a task (an unreachable broker, a
database it cannot read its schedule from). The DatabaseScheduler records each entry's last run in
its table, so the row of ``requeue-queued-bundles`` (every 60 s) says whether beat really works.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone
from django_celery_beat.models import PeriodicTask

SCHEDULE_NAME = "requeue-queued-bundles"
# The scheduler writes last-run times to the database in batches, every 3 minutes by default; with the
# 60 s interval a healthy beat's row is at most about 4 minutes old.
DEFAULT_MAX_AGE = 300


class Command(BaseCommand):
    help = f"Exit 1 unless celery beat ran {SCHEDULE_NAME!r} within --max-age seconds."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--max-age", type=int, default=DEFAULT_MAX_AGE, help="seconds (default %(default)s)")

    def handle(self, *args: Any, **options: Any) -> None:
        task = PeriodicTask.objects.filter(name=SCHEDULE_NAME).first()
        if task is None:
            raise CommandError(f"beat has not registered {SCHEDULE_NAME!r} yet")
        if task.last_run_at is None:
            raise CommandError(f"beat has never run {SCHEDULE_NAME!r}")
        age = timezone.now() - task.last_run_at
        if age > timedelta(seconds=options["max_age"]):
            raise CommandError(f"beat last ran {SCHEDULE_NAME!r} {age.total_seconds():.0f} s ago")
        self.stdout.write(f"beat ran {SCHEDULE_NAME!r} {age.total_seconds():.0f} s ago")
