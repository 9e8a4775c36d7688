"""The benchdash project.

The Celery app (``benchdash.celery``) is not imported with the package: Celery, kombu and the Redis client cost
a command such as ``manage.py import_bundle --help`` about half its start. It is imported where tasks are: every
``tasks`` module imports it first, so a task is never sent through Celery's unconfigured default app; the web
worker loads it at its start (``benchdash.warmup``), and ``celery -A benchdash`` finds it as
``benchdash.celery.app``. ``benchdash.celery_app`` still names it, imported on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .celery import app as celery_app

__all__ = ("celery_app",)


def __getattr__(name: str) -> Any:
    if name == "celery_app":
        from .celery import app

        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
