"""scan.warm is a measured scan, not a warm-up (SPEC §2, corrected): microbenchmarks stored before say so."""

from __future__ import annotations

from typing import Any

from django.db import migrations


def measured(apps: Any, schema_editor: Any) -> None:
    Microbenchmark = apps.get_model("runs", "Microbenchmark")
    Microbenchmark.objects.filter(test="scan.warm", is_warmup=True).update(is_warmup=False)


def warm_up(apps: Any, schema_editor: Any) -> None:
    Microbenchmark = apps.get_model("runs", "Microbenchmark")
    Microbenchmark.objects.filter(test="scan.warm", suite__in=("sysbench", "sysbench-summary")).update(is_warmup=True)


class Migration(migrations.Migration):
    dependencies = [("runs", "0017_run_commit_and_series_derived")]
    operations = [migrations.RunPython(measured, warm_up)]
