"""Request types shared by the apps' views."""

from __future__ import annotations

from django.http import HttpRequest
from django_htmx.middleware import HtmxDetails


class HtmxHttpRequest(HttpRequest):
    """A request as django-htmx's middleware leaves it (its documented typing pattern)."""

    htmx: HtmxDetails


# PostgreSQL's bigint: an id at or above it names no row, and the database would refuse to compare with it.
ROW_ID_LIMIT = 2**63


def row_id(text: str) -> int | None:
    """The row id a query string's value names: ASCII digits below ``ROW_ID_LIMIT``, else None (it names no row).

    ``str.isdigit`` alone also passes digits ``int`` refuses ("²") or reads as another number ("١"), and ids
    beyond any row: a view that read a run by such a value answered 500."""
    if text.isascii() and text.isdigit() and int(text) < ROW_ID_LIMIT:
        return int(text)
    return None
