"""The regression list is kept in the page cache like the other pages, under a stamp of the stories, their
triage and their bugs: a second visitor is served without rendering, and triage or detection shows at once."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from regressions.detection import detect_regressions
from regressions.models import Regression
from runs.models import Run

pytestmark = pytest.mark.django_db

State = Regression.State
URL = "/regressions/"


@pytest.fixture
def detected(small_base: Run) -> list[Regression]:
    detect_regressions(small_base.server_id, small_base.workload_id)
    return list(Regression.objects.filter(metric="qps").order_by("pk"))


def _rendered(client: Client, url: str = URL, **params: str) -> tuple[bool, str]:
    response = client.get(url, params)
    assert response.status_code == 200
    # A page served from the cache renders no template.
    return bool(response.templates), response.content.decode()


def test_a_second_visit_is_served_from_the_cache_with_the_same_stories(detected: list[Regression]) -> None:
    rendered, first = _rendered(Client())
    assert rendered
    rendered, second = _rendered(Client())
    assert not rendered
    assert first.count("/regressions/") == second.count("/regressions/")
    assert f"/regressions/{detected[0].pk}/" in second


def test_triage_and_a_bug_link_show_at_once(
    detected: list[Regression], user_with_role: Callable[..., User], django_capture_on_commit_callbacks: object
) -> None:
    triager = Client()
    triager.force_login(user_with_role("triager", username="engineer"))
    _rendered(triager, state="any")
    assert not _rendered(triager, state="any")[0]
    story = detected[0]
    response = triager.post(
        reverse("regressions:regression_bulk"), {"ids": [story.pk], "action": State.NOISE, "next": URL}
    )
    assert response.status_code == 302
    rendered, html = _rendered(triager, state="noise")
    assert rendered and f"/regressions/{story.pk}/" in html
    rendered, _ = _rendered(triager, state="any")
    assert rendered, "triage changed the stamp: the cached list is not served again"

    response = triager.post(
        reverse("regressions:regression_bulk"),
        {"ids": [story.pk], "action": "link", "bug": "MDEV-34178", "next": URL},
    )
    assert response.status_code == 302
    rendered, html = _rendered(triager, state="any")
    assert rendered and "MDEV-34178" in html


def test_detection_dropping_a_story_shows_at_once(detected: list[Regression]) -> None:
    _rendered(Client(), state="any")
    assert not _rendered(Client(), state="any")[0]
    gone = detected[-1]
    Regression.objects.filter(pk=gone.pk).delete()
    rendered, html = _rendered(Client(), state="any")
    assert rendered and f"/regressions/{gone.pk}/" not in html


def test_made_up_parameters_share_the_entry_and_never_reach_the_page(detected: list[Regression]) -> None:
    _rendered(Client(), state="any")
    rendered, html = _rendered(Client(), state="any", utm_source="xyzzy-made-up")
    # Only the visitor's own account links (never cached) may carry the address as typed.
    assert not rendered and "xyzzy-made-up" not in html.split("<main", 1)[1]


def test_signed_in_and_anonymous_visitors_without_roles_get_their_own_hint(
    detected: list[Regression], user_with_role: Callable[..., User]
) -> None:
    _rendered(Client())
    viewer = Client()
    viewer.force_login(user_with_role("viewer", username="reader"))
    rendered, html = _rendered(viewer)
    assert rendered, "the anonymous copy is not served to a signed-in visitor"
    assert "Log in</a> to triage" not in html and "need the triager role" in html
