from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.contrib.auth.admin import UserAdmin
from django.contrib.auth.models import User
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils import timezone

from runs.models import (
    ApiToken,
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
    readonly_fields = fields
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


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    """Admins see who holds which token and revoke a leaked one; the token itself is never stored or shown."""

    list_display = ["name", "user", "prefix", "created_at", "last_used_at", "revoked_at"]
    list_filter = ["revoked_at"]
    search_fields = ["name", "user__username", "prefix"]
    list_select_related = ["user"]
    readonly_fields = ["user", "prefix", "created_at", "last_used_at", "revoked_at"]
    actions = ["revoke"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # created by their owner on /account/tokens/, the only place the token can be shown

    @admin.action(description="Revoke the selected tokens")
    def revoke(self, request: HttpRequest, queryset: QuerySet[ApiToken]) -> None:
        queryset.filter(revoked_at__isnull=True).update(revoked_at=timezone.now())


# --------------------------------------------------------------------------- users, for the admin role


class RoleUserAdmin(UserAdmin):
    """Users as the admin role manages them: logins, staff status and roles (groups).

    Only a superuser makes superusers or grants single permissions: otherwise the admin role could raise
    itself (or anyone) above every check with one tick box.
    """

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        fields = tuple(super().get_readonly_fields(request, obj))
        if request.user.is_superuser:  # type: ignore[union-attr]
            return fields
        return (*fields, "is_superuser", "user_permissions")


admin.site.unregister(User)
admin.site.register(User, RoleUserAdmin)
