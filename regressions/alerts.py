"""Telling subscribers about new open regression stories: once per story and subscription, with retries.

``announce(story_id)`` makes one ``Delivery`` row per matching active subscription (the database's unique
key on story + subscription makes a second announcement of the same story add nothing) and returns the
rows still to send. ``deliver(delivery_id)`` claims a row by one conditional update, sends what has not
gone out yet (the webhook, the e-mail) and records the outcome: sent, a retry after an exponentially
growing wait, or failed after ``BENCHDASH_ALERT_MAX_ATTEMPTS`` attempts with the last error kept. The
Celery tasks in ``regressions.tasks`` only call these two.

Once a channel went out it is marked before anything else is tried, so a failure of the other channel
never repeats it. The one case that can repeat a message is a worker that dies after the receiver
accepted it and before the mark was written; its claim is taken over only after the task's hard time
limit, when that worker certainly stopped sending.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.core.mail import EmailMessage, get_connection
from django.db.models import F, Q
from django.utils import timezone

from benchdash import outbound
from regressions import alert_message
from regressions.models import Delivery, Regression, Subscription, story_identity

log = logging.getLogger(__name__)

# The delivery task's hard time limit (``regressions.tasks``) plus a margin: a claim older than this
# belongs to a worker that is gone.
SEND_TIME_LIMIT = 120
STALE_CLAIM = timedelta(seconds=SEND_TIME_LIMIT + 60)
# Announcements and deliveries whose task message was lost (the broker down when detection committed, or
# when a retry was scheduled) are sent again once they are this late; the sweep looks this far back.
LOST_AFTER = timedelta(minutes=2)
LOOKBACK = timedelta(days=1)

DeliveryState = Delivery.State


class SendError(Exception):
    """A channel could not deliver; the message says why, for the subscription page."""


@dataclass(frozen=True)
class Outcome:
    state: str  # a Delivery.State, or "skipped" when the row was not ours to send
    retry_in: float | None = None
    error: str = ""


def matching_subscriptions(story: Regression) -> Any:
    """Active subscriptions whose DBMS, server and workload (blank: any) match the story's series."""
    return Subscription.objects.filter(
        Q(dbms__isnull=True) | Q(dbms_id=story.arrived_in.dbms_id),
        Q(server__isnull=True) | Q(server_id=story.server_id),
        Q(workload__isnull=True) | Q(workload_id=story.workload_id),
        active=True,
    )


def announce(story_id: int, *, subscribed_before: datetime | None = None) -> list[int]:
    """Make the story's deliveries (once) and return the ids of those still waiting for a first send.

    ``subscribed_before`` leaves out subscriptions made later: the sweep for lost announcements must not
    send a new subscriber the stories of the day before.
    """
    story = Regression.objects.select_related("arrived_in").filter(pk=story_id).first()
    if story is None:
        return []  # re-detection removed it before the announcement ran: nothing to tell
    subscriptions_qs = matching_subscriptions(story)
    if subscribed_before is not None:
        subscriptions_qs = subscriptions_qs.filter(created_at__lte=subscribed_before)
    subscriptions = list(subscriptions_qs.values_list("pk", flat=True))
    # Unique per story and per identity (series, subject, metric, direction, arrival): a story told before under
    # another record (superseded, or detected again) adds no row, so nobody is told twice.
    identity = story_identity(story)
    Delivery.objects.bulk_create(
        [Delivery(story_id=story_id, subscription_id=pk, identity=identity) for pk in subscriptions],
        ignore_conflicts=True,
    )
    return list(
        Delivery.objects.filter(
            story_id=story_id, subscription_id__in=subscriptions, state=DeliveryState.PENDING
        ).values_list("pk", flat=True)
    )


def lost(now: datetime | None = None) -> list[int]:
    """Deliveries whose task was lost, after making those of new stories whose announcement was lost.

    Run every minute by beat and whenever a worker (re)connects: a story opened in the last day that has
    no delivery to a subscription that existed when it opened gets one, and every delivery that is late
    (pending, a retry past its time, a claim whose worker died) is returned to be sent. Sending one twice
    is harmless: only one sender can claim it.
    """
    now = now or timezone.now()
    if not Subscription.objects.filter(active=True).exists():
        return []
    stories = Regression.objects.filter(
        # The stories detection announces (``Regression.is_open_story`` and news: new, and involving a version of
        # the import that found it); a HW metric's own story is not one.
        news=True,
        metric="qps",
        kind=Regression.Kind.REGRESSION,
        fixed_in__isnull=True,
        outlier=False,
        folded_into__isnull=True,
        no_longer_detected=False,
        created_at__gte=now - LOOKBACK,
        created_at__lte=now - LOST_AFTER,
    ).values_list("pk", "created_at")
    for story_id, opened_at in stories:
        announce(story_id, subscribed_before=opened_at)
    late = LOST_AFTER
    return list(
        Delivery.objects.filter(
            Q(state=DeliveryState.PENDING, created_at__lte=now - late)
            | Q(state=DeliveryState.RETRYING, next_attempt_at__lte=now - late)
            | Q(state=DeliveryState.SENDING, claimed_at__lt=now - STALE_CLAIM),
            created_at__gte=now - LOOKBACK,
        ).values_list("pk", flat=True)
    )


def retry_failed(subscription_id: int) -> list[int]:
    """Give a subscription's failed deliveries a fresh round of attempts (its URL fixed, say); their ids.

    The last error stays until a send succeeds, so the page keeps saying what went wrong.
    """
    ids = list(
        Delivery.objects.filter(subscription_id=subscription_id, state=DeliveryState.FAILED).values_list(
            "pk", flat=True
        )
    )
    Delivery.objects.filter(pk__in=ids, state=DeliveryState.FAILED).update(
        state=DeliveryState.PENDING, attempts=0, next_attempt_at=None, claimed_at=None
    )
    return ids


def _claimable(now: Any) -> Q:
    waiting = Q(state__in=[DeliveryState.PENDING, DeliveryState.RETRYING]) & (
        Q(next_attempt_at__isnull=True) | Q(next_attempt_at__lte=now)
    )
    abandoned = Q(state=DeliveryState.SENDING, claimed_at__lt=now - STALE_CLAIM)
    return waiting | abandoned


def deliver(delivery_id: int) -> Outcome:
    """Claim one delivery and send what is left of it; safe to call any number of times, concurrently too."""
    now = timezone.now()
    claimed = Delivery.objects.filter(_claimable(now), pk=delivery_id).update(
        state=DeliveryState.SENDING, claimed_at=now, attempts=F("attempts") + 1
    )
    if not claimed:
        return Outcome("skipped")  # sent, given up, held by another sender, or waiting for its retry time
    delivery = Delivery.objects.select_related(
        "subscription",
        "story__server",
        "story__workload",
        "story__microbenchmark",
        "story__arrived_in__dbms",
        "story__previous_version",
    ).get(pk=delivery_id)
    ours = Delivery.objects.filter(pk=delivery_id, state=DeliveryState.SENDING, claimed_at=now)
    subscription = delivery.subscription
    if not subscription.active:
        ours.update(state=DeliveryState.FAILED, last_error="the subscription was paused before this was sent")
        return Outcome(DeliveryState.FAILED)

    if delivery.story is None:
        ours.update(state=DeliveryState.FAILED, last_error="the story was deleted before this was sent")
        return Outcome(DeliveryState.FAILED)
    facts = facts_for(delivery.story)
    errors = []
    if subscription.webhook_url and delivery.webhook_sent_at is None:
        try:
            post_webhook(subscription.webhook_url, alert_message.webhook_body(facts, subscription.webhook_format))
        except SendError as exc:
            errors.append(f"webhook: {exc}")
        else:
            ours.update(webhook_sent_at=timezone.now())
    if subscription.addresses and delivery.email_sent_at is None:
        try:
            send_email(subscription.addresses, alert_message.subject_line(facts), alert_message.text(facts))
        except SendError as exc:
            errors.append(f"e-mail: {exc}")
        else:
            ours.update(email_sent_at=timezone.now())

    if not errors:
        ours.update(state=DeliveryState.SENT, sent_at=timezone.now(), next_attempt_at=None)
        return Outcome(DeliveryState.SENT)
    error = "; ".join(errors)
    attempts = delivery.attempts
    if attempts >= settings.BENCHDASH_ALERT_MAX_ATTEMPTS:
        ours.update(state=DeliveryState.FAILED, last_error=error, next_attempt_at=None)
        log.warning("alert %s gave up after %s attempts: %s", delivery_id, attempts, error)
        return Outcome(DeliveryState.FAILED, error=error)
    wait = alert_message.backoff(
        attempts, settings.BENCHDASH_ALERT_RETRY_DELAY, settings.BENCHDASH_ALERT_RETRY_MAX_DELAY
    )
    ours.update(
        state=DeliveryState.RETRYING, last_error=error, next_attempt_at=timezone.now() + timedelta(seconds=wait)
    )
    log.info("alert %s attempt %s failed, retrying in %.1f s: %s", delivery_id, attempts, wait, error)
    return Outcome(DeliveryState.RETRYING, retry_in=wait, error=error)


def facts_for(story: Regression) -> alert_message.AlertFacts:
    return alert_message.AlertFacts(
        story_id=story.pk,
        url=settings.BENCHDASH_BASE_URL + story.get_absolute_url(),
        dbms=story.arrived_in.dbms.name,
        server=story.server.name,
        workload=story.workload.name,
        subject=story.subject,
        is_group=story.is_group,
        kind=story.kind,
        change=story.change,
        level_before=story.level_before,
        level_after=story.level_after,
        arrived_in=story.arrived_in.text,
        previous_version=story.previous_version.text if story.previous_version_id else None,  # type: ignore[union-attr]
        noise=story.noise,
        noise_source=story.noise_source,
        threshold=story.threshold,
        builds=tuple(str(build) for build in story.builds or ()),
        bugs=tuple(alert_message.BugLink(bug.label, bug.url) for bug in story.bugs.all()),
        summary=story.summary,
        figures=story.figures,
    )


def post_webhook(url: str, body: dict[str, Any]) -> None:
    """POST ``body`` as JSON through the outbound guard (allowed networks only, the checked address, no
    redirects); any answer but 2xx, a refusal or no answer is a SendError with the guard's classified reason
    (a status, never the answer's body)."""
    try:
        outbound.send_json(url, body, user_agent="benchdash-alerts")
    except outbound.OutboundRefused as exc:
        raise SendError(exc.reason) from exc


def send_email(addresses: list[str], subject: str, body: str) -> None:
    """One message to every address, through the configured backend (SMTP from EMAIL_URL)."""
    try:
        connection = get_connection(fail_silently=False)
        EmailMessage(subject, body, to=addresses, connection=connection).send()
    except Exception as exc:  # smtplib, socket and backend errors alike: each is a failed attempt to retry
        raise SendError(f"{type(exc).__name__}: {exc}") from exc
