from __future__ import annotations

from django.apps import AppConfig


class RunsConfig(AppConfig):
    name = "runs"
    verbose_name = "Runs and results"

    def ready(self) -> None:
        from benchdash import metrics
        from runs import signals  # noqa: F401  (connects the receivers)
        from runs.metrics import bundles_by_status

        metrics.register(bundles_by_status)
