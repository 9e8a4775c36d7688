"""The alerts page: who is told about new regression stories, and what could not be sent to them.

Triagers and admins manage subscriptions here (the triage permission); the page shows webhook URLs,
which often carry a secret token (Slack's do), so even reading it needs that permission.
"""

from __future__ import annotations

import functools
from typing import Any

from django import forms
from django.contrib import messages
from django.db import transaction
from django.db.models import Count, Prefetch, Q
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from accounts.permissions import TRIAGE, permission_required
from regressions import alerts
from regressions.models import Delivery, Subscription
from regressions.tasks import deliver_alert_task

# Failed and retrying deliveries shown per subscription: the newest, enough to see what goes wrong.
PROBLEMS_SHOWN = 20
UNSENT = (Delivery.State.FAILED, Delivery.State.RETRYING)


class SubscriptionForm(forms.ModelForm):
    class Meta:
        model = Subscription
        fields = ["name", "webhook_url", "webhook_format", "emails", "dbms", "server", "workload", "active"]
        widgets = {
            "webhook_url": forms.URLInput(attrs={"placeholder": "https://hooks.example.com/…"}),
            "emails": forms.Textarea(attrs={"rows": 2, "placeholder": "perf-team@example.com"}),
        }
        labels = {"dbms": "DBMS", "emails": "E-mail addresses", "webhook_url": "Webhook URL"}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for name in ("dbms", "server", "workload"):
            self.fields[name].empty_label = "any"  # type: ignore[attr-defined]

    def clean_webhook_url(self) -> str:
        return str(self.cleaned_data.get("webhook_url") or "").strip()


def _subscriptions() -> Any:
    problems = Delivery.objects.filter(state__in=UNSENT).select_related("story__microbenchmark", "story__arrived_in")
    return (
        Subscription.objects.select_related("dbms", "server", "workload")
        .annotate(
            sent=Count("deliveries", filter=Q(deliveries__state=Delivery.State.SENT)),
            failed=Count("deliveries", filter=Q(deliveries__state=Delivery.State.FAILED)),
            retrying=Count("deliveries", filter=Q(deliveries__state=Delivery.State.RETRYING)),
        )
        .prefetch_related(Prefetch("deliveries", queryset=problems, to_attr="problems"))
    )


@permission_required(TRIAGE)
def alert_list(request: HttpRequest) -> HttpResponse:
    form = SubscriptionForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        subscription = form.save(commit=False)
        subscription.created_by = request.user if request.user.is_authenticated else None
        subscription.save()
        messages.success(request, f"{subscription.name} will be told about new regression stories.")
        return redirect("regressions:alert_list")
    subscriptions = list(_subscriptions())
    for subscription in subscriptions:
        subscription.problems = subscription.problems[:PROBLEMS_SHOWN]  # type: ignore[attr-defined]
    return render(request, "regressions/alerts.html", {"form": form, "subscriptions": subscriptions})


@permission_required(TRIAGE)
def alert_edit(request: HttpRequest, pk: int) -> HttpResponse:
    subscription = get_object_or_404(Subscription, pk=pk)
    form = SubscriptionForm(request.POST or None, instance=subscription)
    if request.method == "POST" and form.is_valid():
        form.save()
        messages.success(request, f"Saved {subscription.name}.")
        return redirect("regressions:alert_list")
    return render(request, "regressions/alert_form.html", {"form": form, "subscription": subscription})


@permission_required(TRIAGE)
@require_POST
def alert_retry(request: HttpRequest, pk: int) -> HttpResponse:
    """Send a subscription's failed deliveries again, each with a fresh round of bounded attempts."""
    subscription = get_object_or_404(Subscription, pk=pk)
    with transaction.atomic():
        ids = alerts.retry_failed(subscription.pk)
        for delivery_id in ids:
            transaction.on_commit(functools.partial(deliver_alert_task.delay, delivery_id), robust=True)
    if ids:
        messages.success(
            request, f"Sending {len(ids)} failed alert{'s' if len(ids) != 1 else ''} to {subscription.name} again."
        )
    else:
        messages.info(request, f"{subscription.name} has no failed alerts.")
    return redirect("regressions:alert_list")
