"""Refuse an upload nobody may send, or one over the limit, before or while its body is read, never after.

Multipart bodies (the only ones that go to disk) are read only for a user who may upload: a session user or
an API token's user with the upload permission. Anyone else gets a 401 or 403 before a byte of the body is
read, so an anonymous or role-less client cannot make the server write to its disk. Then a declared
``Content-Length`` over the limit is refused before a byte of the body is read; a body that declares none
(chunked: read through to its end, as the server decodes it) or lies is counted as Django's multipart parser
streams it to the upload's temporary file, and refused as soon as it passes the limit: a 413 that says the
limit. A temporary disk that fills up is a 507 that says so. Each answer is JSON for the API and a short
page for the upload form, and nothing is stored or left behind.
"""

from __future__ import annotations

import errno
import logging
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.contrib.auth.views import redirect_to_login
from django.core.files.uploadhandler import FileUploadHandler
from django.core.handlers.wsgi import LimitedStream
from django.http import HttpRequest, HttpResponse, HttpResponseBase, JsonResponse
from django.utils.html import escape

from accounts.permissions import UPLOAD, refusal, user_for_token

log = logging.getLogger(__name__)

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


class FilesNotAllowed(Exception):
    """A file part in a body from someone who may not upload."""


class NoFilesHandler(FileUploadHandler):
    """First and only storing-side check for a body from someone who may not upload: the first file part stops
    the parse before any handler opened a file for it (memory or disk)."""

    def new_file(self, *args: Any, **kwargs: Any) -> None:
        raise FilesNotAllowed

    def receive_data_chunk(self, raw_data: bytes, start: int) -> bytes:
        return raw_data

    def file_complete(self, file_size: int) -> None:
        return None


class UploadLimitMiddleware:
    """Parse multipart bodies here, before anything else reads them (CSRF's check reads POST): a file only from
    someone who may upload, and within the limit. After the authentication middleware, which says who it is."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        if request.method == "POST" and request.META.get("CONTENT_TYPE", "").startswith("multipart/form-data"):
            refused = _parse(request, _sender(request))
            if refused is not None:
                return refused
        return self.get_response(request)


def _sender(request: HttpRequest) -> Any:
    """Who sends the body: an API token's user (``Authorization: Bearer``), else the session's user, or None."""
    header = request.headers.get("Authorization", "")
    if header:
        scheme, _, token = header.partition(" ")
        return user_for_token(token.strip()) if scheme.lower() == "bearer" else None
    user = getattr(request, "user", None)
    return user if user is not None and user.is_authenticated else None


def _not_an_uploader(request: HttpRequest, user: Any) -> HttpResponseBase:
    """What someone who may not upload gets for a file or a big body: as the upload doors answer them."""
    if user is None and not request.path.startswith("/api/"):
        return redirect_to_login(request.get_full_path())
    if user is None:
        return _refuse(request, "log in or send an API token of a user with the uploader role", 401)
    return _refuse(request, refusal(UPLOAD), 403)


def _form_limit() -> int:
    # A body without files (a login, a triage note) is read in memory, where Django bounds it; no more is read.
    return settings.DATA_UPLOAD_MAX_MEMORY_SIZE + FORM_MARGIN_BYTES


def _chunked(request: HttpRequest) -> bool:
    return not request.META.get("CONTENT_LENGTH") and "chunked" in request.META.get("HTTP_TRANSFER_ENCODING", "")


def _parse(request: HttpRequest, user: Any) -> HttpResponseBase | None:
    try:
        declared = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        declared = 0
    uploader = user is not None and user.has_perm(UPLOAD)
    if not uploader and (declared > _form_limit() or _chunked(request)):
        return _not_an_uploader(request, user)  # before a byte of the body is read
    if declared > body_limit():
        return _refuse(request, too_large_message(), 413)
    if _chunked(request):
        if not request.META.get("wsgi.input_terminated"):
            return _refuse(request, "this server cannot read a chunked upload; send it with a Content-Length", 411)
        # Django reads a body of unknown length as empty. The server ends the decoded stream at the body's end,
        # so it is read through to there, and at most one byte past the limit (the counter refuses that byte).
        request._stream = LimitedStream(request.META["wsgi.input"], body_limit() + 1)  # type: ignore[assignment]
        request.META["CONTENT_LENGTH"] = str(body_limit() + 1)  # the parser wants a length: an upper bound
    request.upload_handlers.insert(0, CountingUploadHandler(request) if uploader else NoFilesHandler(request))
    try:
        request.FILES  # noqa: B018 - parses the body now, with the counter in place
    except FilesNotAllowed:
        return _not_an_uploader(request, user)
    except UploadTooLarge as exc:
        _close_partial_files(request)
        return _refuse(request, str(exc), 413)
    except OSError as exc:
        if exc.errno not in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
            raise
        _close_partial_files(request)
        log.error("upload refused: the temporary upload directory is full (%s)", exc)
        return _refuse(request, "the server's temporary upload space is full; nothing was stored, try again later", 507)
    return None


def _close_partial_files(request: HttpRequest) -> None:
    # The parser keeps the handlers; what the storing handler had opened is on it, not yet in request.FILES.
    # Closing the unnamed temporary file frees its space at once.
    for handler in request.upload_handlers:
        file = getattr(handler, "file", None)
        if file is not None:
            file.close()


_TITLES = {401: "Login needed", 403: "Not allowed", 411: "Length required", 413: "Upload too large"}


def _refuse(request: HttpRequest, message: str, status: int) -> HttpResponse:
    if request.path.startswith("/api/"):
        # A 401 reads as the API's own does, so a client sees one body for a missing or wrong token wherever it
        # was refused; the other refusals say what to change.
        detail = "Unauthorized" if status == 401 else message
        response: HttpResponse = JsonResponse({"detail": detail}, status=status)
        if status == 401:
            response["WWW-Authenticate"] = 'Bearer realm="benchdash API"'
    else:
        title = _TITLES.get(status, "Upload refused")
        page = (
            f"<!doctype html><title>{title}</title>"
            f"<h1>{title}</h1><p>{escape(message[:1].upper() + message[1:])}.</p>"
            '<p><a href="/upload/">Back to the upload page</a></p>'
        )
        response = HttpResponse(page, status=status)
    return response
