"""What a web worker does at its start so that its first visitor does not pay for it.

Django loads the URL configuration (every view module, the API's schemas),
builds its reverse lookup, and compiles each template on the first request
that needs them: about 0.3 s of the first page a fresh worker serves, against
~20 ms for the next one (``bench/startup_bench.py``, "first pages"). The WSGI
module calls :func:`warm_up` once per process, before the worker accepts a
connection; nothing here touches the database or the cache.
"""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.template import engines
from django.urls import URLResolver, get_resolver


def warm_up() -> int:
    """Load the Celery app with every app's tasks, the URL configuration with its reverse lookups, and compile
    every project template (where the template engine keeps compiled templates, i.e. not in DEBUG). Returns how
    many templates it compiled."""
    # Commands leave Celery out of their start (benchdash/__init__.py); a page that sends a task (an upload,
    # a detection asked for) would otherwise pay for it on a worker's first visitor.
    from benchdash.celery import app

    app.loader.import_default_modules()
    app.finalize(auto=True)
    _populate(get_resolver())
    if settings.DEBUG:
        return 0
    engine = engines["django"]
    compiled = 0
    for folder in (Path(d) for d in engine.dirs):
        for path in sorted(folder.rglob("*.html")):
            engine.get_template(path.relative_to(folder).as_posix())
            compiled += 1
    return compiled


def _populate(resolver: URLResolver) -> None:
    # reverse_dict builds the resolver's reverse lookup (what reverse() and {% url %} use); each namespace
    # has its own resolver with its own lookup.
    resolver.reverse_dict  # noqa: B018
    for _prefix, namespaced in resolver.namespace_dict.values():
        _populate(namespaced)
