from __future__ import annotations

from django.urls import path

from reports import diff_views, hw_views, ibench_views, scaleup_views, timeline_views, views, writeup_views

app_name = "reports"

urlpatterns = [
    path("", views.home, name="home"),
    path("search/", views.search, name="search"),
    # A comparison and the pages that look at it another way.
    path("compare/", views.compare, name="compare"),
    path("compare/export", views.compare_export, name="compare_export"),
    path("compare/writeup", writeup_views.compare_writeup, name="compare_writeup"),
    path("compare/heatmap", views.compare_heatmap, name="heatmap"),
    path("compare/table", views.compare_relative_table, name="relative_table"),
    path("compare/hw", hw_views.compare_hw, name="hw"),
    path("compare/scaleup", scaleup_views.scaleup_page, name="scaleup"),
    path("compare/timeline", timeline_views.group_timeline, name="group_timeline"),
    path("microbenchmarks/<int:microbenchmark_id>/", views.drilldown, name="drilldown"),
    path("microbenchmarks/<int:microbenchmark_id>/details", views.drilldown_details, name="drilldown_details"),
    path("microbenchmarks/<int:microbenchmark_id>/timeline", timeline_views.microbenchmark_timeline, name="timeline"),
    # Saved comparisons.
    path("reports/", views.report_list, name="report_list"),
    path("reports/save", views.save_report, name="save_report"),
    path("reports/<slug:slug>/", views.report_detail, name="report"),
    # What changed between two runs, and server records.
    path("diff/", diff_views.run_diff, name="run_diff"),
    path("servers/<int:pk>/", diff_views.server_detail, name="server"),
    # Insert Benchmark: steps, SLA, per-second rates.
    path("ibench/", ibench_views.ibench_page, name="ibench"),
]
