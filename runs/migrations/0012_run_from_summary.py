from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("runs", "0011_run_scan_formula"),
    ]

    operations = [
        migrations.AddField(
            model_name="run",
            name="from_summary",
            field=models.BooleanField(default=False),
        ),
    ]
