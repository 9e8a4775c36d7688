"""The moved models' content types change app label, so the permissions on them (and every group or user
holding one, and admin log entries) follow the models instead of being left behind under ``reports``."""

from django.db import migrations

MODELS = ("bug", "regression", "triageevent")


def _move(apps, source: str, target: str) -> None:
    ContentType = apps.get_model("contenttypes", "ContentType")
    Permission = apps.get_model("auth", "Permission")
    Group = apps.get_model("auth", "Group")
    for model in MODELS:
        old = ContentType.objects.filter(app_label=source, model=model).first()
        if old is None:
            continue
        new = ContentType.objects.filter(app_label=target, model=model).first()
        if new is None:
            old.app_label = target
            old.save(update_fields=["app_label"])
            continue
        # Both exist (the permissions were created under the new label already): hand the grants over.
        for permission in Permission.objects.filter(content_type=old):
            moved, _ = Permission.objects.get_or_create(
                content_type=new, codename=permission.codename, defaults={"name": permission.name}
            )
            for group in Group.objects.filter(permissions=permission):
                group.permissions.add(moved)
            through = permission.user_set.through
            for row in through.objects.filter(permission=permission):
                through.objects.get_or_create(user_id=row.user_id, permission=moved)
        old.delete()
    from django.contrib.contenttypes.models import ContentType as LiveContentType

    LiveContentType.objects.clear_cache()


def forwards(apps, schema_editor):
    _move(apps, "reports", "regressions")


def backwards(apps, schema_editor):
    _move(apps, "regressions", "reports")


class Migration(migrations.Migration):
    dependencies = [
        ("regressions", "0001_regressions_from_reports"),
        ("reports", "0005_regressions_moved_out"),
        ("contenttypes", "0002_remove_content_type_name"),
        ("auth", "0012_alter_user_first_name_max_length"),
    ]

    operations = [migrations.RunPython(forwards, backwards)]
