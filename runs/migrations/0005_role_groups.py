"""The four roles as Django groups with their permissions (see accounts.permissions for what each may do).

The table is written out here, not imported, so this migration keeps meaning what
it meant when it ran; accounts/tests/test_permissions.py checks it against accounts.permissions.
"""

from django.contrib.auth.management import create_permissions
from django.db import migrations

READ_MODELS = {
    "runs": [
        "dbms",
        "version",
        "build",
        "config",
        "server",
        "workload",
        "bundle",
        "run",
        "microbenchmark",
        "result",
        "runfile",
    ],
    "reports": ["groupsetdefinition", "report", "bug", "regression", "triageevent"],
}
VIEW = [f"{app}.view_{model}" for app, models in READ_MODELS.items() for model in models]

ROLES = {
    "viewer": VIEW,
    "uploader": [
        *VIEW,
        "runs.add_bundle",
        "runner.view_target",
        "runner.view_benchmarkrun",
        "runner.add_benchmarkrun",
        "runner.change_benchmarkrun",
    ],
    "triager": [
        *VIEW,
        "reports.add_regression",
        "reports.change_regression",
        "reports.add_bug",
        "reports.change_bug",
        "reports.add_triageevent",
    ],
}
# admin: every permission of the three apps as they are now.
ADMIN_APPS = ("runs", "reports", "runner")


def create_role_groups(apps, schema_editor):
    # Permissions are normally created after the whole migrate run; the groups need them now.
    for app_config in apps.get_app_configs():
        app_config.models_module = True
        create_permissions(app_config, apps=apps, verbosity=0, using=schema_editor.connection.alias)
        app_config.models_module = None

    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    for name, wanted in ROLES.items():
        group, _ = Group.objects.get_or_create(name=name)
        found = []
        for full in wanted:
            app_label, codename = full.split(".")
            found.append(Permission.objects.get(content_type__app_label=app_label, codename=codename))
        group.permissions.add(*found)
    admin, _ = Group.objects.get_or_create(name="admin")
    admin.permissions.add(*Permission.objects.filter(content_type__app_label__in=ADMIN_APPS))


def remove_role_groups(apps, schema_editor):
    apps.get_model("auth", "Group").objects.filter(name__in=[*ROLES, "admin"]).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("runs", "0004_api_tokens"),
        ("reports", "0003_group_set_rules_in_order"),
        ("runner", "0002_encrypt_target_password"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [migrations.RunPython(create_role_groups, remove_role_groups)]
