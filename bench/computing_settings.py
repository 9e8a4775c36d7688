"""benchdash's settings with its cache emptied before every request: every page is computed from scratch.

The peer benches serve their "from scratch" and "pages/s, both computing" figures
from a gunicorn with these settings (``DJANGO_SETTINGS_MODULE=bench.computing_settings``),
so benchdash computes each page as Codespeed and LNT do, under concurrency too,
where clearing a shared cache before each request cannot work. Each worker keeps
its cache in its own memory and forgets it when a request comes in: within one
request it works as deployed (a comparison read twice is computed once). What
benchdash stores in its database when a series is refreshed is still read: that
is computing ahead, not caching, and is never stale.
"""

from collections.abc import Callable

from django.core.cache import cache
from django.http import HttpRequest, HttpResponse

from benchdash.settings import *  # noqa: F403  every setting as deployed, but:
from benchdash.settings import MIDDLEWARE

CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "computing"}}


def forget_cache(get_response: Callable[[HttpRequest], HttpResponse]) -> Callable[[HttpRequest], HttpResponse]:
    """Middleware: the worker's cache emptied before each request (a sync worker serves one at a time)."""

    def middleware(request: HttpRequest) -> HttpResponse:
        cache.clear()
        return get_response(request)

    return middleware


MIDDLEWARE = ["bench.computing_settings.forget_cache", *MIDDLEWARE]
