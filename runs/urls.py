from __future__ import annotations

from django.urls import path

from runs import views

app_name = "runs"

urlpatterns = [
    path("runs/", views.run_list, name="run_list"),
    path("runs/<int:pk>/", views.run_detail, name="run"),
    path("upload/", views.upload, name="upload"),
    path("bundles/", views.bundle_list, name="bundle_list"),
    path("bundles/<int:pk>/", views.bundle_detail, name="bundle"),
    path("bundles/<int:pk>/attach/", views.bundle_attach, name="bundle_attach"),
]
