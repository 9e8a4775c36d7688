"""The alerts page: triagers and admins add and edit subscriptions; bad input is a form error; failures show."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client

from regressions.models import Delivery, Regression, Subscription
from runs.models import Dbms, Run

pytestmark = pytest.mark.django_db

URL = "/regressions/alerts/"


def _client(user_with_role: Callable[..., Any], role: str) -> Client:
    client = Client()
    client.force_login(user_with_role(role))
    return client


def _form(**changes: Any) -> dict[str, Any]:
    return {"name": "perf team", "webhook_url": "", "webhook_format": "json", "emails": "", "active": "on", **changes}


@pytest.mark.parametrize("role", ["triager", "admin"])
def test_a_triager_or_admin_adds_a_webhook_subscription_filtered_by_dbms(
    user_with_role: Callable[..., Any], role: str
) -> None:
    mysql = Dbms.objects.create(name="MySQL")
    client = _client(user_with_role, role)
    response = client.post(
        URL, _form(webhook_url="https://hooks.slack.example/T0/B0/secret", webhook_format="slack", dbms=mysql.pk)
    )
    assert response.status_code == 302 and response["Location"] == URL
    subscription = Subscription.objects.get()
    assert (subscription.webhook_format, subscription.dbms_id, subscription.active) == ("slack", mysql.pk, True)
    assert subscription.created_by is not None and subscription.created_by.groups.filter(name=role).exists()
    page = client.get(URL).content.decode()
    assert "perf team" in page and "DBMS MySQL" in page and "Slack webhook" in page
    # The list shows enough to tell webhooks apart, not their token; the edit page has the whole URL.
    assert "https://hooks.slack.example/…cret" in page and "/T0/B0/secret" not in page
    assert "https://hooks.slack.example/T0/B0/secret" in client.get(f"{URL}{subscription.pk}/").content.decode()


@pytest.mark.parametrize(
    ("url", "error"),
    [
        ("ftp://files.example.com/hook", "must start with http:// or https://"),
        ("javascript:alert(1)", "must start with http:// or https://"),
        ("file:///etc/passwd", "must start with http:// or https://"),
        ("http://", "needs a host"),
        ("http://example.com:99999/x", "port is not a number"),
    ],
)
def test_a_webhook_url_that_is_not_http_or_https_is_a_clear_form_error_and_nothing_is_stored(
    user_with_role: Callable[..., Any], url: str, error: str
) -> None:
    response = _client(user_with_role, "triager").post(URL, _form(webhook_url=url))
    assert response.status_code == 200
    assert error in response.context["form"].errors["webhook_url"][0]
    assert error in response.content.decode()
    assert not Subscription.objects.exists()


def test_a_subscription_needs_a_webhook_or_addresses_and_the_addresses_must_be_addresses(
    user_with_role: Callable[..., Any],
) -> None:
    client = _client(user_with_role, "triager")
    response = client.post(URL, _form())
    assert "give a webhook URL, e-mail addresses, or both" in response.content.decode()
    response = client.post(URL, _form(emails="perf@example.com, not-an-address"))
    assert "not an e-mail address: not-an-address" in response.content.decode()
    assert not Subscription.objects.exists()
    client.post(URL, _form(emails="perf@example.com;\nlead@example.com"))
    assert Subscription.objects.get().addresses == ["perf@example.com", "lead@example.com"]


@pytest.mark.parametrize("role", ["viewer", "uploader"])
def test_other_roles_can_neither_read_nor_change_subscriptions(user_with_role: Callable[..., Any], role: str) -> None:
    subscription = Subscription.objects.create(name="secret hook", webhook_url="https://hooks.example.com/t0k3n")
    client = _client(user_with_role, role)
    assert client.get(URL).status_code == 403
    assert client.post(URL, _form(emails="x@example.com")).status_code == 403
    assert client.post(f"{URL}{subscription.pk}/", _form(active="")).status_code == 403
    assert Subscription.objects.count() == 1 and Subscription.objects.get().active
    # The regression list links the page only for those who may open it.
    assert URL not in client.get("/regressions/").content.decode()


def test_editing_pauses_a_subscription(user_with_role: Callable[..., Any]) -> None:
    subscription = Subscription.objects.create(name="perf", emails="perf@example.com")
    client = _client(user_with_role, "triager")
    assert URL in client.get("/regressions/").content.decode()
    page = client.get(f"{URL}{subscription.pk}/")
    assert page.status_code == 200 and "perf@example.com" in page.content.decode()
    response = client.post(f"{URL}{subscription.pk}/", _form(name="perf", emails="perf@example.com", active=""))
    assert response.status_code == 302
    subscription.refresh_from_db()
    assert not subscription.active
    response = client.post(f"{URL}{subscription.pk}/", _form(name="perf", webhook_url="gopher://x"))
    assert response.status_code == 200 and "http:// or https://" in response.content.decode()
    subscription.refresh_from_db()
    assert subscription.webhook_url == ""


def test_the_page_shows_failed_and_retrying_deliveries_with_their_last_error_and_attempts(
    small_base: Run, user_with_role: Callable[..., Any], django_assert_max_num_queries: Any
) -> None:
    from regressions.detection import detect_regressions

    detect_regressions(small_base.server_id, small_base.workload_id)
    stories = [r for r in Regression.objects.order_by("pk") if r.is_open_story]
    down = Subscription.objects.create(name="down hook", webhook_url="https://hooks.example.com/down")
    fine = Subscription.objects.create(name="fine", emails="ok@example.com")
    Delivery.objects.create(
        story=stories[0], subscription=down, state="failed", attempts=6, last_error="webhook: HTTP 500: boom"
    )
    Delivery.objects.create(
        story=stories[1], subscription=down, state="retrying", attempts=2, last_error="webhook: TimeoutError"
    )
    for story in stories:
        Delivery.objects.create(story=story, subscription=fine, state="sent", attempts=1)
    client = _client(user_with_role, "triager")
    with django_assert_max_num_queries(12):
        page = client.get(URL).content.decode()
    assert "webhook: HTTP 500: boom" in page and "6 attempts" in page
    assert "webhook: TimeoutError" in page and "2 attempts" in page
    assert f'href="/regressions/{stories[0].pk}/"' in page
    rows = {s.name: s for s in client.get(URL).context["subscriptions"]}
    assert (rows["down hook"].failed, rows["down hook"].retrying, rows["down hook"].sent) == (1, 1, 0)
    assert (rows["fine"].sent, rows["fine"].problems) == (len(stories), [])


def test_the_admin_role_manages_subscriptions_and_reads_deliveries_in_the_django_admin(
    user_with_role: Callable[..., Any],
) -> None:
    admin_user = user_with_role("admin")
    admin_user.is_staff = True
    admin_user.save()
    subscription = Subscription.objects.create(name="perf", emails="perf@example.com")
    client = Client()
    client.force_login(admin_user)
    for path in (
        "/admin/regressions/subscription/",
        "/admin/regressions/subscription/add/",
        f"/admin/regressions/subscription/{subscription.pk}/change/",
        "/admin/regressions/delivery/",
    ):
        assert client.get(path).status_code == 200, path
    response = client.post("/admin/regressions/subscription/add/", {**_form(webhook_url="ftp://x"), **_INLINE})
    assert response.status_code == 200 and Subscription.objects.count() == 1  # the same validation as the page
    assert client.get("/admin/regressions/delivery/add/").status_code == 403  # made by the alerts only


# The management form of the deliveries shown inline on a subscription's admin page.
_INLINE = {"deliveries-TOTAL_FORMS": "0", "deliveries-INITIAL_FORMS": "0"}


def test_after_fixing_its_url_a_triager_sends_a_subscriptions_failed_alerts_again(
    small_base: Run, user_with_role: Callable[..., Any], settings: Any, django_capture_on_commit_callbacks: Any
) -> None:
    from regressions.detection import detect_regressions
    from regressions.tasks import announce_story_task
    from regressions.tests.loopback import http_receiver
    from tests.live import closed_port

    settings.BENCHDASH_ALERT_RETRY_DELAY, settings.BENCHDASH_ALERT_MAX_ATTEMPTS = 0, 2
    settings.BENCHDASH_ALERT_NETWORKS = ["127.0.0.1/32"]  # the receiver is on loopback
    detect_regressions(small_base.server_id, small_base.workload_id)
    story_ids = sorted(r.pk for r in Regression.objects.all() if r.is_open_story)[:2]
    subscription = Subscription.objects.create(name="moved", webhook_url=f"http://127.0.0.1:{closed_port()}/hook")
    for story_id in story_ids:
        announce_story_task.delay(story_id)
    assert set(Delivery.objects.values_list("state", "attempts")) == {("failed", 2)}
    client = _client(user_with_role, "triager")
    assert "Send failed again" in client.get(URL).content.decode()
    assert _client(user_with_role, "viewer").post(f"{URL}{subscription.pk}/retry").status_code == 403
    with http_receiver() as receiver:
        Subscription.objects.filter(pk=subscription.pk).update(webhook_url=receiver.url())
        with django_capture_on_commit_callbacks(execute=True):
            response = client.post(f"{URL}{subscription.pk}/retry")
        assert response.status_code == 302
        assert sorted(r.json()["story"]["id"] for r in receiver.requests) == story_ids
    assert set(Delivery.objects.values_list("state", "attempts")) == {("sent", 1)}
    # Nothing failed any more: asking again sends nothing.
    with django_capture_on_commit_callbacks(execute=True):
        client.post(f"{URL}{subscription.pk}/retry")
    assert "no failed alerts" in client.get(URL).content.decode()
