"""Log lines a deployment can read and ship: time, level, logger and request id on every line.

``LOG_FORMAT=text`` (the default) writes ``2026-11-28 01:02:03,456 INFO django.request [4f1c…] message``;
``LOG_FORMAT=json`` one JSON object per line. The request id is the ``X-Request-ID`` a proxy sent (when it looks
like one) or a fresh one, set by ``RequestIdMiddleware`` for the request's lifetime and sent back in the
response; in a Celery worker it is the task's id; elsewhere ``-``. gunicorn's access log, configured through the
same handlers, takes the id from the response header it logs.
"""

from __future__ import annotations

import contextvars
import json
import logging
import logging.config
import re
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from django.core.signals import request_finished
from django.http import HttpRequest, HttpResponse

REQUEST_ID: contextvars.ContextVar[str] = contextvars.ContextVar("benchdash_request_id", default="-")
# What we accept from a proxy's X-Request-ID: short, printable, nothing that could forge a log line.
_VALID_ID = re.compile(r"^[A-Za-z0-9._:-]{8,64}$")
TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s"


class RequestIdFilter(logging.Filter):
    """Puts the current request's (or task's) id on every record; gunicorn's access lines carry theirs."""

    def filter(self, record: logging.LogRecord) -> bool:
        atoms = record.args if record.name == "gunicorn.access" and isinstance(record.args, dict) else None
        record.request_id = (atoms or {}).get("{x-request-id}o") or REQUEST_ID.get()
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time (UTC, ISO 8601), level, logger, request_id, message[, exc_info]."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "request_id": getattr(record, "request_id", "-"),
            "message": record.getMessage(),
        }
        if record.exc_info:
            entry["exc_info"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False)


def logging_config(level: str, log_format: str) -> dict[str, Any]:
    """The LOGGING setting: one console handler for the root, Django, Celery and gunicorn's loggers."""
    if log_format not in {"text", "json"}:
        raise ValueError(f"LOG_FORMAT must be 'text' or 'json', not {log_format!r}")
    formatter = {"()": JsonFormatter} if log_format == "json" else {"format": TEXT_FORMAT}
    handler = {"class": "logging.StreamHandler", "formatter": log_format, "filters": ["request_id"]}
    # Django's own loggers (with DEBUG on, its console handler) and gunicorn's write to handlers of their own;
    # these replace them (in a gunicorn worker, once Django is set up), so every line has the one format.
    own = {"handlers": ["console"], "level": level, "propagate": False}
    gunicorn = {**own, "level": "INFO"}
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "filters": {"request_id": {"()": RequestIdFilter}},
        "formatters": {log_format: formatter},
        "handlers": {"console": handler},
        "root": {"handlers": ["console"], "level": level},
        "loggers": {"django": own, "django.server": own, "gunicorn.error": gunicorn, "gunicorn.access": gunicorn},
    }


def request_id_from(header: str | None) -> str:
    return header if header and _VALID_ID.match(header) else uuid.uuid4().hex


def _request_finished(**kwargs: Any) -> None:
    REQUEST_ID.set("-")


class RequestIdMiddleware:
    """Every request gets an id, in its log lines and in the response's ``X-Request-ID``.

    The id stays set until Django's ``request_finished``, not only while the middleware runs: Django logs a
    4xx/5xx response ("Not Found: …") after the middleware chain has returned.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response
        request_finished.connect(_request_finished, dispatch_uid="benchdash.logs.request_finished")

    def __call__(self, request: HttpRequest) -> HttpResponse:
        REQUEST_ID.set(request_id_from(request.headers.get("X-Request-ID")))
        response = self.get_response(request)
        response["X-Request-ID"] = REQUEST_ID.get()
        return response


def configure_celery_logging() -> None:
    """Celery's worker and beat log through LOGGING too (instead of their own format), a task's lines with
    the task's id as their request id."""
    from celery import signals

    def setup(**kwargs: Any) -> None:
        from django.conf import settings

        logging.config.dictConfig(settings.LOGGING)

    def task_started(task_id: str = "-", **kwargs: Any) -> None:
        REQUEST_ID.set(task_id)

    def task_done(**kwargs: Any) -> None:
        REQUEST_ID.set("-")

    signals.setup_logging.connect(setup, weak=False)
    signals.task_prerun.connect(task_started, weak=False)
    signals.task_postrun.connect(task_done, weak=False)
