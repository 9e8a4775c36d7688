"""A web worker loads its URLs, views, templates and Celery app at start (benchdash.warmup), not on its first
visitor."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from django.conf import settings

ROOT = Path(settings.BASE_DIR)

# A fresh process, as gunicorn's worker: the WSGI module imported, nothing requested yet.
PROBE = """
import json, sys
from benchdash.wsgi import application
from django.template import engines
from django.urls import get_resolver
resolver = get_resolver()
namespaces = {name: sub._populated for name, (_, sub) in resolver.namespace_dict.items()}
loader = engines["django"].engine.template_loaders[0]
while not hasattr(loader, "get_template_cache") and getattr(loader, "loaders", None):
    loader = loader.loaders[0]  # template_partials' loader wraps Django's cached one
print(json.dumps({
    "views": "reports.views" in sys.modules and "regressions.views" in sys.modules,
    "populated": resolver._populated,
    "namespaces": namespaces,
    "cached": sorted(getattr(loader, "get_template_cache", {})),
    "celery": "benchdash.celery" in sys.modules,
    "tasks": sorted(sys.modules["benchdash.celery"].app.tasks) if "benchdash.celery" in sys.modules else [],
}))
"""


def _probe(debug: str, tmp_path: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env.update(DJANGO_SETTINGS_MODULE="benchdash.settings", DEBUG=debug, BENCHDASH_VAR_DIR=str(tmp_path))
    out = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_a_fresh_worker_has_its_urls_and_every_template_ready_before_its_first_request(tmp_path: Path) -> None:
    state = _probe("false", tmp_path)
    assert state["views"] and state["populated"]
    assert state["namespaces"] and all(state["namespaces"].values()), state["namespaces"]
    templates = sorted(p.relative_to(ROOT / "templates").as_posix() for p in (ROOT / "templates").rglob("*.html"))
    assert len(templates) > 20
    assert set(templates) <= set(state["cached"]), set(templates) - set(state["cached"])
    # The Celery app with every app's tasks: a page that sends one (an upload) pays nothing for it either.
    assert state["celery"]
    assert {"runs.tasks.import_bundle_task", "regressions.tasks.detect_regressions_task"} <= set(state["tasks"])


def test_in_debug_templates_are_left_to_be_read_as_they_change(tmp_path: Path) -> None:
    state = _probe("true", tmp_path)
    assert state["populated"] and state["cached"] == []
