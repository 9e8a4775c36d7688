from __future__ import annotations

from django.contrib import admin

from regressions.models import Bug, Regression, TriageEvent


@admin.register(Bug)
class BugAdmin(admin.ModelAdmin):
    list_display = ["key", "tracker", "title", "status", "fixed_in"]
    list_filter = ["tracker", "status"]
    search_fields = ["key", "title"]


class TriageEventInline(admin.TabularInline):
    model = TriageEvent
    extra = 0
    readonly_fields = ["user", "at", "from_state", "to_state", "note"]
    can_delete = False


@admin.register(Regression)
class RegressionAdmin(admin.ModelAdmin):
    list_display = ["__str__", "server", "kind", "state", "arrived_in", "fixed_in"]
    list_filter = ["state", "kind", "server"]
    raw_id_fields = ["microbenchmark"]
    filter_horizontal = ["bugs"]
    inlines = [TriageEventInline]
