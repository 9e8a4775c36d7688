from __future__ import annotations

from django.apps import AppConfig


class ReportsConfig(AppConfig):
    name = "reports"
    verbose_name = "Comparisons"

    def ready(self) -> None:
        from reports import signals  # noqa: F401  (connects the receivers)
