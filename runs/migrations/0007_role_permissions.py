"""Roles get the permissions of the changes that had none: saving reports and editing server records;
the admin role can manage users and groups in the Django admin, and lift login lockouts.

Saving a report: uploader, triager (and admin). Editing a server record: uploader (and admin), who
knows the hardware the results came from. Managing users and groups is what putting people in roles
needs; a member of the admin group also needs staff status to open the admin.

The table is written out here, not imported, so this migration keeps meaning what it meant when it
ran; accounts/tests/test_permissions.py checks the result against accounts.permissions.
"""

from django.contrib.auth.management import create_permissions
from django.db import migrations

ADDED = {
    "uploader": ["reports.add_report", "runs.change_server"],
    "triager": ["reports.add_report"],
    "admin": [
        *(f"auth.{action}_{model}" for model in ("user", "group") for action in ("view", "add", "change", "delete")),
        # The login lockouts: seeing them, and deleting one to let its user in before the cool-off ends.
        "axes.view_accessattempt",
        "axes.delete_accessattempt",
        "axes.view_accesslog",
        "axes.view_accessfailurelog",
    ],
}
# Every permission of the benchdash apps too, as they are now (models added since the role migration).
ADMIN_APPS = ("runs", "reports", "runner")


def _permission(Permission, full):
    app_label, codename = full.split(".")
    return Permission.objects.get(content_type__app_label=app_label, codename=codename)


def grant(apps, schema_editor):
    # Permissions are normally created after the whole migrate run; the groups need them now.
    for app_config in apps.get_app_configs():
        app_config.models_module = True
        create_permissions(app_config, apps=apps, verbosity=0, using=schema_editor.connection.alias)
        app_config.models_module = None

    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    for name, wanted in ADDED.items():
        group, _ = Group.objects.get_or_create(name=name)
        group.permissions.add(*(_permission(Permission, full) for full in wanted))
    Group.objects.get(name="admin").permissions.add(
        *Permission.objects.filter(content_type__app_label__in=ADMIN_APPS)
    )


def revoke(apps, schema_editor):
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    for name, wanted in ADDED.items():
        group = Group.objects.filter(name=name).first()
        if group is not None:
            group.permissions.remove(*(_permission(Permission, full) for full in wanted))


class Migration(migrations.Migration):
    dependencies = [
        ("runs", "0006_bundle_claim_and_progress"),
        ("reports", "0004_series_summaries"),
        ("runner", "0002_encrypt_target_password"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("axes", "0010_accessattemptexpiration"),
    ]

    operations = [migrations.RunPython(grant, revoke)]
