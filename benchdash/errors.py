"""The site's own refusal pages (403 for a failed CSRF check) in its layout; 404 and 500 are templates/404.html
and templates/500.html, which Django's default handlers render."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    """A failed CSRF check, with the one cause a new deployment meets most: secure cookies over plain http."""
    http_with_secure_cookies = not request.is_secure() and bool(getattr(settings, "CSRF_COOKIE_SECURE", False))
    context = {"reason": reason or "CSRF check failed.", "http_with_secure_cookies": http_with_secure_cookies}
    return render(request, "403_csrf.html", context, status=403)
