"""The API docs page's files: Swagger UI from our own static files, not from a CDN, without django-ninja's app.

django-ninja renders its docs with its own template and static files when ``"ninja"`` is an installed app, and
from a CDN otherwise. Installing its app imports the ``ninja`` package (with pydantic) in every process that
starts Django, a command's ``--help`` too; only the URL configuration needs it. So the app installed is this
one: ninja's folder under the label ``ninja`` (its ``static/ninja/`` and ``templates/ninja/``, found by the
static-files finders and the template loaders as any app's), imported without importing ninja; and the API's
docs render ninja's template through Django (``benchdash.urls.LocalSwagger``). Django finds an app's commands
in its folder and imports them from its package: ninja's command is this package's too (``management/``).
"""

from __future__ import annotations

import importlib.util

from django.apps import AppConfig


def _ninja_folder() -> str:
    spec = importlib.util.find_spec("ninja")  # finds the package without importing it
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("django-ninja is not installed")
    return str(next(iter(spec.submodule_search_locations)))


class NinjaFilesConfig(AppConfig):
    name = "benchdash.apidocs"
    label = "ninja"
    verbose_name = "API docs (django-ninja's files)"
    path = _ninja_folder()
