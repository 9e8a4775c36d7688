"""A real Celery worker over Redis tells a webhook about the stories an upload opened, retrying with waits
that double, and never twice (CI runs this with the other worker tests)."""

from __future__ import annotations

import itertools
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from regressions.models import Delivery, Regression, Subscription
from regressions.tasks import announce_story_task
from regressions.tests.loopback import http_receiver, wait_for
from runs.importer import archive_directory
from tests import live

pytestmark = [pytest.mark.slow(30), pytest.mark.worker, pytest.mark.services, pytest.mark.django_db(transaction=True)]

RETRY_DELAY = 0.5


@pytest.fixture
def worker() -> Iterator[Callable[..., subprocess.Popen[bytes]]]:
    with live.celery_workers("alerts") as start:
        yield lambda: start(
            {
                "BENCHDASH_ALERT_RETRY_DELAY": str(RETRY_DELAY),
                "BENCHDASH_ALERT_MAX_ATTEMPTS": "5",
                "BENCHDASH_BASE_URL": "https://bench.example.com",
                "BENCHDASH_ALERT_NETWORKS": "127.0.0.1/32",
            }
        )


def test_an_upload_reaches_a_webhook_through_the_worker_with_retries_and_never_twice(
    worker: Callable[..., subprocess.Popen[bytes]], corpus: Path, user_with_role: Callable[..., Any]
) -> None:
    from accounts.permissions import create_token

    worker()
    with http_receiver(fail_first=2, per_story=True) as receiver:
        subscription = Subscription.objects.create(name="perf", webhook_url=receiver.url())
        token = create_token(user_with_role("uploader"), "alert test")[1]
        data = archive_directory(corpus / "sysbench-mysql-small")
        response = Client(headers={"Authorization": f"Bearer {token}"}).post(
            "/api/bundles/", {"file": SimpleUploadedFile("small.tar.gz", data)}
        )
        assert response.status_code == 202, response.content
        # The worker imports, refreshes the series, detects, announces each new story and sends it.
        wait_for(lambda: Delivery.objects.exists(), 240, "the first delivery")
        # Alerts tell the default (long-term) view's stories; the every-release view's are not news of their own.
        opened = sorted(r.pk for r in Regression.objects.filter(releases="long-term") if r.is_open_story)

        def all_sent() -> bool:
            return Delivery.objects.filter(state=Delivery.State.SENT).count() == len(opened)

        wait_for(all_sent, 120, "every story sent")
        by_story: dict[int, list[Any]] = {}
        for request in receiver.requests:
            by_story.setdefault(request.json()["story"]["id"], []).append(request)
        assert sorted(by_story) == opened
        for requests in by_story.values():
            assert [r.answered for r in requests] == [503, 503, 200]
            # Waits of RETRY_DELAY, then twice that (the countdowns; the worker adds its own latency).
            gaps = [later.at - earlier.at for earlier, later in itertools.pairwise(requests)]
            assert gaps[0] >= RETRY_DELAY * 0.9 and gaps[1] >= 2 * RETRY_DELAY * 0.9, gaps
        assert set(Delivery.objects.values_list("attempts", flat=True)) == {3}

        # Redelivered announcements reach the worker too: nothing more is sent.
        for story_id in opened:
            announce_story_task.delay(story_id)
        time.sleep(3)
        assert len(receiver.requests) == 3 * len(opened)
        assert Delivery.objects.filter(subscription=subscription).count() == len(opened)
