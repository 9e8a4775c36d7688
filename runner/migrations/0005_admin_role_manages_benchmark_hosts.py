"""The admin role registers and edits benchmark hosts in the Django admin (hosts have no form page of their own).

Written out here rather than imported, so the migration keeps meaning what it meant when it ran.
"""

from django.contrib.auth.management import create_permissions
from django.db import migrations

GRANTED = [f"{action}_benchmarkhost" for action in ("view", "add", "change", "delete")]


def grant(apps, schema_editor):
    # Permissions are normally created after the whole migrate run; the group needs them now.
    app_config = apps.get_app_config("runner")
    app_config.models_module = True
    create_permissions(app_config, apps=apps, verbosity=0, using=schema_editor.connection.alias)
    app_config.models_module = None

    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    group, _ = Group.objects.get_or_create(name="admin")
    group.permissions.add(*Permission.objects.filter(content_type__app_label="runner", codename__in=GRANTED))


def revoke(apps, schema_editor):
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    group = Group.objects.filter(name="admin").first()
    if group is not None:
        group.permissions.remove(
            *Permission.objects.filter(content_type__app_label="runner", codename__in=GRANTED)
        )


class Migration(migrations.Migration):
    dependencies = [
        ("runner", "0004_benchmark_hosts_and_confirmations"),
        ("auth", "0012_alter_user_first_name_max_length"),
    ]

    operations = [migrations.RunPython(grant, revoke)]
