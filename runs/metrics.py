"""What /metrics reads of runs when scraped: bundles per import status (benchdash.metrics)."""

from __future__ import annotations

from collections.abc import Iterable

from django.db.models import Count
from prometheus_client.core import Metric

from benchdash.metrics import gauge
from runs.models import Bundle


def bundles_by_status() -> Iterable[Metric]:
    counts = dict.fromkeys(Bundle.Status.values, 0)
    counts.update(dict(Bundle.objects.values_list("status").annotate(n=Count("pk")).values_list("status", "n")))
    return [gauge("benchdash_bundles", "Uploaded bundles by import status", "status", counts)]
