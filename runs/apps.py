from __future__ import annotations

from django.apps import AppConfig


class RunsConfig(AppConfig):
    name = "runs"
    verbose_name = "Runs and results"

    def ready(self) -> None:
        from benchdash import hooks
        from runs import signals  # noqa: F401  (connects the receivers)

        # /metrics reads the bundles per status when scraped.
        hooks.provide(hooks.METRIC_SOURCES, "runs.metrics.bundles_by_status")
