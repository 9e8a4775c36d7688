"""Site-wide HTTP policy: no NUL characters in requests, a login wall when browsing is private, and a CSP header."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.contrib.auth.middleware import LoginRequiredMiddleware
from django.http import HttpRequest, HttpResponse, HttpResponseBase, JsonResponse

from accounts.permissions import may_read

# Views reachable without a login even when browsing is private: load balancers probe healthz, and the
# API answers 401 in JSON through its own auth (accounts.permissions.API_READ_AUTH, and api_docs_access for
# its schema and docs) instead of redirecting.
OPEN_VIEW_NAMES = frozenset({"healthz"})
OPEN_NAMESPACES = frozenset({"api"})


NUL_REFUSED = "NUL characters are not allowed in a request's URL, query or text fields"


class RejectNulMiddleware:
    """Answer 400 to a request whose URL, query string or JSON / form body carries a NUL character.

    PostgreSQL refuses NUL in text, so one in a filter (``?server=%00``) or a JSON field would otherwise
    end as a 500 from the database; no text this app stores or looks up can contain one. Django's form
    fields already refuse NUL; this covers the API, whose schemas do not. Multipart bodies are left
    alone: uploaded archives are binary, and their text fields are checked where they are read.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        query = request.META.get("QUERY_STRING", "")
        if "\x00" in request.path or "%00" in query or "\x00" in query or self._body_has_nul(request):
            return JsonResponse({"detail": NUL_REFUSED}, status=400)
        return self.get_response(request)

    @staticmethod
    def _body_has_nul(request: HttpRequest) -> bool:
        content_type = request.META.get("CONTENT_TYPE", "")
        if content_type.startswith("application/json"):
            return b"\\u0000" in request.body or b"\x00" in request.body
        if content_type.startswith("application/x-www-form-urlencoded"):
            return b"%00" in request.body or b"\x00" in request.body
        return False


class PrivateUnlessPublicMiddleware(LoginRequiredMiddleware):
    """The read rule (``accounts.permissions.may_read``) on every page: Django's LoginRequiredMiddleware while
    ``BENCHDASH_PUBLIC_BROWSING`` is off. Views that change something check their role on top of it.

    The setting is read per request, so a test (or an operator's settings change) needs no restart of the wiring.
    """

    def process_view(
        self, request: HttpRequest, view_func: Callable[..., Any], view_args: Any, view_kwargs: Any
    ) -> HttpResponseBase | None:
        if may_read(request.user):
            return None
        match = request.resolver_match
        if match is not None and (match.view_name in OPEN_VIEW_NAMES or match.namespace in OPEN_NAMESPACES):
            return None
        return super().process_view(request, view_func, view_args, view_kwargs)


class ContentSecurityPolicyMiddleware:
    """Adds ``settings.BENCHDASH_CSP`` (Django 5.2 has no CSP support of its own) unless a view set its own."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        policy = getattr(settings, "BENCHDASH_CSP", "")
        if policy and "Content-Security-Policy" not in response:
            response["Content-Security-Policy"] = policy
        return response
