from __future__ import annotations

from typing import Any

from django.contrib import admin

from regressions.models import Bug, Delivery, Regression, Subscription, TriageEvent


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


class DeliveryInline(admin.TabularInline):
    model = Delivery
    extra = 0
    fields = readonly_fields = ("story", "state", "attempts", "last_error", "next_attempt_at", "sent_at")
    raw_id_fields = ["story"]
    can_delete = False
    show_change_link = True

    def has_add_permission(self, request: Any, obj: Any = None) -> bool:
        return False  # deliveries are made by the alerts, never by hand


@admin.register(Subscription)
class SubscriptionAdmin(admin.ModelAdmin):
    list_display = ["name", "webhook_url", "webhook_format", "emails", "dbms", "server", "workload", "active"]
    list_filter = ["active", "webhook_format", "dbms", "server"]
    search_fields = ["name", "webhook_url", "emails"]
    readonly_fields = ["created_by", "created_at"]
    inlines = [DeliveryInline]

    def save_model(self, request: Any, obj: Subscription, form: Any, change: bool) -> None:
        if not change and obj.created_by_id is None:
            obj.created_by = request.user
        super().save_model(request, obj, form, change)


@admin.register(Delivery)
class DeliveryAdmin(admin.ModelAdmin):
    list_display = ["story", "subscription", "state", "attempts", "last_error", "sent_at", "updated_at"]
    list_filter = ["state", "subscription"]
    raw_id_fields = ["story"]
    readonly_fields = [f.name for f in Delivery._meta.fields]

    def has_add_permission(self, request: Any) -> bool:
        return False
