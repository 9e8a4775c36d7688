"""Dashboard pages: home (servers and workloads with their latest runs)."""

from __future__ import annotations

from django.db.models import Count, Max
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from runs.models import Run


def home(request: HttpRequest) -> HttpResponse:
    series = (
        Run.objects.values("server__id", "server__name", "workload__id", "workload__name", "build__version__dbms__name")
        .annotate(runs=Count("id"), latest=Max("created_at"))
        .order_by("server__name", "workload__name", "build__version__dbms__name")
    )
    return render(request, "reports/home.html", {"series": series})


def healthz(request: HttpRequest) -> HttpResponse:
    """Liveness for load balancers and compose: 200 when the database answers, 503 otherwise."""
    from django.db import DatabaseError, connection

    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except DatabaseError as exc:
        return HttpResponse(f"database unavailable: {exc.__class__.__name__}\n", status=503, content_type="text/plain")
    return HttpResponse("ok\n", content_type="text/plain")
