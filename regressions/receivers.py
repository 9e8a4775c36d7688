"""Detection follows the series: when reports has refreshed a series, its regression stories are told again."""

from __future__ import annotations

from typing import Any

from django.dispatch import receiver

from regressions.detection import detect_regressions
from reports.series import series_refreshed


@receiver(series_refreshed, dispatch_uid="regressions.detect_after_refresh")
def detect_after_refresh(sender: Any, server_id: int, workload_id: int, **kwargs: Any) -> None:
    detect_regressions(server_id, workload_id)
