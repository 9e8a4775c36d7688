from __future__ import annotations

from django.contrib import admin
from django.urls import include, path
from ninja import NinjaAPI

from reports.api import router as compare_router
from reports.regressions_api import regressions_router
from runs.api import router as bundles_router

api = NinjaAPI(title="benchdash API", version="1", urls_namespace="api")
api.add_router("/", bundles_router)
api.add_router("/", compare_router)
api.add_router("/", regressions_router)

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/", api.urls),
    path("", include("runs.urls")),
    path("", include("reports.urls")),
    path("", include("runner.urls")),
]
