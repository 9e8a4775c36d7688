from __future__ import annotations

import json
from typing import Any

from django.contrib import admin
from django.contrib.auth.decorators import login_not_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.templatetags.static import static
from django.urls import include, path, re_path
from django.utils.functional import lazy
from django.views.generic import RedirectView
from ninja import NinjaAPI
from ninja.openapi.docs import Swagger, _csrf_needed

from accounts.permissions import API_READ_AUTH, api_docs_access
from benchdash import api_errors, views
from benchdash.metrics import metrics_view
from regressions.api import regressions_router
from regressions.verdict_api import router as verdict_router
from reports.api import router as compare_router
from runs.api import router as bundles_router


class LocalSwagger(Swagger):
    """ninja's Swagger page rendered with its template through Django, so Swagger UI comes from our static files:
    ninja falls back to a CDN when its own app is not installed (ours is benchdash.apidocs, see there)."""

    def render_page(self, request: HttpRequest, api: NinjaAPI, **kwargs: Any) -> HttpResponse:
        self.settings["url"] = self.get_openapi_url(api, kwargs)
        context = {
            "swagger_settings": json.dumps(self.settings, indent=1),
            "api": api,
            "add_csrf": _csrf_needed(api),
        }
        return render(request, self.template, context)


# Every app's ModelAdmins (the admin app does not import them when Django starts: benchdash.adminsite).
admin.autodiscover()

# Reads are open while browsing is public; every write endpoint names the role it needs (accounts.permissions).
api = NinjaAPI(
    title="benchdash API",
    version="1",
    urls_namespace="api",
    docs=LocalSwagger(),
    auth=API_READ_AUTH,
    docs_decorator=api_docs_access,
    parser=api_errors.OneValueEach(),
    description=(
        "Reads need no credentials while the site's browsing is public (BENCHDASH_PUBLIC_BROWSING), else a token "
        "or a session. Writes need a role: send `Authorization: Bearer <token>` (create one at /account/tokens/) "
        "or use a logged-in session with its CSRF token."
    ),
)
api.add_router("/", bundles_router)
api.add_router("/", compare_router)
api.add_router("/", regressions_router)
api.add_router("/", verdict_router)
api_errors.install(api)

api_patterns, api_app, api_namespace = api.urls
# JSON under /api/ for every answer: 405 from ninja, 403 from a CSRF check, and 404 for a path no operation
# has (a catch-all, so DEBUG's HTML 404 page never answers there either).
api_urls = (
    [*api_errors.json_error_bodies(api_patterns), re_path(r"^", api_errors.api_not_found, name="not_found")],
    api_app,
    api_namespace,
)

urlpatterns = [
    path("healthz", views.healthz, name="healthz"),
    path("metrics", metrics_view, name="metrics"),
    # Browsers and feed readers ask for /favicon.ico whatever the page says: the icon, not a 404.
    path(
        "favicon.ico",
        login_not_required(RedirectView.as_view(url=lazy(static, str)("favicon.svg"), permanent=True)),
        name="favicon",
    ),
    path("admin/", admin.site.urls),
    path("api/", api_urls),
    path("account/", include("accounts.urls")),
    path("", include("runs.urls")),
    path("", include("reports.urls")),
    path("", include("regressions.urls")),
    path("", include("runner.urls")),
]

handler404 = api_errors.handler404
handler500 = api_errors.handler500
