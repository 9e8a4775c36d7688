"""Bug, Regression and TriageEvent now belong to the regressions app; their tables stay as they are."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("reports", "0004_series_summaries"),
        ("regressions", "0001_regressions_from_reports"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[
                migrations.DeleteModel(name="TriageEvent"),
                migrations.DeleteModel(name="Regression"),
                migrations.DeleteModel(name="Bug"),
            ],
        ),
    ]
