"""What /metrics reads of regressions when scraped: alert deliveries per state (benchdash.metrics)."""

from __future__ import annotations

from collections.abc import Iterable

from django.db.models import Count
from prometheus_client.core import Metric

from benchdash.metrics import gauge
from regressions.models import Delivery


def deliveries_by_state() -> Iterable[Metric]:
    counts = dict.fromkeys(Delivery.State.values, 0)
    counts.update(dict(Delivery.objects.values_list("state").annotate(n=Count("pk")).values_list("state", "n")))
    return [gauge("benchdash_alert_deliveries", "Regression alert deliveries by state", "state", counts)]
