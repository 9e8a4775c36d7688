from __future__ import annotations

from django.urls import path

from reports import views

app_name = "reports"

urlpatterns = [
    path("", views.home, name="home"),
    path("healthz", views.healthz, name="healthz"),
    path("compare/", views.compare, name="compare"),
    path("compare/export", views.compare_export, name="compare_export"),
    path("reports/", views.report_list, name="report_list"),
    path("reports/save", views.save_report, name="save_report"),
    path("reports/<slug:slug>/", views.report_detail, name="report"),
]
