"""A schedule finds its beat entry by name ("benchdash schedule <id>") instead of a link to django_celery_beat's table.

Every entry a schedule linked to was created with that name; one renamed since (in the admin) gets it back first,
so that no schedule loses its entry (and no second entry would be made for it on its next change).
"""

from django.db import migrations


def name_linked_entries(apps, schema_editor):
    Schedule = apps.get_model("runner", "Schedule")
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    for schedule_id, task_id in Schedule.objects.filter(periodic_task__isnull=False).values_list("pk", "periodic_task"):
        name = f"benchdash schedule {schedule_id}"
        if not PeriodicTask.objects.filter(name=name).exists():
            PeriodicTask.objects.filter(pk=task_id).update(name=name)


def link_named_entries(apps, schema_editor):
    Schedule = apps.get_model("runner", "Schedule")
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    for schedule in Schedule.objects.all():
        schedule.periodic_task = PeriodicTask.objects.filter(name=f"benchdash schedule {schedule.pk}").first()
        schedule.save(update_fields=["periodic_task"])


class Migration(migrations.Migration):

    dependencies = [
        ('django_celery_beat', '0019_alter_periodictasks_options'),
        ('runner', '0007_settings_experiments'),
    ]

    operations = [
        migrations.RunPython(name_linked_entries, link_named_entries),
        migrations.RemoveField(
            model_name='schedule',
            name='periodic_task',
        ),
    ]
