"""The API token's content type moves from the runs app to this one, keeping its id.

Its permissions, the groups and users they were granted to (the admin role) and the admin's history
all point at that id, so they follow the model. Renaming the row must happen before ``post_migrate``
would create a second, empty content type for ``accounts.apitoken``; should one exist anyway, the
grants of the old one's permissions are carried over to it and the old one is removed.
"""

from django.conf import settings
from django.db import migrations

MODEL = "apitoken"


def _move(apps, source, target):
    ContentType = apps.get_model("contenttypes", "ContentType")
    Permission = apps.get_model("auth", "Permission")
    Group = apps.get_model("auth", "Group")
    User = apps.get_model(settings.AUTH_USER_MODEL)

    old = ContentType.objects.filter(app_label=source, model=MODEL).first()
    if old is None:
        return
    new = ContentType.objects.filter(app_label=target, model=MODEL).first()
    if new is None:
        old.app_label = target
        old.save(update_fields=["app_label"])
        return
    for permission in Permission.objects.filter(content_type=old):
        twin = Permission.objects.filter(content_type=new, codename=permission.codename).first()
        if twin is None:
            permission.content_type = new
            permission.save(update_fields=["content_type"])
            continue
        for group in Group.objects.filter(permissions=permission):
            group.permissions.add(twin)
        for user in User.objects.filter(user_permissions=permission):
            user.user_permissions.add(twin)
    old.delete()


def forwards(apps, schema_editor):
    _move(apps, "runs", "accounts")


def backwards(apps, schema_editor):
    _move(apps, "accounts", "runs")


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0001_initial"),
        ("contenttypes", "0002_remove_content_type_name"),
        ("auth", "0012_alter_user_first_name_max_length"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [migrations.RunPython(forwards, backwards)]
