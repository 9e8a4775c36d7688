from __future__ import annotations

import json
from typing import Any

from django.db import migrations, models


def bind_stored_passwords(apps: Any, schema_editor: Any) -> None:
    # Passwords stored before binding existed were entered for the target as it is now.
    Target = apps.get_model("runner", "Target")
    for target in Target.objects.exclude(password="").exclude(password__isnull=True):
        key = json.dumps([target.host.strip().lower().rstrip("."), int(target.port), target.user, target.database])
        Target.objects.filter(pk=target.pk).update(password_bound_to=key)


class Migration(migrations.Migration):
    dependencies = [
        ("runner", "0002_encrypt_target_password"),
    ]

    operations = [
        migrations.AddField(
            model_name="target",
            name="password_bound_to",
            field=models.CharField(blank=True, editable=False, max_length=1000),
        ),
        migrations.RunPython(bind_stored_passwords, migrations.RunPython.noop),
    ]
