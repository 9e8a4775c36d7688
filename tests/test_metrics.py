"""/metrics: Prometheus's text format with requests, task durations and counts (imports, refreshes,
detection), queue lengths, bundles and alert deliveries; read like the API."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from prometheus_client.parser import text_string_to_metric_families

from accounts.permissions import create_token
from runs.importer import archive_directory
from runs.models import Bundle

pytestmark = pytest.mark.django_db


def _samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def _value(samples: dict[Any, float], name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def test_an_upload_shows_in_the_request_task_and_bundle_figures(
    corpus: Path, user_with_role: Callable[..., Any], django_capture_on_commit_callbacks: Any
) -> None:
    client = Client()
    before = _samples(client.get("/metrics").content.decode())
    token = create_token(user_with_role("uploader"), "metrics")[1]
    archive = archive_directory(corpus / "sysbench-mysql-small")
    with django_capture_on_commit_callbacks(execute=True):
        answer = client.post(
            "/api/bundles/",
            {"file": SimpleUploadedFile("small.tar.gz", archive)},
            headers={"Authorization": f"Bearer {token}"},
        )
    # Queued when the upload commits, then imported (eagerly, in this process), refreshed and detected.
    assert answer.status_code == 202, answer.content
    assert Bundle.objects.get(pk=answer.json()["bundle_id"]).status == "imported"
    response = client.get("/metrics")
    assert response.status_code == 200 and response["Content-Type"].startswith("text/plain; version=")
    after = _samples(response.content.decode())

    upload = {"view": "api:upload_bundle", "method": "POST", "status": "202"}
    assert (
        _value(after, "benchdash_http_requests_total", **upload)
        == _value(before, "benchdash_http_requests_total", **upload) + 1
    )
    for task in ("runs.tasks.import_bundle_task", "reports.tasks.refresh_series_task"):
        grew = _value(after, "benchdash_tasks_total", task=task, outcome="success") - _value(
            before, "benchdash_tasks_total", task=task, outcome="success"
        )
        assert grew >= 1, task
        assert _value(after, "benchdash_task_duration_seconds_count", task=task) >= 1, task
    # Detection runs inside the refresh task: timed and counted as a step of its own.
    detected = _value(after, "benchdash_steps_total", step="detection", outcome="success")
    assert detected >= _value(before, "benchdash_steps_total", step="detection", outcome="success") + 1
    assert _value(after, "benchdash_step_duration_seconds_count", step="detection") >= 1
    assert _value(after, "benchdash_bundles", status="imported") == Bundle.objects.filter(status="imported").count()
    assert _value(after, "benchdash_bundles", status="failed") == 0
    assert ("benchdash_alert_deliveries", (("state", "sent"),)) in after


def test_private_browsing_asks_for_a_login_or_a_token(settings: Any, user_with_role: Callable[..., Any]) -> None:
    settings.BENCHDASH_PUBLIC_BROWSING = False
    refused = Client().get("/metrics")
    assert refused.status_code == 401 and refused["WWW-Authenticate"].startswith("Bearer")
    viewer = user_with_role("viewer")
    assert Client(headers={"Authorization": "Bearer bd_not-a-token"}).get("/metrics").status_code == 401
    token = create_token(viewer, "scraper")[1]
    assert Client(headers={"Authorization": f"Bearer {token}"}).get("/metrics").status_code == 200
    session = Client()
    session.force_login(viewer)
    assert session.get("/metrics").status_code == 200


def test_the_queue_length_is_read_from_the_broker_when_there_is_one(settings: Any) -> None:
    if not settings.REDIS_URL:
        pytest.skip("REDIS_URL is not set")
    text = Client().get("/metrics").content.decode()
    assert re.search(r'^benchdash_queue_length\{queue="[^"]+"\} \d+', text, re.M), text[-2000:]
