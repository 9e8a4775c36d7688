from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from runner.forms import TargetForm
from runner.models import BenchmarkHost, BenchmarkRun, Schedule, Target


@admin.register(Target)
class TargetAdmin(admin.ModelAdmin):
    # The site's form: the password is write-only there too, and never listed.
    form = TargetForm
    list_display = ["name", "kind", "host", "port", "database", "build_label", "config_label", "server_name"]
    list_filter = ["kind"]
    search_fields = ["name", "host", "server_name", "build_label"]

    def get_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        # The form's own fields (write-only password); "remove the password" only when there is one to remove.
        return [name for name in TargetForm.base_fields if obj is not None or name != "clear_password"]

    def save_model(self, request: HttpRequest, obj: Target, form: Any, change: bool) -> None:
        if not change and obj.created_by_id is None:
            obj.created_by_id = request.user.pk
        super().save_model(request, obj, form, change)


@admin.register(BenchmarkHost)
class BenchmarkHostAdmin(admin.ModelAdmin):
    list_display = ["name", "cpus", "ram_gb", "cpu_model", "kernel", "registered_at", "last_heartbeat_at", "worker"]
    search_fields = ["name", "cpu_model"]
    filter_horizontal = ["targets"]
    readonly_fields = ["registered_at", "last_heartbeat_at", "worker"]


@admin.register(BenchmarkRun)
class BenchmarkRunAdmin(admin.ModelAdmin):
    list_display = ["id", "target", "host", "state", "schedule", "requested_by", "created_at", "finished_at"]
    list_filter = ["state", "target", "host"]
    list_select_related = ["target", "host", "schedule", "requested_by"]
    raw_id_fields = ["base_run", "bundle", "requeued_as"]
    readonly_fields = ["progress", "red_flags", "celery_task_id", "worker", "started_at", "finished_at", "error"]


@admin.register(Schedule)
class ScheduleAdmin(admin.ModelAdmin):
    list_display = ["name", "target", "hour", "minute", "enabled", "base_run"]
    list_filter = ["enabled", "target"]
    list_select_related = ["target", "base_run"]
    raw_id_fields = ["base_run"]
    readonly_fields = ["periodic_task"]

    def save_model(self, request: HttpRequest, obj: Schedule, form: Any, change: bool) -> None:
        super().save_model(request, obj, form, change)
        obj.sync_periodic_task()

    def delete_model(self, request: HttpRequest, obj: Schedule) -> None:
        obj.delete()  # also removes its beat entry
