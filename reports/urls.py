from __future__ import annotations

from django.urls import path

from reports import views
from reports.regression_views import regression_bulk, regression_detail, regression_list

app_name = "reports"

urlpatterns = [
    path("", views.home, name="home"),
    path("healthz", views.healthz, name="healthz"),
    path("search/", views.search, name="search"),
    path("compare/", views.compare, name="compare"),
    path("compare/export", views.compare_export, name="compare_export"),
    path("compare/heatmap", views.compare_heatmap, name="heatmap"),
    path("microbenchmarks/<int:microbenchmark_id>/", views.drilldown, name="drilldown"),
    path("reports/", views.report_list, name="report_list"),
    path("reports/save", views.save_report, name="save_report"),
    path("reports/<slug:slug>/", views.report_detail, name="report"),
]

urlpatterns += [
    path("regressions/", regression_list, name="regression_list"),
    path("regressions/bulk", regression_bulk, name="regression_bulk"),
    path("regressions/<int:pk>/", regression_detail, name="regression"),
]

# What changed between two runs, and server records. Imported here so the block is appended whole to a shared file.
from reports import diff_views  # noqa: E402

urlpatterns += [
    path("diff/", diff_views.run_diff, name="run_diff"),
    path("servers/<int:pk>/", diff_views.server_detail, name="server"),
]

# Insert Benchmark: steps, SLA, per-second rates. Imported here so the block is appended whole to a shared file.
from reports import ibench_views  # noqa: E402

urlpatterns += [
    path("ibench/", ibench_views.ibench_page, name="ibench"),
]
