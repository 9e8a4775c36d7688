from __future__ import annotations

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchdash.settings")

application = get_wsgi_application()

# URLs, views and templates loaded now, before the worker accepts its first visitor (benchdash.warmup).
from benchdash.warmup import warm_up  # noqa: E402  (needs the settings get_wsgi_application set up)

warm_up()
