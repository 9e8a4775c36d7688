"""Runs imported before benchdash recorded the scan formula (0011) say so, or get it when their results decide it.

A run directory's scan formula is the one its own sb.r.qps.scan used, which only the run's archive holds: no
row in the database says it. What the rows do say, for a sysbench run imported from its directory before
0011 was applied:

- no measured scan result: nothing to report, so "" as an import today gives it;
- every measured scan result at one client: "spec", since at one client tps × table size / 1000 and the spec's
  (table size / 1000) / average latency are the same number;
- a scan result at several clients: not decidable here, so "unknown", which the run's page says, until
  ``manage.py fill_scan_formula`` reads its archive again (minutes per bundle: no work for a migration).

Runs imported after 0011 keep what their import decided. A database that had no runs then has nothing to do.
"""

from django.db import migrations
from django.db.migrations.recorder import MigrationRecorder


def decide_or_mark_unknown(apps, schema_editor):
    Run = apps.get_model("runs", "Run")
    Result = apps.get_model("runs", "Result")
    recorded = (
        MigrationRecorder(schema_editor.connection)
        .migration_qs.filter(app="runs", name="0011_run_scan_formula")
        .values_list("applied", flat=True)
        .first()
    )
    if recorded is None:
        return
    before = Run.objects.filter(
        created_at__lt=recorded, scan_formula="", from_summary=False, workload__suite="sysbench"
    )
    scans = Result.objects.filter(
        run__in=before, microbenchmark__suite="sysbench", microbenchmark__is_warmup=False
    ).filter(microbenchmark__test__regex=r"^scan(\.|$)")
    several_clients = scans.filter(dop__gt=1).values("run_id")
    before.filter(pk__in=several_clients).update(scan_formula="unknown")
    before.filter(pk__in=scans.values("run_id")).exclude(pk__in=several_clients).update(scan_formula="spec")


def forget(apps, schema_editor):
    apps.get_model("runs", "Run").objects.filter(scan_formula="unknown").update(scan_formula="")


class Migration(migrations.Migration):
    dependencies = [
        ("runs", "0014_run_summary_sources"),
    ]

    operations = [
        migrations.RunPython(decide_or_mark_unknown, forget),
    ]
