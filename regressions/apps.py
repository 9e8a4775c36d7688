from __future__ import annotations

from django.apps import AppConfig


class RegressionsConfig(AppConfig):
    name = "regressions"
    verbose_name = "Regressions and bugs"

    def ready(self) -> None:
        from regressions import receivers  # noqa: F401  (connects the receivers)
        from regressions.markers import MARKERS
        from regressions.search import find_bugs, open_records_note
        from regressions.writeup import open_stories
        from reports import markers, search, writeup

        # Comparison pages show the records of their series (markers on charts, tables and heatmaps).
        markers.register(MARKERS)
        # The header's search finds bugs first, and says how many records are open on each group it finds.
        search.register_section("bugs", "Bugs", find_bugs)
        search.register_group_note(open_records_note)
        # Write-ups list the series' open regression stories with their bugs.
        writeup.register_open_stories(open_stories)
        # /metrics reads the alert deliveries per state when scraped.
        from benchdash import metric_sources

        metric_sources.register("regressions.metrics.deliveries_by_state")
