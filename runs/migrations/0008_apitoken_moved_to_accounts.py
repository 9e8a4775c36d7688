"""ApiToken now lives in the accounts app (accounts/0001): it leaves this app's migration state only.

Its table, ``runs_apitoken``, and its rows stay where they are; the accounts model names it in ``db_table``.
"""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("runs", "0007_role_permissions"),
        # The model exists in the accounts app's state before it leaves this one's.
        ("accounts", "0001_initial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.DeleteModel(name="ApiToken")],
            database_operations=[],
        ),
    ]
