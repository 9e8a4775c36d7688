"""Django's admin, its ModelAdmins discovered when they are needed rather than when Django starts.

Django's default admin app imports every app's ``admin`` module in its ready() (autodiscovery), with their forms,
widgets and the third-party apps' admins: a share of every process's start, a command's ``--help`` too. This app
is Django's SimpleAdminConfig (no autodiscovery at start); the admin modules are imported by the URL configuration
(``benchdash.urls`` calls ``admin.autodiscover()``, as Django documents for SimpleAdminConfig), and by the admin's
system check before it checks them, so ``manage.py check`` never checks an empty registry.
"""

from __future__ import annotations

from typing import Any

from django.contrib.admin import autodiscover
from django.contrib.admin.apps import SimpleAdminConfig
from django.contrib.admin.checks import check_admin_app, check_dependencies
from django.core import checks


def check_discovered_admins(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """Django's check of the registered ModelAdmins, once every app's admin module has registered its own."""
    autodiscover()
    found: list[checks.CheckMessage] = check_admin_app(app_configs, **kwargs)
    return found


class AdminConfig(SimpleAdminConfig):
    def ready(self) -> None:
        checks.register(check_dependencies, checks.Tags.admin)
        checks.register(check_discovered_admins, checks.Tags.admin)
