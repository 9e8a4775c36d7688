"""Errors of the HTTP API: always JSON, always documented.

Every answer under ``/api/`` is JSON, whichever layer produces it: django-ninja's
exception handlers (validation 422, 404, 401/403, an unexpected 500, a database
outage 503 with ``Retry-After``), 405 for a method a path does not have (with
``Allow``), and Django's own 404 and 500 for paths no operation matches. Each
operation's ``response=`` lists these codes with their body types through
:func:`responses`, so the OpenAPI schema says what a client can receive.
"""

from __future__ import annotations

import functools
import logging
import sys
from collections.abc import Callable
from http import HTTPStatus
from typing import Any

from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, HttpResponseBase, JsonResponse
from django.urls import URLPattern, URLResolver
from django.utils.datastructures import MultiValueDict
from django.views import defaults
from django.views.decorators.csrf import csrf_exempt
from ninja import NinjaAPI, Schema
from ninja.errors import HttpError
from ninja.parser import Parser

logger = logging.getLogger("benchdash.api")

API_PREFIX = "/api/"
# Long enough for a restarted database or a pool to come back, short enough that a script's retry is prompt.
RETRY_AFTER_SECONDS = 5
UNAVAILABLE = "the database is unavailable; retry after a few seconds"
INTERNAL = "internal error; it has been logged"
CSRF_REFUSED = (
    "forbidden: a session request needs its CSRF token (X-CSRFToken header); scripts send "
    "Authorization: Bearer <token> instead"
)


class ErrorOut(Schema):
    detail: str


class FieldErrorOut(Schema):
    type: str
    loc: list[str | int]
    msg: str


class ValidationErrorOut(Schema):
    """What django-ninja answers when the path, query or body does not fit the schema."""

    detail: list[FieldErrorOut]


# What any operation may answer besides its own codes: a NUL character in the request (benchdash.middleware),
# missing or insufficient credentials, input that does not fit the schema, a bug, a database outage.
COMMON: dict[int, Any] = {
    400: ErrorOut,
    401: ErrorOut,
    403: ErrorOut,
    422: ValidationErrorOut,
    500: ErrorOut,
    503: ErrorOut,
}


def responses(own: dict[int, Any], *, not_found: bool = False) -> dict[int, Any]:
    """An operation's ``response=``: its own codes, then the common errors (its own body type wins on a clash).

    ``not_found``: the path names a row by id, so 404 is documented too.
    """
    return {**COMMON, **({404: ErrorOut} if not_found else {}), **own}


class OneValueEach(Parser):
    """The API's parser of query strings and forms: a parameter that takes one value and is given more than once
    is refused (400 naming it), never read as its last value (what ninja's parser does): ``?metric=qps&metric=cs/o``
    asks for something the operation cannot answer, and answering for one of the two would mislead. Parameters
    that take a list (``list[...]`` fields) keep every value."""

    def parse_querydict(self, data: MultiValueDict, list_fields: list[str], request: HttpRequest) -> dict[str, Any]:
        repeated = sorted(key for key, values in data.lists() if len(values) > 1 and key not in list_fields)
        if repeated:
            raise HttpError(400, f"each parameter takes one value; given more than once: {', '.join(repeated)}")
        return super().parse_querydict(data, list_fields, request)


def _is_database_outage(exc: BaseException) -> bool:
    # Connection refused or cut, server restarting, pool exhausted: psycopg reports these as OperationalError,
    # and a use of an already broken connection as InterfaceError. Constraint and data errors are other classes.
    return isinstance(exc, (OperationalError, InterfaceError))


def unavailable() -> JsonResponse:
    response = JsonResponse({"detail": UNAVAILABLE}, status=503)
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response


def install(api: NinjaAPI) -> None:
    """Add the API's handlers for a database outage and for any unexpected exception (ninja's own
    handlers already answer 404, 401/403 and validation errors in JSON)."""

    @api.exception_handler(OperationalError)
    @api.exception_handler(InterfaceError)
    def database_outage(request: HttpRequest, exc: Exception) -> HttpResponse:
        logger.warning("API %s %s: database unavailable: %s", request.method, request.path, exc)
        return unavailable()

    @api.exception_handler(Exception)
    def unexpected(request: HttpRequest, exc: Exception) -> HttpResponse:
        logger.error("API %s %s failed", request.method, request.path, exc_info=exc)
        return JsonResponse({"detail": INTERNAL}, status=500)


AUTHENTICATE = 'Bearer realm="benchdash API"'


def json_error_bodies(patterns: list[URLPattern | URLResolver]) -> list[URLPattern | URLResolver]:
    """The API's URL patterns with every non-JSON error answer made JSON: ninja's plain-text 405 (its
    ``Allow`` header kept) and Django's HTML 403 of a session request without its CSRF token."""
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            json_error_bodies(pattern.url_patterns)
        else:
            pattern.callback = _json_errors(pattern.callback)
    return patterns


def _json_errors(view: Callable[..., HttpResponseBase]) -> Callable[..., HttpResponseBase]:
    @functools.wraps(view)  # keeps csrf_exempt and ninja's attributes
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        response = view(request, *args, **kwargs)
        if response.status_code == 401 and not response.has_header("WWW-Authenticate"):
            # RFC 9110: a 401 names the scheme that would be accepted, so a client knows to send a token.
            response["WWW-Authenticate"] = AUTHENTICATE
        if response.status_code < 400 or response.get("Content-Type", "").startswith("application/json"):
            return response
        if response.status_code == 405:
            allowed = response.get("Allow", "")
            replaced = JsonResponse({"detail": f"method {request.method} not allowed; allowed: {allowed}"}, status=405)
            replaced["Allow"] = allowed
            return replaced
        if response.status_code == 403:
            return JsonResponse({"detail": CSRF_REFUSED}, status=403)
        return JsonResponse({"detail": HTTPStatus(response.status_code).phrase}, status=response.status_code)

    # ninja's views are partials of their API; `manage.py export_openapi_schema` finds the API through the
    # root view's keywords, so the wrapper carries them too.
    if hasattr(view, "keywords"):
        wrapped.keywords = view.keywords  # type: ignore[attr-defined]
    return wrapped


@csrf_exempt  # as ninja's own views: a session's POST to a wrong path is a 404, not a CSRF failure
def api_not_found(request: HttpRequest, rest: str = "") -> JsonResponse:
    """Any ``/api/`` path that no operation has (the catch-all after the API's own patterns)."""
    return JsonResponse({"detail": f"no API endpoint at {request.path}"}, status=404)


def handler404(request: HttpRequest, exception: Exception) -> HttpResponse:
    if request.path.startswith(API_PREFIX):
        return api_not_found(request)
    return defaults.page_not_found(request, exception)


def handler500(request: HttpRequest) -> HttpResponse:
    """Django's last resort (an exception outside ninja's operations, e.g. in a middleware): 503 with
    ``Retry-After`` when the database is out (JSON under /api/, a short page elsewhere); else JSON under /api/
    and the site's own 500 page elsewhere."""
    exc = sys.exc_info()[1]
    outage = exc is not None and _is_database_outage(exc)
    if request.path.startswith(API_PREFIX):
        return unavailable() if outage else JsonResponse({"detail": INTERNAL}, status=500)
    if outage:
        return unavailable_page()
    return defaults.server_error(request)


def unavailable_page() -> HttpResponse:
    """A page's answer while the database is out: a short 503 that needs neither the database nor a template
    (templates' context processors read the user, from the database)."""
    response = HttpResponse(
        "<!doctype html><meta charset=utf-8><title>Database unavailable</title>"
        "<h1>The database is not answering</h1>"
        f"<p>It did not answer in time. Try again in {RETRY_AFTER_SECONDS} seconds or so: the page works again "
        "as soon as the database is back, and nothing already saved is lost.</p>"
        '<p><a href="">Try again</a></p>',
        status=503,
    )
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response
