"""Both release views follow an import: the every-release records of a series that mixes long-term and short-term
releases are kept current by the automatic detection, a series of long-term releases only is listed over every
release by its long-term records, and a new story is announced once, from the default view only."""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from typing import Any

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from regressions.detection import detect_regressions
from regressions.models import Regression, Subscription
from regressions.tests.loopback import HttpReceiver, http_receiver
from runs import synthetic
from runs.importer import submit_and_import
from runs.models import Bundle, Run
from runs.signals import announce_import

pytestmark = pytest.mark.django_db

# Two long-term lines, the four short-term ones between them, then the next long-term line.
MARIADB = (
    "10.6.19",
    "10.6.20",
    "10.11.9",
    "10.11.10",
    "11.0.6",
    "11.1.6",
    "11.2.6",
    "11.3.2",
    "11.4.4",
    "11.4.5",
)
MYSQL_8_0 = ("8.0.26", "8.0.28", "8.0.30", "8.0.32", "8.0.34", "8.0.36")


@pytest.fixture(autouse=True)
def _alert_settings(settings: Any) -> None:
    settings.BENCHDASH_BASE_URL = "https://bench.example.com"
    # The receiver listens on loopback, which outbound requests may reach only when an administrator says so.
    settings.BENCHDASH_ALERT_NETWORKS = ["127.0.0.1/32"]
    settings.BENCHDASH_ALERT_RETRY_DELAY = 0


@pytest.fixture
def receiver() -> Iterator[HttpReceiver]:
    with http_receiver() as r:
        yield r


def _import(spec: synthetic.SeriesSpec, server: str, capture: Any) -> Run:
    """Import a synthetic series the way an upload does: detection and alerts run after the import's commit."""
    with capture(execute=True):
        report = submit_and_import(
            synthetic.bundle_bytes(spec),
            name=f"{server}.tgz",
            source=Bundle.Source.COMMAND,
            overrides={"server": server},
        )
        # What the command, the upload's task and a benchmark run do once the bundle is stored.
        announce_import(report.bundle_id)
    run = Run.objects.filter(server__name=server).first()
    assert run is not None
    return run


def _mixed_mariadb(capture: Any) -> Run:
    spec = synthetic.SeriesSpec(
        dbms_code="ma",
        versions=MARIADB,
        steps=(
            # update-index loses 30% in 10.11.9 and keeps it: a story in both views.
            synthetic.Step(2, "update-index", 0.7),
            # Scans lose 25% over the short-term 11.0 to 11.3 and are back in the LTS 11.4: only every release
            # sees that dip; the long-term lines never had it.
            synthetic.Step(4, "scan", 0.75),
            synthetic.Step(8, "scan", 1 / 0.75),
        ),
        seed=7,
    )
    return _import(spec, "mariadb-box", capture)


def _stories(view: str, **filters: Any) -> list[tuple[str, str, str]]:
    return sorted(
        (r.subject, r.kind, r.arrived_in.text)
        for r in Regression.objects.filter(releases=view, folded_into__isnull=True, outlier=False, metric="qps")
        .filter(**filters)
        .select_related("microbenchmark", "arrived_in")
    )


def _listed(client: Client, **query: str) -> set[int]:
    page = client.get(reverse("regressions:regression_list"), {"tab": "all", "state": "any", **query})
    assert page.status_code == 200
    return set(page.context["page"].paginator.object_list.values_list("pk", flat=True))


def test_an_import_keeps_the_every_release_view_of_a_mixed_series_current(
    django_capture_on_commit_callbacks: Any,
) -> None:
    _mixed_mariadb(django_capture_on_commit_callbacks)
    long_term, every = _stories("long-term"), _stories("all")
    assert ("update-index_range=100", "regression", "10.11.9") in long_term
    assert ("update-index_range=100", "regression", "10.11.9") in every
    # The short-term dip is a story over every release only, ending in the LTS that never had it.
    scans = Regression.objects.filter(releases="all", microbenchmark__test="scan", kind="regression", metric="qps")
    assert [(r.arrived_in.text, r.fixed_in.text if r.fixed_in else None) for r in scans] == [("11.0.6", "11.4.4")]
    assert not any(subject.startswith("scan") for subject, _, _ in long_term)
    # The long-term records say their series mixes both kinds: the every-release view does not list them.
    assert not Regression.objects.filter(releases="long-term", same_over_every_release=True).exists()
    used = {p["version"] for p in scans.get().evidence["points"] if p["used"]}
    assert {"11.0.6", "11.3.2"} <= used


def test_the_list_shows_each_view_of_a_mixed_series_from_its_own_records(
    django_capture_on_commit_callbacks: Any,
) -> None:
    _mixed_mariadb(django_capture_on_commit_callbacks)
    client = Client()
    long_term = _listed(client, releases="long-term")
    every = _listed(client, releases="all")
    assert long_term == set(Regression.objects.filter(releases="long-term").values_list("pk", flat=True))
    assert every == set(Regression.objects.filter(releases="all").values_list("pk", flat=True))
    assert long_term and every and not long_term & every
    page = client.get(reverse("regressions:regression_list"), {"tab": "all", "releases": "all", "q": "scan"})
    assert b"11.0.6" in page.content and b"data-same-over-every-release" not in page.content
    page = client.get(reverse("regressions:regression_list"), {"tab": "all", "releases": "long-term", "q": "scan"})
    rows = page.content.decode().split('id="results"')[1]
    assert "11.0.6" not in rows
    # The note above the list says which releases the default view leaves out, with the switch.
    note = re.search(r'<p class="muted" id="release-note".*?</p>', page.content.decode(), re.S)
    assert note is not None
    assert "left out: MariaDB 11.0.6 on" in note.group(0) and "MariaDB 11.4.5" not in note.group(0)
    assert 'id="releases-switch"' in note.group(0) and "releases=all" in note.group(0)


def test_a_series_of_long_term_releases_only_is_listed_over_every_release_by_its_long_term_records(
    django_capture_on_commit_callbacks: Any,
) -> None:
    spec = synthetic.SeriesSpec(versions=MYSQL_8_0, steps=(synthetic.Step(2, "update-index", 0.7),), seed=11)
    run = _import(spec, "mysql-box", django_capture_on_commit_callbacks)
    # No second reading and no second set of records: both views read the same points.
    assert not Regression.objects.filter(releases="all").exists()
    records = Regression.objects.filter(releases="long-term")
    assert records.exists() and not records.filter(same_over_every_release=False).exists()
    client = Client()
    assert (
        _listed(client, releases="all")
        == _listed(client, releases="long-term")
        == set(records.values_list("pk", flat=True))
    )
    page = client.get(reverse("regressions:regression_list"), {"releases": "all"})
    assert b"update-index" in page.content
    assert b"reads the same over every release" in page.content and b"data-same-over-every-release" in page.content
    # Asking for every release explicitly stores nothing more either: the long-term records are kept current
    # and are what the command prints.
    before = set(records.values_list("pk", flat=True))
    summary = detect_regressions(run.server_id, run.workload_id, view="all")
    assert not Regression.objects.filter(releases="all").exists()
    assert set(summary.regression_ids) == before and summary.unchanged == len(before)
    out = io.StringIO()
    call_command("detect_regressions", "--releases", "all", "--server", "mysql-box", stdout=out)
    assert "update-index_range=100" in out.getvalue() and f"#{min(before)}" in out.getvalue()


def test_a_mixed_series_once_imported_with_only_long_term_releases_drops_its_every_release_records(
    django_capture_on_commit_callbacks: Any, settings: Any
) -> None:
    run = _mixed_mariadb(django_capture_on_commit_callbacks)
    assert Regression.objects.filter(releases="all").exists()
    # Counting 11.0 to 11.3 as long-term (an override) makes both views one: the "all" records go, the long-term
    # ones now stand for both.
    settings.BENCHDASH_RELEASE_LINES = {"MariaDB": {"long_term": ["11.0", "11.1", "11.2", "11.3"]}}
    detect_regressions(run.server_id, run.workload_id, every_release=True)
    assert not Regression.objects.filter(releases="all").exists()
    assert not Regression.objects.filter(releases="long-term", same_over_every_release=False).exists()


def test_new_stories_are_announced_once_and_only_from_the_default_view(
    receiver: HttpReceiver, django_capture_on_commit_callbacks: Any
) -> None:
    Subscription.objects.create(name="perf", webhook_url=receiver.url())
    run = _mixed_mariadb(django_capture_on_commit_callbacks)
    announced = sorted(r.json()["story"]["id"] for r in receiver.accepted())
    default_open = sorted(r.pk for r in Regression.objects.filter(releases="long-term") if r.is_open_story)
    every_open = [r.pk for r in Regression.objects.filter(releases="all") if r.is_open_story]
    assert default_open and every_open
    assert announced == default_open
    # Detecting again, in either view, announces nothing more.
    with django_capture_on_commit_callbacks(execute=True):
        detect_regressions(run.server_id, run.workload_id, every_release=True)
        detect_regressions(run.server_id, run.workload_id, view="all")
    assert len(receiver.requests) == len(default_open)
