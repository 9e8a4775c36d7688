"""``/metrics``: the site's numbers in Prometheus's text format (prometheus_client).

Two kinds of figure:

- counted where they happen, per process: HTTP requests (count and duration per view and status) and Celery
  tasks (count per outcome and duration per task: imports ``runs.tasks.import_bundle``, refreshes
  ``reports.tasks.refresh_series_task``, detection ``regressions.tasks.detect_regressions_task``, alert deliveries
  ``regressions.tasks.deliver_alert_task``). With ``PROMETHEUS_MULTIPROC_DIR`` set (one directory shared by
  the gunicorn workers and the Celery workers of one machine), ``/metrics`` adds up every process's;
- read when scraped, so they are right whichever process did the work: the length of each Celery queue in
  Redis, and what the apps provide for ``hooks.METRIC_SOURCES`` (bundles per status, alert deliveries per
  state) from the database.

Read like the API: public while browsing is public, else a logged-in session or an API token.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from django.conf import settings
from django.contrib.auth.decorators import login_not_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.registry import Collector

from benchdash import hooks

REQUESTS = Counter("benchdash_http_requests", "HTTP requests answered", ["view", "method", "status"])
REQUEST_SECONDS = Histogram(
    "benchdash_http_request_duration_seconds",
    "Time to answer an HTTP request",
    ["view"],
    buckets=(0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
)
TASKS = Counter("benchdash_tasks", "Celery tasks run, by outcome", ["task", "outcome"])
TASK_SECONDS = Histogram(
    "benchdash_task_duration_seconds",
    "Time a Celery task ran (imports, refreshes, detection, alert deliveries, ...)",
    ["task"],
    buckets=(0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900),
)

STEPS = Counter("benchdash_steps", "Steps of the data's way run inside a task, by outcome", ["step", "outcome"])
STEP_SECONDS = Histogram(
    "benchdash_step_duration_seconds",
    "Time a step run inside a task took (detection after a refresh)",
    ["step"],
    buckets=(0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300),
)


def gauge(name: str, documentation: str, label: str, values: dict[str, int]) -> GaugeMetricFamily:
    family = GaugeMetricFamily(name, documentation, labels=[label])
    for key, value in sorted(values.items()):
        family.add_metric([key], value)
    return family


def queue_lengths() -> Iterable[Metric]:
    """Messages waiting in the broker's default queue (none without a broker: tasks run in the request)."""
    if not settings.REDIS_URL:
        return []
    import redis

    queue = settings.CELERY_TASK_DEFAULT_QUEUE
    client = redis.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=1, socket_timeout=1)
    try:
        length = client.llen(f"{settings.BROKER_KEY_PREFIX}{queue}")
    except redis.RedisError:
        return []
    finally:
        client.close()
    return [gauge("benchdash_queue_length", "Celery tasks waiting in the broker", "queue", {queue: int(length)})]


class _ReadWhenScraped(Collector):
    def describe(self) -> Iterable[Metric]:
        # Without it the registry would collect once at registration, at import time: before Django's settings.
        return []

    def collect(self) -> Iterable[Metric]:
        # Figures read when scraped: the queue, and what the apps provided (hooks.METRIC_SOURCES).
        for source in [queue_lengths, *hooks.provided(hooks.METRIC_SOURCES)]:
            yield from source()


REGISTRY.register(_ReadWhenScraped())


def _registry() -> CollectorRegistry:
    """This process's registry, or, with PROMETHEUS_MULTIPROC_DIR, every process's figures added up."""
    if not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        return REGISTRY
    registry = CollectorRegistry()
    MultiProcessCollector(registry)
    registry.register(_ReadWhenScraped())
    return registry


def _allowed(request: HttpRequest) -> bool:
    from accounts.permissions import may_read, user_for_token  # the site's read rule (benchdash sits below)

    header = request.headers.get("Authorization", "")
    if header:
        scheme, _, token = header.partition(" ")
        user = user_for_token(token.strip()) if scheme.lower() == "bearer" else None
        return user is not None
    return may_read(request.user)


@login_not_required  # the read rule is applied here, with API tokens as well as sessions
def metrics_view(request: HttpRequest) -> HttpResponse:
    if not _allowed(request):
        refused = JsonResponse({"detail": "Unauthorized"}, status=401)  # the API's own answer
        refused["WWW-Authenticate"] = 'Bearer realm="benchdash API"'
        return refused
    return HttpResponse(generate_latest(_registry()), content_type=CONTENT_TYPE_LATEST)


class MetricsMiddleware:
    """Counts and times every request by its view's name (never its path: ids would be a label each)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        started = time.perf_counter()
        response = self.get_response(request)
        match = getattr(request, "resolver_match", None)
        view = (match.view_name if match is not None else "") or "unmatched"
        REQUEST_SECONDS.labels(view).observe(time.perf_counter() - started)
        REQUESTS.labels(view, request.method or "", str(response.status_code)).inc()
        return response


@contextlib.contextmanager
def timed(step: str) -> Iterator[None]:
    """Time and count a step that runs inside another task (detection runs inside the refresh's)."""
    began = time.perf_counter()
    outcome = "failure"
    try:
        yield
        outcome = "success"
    finally:
        STEP_SECONDS.labels(step).observe(time.perf_counter() - began)
        STEPS.labels(step, outcome).inc()


def count_celery_tasks() -> None:
    """Times every task and counts it by outcome, in whichever process runs it (a worker, or eager, the web)."""
    from celery import signals

    started: dict[str, float] = {}

    def prerun(task_id: str = "", **kwargs: Any) -> None:
        started[task_id] = time.perf_counter()

    def postrun(task_id: str = "", task: Any = None, state: str | None = None, **kwargs: Any) -> None:
        name = getattr(task, "name", "unknown")
        began = started.pop(task_id, None)
        if began is not None:
            TASK_SECONDS.labels(name).observe(time.perf_counter() - began)
        TASKS.labels(name, (state or "unknown").lower()).inc()

    signals.task_prerun.connect(prerun, weak=False)
    signals.task_postrun.connect(postrun, weak=False)
