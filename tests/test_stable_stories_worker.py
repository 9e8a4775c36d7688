"""Stories keep their identity through imports, re-imports, deleted runs and re-detection, with a real Celery worker
over Redis telling a real SMTP server: each story is told once, only when an import involving it found it, and a
story someone touched or was told of is never deleted (its old link still leads somewhere).

The MySQL 5.6.51 → 9.5.0 series of the corpus arrives in three bundles, the way an archive grows: first five
releases (8.0.43 missing), then 8.0.43 — an older point release, which moves where the 8.0 losses arrive —, then
the 9.x releases; afterwards the 8.0.43 runs are deleted and the series re-detected.
"""

from __future__ import annotations

import io
import subprocess
import tarfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from django.test import Client

from regressions.models import Delivery, Regression, Subscription
from regressions.tasks import detect_regressions_task
from regressions.tests.loopback import SmtpServer, smtp_server, wait_for
from regressions.triage import link_bug, triage
from reports.tasks import refresh_series_task
from runs.importer import submit_and_import
from runs.models import Bundle, Run
from runs.signals import announce_import
from tests import live

pytestmark = [pytest.mark.slow(60), pytest.mark.worker, pytest.mark.services, pytest.mark.django_db(transaction=True)]

FIRST = ("my5651", "my5744", "my8044", "my8406", "my8407")
OLDER_POINT_RELEASE = ("my8043",)
NEWEST = ("my9400", "my9500")
SERVER = "8-core server"


@pytest.fixture
def mail() -> Iterator[SmtpServer]:
    with smtp_server() as server:
        yield server


@pytest.fixture
def worker(mail: SmtpServer) -> Iterator[Callable[..., subprocess.Popen[bytes]]]:
    with live.celery_workers("stories") as start:
        yield lambda: start(
            {
                "BENCHDASH_ALERT_RETRY_DELAY": "0.5",
                "BENCHDASH_BASE_URL": "https://bench.example.com",
                "EMAIL_URL": f"smtp://127.0.0.1:{mail.port}",
            }
        )


def _bundle(corpus: Path, builds: tuple[str, ...]) -> bytes:
    """The corpus's run directories of those builds (the v2 rebuild of 8.4.6 goes with 8.4.6) as one tarball."""
    source = corpus / "sysbench-mysql-small"
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        for run_dir in sorted(source.iterdir()):
            if run_dir.is_dir() and run_dir.name.split(".")[1].split("_")[0].removesuffix("v2") in builds:
                tar.add(run_dir, arcname=run_dir.name)
    return out.getvalue()


def _import(data: bytes, name: str) -> Bundle:
    report = submit_and_import(data, name=name, source=Bundle.Source.COMMAND, overrides={"server": SERVER})
    announce_import(report.bundle_id)  # the refresh, detection and alerts run on the worker
    return Bundle.objects.get(pk=report.bundle_id)


def _settled(since: float, mail: SmtpServer) -> None:
    """Wait until the worker has detected again after ``since``, has no task of this test left to run (the
    announcements detection queued among them), and every delivery has gone out by e-mail."""
    from benchdash.celery import app

    def detected() -> bool:
        newest = Regression.objects.order_by("-detected_at").values_list("detected_at", flat=True).first()
        return newest is not None and newest.timestamp() >= since

    wait_for(detected, 240, "detection on the worker")
    deadline = time.monotonic() + 120
    last = -1
    while time.monotonic() < deadline:
        # Idle twice in a row with the same count: a task between leaving the queue and being held unacknowledged
        # is not taken for idleness.
        count = Delivery.objects.count() if live.queue_idle(app.conf.task_default_queue) else -2
        if (
            count == last >= 0
            and not Delivery.objects.exclude(state=Delivery.State.SENT).exists()
            and len(mail.mails) == Delivery.objects.count()
        ):
            return
        last = count
        time.sleep(1)
    raise AssertionError("deliveries did not settle")


def _open_ids() -> set[int]:
    return {r.pk for r in Regression.objects.filter(releases="long-term") if r.is_open_story}


def _involves(story: Regression, versions: set[str]) -> bool:
    events = story.story_events or []
    return bool(versions & ({e["version"] for e in events} | {e["previous_version"] for e in events}))


def _every_old_link_leads_to_a_story(ids: set[int]) -> None:
    client = Client()
    for pk in ids:
        response = client.get(f"/regressions/{pk}/")
        if response.status_code == 302:
            response = client.get(response["Location"])
        assert response.status_code == 200, pk


def test_stories_keep_their_identity_and_are_told_once_through_imports_deletions_and_redetection(
    worker: Callable[..., subprocess.Popen[bytes]], corpus: Path, mail: SmtpServer
) -> None:
    worker()
    Subscription.objects.create(name="perf", emails="perf@example.com")

    # 1. Five releases: every open story is told once.
    since = time.time()
    first = _bundle(corpus, FIRST)
    _import(first, "first.tar.gz")
    _settled(since, mail)
    told_first = set(Delivery.objects.values_list("story_id", flat=True))
    assert told_first == _open_ids() and len(told_first) > 0
    assert len(mail.mails) == Delivery.objects.count() == len(told_first)
    point_queries = Regression.objects.get(releases="long-term", group="point queries", microbenchmark=None)
    triage([point_queries.pk], Regression.State.ACKNOWLEDGED, None, "seen it")
    link_bug(point_queries, "MySQL bug 102037")
    at_8_0_44 = set(
        Regression.objects.filter(releases="long-term", metric="qps", arrived_in__text="8.0.44").values_list(
            "pk", flat=True
        )
    )
    assert at_8_0_44

    # 2. The same bundle again: already imported, nothing detected, nobody told.
    again = submit_and_import(first, name="first-again.tar.gz", source=Bundle.Source.COMMAND)
    assert again.already_imported

    # 3. An older point release, 8.0.43: the 8.0 losses now arrive there. The same records move (same ids,
    # triage, bugs, deliveries); only a story that is new and involves 8.0.43 may be told.
    deliveries_before = Delivery.objects.count()
    since = time.time()
    _import(_bundle(corpus, OLDER_POINT_RELEASE), "older.tar.gz")
    _settled(since, mail)
    # The stories first seen in 8.0.44 are told from where 8.0.43 places them now, in the same records.
    moved = set(
        Regression.objects.filter(pk__in=at_8_0_44, metric="qps")
        .exclude(arrived_in__text="8.0.44")
        .values_list("pk", flat=True)
    )
    # A record nobody touched or was told of may go; every story told is still there.
    assert moved and Regression.objects.filter(pk__in=told_first).count() == len(told_first)
    point_queries.refresh_from_db()
    assert point_queries.state == Regression.State.BUG_FILED and [b.key for b in point_queries.bugs.all()] == ["102037"]
    assert Regression.objects.filter(pk__in=told_first).count() == len(told_first)
    new_deliveries = Delivery.objects.order_by("pk")[deliveries_before:]
    assert all(_involves(d.story, {"8.0.43"}) for d in new_deliveries)  # type: ignore[arg-type]
    after_older = Delivery.objects.count()

    # 4. The newest releases: the default view reads 9.5.0 (provisional), not 9.4.0; stories last until 9.5.0.
    since = time.time()
    _import(_bundle(corpus, NEWEST), "newest.tar.gz")
    _settled(since, mail)
    point_queries.refresh_from_db()
    assert point_queries.persists_until.text == "9.5.0" and point_queries.until_provisional  # type: ignore[union-attr]
    new_deliveries = Delivery.objects.order_by("pk")[after_older:]
    assert all(_involves(d.story, {"9.4.0", "9.5.0"}) for d in new_deliveries)  # type: ignore[arg-type]
    after_newest = Delivery.objects.count()

    # 5. Re-detection on the worker: nothing changes, nobody is told.
    since = time.time()
    server_id, workload_id = Run.objects.values_list("server_id", "workload_id").first()  # type: ignore[misc]
    detect_regressions_task.delay(server_id, workload_id).get(timeout=240)
    _settled(since, mail)
    assert Delivery.objects.count() == after_newest

    # 6. The 8.0.43 runs deleted, the series refreshed: the losses arrive in 8.0.44 again, in the same records;
    # what anyone was told or touched is still there, and its old link leads to a story.
    told = set(Delivery.objects.values_list("story_id", flat=True))
    Run.objects.filter(build__version__text="8.0.43").delete()
    since = time.time()
    refresh_series_task.delay(server_id, workload_id).get(timeout=240)
    _settled(since, mail)
    # The same records tell them again.
    assert Regression.objects.filter(pk__in=moved, no_longer_detected=False).count() == len(moved)
    assert Regression.objects.filter(pk__in=told).count() == len(told)
    _every_old_link_leads_to_a_story(told | {point_queries.pk})
    # Told once per story identity, one e-mail each, over the whole history.
    identities = list(Delivery.objects.values_list("identity", flat=True))
    assert len(identities) == len(set(identities)) == len(mail.mails)
    print(
        f"deliveries: {len(told_first)} after the first import, {after_older} after 8.0.43, {after_newest} after "
        f"9.x, {Delivery.objects.count()} after re-detection and deleting 8.0.43"
    )
