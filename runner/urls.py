from __future__ import annotations

from django.urls import path

from runner import views

app_name = "runner"

urlpatterns = [
    path("targets/", views.target_list, name="target_list"),
    path("targets/new/", views.target_create, name="target_create"),
    path("targets/propose-build/", views.target_propose_build, name="target_propose_build"),
    path("targets/<int:pk>/edit/", views.target_edit, name="target_edit"),
    path("targets/<int:pk>/run/", views.benchmark_start, name="benchmark_start"),
    path("benchmarks/", views.benchmark_list, name="benchmark_list"),
    path("benchmarks/<int:pk>/", views.benchmark_detail, name="benchmark"),
    path("benchmarks/<int:pk>/cancel/", views.benchmark_cancel, name="benchmark_cancel"),
    path("benchmarks/<int:pk>/output.tar.gz", views.benchmark_output, name="benchmark_output"),
    path("benchmarks/settings-experiments/", views.settings_experiment_start, name="settings_experiment_start"),
    path("benchmarks/hosts/", views.host_list, name="host_list"),
    path("benchmarks/hosts/<int:pk>/", views.host_detail, name="host"),
    path("benchmarks/schedules/", views.schedule_list, name="schedule_list"),
    path("benchmarks/schedules/new/", views.schedule_create, name="schedule_create"),
    path("benchmarks/schedules/<int:pk>/toggle/", views.schedule_toggle, name="schedule_toggle"),
]
