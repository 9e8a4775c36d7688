"""Logging in and out, and the page where users manage their API tokens (namespace ``account``)."""

from __future__ import annotations

from django.contrib.auth import views as auth_views
from django.urls import path

from accounts import views

app_name = "account"

urlpatterns = [
    path("login/", auth_views.LoginView.as_view(template_name="accounts/login.html"), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("tokens/", views.token_list, name="tokens"),
    path("tokens/<int:pk>/revoke/", views.token_revoke, name="token_revoke"),
]
