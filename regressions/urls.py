from __future__ import annotations

from django.urls import path

from regressions.alert_views import alert_edit, alert_list, alert_retry
from regressions.verdict_views import run_verdict_page
from regressions.views import regression_bulk, regression_detail, regression_list

app_name = "regressions"

urlpatterns = [
    path("regressions/", regression_list, name="regression_list"),
    path("regressions/bulk", regression_bulk, name="regression_bulk"),
    path("regressions/alerts/", alert_list, name="alert_list"),
    path("regressions/alerts/<int:pk>/", alert_edit, name="alert_edit"),
    path("regressions/alerts/<int:pk>/retry", alert_retry, name="alert_retry"),
    path("regressions/<int:pk>/", regression_detail, name="regression"),
    path("runs/<int:pk>/verdict/", run_verdict_page, name="run_verdict"),
]
