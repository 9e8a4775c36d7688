"""A schedule's beat entry is found by its name; the migration that dropped the link keeps every schedule's entry."""

from __future__ import annotations

import pytest
from django.db import connection
from django_celery_beat.models import CrontabSchedule, PeriodicTask

from runner.models import Schedule, Target


@pytest.mark.django_db(transaction=True)
def test_the_migration_gives_a_linked_entry_renamed_since_its_schedules_name_back() -> None:
    from django.db.migrations.executor import MigrationExecutor

    before, after = ("runner", "0007_settings_experiments"), ("runner", "0008_schedule_beat_entry_by_name")
    executor = MigrationExecutor(connection)
    executor.migrate([before])
    try:
        old = executor.loader.project_state([before]).apps
        target = old.get_model("runner", "Target").objects.create(
            name="lab", kind="mariadb", host="db1", port=3306, user="u", database="d"
        )
        crontab = old.get_model("django_celery_beat", "CrontabSchedule").objects.create(minute="0", hour="2")
        old_task = old.get_model("django_celery_beat", "PeriodicTask").objects
        old_schedule = old.get_model("runner", "Schedule").objects
        kept, renamed, unlinked = (old_schedule.create(name=name, target=target) for name in ("a", "b", "c"))
        for schedule, name in ((kept, f"benchdash schedule {kept.pk}"), (renamed, "nightly lab (renamed by hand)")):
            schedule.periodic_task = old_task.create(name=name, task="runner.tasks.run_schedule", crontab=crontab)
            schedule.save()
        other = old_task.create(name="someone else's", task="runs.tasks.requeue_bundles", crontab=crontab)
        executor = MigrationExecutor(connection)
        executor.migrate([after])
    finally:
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())

    assert Schedule.objects.get(pk=kept.pk).periodic_task.pk == kept.periodic_task.pk  # type: ignore[union-attr]
    assert Schedule.objects.get(pk=renamed.pk).periodic_task.pk == renamed.periodic_task.pk  # type: ignore[union-attr]
    assert Schedule.objects.get(pk=unlinked.pk).periodic_task is None
    assert PeriodicTask.objects.get(pk=other.pk).name == "someone else's"


@pytest.mark.django_db
def test_a_schedule_keeps_one_entry_by_its_name_and_deleting_it_deletes_the_entry() -> None:
    target = Target.objects.create(name="lab", kind="mariadb", host="db1", port=3306, user="u", database="d")
    schedule = Schedule.objects.create(name="nightly", target=target, hour=3, minute=30)
    assert schedule.periodic_task is None
    schedule.sync_periodic_task()
    schedule.hour, schedule.enabled = 4, False
    schedule.save()
    schedule.sync_periodic_task()

    task = PeriodicTask.objects.get(task="runner.tasks.run_schedule")
    assert schedule.periodic_task == task and not task.enabled and task.args == f"[{schedule.pk}]"
    assert (task.crontab.hour, task.crontab.minute) == ("4", "30")
    assert CrontabSchedule.objects.filter(hour="3").exists()  # the old time's crontab may serve other entries

    schedule.delete()
    assert not PeriodicTask.objects.filter(pk=task.pk).exists()
