from __future__ import annotations

import gc
import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchdash.settings")
# This process serves requests: its database statements get the web's time limit (settings).
os.environ.setdefault("BENCHDASH_WEB_PROCESS", "1")

application = get_wsgi_application()

# URLs, views and templates loaded now, before the worker accepts its first visitor (benchdash.warmup); then
# everything loaded so far, which the process keeps until it exits, is left out of the collector's full
# collections (gc.freeze). Those scanned every object of the process, ~140,000, a pause of tens of milliseconds
# in one page of every twenty.
from benchdash.warmup import warm_up  # noqa: E402  (needs the settings get_wsgi_application set up)

warm_up()
gc.freeze()
