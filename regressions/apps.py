from __future__ import annotations

from django.apps import AppConfig


class RegressionsConfig(AppConfig):
    name = "regressions"
    verbose_name = "Regressions and bugs"

    def ready(self) -> None:
        from benchdash import hooks
        from regressions import receivers  # noqa: F401  (connects the receivers)

        # What the regressions app lends to reports, by dotted path: its modules (the story code with them) load
        # when a page first asks, not in every process's start (benchdash.hooks).
        # Comparison pages show the records of their series (markers on charts, tables and heatmaps).
        hooks.provide(hooks.MARKERS, "regressions.markers.MARKERS")
        # The header's search finds bugs first, and says how many records are open on each group it finds.
        hooks.provide(hooks.SEARCH_SECTIONS, "regressions.search.BUGS_SECTION")
        hooks.provide(hooks.SEARCH_GROUP_NOTES, "regressions.search.open_records_note")
        # Write-ups list the series' open regression stories with their bugs.
        hooks.provide(hooks.OPEN_STORIES, "regressions.writeup.open_stories")
        # /metrics reads the alert deliveries per state when scraped.
        hooks.provide(hooks.METRIC_SOURCES, "regressions.metrics.deliveries_by_state")
