"""The site's own views: the health probe load balancers, compose and operators ask."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.http import require_safe

from benchdash import health


@require_safe
def healthz(request: HttpRequest) -> HttpResponse:
    """For load balancers, compose and operators: each of database, broker and cache, "ok" or why not;
    200 when all are up, 503 naming what is down."""
    checks = health.report()
    down = sorted(name for name, state in checks.items() if state != health.OK)
    body = {"status": "down" if down else "ok", "down": down, **checks}
    return JsonResponse(body, status=503 if down else 200, headers={"Cache-Control": "no-store"})
