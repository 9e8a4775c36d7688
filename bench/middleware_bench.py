"""What each middleware costs a page: its own CPU time on one request, apart from the view and the rest of the stack.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/<db> .venv/bin/python bench/middleware_bench.py \\
        [--path /microbenchmarks/<id>/?base=<run>] [--requests 40]

Serves the page in this process through Django's handler with the settings checkout_ab.py's servers run
(``bench/computing_settings.py``: production mode, a cache that keeps nothing, public browsing), each
``MIDDLEWARE`` entry wrapped to time its call. A middleware's own time is its call's CPU time less the next
one's (the view and every later middleware); the last one's includes the view, and every middleware's
``process_view`` (Django calls them next to the view). Prints the median of
``--requests`` requests per entry (after five not counted) and the whole request's, with the load average.
Without ``--path``: the drill-down of point-query over the 200-version series (``checkout_ab.drilldown``).
"""

from __future__ import annotations

import argparse
import os
import secrets
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def timed_factory(name: str, factory: Callable[..., Any], spent: dict[str, list[float]]) -> Callable[..., Any]:
    """``factory`` (a middleware's class or function) whose instances' calls are timed into ``spent[name]``."""

    def build(get_response: Callable[..., Any]) -> Callable[..., Any]:
        middleware = factory(get_response)

        def call(request: Any) -> Any:
            start = time.process_time()
            try:
                return middleware(request)
            finally:
                spent.setdefault(name, []).append(time.process_time() - start)

        # Django reads the hooks off the object it builds the chain with.
        for hook in ("process_view", "process_exception", "process_template_response"):
            if hasattr(middleware, hook):
                setattr(call, hook, getattr(middleware, hook))
        return call

    return build


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--path", default="")
    parser.add_argument("--requests", type=int, default=40)
    args = parser.parse_args()
    static = tempfile.mkdtemp(prefix="benchdash-mw-static-")
    os.environ.update(
        DJANGO_SETTINGS_MODULE="bench.computing_settings",
        BENCHDASH_MODE="production",
        SECRET_KEY=secrets.token_urlsafe(50),
        ALLOWED_HOSTS="127.0.0.1,localhost,testserver",
        BENCHDASH_PUBLIC_BROWSING="true",
        SECURE_COOKIES="false",
        BENCHDASH_STATIC_ROOT=static,
        LOG_LEVEL="WARNING",
    )
    os.environ.pop("DEBUG", None)
    import django

    django.setup()
    import django.core.handlers.base as handler_base
    from django.conf import settings
    from django.core.management import call_command
    from django.test import Client

    call_command("collectstatic", interactive=False, verbosity=0)
    spent: dict[str, list[float]] = {}
    names = list(settings.MIDDLEWARE)
    import_string = handler_base.import_string

    def timed_import(path: str) -> Any:
        found = import_string(path)
        return timed_factory(path, found, spent) if path in names else found

    handler_base.import_string = timed_import  # type: ignore[attr-defined]  # the test client's handler reads it
    from checkout_ab import drilldown

    path = args.path or drilldown()
    client = Client()
    for _ in range(5):
        client.get(path)
    spent.clear()
    whole = []
    for _ in range(args.requests):
        start = time.process_time()
        response = client.get(path)
        whole.append(time.process_time() - start)
    if response.status_code != 200:
        sys.exit(f"{path} answered {response.status_code}")
    medians = [statistics.median(spent[name]) * 1000 for name in names]
    print(f"{path}: {statistics.median(whole) * 1000:.2f} ms CPU per request (median of {args.requests})")
    print(f"{'middleware':60} {'own ms':>7} {'with the rest':>14}")
    for i, name in enumerate(names):
        own = medians[i] - (medians[i + 1] if i + 1 < len(names) else 0)
        last = " (includes the view)" if i + 1 == len(names) else ""
        print(f"{name:60} {own:7.2f} {medians[i]:14.2f}{last}")
    own_total = medians[0] - medians[-1]
    print(f"every middleware but the last: {own_total:.2f} ms (load {os.getloadavg()[0]:.1f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
