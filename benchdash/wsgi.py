from __future__ import annotations

import gc
import os

from django.core.wsgi import get_wsgi_application
from django.urls import get_resolver

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchdash.settings")

application = get_wsgi_application()

# The URL configuration and the views, loaded now rather than by the first request; then everything loaded so far,
# which the process keeps until it exits, is left out of the collector's full collections (gc.freeze). Those
# scanned every object of the process, ~140,000, a pause of tens of milliseconds in one page of every twenty.
get_resolver().url_patterns  # noqa: B018  # read for its side effect: it imports every URLconf and view
gc.freeze()
