"""Refuse an over-limit upload while its body is being read, never after reading all of it.

A declared ``Content-Length`` over the limit is refused before a byte of the body is read; a body that
declares none (chunked) or lies is counted as Django's multipart parser streams it to the upload's temporary
file, and refused as soon as it passes the limit. Either way the answer is a 413 that says the limit, in JSON
for the API and as a short page for the upload form, and nothing is stored.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.core.files.uploadhandler import FileUploadHandler
from django.http import HttpRequest, HttpResponse, HttpResponseBase, JsonResponse
from django.utils.html import escape

# Room for the multipart boundaries and the small form fields next to the file (server, workload, CSRF token).
FORM_MARGIN_BYTES = 64 * 1024


class UploadTooLarge(Exception):
    """The request body is over the upload limit; the message says so, for the user."""


def body_limit() -> int:
    return settings.BUNDLE_MAX_BYTES + FORM_MARGIN_BYTES


def too_large_message() -> str:
    return f"the upload is over the {settings.BUNDLE_MAX_BYTES:,}-byte bundle limit; nothing was stored"


class CountingUploadHandler(FileUploadHandler):
    """First of the upload handlers: counts every file byte received and stops the parse past the limit.

    It passes each chunk on untouched, so the handlers after it (memory up to
    FILE_UPLOAD_MAX_MEMORY_SIZE, then a temporary file) store it as usual.
    """

    def __init__(self, request: HttpRequest | None = None) -> None:
        super().__init__(request)
        self.received = 0

    def receive_data_chunk(self, raw_data: bytes, start: int) -> bytes:
        self.received += len(raw_data)
        if self.received > settings.BUNDLE_MAX_BYTES:
            raise UploadTooLarge(too_large_message())
        return raw_data

    def file_complete(self, file_size: int) -> None:
        return None


class UploadLimitMiddleware:
    """Parse multipart bodies here, under the counting handler, before anything else reads them."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        if request.method == "POST" and request.META.get("CONTENT_TYPE", "").startswith("multipart/form-data"):
            refused = self._parse(request)
            if refused is not None:
                return refused
        return self.get_response(request)

    def _parse(self, request: HttpRequest) -> HttpResponseBase | None:
        try:
            declared = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            declared = 0
        if declared > body_limit():
            return _refuse(request, too_large_message())
        request.upload_handlers.insert(0, CountingUploadHandler(request))
        try:
            request.FILES  # noqa: B018 - parses the body now, with the counter in place
        except UploadTooLarge as exc:
            for uploaded in _partial_files(request):
                uploaded.close()  # the temporary file of what was received so far goes now
            return _refuse(request, str(exc))
        return None


def _partial_files(request: HttpRequest) -> list[Any]:
    # The parser keeps the handlers; what the storing handler had opened is on it, not yet in request.FILES.
    return [getattr(handler, "file", None) for handler in request.upload_handlers if getattr(handler, "file", None)]


def _refuse(request: HttpRequest, message: str) -> HttpResponse:
    if request.path.startswith("/api/"):
        response: HttpResponse = JsonResponse({"detail": message}, status=413)
    else:
        page = (
            "<!doctype html><title>Upload too large</title>"
            f"<h1>Upload too large</h1><p>{escape(message.capitalize())}.</p>"
            '<p><a href="/upload/">Back to the upload page</a></p>'
        )
        response = HttpResponse(page, status=413)
    return response
