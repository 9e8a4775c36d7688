"""ApiToken moves here from the runs app: in the migration state only, its table and rows stay as they are.

The table keeps its name (``runs_apitoken``, the model's ``db_table``); runs/0008 takes the model out of
the runs app's state once it exists here.
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        # After every runs migration that made or used the table and its permissions (the role groups).
        ("runs", "0007_role_permissions"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="ApiToken",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID"),
                        ),
                        (
                            "name",
                            models.CharField(help_text="What the token is for: a CI job, a laptop, …", max_length=100),
                        ),
                        (
                            "prefix",
                            models.CharField(help_text="The token's first characters, to recognise it", max_length=16),
                        ),
                        ("digest", models.CharField(editable=False, max_length=64, unique=True)),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        ("last_used_at", models.DateTimeField(blank=True, null=True)),
                        ("revoked_at", models.DateTimeField(blank=True, null=True)),
                        (
                            "user",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="api_tokens",
                                to=settings.AUTH_USER_MODEL,
                            ),
                        ),
                    ],
                    options={
                        "db_table": "runs_apitoken",
                        "ordering": ["-created_at", "-pk"],
                    },
                ),
            ],
            database_operations=[],
        ),
    ]
