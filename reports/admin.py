from __future__ import annotations

from django.contrib import admin

from reports.models import GroupSetDefinition, Report


@admin.register(GroupSetDefinition)
class GroupSetDefinitionAdmin(admin.ModelAdmin):
    list_display = ["name", "created_by", "created_at"]


@admin.register(Report)
class ReportAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "base_run", "group_set", "red", "green"]
    prepopulated_fields = {"slug": ["name"]}
    raw_id_fields = ["base_run"]
    filter_horizontal = ["runs"]
