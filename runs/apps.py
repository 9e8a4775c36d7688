from __future__ import annotations

from django.apps import AppConfig


class RunsConfig(AppConfig):
    name = "runs"
    verbose_name = "Runs and results"

    def ready(self) -> None:
        from benchdash import metric_sources
        from runs import signals  # noqa: F401  (connects the receivers)

        metric_sources.register("runs.metrics.bundles_by_status")
