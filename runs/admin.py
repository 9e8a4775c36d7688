from __future__ import annotations

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from runs.models import (
    Build,
    Bundle,
    Config,
    Dbms,
    Microbenchmark,
    Result,
    Run,
    RunFile,
    Server,
    Version,
    Workload,
)
from runs.signals import results_deleted


@admin.register(Dbms)
class DbmsAdmin(admin.ModelAdmin):
    search_fields = ["name"]


@admin.register(Version)
class VersionAdmin(admin.ModelAdmin):
    list_display = ["dbms", "text", "sort_key"]
    list_filter = ["dbms"]
    search_fields = ["text"]


@admin.register(Build)
class BuildAdmin(admin.ModelAdmin):
    list_display = ["name", "version", "flavour"]
    list_filter = ["version__dbms"]
    search_fields = ["name", "flavour"]
    list_select_related = ["version__dbms"]


@admin.register(Config)
class ConfigAdmin(admin.ModelAdmin):
    list_display = ["name", "text_sha256"]
    search_fields = ["name", "text"]


@admin.register(Server)
class ServerAdmin(admin.ModelAdmin):
    list_display = ["name", "cpus", "ram_gb", "storage", "os", "governor"]
    search_fields = ["name"]


@admin.register(Workload)
class WorkloadAdmin(admin.ModelAdmin):
    list_display = ["name", "suite"]
    list_filter = ["suite"]


class RunInline(admin.TabularInline):
    model = Run
    fields = ["name", "build", "server", "workload", "status"]
    readonly_fields = ["name", "build", "server", "workload", "status"]
    extra = 0
    show_change_link = True
    can_delete = False


@admin.register(Bundle)
class BundleAdmin(admin.ModelAdmin):
    list_display = ["original_name", "status", "source", "size", "uploaded_by", "uploaded_at"]
    list_filter = ["status", "source"]
    search_fields = ["original_name", "sha256"]
    readonly_fields = ["sha256", "size", "uploaded_at", "imported_at", "stats"]
    inlines = [RunInline]


class RunFileInline(admin.StackedInline):
    model = RunFile
    extra = 0


@admin.register(Run)
class RunAdmin(admin.ModelAdmin):
    list_display = ["name", "build", "config", "server", "workload", "status", "started_at"]
    list_filter = ["server", "workload", "build__version__dbms", "status"]
    search_fields = ["name"]
    list_select_related = ["build", "config", "server", "workload"]
    raw_id_fields = ["bundle"]
    inlines = [RunFileInline]


@admin.register(Microbenchmark)
class MicrobenchmarkAdmin(admin.ModelAdmin):
    list_display = ["test", "range_size", "suite", "is_warmup"]
    list_filter = ["suite", "is_warmup"]
    search_fields = ["test"]


@admin.register(Result)
class ResultAdmin(admin.ModelAdmin):
    list_display = ["run", "microbenchmark", "dop", "qps", "cpu_o", "cs_o"]
    list_filter = ["run__server", "microbenchmark__test"]
    list_select_related = ["run", "microbenchmark"]
    raw_id_fields = ["run", "microbenchmark"]

    def delete_model(self, request: HttpRequest, obj: Result) -> None:
        run_id = obj.run_id
        super().delete_model(request, obj)
        results_deleted.send(sender=Result, run_ids=[run_id])

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Result]) -> None:
        run_ids = sorted(set(queryset.values_list("run_id", flat=True)))
        super().delete_queryset(request, queryset)
        results_deleted.send(sender=Result, run_ids=run_ids)
