"""Request types shared by the apps' views."""

from __future__ import annotations

from django.http import HttpRequest
from django_htmx.middleware import HtmxDetails


class HtmxHttpRequest(HttpRequest):
    """A request as django-htmx's middleware leaves it (its documented typing pattern)."""

    htmx: HtmxDetails
