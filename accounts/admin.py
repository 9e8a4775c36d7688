"""API tokens and users in the Django admin, as the admin role sees them."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.contrib.auth.admin import UserAdmin
from django.contrib.auth.models import User
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils import timezone

from accounts.models import ApiToken


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
