"""``manage.py export_openapi_schema``: django-ninja's command, under the app that stands for ninja's."""

from __future__ import annotations

from ninja.management.commands.export_openapi_schema import Command as Command
