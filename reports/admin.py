from __future__ import annotations

from django.contrib import admin

from reports.models import Bug, GroupSetDefinition, Regression, Report, TriageEvent


@admin.register(GroupSetDefinition)
class GroupSetDefinitionAdmin(admin.ModelAdmin):
    list_display = ["name", "created_by", "created_at"]


@admin.register(Report)
class ReportAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "base_run", "group_set", "red", "green"]
    prepopulated_fields = {"slug": ["name"]}
    raw_id_fields = ["base_run"]
    filter_horizontal = ["runs"]


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
