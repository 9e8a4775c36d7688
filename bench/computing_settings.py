"""benchdash's settings with a cache that keeps nothing: every page is computed for every request.

The peer benches serve their "from scratch" and "pages/s, both computing" figures
from a gunicorn with these settings (``DJANGO_SETTINGS_MODULE=bench.computing_settings``),
so benchdash computes each page as Codespeed and LNT do, under concurrency too,
where clearing the cache before each request cannot work. What benchdash stores
in its database when a series is refreshed is still read: that is computing
ahead, not caching, and is never stale.
"""

from benchdash.settings import *  # noqa: F403  every setting as deployed, but:

CACHES = {"default": {"BACKEND": "django.core.cache.backends.dummy.DummyCache"}}
