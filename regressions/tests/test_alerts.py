"""New open regression stories are told to subscribers once: webhooks and e-mail to real loopback receivers."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from regressions import alerts
from regressions.detection import detect_regressions
from regressions.models import Delivery, Regression, Subscription
from regressions.tasks import announce_story_task, deliver_alert_task
from regressions.tests.loopback import HttpReceiver, SmtpServer, http_receiver, smtp_server
from regressions.triage import link_bug
from runs.models import Dbms, Run, Server

pytestmark = pytest.mark.django_db

SENT = Delivery.State.SENT


@pytest.fixture(autouse=True)
def _alert_settings(settings: Any) -> None:
    settings.BENCHDASH_BASE_URL = "https://bench.example.com"
    # Eager tasks ignore countdowns: without a wait the retries run at once, still one claim at a time.
    settings.BENCHDASH_ALERT_RETRY_DELAY = 0
    settings.BENCHDASH_ALERT_MAX_ATTEMPTS = 4
    # The receivers listen on loopback, which outbound requests may reach only when an administrator says so.
    settings.BENCHDASH_ALERT_NETWORKS = ["127.0.0.1/32"]


@pytest.fixture
def receiver() -> Iterator[HttpReceiver]:
    with http_receiver() as r:
        yield r


@pytest.fixture
def smtp(settings: Any) -> Iterator[SmtpServer]:
    with smtp_server() as server:
        # pytest-django swaps in the in-memory backend; these tests go through Django's real SMTP backend.
        settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
        settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", server.port
        settings.EMAIL_USE_TLS = settings.EMAIL_USE_SSL = False
        yield server


def _detect(small_base: Run, capture: Any) -> list[int]:
    with capture(execute=True):
        summary = detect_regressions(small_base.server_id, small_base.workload_id)
    assert summary.opened
    return summary.opened


def test_each_new_open_story_is_posted_once_to_a_webhook_with_what_an_engineer_needs(
    small_base: Run, receiver: HttpReceiver, django_capture_on_commit_callbacks: Any
) -> None:
    subscription = Subscription.objects.create(name="perf", webhook_url=receiver.url())
    opened = _detect(small_base, django_capture_on_commit_callbacks)
    bodies = {r.json()["story"]["id"]: r.json() for r in receiver.accepted()}
    assert set(bodies) == set(opened) and len(receiver.requests) == len(opened)
    assert all(r.headers["Content-Type"] == "application/json" for r in receiver.requests)

    story = Regression.objects.select_related("arrived_in__dbms", "previous_version").get(pk=opened[0])
    body = bodies[story.pk]["story"]
    assert body["url"] == f"https://bench.example.com/regressions/{story.pk}/"
    assert (body["dbms"], body["server"], body["workload"]) == (
        "MySQL",
        small_base.server.name,
        small_base.workload.name,
    )
    assert body["subject"] == story.subject and body["change"] == pytest.approx(story.change)
    assert body["arrived_in"] == story.arrived_in.text
    assert body["previous_version"] == story.previous_version.text  # type: ignore[union-attr]
    assert body["noise"] == pytest.approx(story.noise) and body["builds"] == story.builds and story.builds
    assert f"Story: https://bench.example.com/regressions/{story.pk}/" in bodies[story.pk]["text"]
    deliveries = Delivery.objects.filter(subscription=subscription)
    assert deliveries.count() == len(opened) and set(deliveries.values_list("state", flat=True)) == {SENT}
    assert set(deliveries.values_list("attempts", flat=True)) == {1}


def test_a_slack_webhook_gets_the_text_shape_with_the_linked_bugs(
    small_base: Run, receiver: HttpReceiver, django_capture_on_commit_callbacks: Any
) -> None:
    detect_regressions(small_base.server_id, small_base.workload_id)
    story = Regression.objects.filter(kind="regression", fixed_in__isnull=True, folded_into__isnull=True).first()
    assert story is not None
    link_bug(story, "MDEV-33894", user=None)
    Subscription.objects.create(name="#perf", webhook_url=receiver.url("/slack"), webhook_format="slack")
    announce_story_task.delay(story.pk)
    (request,) = receiver.requests
    assert request.path == "/slack" and set(request.json()) == {"text"}
    text = request.json()["text"]
    assert story.subject in text and story.arrived_in.text in text and "MySQL" in text
    assert "MDEV-33894 <https://jira.mariadb.org/browse/MDEV-33894>" in text
    assert f"https://bench.example.com/regressions/{story.pk}/" in text


def test_a_webhook_that_fails_twice_is_retried_until_it_takes_the_story(
    small_base: Run, django_capture_on_commit_callbacks: Any
) -> None:
    with http_receiver(fail_first=2) as receiver:
        subscription = Subscription.objects.create(name="flaky", webhook_url=receiver.url())
        detect_regressions(small_base.server_id, small_base.workload_id)
        story = Regression.objects.filter(pk__in=_open_story_ids()).first()
        assert story is not None
        announce_story_task.delay(story.pk)
    assert [r.answered for r in receiver.requests] == [503, 503, 200]
    delivery = Delivery.objects.get(story=story, subscription=subscription)
    assert (delivery.state, delivery.attempts) == (SENT, 3)
    assert delivery.last_error == "webhook: HTTP 503"  # kept: it took retries; the answer's body never is


def test_a_webhook_that_keeps_failing_is_given_up_after_the_bounded_attempts_with_its_error(
    small_base: Run, settings: Any
) -> None:
    with http_receiver(fail_first=100, fail_status=500) as receiver:
        subscription = Subscription.objects.create(name="down", webhook_url=receiver.url())
        detect_regressions(small_base.server_id, small_base.workload_id)
        story_id = _open_story_ids()[0]
        announce_story_task.delay(story_id)
    assert len(receiver.requests) == settings.BENCHDASH_ALERT_MAX_ATTEMPTS == 4
    delivery = Delivery.objects.get(story_id=story_id, subscription=subscription)
    assert delivery.state == Delivery.State.FAILED and delivery.attempts == 4
    assert delivery.last_error == "webhook: HTTP 500"
    # Asked again (a redelivered task): a failed delivery is not claimed again.
    assert alerts.deliver(delivery.pk).state == "skipped"
    assert len(receiver.requests) == 4


def test_a_receiver_nobody_listens_on_is_a_retried_error_not_a_crash(small_base: Run) -> None:
    from tests.live import closed_port

    subscription = Subscription.objects.create(name="gone", webhook_url=f"http://127.0.0.1:{closed_port()}/x")
    detect_regressions(small_base.server_id, small_base.workload_id)
    story_id = _open_story_ids()[0]
    announce_story_task.delay(story_id)
    delivery = Delivery.objects.get(story_id=story_id, subscription=subscription)
    assert delivery.state == Delivery.State.FAILED
    assert delivery.last_error == "webhook: no answer: the connection failed or timed out"


@pytest.mark.parametrize(
    "url",
    ["http://169.254.169.254/latest/meta-data/", "http://[::ffff:169.254.169.254]/x", "http://0.0.0.0:8080/x"],
)
def test_a_webhook_on_a_link_local_or_metadata_address_is_refused_without_a_connection(
    small_base: Run, url: str
) -> None:
    subscription = Subscription.objects.create(name="metadata", webhook_url=url)
    detect_regressions(small_base.server_id, small_base.workload_id)
    story_id = _open_story_ids()[0]
    announce_story_task.delay(story_id)
    delivery = Delivery.objects.get(story_id=story_id, subscription=subscription)
    assert delivery.state == Delivery.State.FAILED
    assert "refused: the host is not in the networks allowed" in delivery.last_error


def test_e_mail_goes_through_djangos_smtp_backend_to_each_address(
    small_base: Run, smtp: SmtpServer, django_capture_on_commit_callbacks: Any
) -> None:
    Subscription.objects.create(name="team", emails="a@example.com, b@example.com")
    opened = _detect(small_base, django_capture_on_commit_callbacks)
    assert len(smtp.mails) == len(opened)
    story = Regression.objects.select_related("arrived_in__dbms").get(pk=opened[0])
    mail = next(m for m in smtp.mails if f"/regressions/{story.pk}/" in m.body)
    assert sorted(mail.recipients) == ["a@example.com", "b@example.com"]
    assert mail.subject.startswith(f"[benchdash] regression {story.change_text} in MySQL {story.arrived_in.text}")
    for line in ("Series: MySQL on", "Arrived in:", "Noise: σ", "Builds:", "Bugs: none linked"):
        assert line in mail.body
    assert f"Story: https://bench.example.com/regressions/{story.pk}/" in mail.body


def test_when_mail_fails_the_retry_sends_the_mail_but_not_the_webhook_again(
    small_base: Run, receiver: HttpReceiver, settings: Any
) -> None:
    with smtp_server(refuse_first=1) as server:
        settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
        settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", server.port
        subscription = Subscription.objects.create(name="both", webhook_url=receiver.url(), emails="x@example.com")
        detect_regressions(small_base.server_id, small_base.workload_id)
        story_id = _open_story_ids()[0]
        announce_story_task.delay(story_id)
    assert server.refused == 1 and len(server.mails) == 1
    assert len(receiver.requests) == 1  # the webhook went out on the first attempt and is not repeated
    delivery = Delivery.objects.get(story_id=story_id, subscription=subscription)
    assert (delivery.state, delivery.attempts) == (SENT, 2) and "451" in delivery.last_error


def test_a_story_is_never_sent_twice_to_a_subscriber_under_redetection_and_redelivered_tasks(
    small_base: Run, receiver: HttpReceiver, django_capture_on_commit_callbacks: Any
) -> None:
    subscription = Subscription.objects.create(name="perf", webhook_url=receiver.url())
    opened = _detect(small_base, django_capture_on_commit_callbacks)
    assert len(receiver.requests) == len(opened)
    # The same data again: the stories are not new, nothing is announced.
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        detect_regressions(small_base.server_id, small_base.workload_id)
    assert callbacks == []
    # Every message redelivered (the broker's at-least-once), and each delivery asked for directly.
    for story_id in opened:
        announce_story_task.delay(story_id)
    for delivery_id in Delivery.objects.values_list("pk", flat=True):
        deliver_alert_task.delay(delivery_id)
    assert len(receiver.requests) == len(opened)
    assert Delivery.objects.filter(subscription=subscription).count() == len(opened)


def test_the_database_refuses_a_second_delivery_row_for_the_same_story_and_subscription(small_base: Run) -> None:
    from django.db import IntegrityError, transaction

    detect_regressions(small_base.server_id, small_base.workload_id)
    subscription = Subscription.objects.create(name="perf", emails="p@example.com")
    story_id = _open_story_ids()[0]
    Delivery.objects.create(story_id=story_id, subscription=subscription)
    with pytest.raises(IntegrityError), transaction.atomic():
        Delivery.objects.create(story_id=story_id, subscription=subscription)


def test_only_subscriptions_matching_the_series_and_active_are_told(
    small_base: Run, receiver: HttpReceiver, django_capture_on_commit_callbacks: Any
) -> None:
    other_server = Server.objects.create(name="elsewhere")
    postgres, _ = Dbms.objects.get_or_create(name="Postgres")
    mysql = Dbms.objects.get(name="MySQL")
    told = [
        Subscription.objects.create(name="mysql here", webhook_url=receiver.url("/mysql"), dbms=mysql),
        Subscription.objects.create(
            name="this series",
            webhook_url=receiver.url("/series"),
            server=small_base.server,
            workload=small_base.workload,
        ),
    ]
    Subscription.objects.create(name="postgres", webhook_url=receiver.url("/pg"), dbms=postgres)
    Subscription.objects.create(name="other server", webhook_url=receiver.url("/other"), server=other_server)
    Subscription.objects.create(name="paused", webhook_url=receiver.url("/paused"), active=False)
    opened = _detect(small_base, django_capture_on_commit_callbacks)
    paths = sorted(r.path for r in receiver.requests)
    assert paths == sorted(["/mysql", "/series"] * len(opened))
    assert set(Delivery.objects.values_list("subscription_id", flat=True)) == {s.pk for s in told}


def test_an_import_reaches_detection_and_the_alerts_after_its_commit(
    corpus: Path, receiver: HttpReceiver, django_capture_on_commit_callbacks: Any
) -> None:
    """The command, the upload page and API (their worker task) and triggered or scheduled benchmark runs
    (``runner.benchmark.execute``) each announce the import; the series is refreshed after the commit,
    detection runs, and the new stories are announced after detection's commit."""
    from django.core.management import call_command

    Subscription.objects.create(name="perf", webhook_url=receiver.url())
    with django_capture_on_commit_callbacks(execute=True):
        call_command("import_bundle", str(corpus / "sysbench-mysql-small"), jobs=1, stdout=io.StringIO())
    opened = _open_story_ids()
    assert opened and sorted(r.json()["story"]["id"] for r in receiver.requests) == opened


def test_a_lost_announcement_is_sent_by_the_sweep_but_never_to_a_later_subscriber(
    small_base: Run, receiver: HttpReceiver, django_capture_on_commit_callbacks: Any
) -> None:
    from datetime import timedelta

    from django.utils import timezone

    from regressions.tasks import resend_lost_alerts

    Subscription.objects.create(name="perf", webhook_url=receiver.url("/perf"))
    # The broker was down when detection committed: the announcements never ran.
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        detect_regressions(small_base.server_id, small_base.workload_id)
    assert callbacks and not Delivery.objects.exists()
    later = Subscription.objects.create(name="newcomer", webhook_url=receiver.url("/new"))
    Subscription.objects.filter(pk=later.pk).update(created_at=timezone.now() + timedelta(minutes=1))
    assert alerts.lost() == []  # not late yet: their tasks may still be queued
    soon = timezone.now() + timedelta(minutes=3)
    pending = alerts.lost(soon)
    assert len(pending) == len(_open_story_ids())
    for delivery_id in pending:
        deliver_alert_task.delay(delivery_id)
    assert sorted(r.json()["story"]["id"] for r in receiver.requests) == _open_story_ids()
    assert {r.path for r in receiver.requests} == {"/perf"}
    # Everything sent: the next sweeps, even with the real task, find nothing.
    assert alerts.lost(soon) == [] and resend_lost_alerts.delay().get() == 0


def test_the_sweep_resends_a_retry_whose_message_was_lost_and_takes_over_a_dead_senders_claim(
    small_base: Run, receiver: HttpReceiver
) -> None:
    from datetime import timedelta

    from django.utils import timezone

    detect_regressions(small_base.server_id, small_base.workload_id)
    subscription = Subscription.objects.create(name="perf", webhook_url=receiver.url())
    story_ids = _open_story_ids()
    long_ago = timezone.now() - timedelta(minutes=10)
    retry = Delivery.objects.create(
        story_id=story_ids[0], subscription=subscription, state="retrying", attempts=1, next_attempt_at=long_ago
    )
    dead = Delivery.objects.create(
        story_id=story_ids[1], subscription=subscription, state="sending", attempts=1, claimed_at=long_ago
    )
    busy = Delivery.objects.create(
        story_id=story_ids[2], subscription=subscription, state="sending", attempts=1, claimed_at=timezone.now()
    )
    sent = Delivery.objects.create(story_id=story_ids[3], subscription=subscription, state="sent", attempts=1)
    lost = alerts.lost()
    assert set(lost) >= {retry.pk, dead.pk} and not set(lost) & {busy.pk, sent.pk}
    for delivery_id in (retry.pk, dead.pk, busy.pk, sent.pk):
        deliver_alert_task.delay(delivery_id)
    assert sorted(r.json()["story"]["id"] for r in receiver.requests) == story_ids[:2]
    assert Delivery.objects.get(pk=dead.pk).attempts == 2


def test_a_story_detection_no_longer_finds_is_kept_with_its_deliveries_when_someone_was_told(
    small_base: Run,
) -> None:
    from runs.models import Version

    detect_regressions(small_base.server_id, small_base.workload_id)
    ghost = Regression.objects.create(
        server=small_base.server,
        workload=small_base.workload,
        group="ghost",
        kind="regression",
        arrived_in=Version.objects.get(dbms__name="MySQL", text="8.0.44"),
    )
    subscription = Subscription.objects.create(name="perf", emails="perf@example.com")
    Delivery.objects.create(story=ghost, subscription=subscription, state="failed", attempts=6, last_error="x")
    summary = detect_regressions(small_base.server_id, small_base.workload_id)
    # What a subscriber was told stays on record: the story is kept, marked no longer detected, with its delivery.
    assert (summary.removed, summary.stale) == (0, 1)
    ghost.refresh_from_db()
    assert ghost.no_longer_detected and ghost.superseded_by_id is None
    assert Delivery.objects.get().story_id == ghost.pk
    # Even a story deleted by hand leaves the alert history: the delivery outlives it.
    ghost.delete()
    assert Delivery.objects.get().story_id is None and Subscription.objects.filter(pk=subscription.pk).exists()


def _open_story_ids() -> list[int]:
    # Alerts tell the default view's stories; the every-release view's are not news of their own.
    return sorted(r.pk for r in Regression.objects.filter(releases="long-term") if r.is_open_story)
