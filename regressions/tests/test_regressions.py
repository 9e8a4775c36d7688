"""Regression records: detection on the real corpus, idempotent upserts, triage, bugs, pages, command, task and API."""

from __future__ import annotations

import io
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.cache import cache
from django.core.management import call_command
from django.db import IntegrityError, connection, transaction
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils.html import escape
from ninja.testing import TestClient

from conftest import SMALL_BASE_RUN
from regressions.api import regressions_router
from regressions.detection import detect_regressions
from regressions.models import Bug, Regression, TriageEvent
from regressions.tasks import detect_regressions_task
from regressions.triage import link_bug, same_regression_elsewhere, triage
from runs import synthetic
from runs.importer import archive_directory, submit_and_import
from runs.models import Bundle, Dbms, Microbenchmark, Run, Server, Version, Workload
from runs.versions import sort_key

pytestmark = pytest.mark.django_db

POINT_QUERIES = "point queries"
State = Regression.State


@pytest.fixture
def detected(small_base_detected: Run) -> list[Regression]:
    # The QPS stories: the HW metrics' own stories have their own tab and test file.
    return list(
        Regression.objects.filter(metric="qps").select_related("arrived_in", "microbenchmark", "arrived_in_build")
    )


@pytest.fixture
def user(user_with_role: Callable[..., User]) -> User:
    return user_with_role("triager", username="engineer")


@pytest.fixture
def logged_in(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _is_point_query(r: Regression) -> bool:
    return r.group == POINT_QUERIES or (r.microbenchmark is not None and "point" in r.microbenchmark.test)


# --------------------------------------------------------------------------- detection on the real corpus


def test_point_query_losses_are_one_group_story_arriving_in_5_7_44_and_worse_in_8_0_43(
    detected: list[Regression],
) -> None:
    (story,) = [r for r in detected if r.is_group and r.group == POINT_QUERIES]
    assert story.kind == "regression" and story.arrived_in.text == "5.7.44"
    assert story.previous_version.text == "5.6.51"  # type: ignore[union-attr]
    assert story.change == pytest.approx(-0.11, abs=0.02)
    assert story.current_change == pytest.approx(-0.27, abs=0.03)
    assert [(e["kind"], e["version"]) for e in story.story_events] == [("arrival", "5.7.44"), ("further", "8.0.43")]
    # The default view reads the long-term releases and the newest release: 9.5.0 (an innovation release,
    # provisional until a newer one arrives), not 9.4.0. The story lasts until 9.5.0, not 8.4.7.
    assert story.fixed_in is None and story.persists_until.text == "9.5.0"  # type: ignore[union-attr]
    assert story.provisional_release == "9.5.0" and story.until_provisional
    assert story.is_open_story and story.noise_rule.startswith("σ ") and story.builds
    # Member stories are kept, folded into the group's story: the list shows one row.
    members = [r for r in detected if r.microbenchmark and r.group == POINT_QUERIES and not r.outlier]
    assert len(members) >= 6 and all(m.folded_into_id == story.pk for m in members)
    assert sorted(story.evidence["members"]) == sorted(m.subject for m in members)


def test_the_8_4_and_9_x_releases_add_no_point_query_regression(detected: list[Regression]) -> None:
    point_queries = [r for r in detected if _is_point_query(r)]
    assert {r.arrived_in.text for r in point_queries} == {"5.7.44", "8.0.43"}
    assert not [r for r in point_queries if r.arrived_in.sort_key > sort_key("8.0.43")]


def test_changes_inside_the_noise_produce_no_record(detected: list[Regression]) -> None:
    # 8.0.44 … 8.4.7 move every microbenchmark by a few percent at most: no story arrives or moves there.
    assert {r.arrived_in.text for r in detected} == {"5.7.44", "8.0.43"}
    assert {e["version"] for r in detected for e in r.story_events} <= {"5.7.44", "8.0.43"}
    for r in detected:
        assert abs(r.change) > 0.05  # type: ignore[arg-type]


def test_the_second_8_4_6_build_is_evidence_but_not_a_point_of_the_series(detected: list[Regression]) -> None:
    points = detected[0].evidence["points"]
    by_column = {p["column"]: p for p in points}
    assert by_column["x.my8406v2_rel_o2nofp.z12a_c8r32.pk1"]["used"] is False
    assert by_column["x.my8406_rel_o2nofp.z12a_c8r32.pk1"]["used"] is True
    assert by_column["x.my8406v2_rel_o2nofp.z12a_c8r32.pk1"]["unused_because"] == "another build of this version"
    # 5.6.51 … 8.4.7 and the newest release, 9.5.0, are points; 9.4.0 is an innovation release the newest
    # one has replaced, left out of the default view.
    assert sum(1 for p in points if p["used"]) == 7
    assert {p["version"] for p in points if p["unused_because"] == "short-term release"} == {"9.4.0"}
    assert by_column["x.my9500_rel_o2nofp.z12a_c8r32.pk1"]["used"] is True
    assert not [r for r in detected if r.arrived_in_build and "v2" in r.arrived_in_build.name]


def test_running_detection_twice_keeps_the_same_rows(small_base: Run) -> None:
    first = detect_regressions(small_base.server_id, small_base.workload_id)
    rows = list(Regression.objects.order_by("pk").values())
    second = detect_regressions(small_base.server_id, small_base.workload_id)
    assert first.created == len(rows) > 10
    assert (second.created, second.updated, second.unchanged) == (0, 0, len(rows))
    again = list(Regression.objects.order_by("pk").values())
    assert [{**r, "detected_at": None} for r in again] == [{**r, "detected_at": None} for r in rows]


def test_redetection_restores_sizes_and_keeps_the_triage(small_base: Run, user: User) -> None:
    detect_regressions(small_base.server_id, small_base.workload_id)
    record = Regression.objects.get(group=POINT_QUERIES, microbenchmark=None, arrived_in__text="5.7.44")
    expected = (record.level_before, record.level_after, record.evidence)
    Regression.objects.filter(pk=record.pk).update(level_before=0.5, stored_evidence={})
    triage([record.pk], State.ACKNOWLEDGED, user, "seen it")
    link_bug(record, "bug #102037", user=user)

    summary = detect_regressions(small_base.server_id, small_base.workload_id)
    record.refresh_from_db()
    assert summary.updated == 1 and summary.created == 0
    assert (record.level_before, record.level_after, record.evidence) == expected
    assert record.state == State.BUG_FILED
    assert [b.label for b in record.bugs.all()] == ["MySQL bug #102037"]


def test_the_database_refuses_a_duplicate_record_of_the_same_step(detected: list[Regression]) -> None:
    group = next(r for r in detected if r.is_group)
    single = next(r for r in detected if not r.is_group)
    for original in (group, single):
        with pytest.raises(IntegrityError), transaction.atomic():
            Regression.objects.create(
                server=original.server,
                workload=original.workload,
                microbenchmark=original.microbenchmark,
                group=original.group,
                kind=original.kind,
                arrived_in=original.arrived_in,
            )


def test_a_regression_that_a_later_version_reverses_is_fixed_there() -> None:
    spec = synthetic.SeriesSpec(
        versions=("8.0.26", "8.0.28", "8.0.30", "8.0.32", "8.0.34", "8.0.36"),
        steps=(synthetic.Step(2, "update-index", 0.7), synthetic.Step(4, "update-index", 1 / 0.7)),
        seed=11,
    )
    submit_and_import(synthetic.bundle_bytes(spec), name="fix.tgz", source=Bundle.Source.COMMAND)
    run = Run.objects.first()
    assert run is not None
    detect_regressions(run.server_id, run.workload_id)
    (record,) = Regression.objects.filter(microbenchmark__test="update-index")
    assert (record.kind, record.arrived_in.text, record.fixed_in.text) == ("regression", "8.0.30", "8.0.34")  # type: ignore[union-attr]
    assert record.persists_until.text == "8.0.32"  # type: ignore[union-attr]
    # The fix is the end of the regression, not an improvement of its own.
    assert not Regression.objects.filter(kind="improvement", microbenchmark__test="update-index").exists()


# --------------------------------------------------------------------------- triage and bugs


def test_triage_writes_one_audit_event_per_regression_that_changed(detected: list[Regression], user: User) -> None:
    a, b, c = detected[:3]
    triage([c.pk], State.NOISE, user)
    changed = triage([a.pk, b.pk, c.pk], State.NOISE, user)
    assert changed == 2
    events = list(TriageEvent.objects.order_by("pk").values_list("regression_id", "from_state", "to_state", "user"))
    assert events == [
        (c.pk, "new", "noise", user.pk),
        (a.pk, "new", "noise", user.pk),
        (b.pk, "new", "noise", user.pk),
    ]
    # A note on a record already in the state is still logged: the audit log keeps every word.
    triage([a.pk], State.NOISE, user, "same step on the other run")
    assert TriageEvent.objects.filter(regression=a, note="same step on the other run").exists()
    with pytest.raises(ValueError, match="unknown state"):
        triage([a.pk], "closed", user)


def test_linking_a_bug_expands_the_key_and_moves_a_new_record_to_bug_filed(
    detected: list[Regression], user: User
) -> None:
    record = detected[0]
    result = link_bug(record, "MDEV-33894", user=user, title="slow point lookups")
    assert result.linked == [record.pk] and result.carried == []
    bug = Bug.objects.get()
    assert (bug.tracker, bug.key, bug.url) == (
        "mariadb-jira",
        "MDEV-33894",
        "https://jira.mariadb.org/browse/MDEV-33894",
    )
    record.refresh_from_db()
    assert record.state == State.BUG_FILED
    assert TriageEvent.objects.get(regression=record).note == "linked MDEV-33894"
    # The same bug by URL is the same row, and linking twice adds nothing.
    assert link_bug(record, "https://jira.mariadb.org/browse/MDEV-33894").linked == []
    assert Bug.objects.count() == 1
    with pytest.raises(ValueError, match="not a bug reference"):
        link_bug(record, "see the blog")


def _series_on(server: str, versions: tuple[str, ...], step_at: int, seed: int) -> Run:
    spec = synthetic.SeriesSpec(versions=versions, steps=(synthetic.Step(step_at, "update-index", 0.7),), seed=seed)
    submit_and_import(
        synthetic.bundle_bytes(spec), name=f"{server}.tgz", source=Bundle.Source.COMMAND, overrides={"server": server}
    )
    run = Run.objects.filter(server__name=server).first()
    assert run is not None
    detect_regressions(run.server_id, run.workload_id)
    return run


def test_a_bug_carries_to_the_same_regression_on_other_servers(user: User) -> None:
    every = ("8.0.26", "8.0.28", "8.0.30", "8.0.32", "8.0.34")
    _series_on("a", every, step_at=2, seed=1)  # arrives in 8.0.30
    _series_on("b", ("8.0.26", "8.0.28", "8.0.32", "8.0.34", "8.0.36"), step_at=2, seed=2)  # 8.0.32: 8.0.30 untested
    _series_on("c", every, step_at=4, seed=3)  # 8.0.34: another change
    on = {
        r.server.name: r
        for r in Regression.objects.filter(microbenchmark__test="update-index").select_related("server")
    }
    assert {name: r.arrived_in.text for name, r in on.items()} == {"a": "8.0.30", "b": "8.0.32", "c": "8.0.34"}

    assert list(same_regression_elsewhere(on["a"])) == [on["b"]]
    result = link_bug(on["a"], "MySQL bug 102037", user=user, carry=True)
    assert result.carried == [on["b"].pk]
    assert set(Regression.objects.filter(bugs__key="102037").values_list("server__name", flat=True)) == {"a", "b"}
    assert "carried" in TriageEvent.objects.get(regression=on["b"]).note


# --------------------------------------------------------------------------- pages


def test_bulk_actions_need_a_login(detected: list[Regression]) -> None:
    ids = [r.pk for r in detected[:2]]
    response = Client().post(reverse("regressions:regression_bulk"), {"ids": ids, "action": State.NOISE})
    assert response.status_code == 302 and "login" in response["Location"]
    assert not Regression.objects.filter(state=State.NOISE).exists()


def test_bulk_actions_apply_to_every_ticked_regression(detected: list[Regression], logged_in: Client) -> None:
    ids = [r.pk for r in detected[:3]]
    url = reverse("regressions:regression_bulk")
    response = logged_in.post(url, {"ids": ids, "action": State.EXPECTED, "note": "8.0 redo log", "next": "/x"})
    assert response.status_code == 302 and response["Location"] == "/x"
    assert set(Regression.objects.filter(state=State.EXPECTED).values_list("pk", flat=True)) == set(ids)
    assert TriageEvent.objects.filter(note="8.0 redo log").count() == 3

    logged_in.post(url, {"ids": ids[:2], "action": "link", "bug": "PS-8822"})
    assert set(Bug.objects.get(key="PS-8822").regressions.values_list("pk", flat=True)) == set(ids[:2])

    page = logged_in.post(url, {"ids": ids[:1], "action": "link", "bug": "nonsense"}, follow=True)
    assert "not a bug reference" in page.content.decode()


def test_a_redirect_after_a_bulk_action_never_leaves_the_site(detected: list[Regression], logged_in: Client) -> None:
    response = logged_in.post(
        reverse("regressions:regression_bulk"),
        {"ids": [detected[0].pk], "action": State.ACKNOWLEDGED, "next": "https://evil.example/"},
    )
    assert response["Location"] == reverse("regressions:regression_list")


def test_the_list_shows_open_regressions_and_filters_them(detected: list[Regression], user: User) -> None:
    url = reverse("regressions:regression_list")
    listed = [r for r in detected if r.is_open_story]
    noise = listed[0]
    triage([noise.pk], State.NOISE, user)
    page = Client().get(url).content.decode()
    assert f'data-regression="{noise.pk}"' not in page
    assert page.count("data-regression=") == len(listed) - 1
    assert f'data-regression="{noise.pk}"' in Client().get(url, {"state": "noise"}).content.decode()
    grouped = Client().get(url, {"group": POINT_QUERIES}).content.decode()
    assert grouped.count("data-regression=") == 1
    everything = Client().get(url, {"tab": "all", "metric": "qps"}).content.decode()
    assert everything.count("data-regression=") == len(detected)
    with_metrics = Client().get(url, {"tab": "all"}).content.decode()
    assert with_metrics.count("data-regression=") == Regression.objects.count() > len(detected)
    assert Client().get(url, {"dbms": "Postgres"}).content.decode().count("data-regression=") == 0
    assert Client().get(url, {"server": "nope"}).content.decode().count("data-regression=") == 0


def test_an_htmx_request_gets_only_the_results(detected: list[Regression]) -> None:
    response = Client().get(reverse("regressions:regression_list"), headers={"HX-Request": "true"})
    body = response.content.decode()
    assert body.lstrip().startswith('<div id="results">') and "<html" not in body


def test_the_detail_page_shows_evidence_bugs_and_history(detected: list[Regression], logged_in: Client) -> None:
    record = next(r for r in detected if r.is_group and r.group == POINT_QUERIES)
    logged_in.post(
        reverse("regressions:regression_bulk"),
        {"ids": [record.pk], "action": "link", "bug": "MDEV-33894", "note": "x"},
    )
    body = logged_in.get(record.get_absolute_url()).content.decode()
    assert "https://jira.mariadb.org/browse/MDEV-33894" in body
    assert "linked MDEV-33894" in body
    assert "not a point: another build of this version" in body  # the second 8.4.6 build
    assert body.count("<strong>arrived</strong>") == 2  # the story's event and the evidence row
    assert "hot-points_range=100" in body and "0.63" in body  # hot-points in 8.0.43, as in the reference table
    assert "How stories are told" in body and "against 5.6.51" in body


def _message(page: Any) -> str:
    (message,) = [str(m) for m in page.context["messages"]]
    return message


def test_linking_a_bug_says_the_state_moved_and_the_detail_page_shows_the_typed_title(
    detected: list[Regression], logged_in: Client
) -> None:
    record = next(r for r in detected if r.state == State.NEW)
    url = reverse("regressions:regression_bulk")
    title = "InnoDB point lookups slower"
    page = logged_in.post(url, {"ids": [record.pk], "action": "link", "bug": "MDEV-33894", "title": title}, follow=True)
    assert (
        _message(page)
        == "Linked MDEV-33894 to 1 regression; it moved to “bug filed”, as a linked bug means one is filed."
    )
    detail = logged_in.get(record.get_absolute_url()).content.decode()
    assert f'<span class="bug-title">{title}</span>' in detail
    again = logged_in.post(url, {"ids": [record.pk], "action": "link", "bug": "MDEV-33894"}, follow=True)
    assert _message(again) == "MDEV-33894 was already linked to it: nothing changed."


def test_marking_a_regression_in_the_state_it_has_says_the_note_was_saved_not_0_of_1(
    detected: list[Regression], logged_in: Client
) -> None:
    record = detected[0]
    triage([record.pk], State.BUG_FILED, None)
    url = reverse("regressions:regression_bulk")
    page = logged_in.post(url, {"ids": [record.pk], "action": State.BUG_FILED, "note": "upstream"}, follow=True)
    assert _message(page) == "Note saved. It was “bug filed” already."
    assert TriageEvent.objects.filter(regression=record, note="upstream").exists()
    page = logged_in.post(url, {"ids": [record.pk], "action": State.BUG_FILED}, follow=True)
    assert _message(page) == "It was “bug filed” already: nothing changed."
    two = [record.pk, detected[1].pk]
    page = logged_in.post(url, {"ids": two, "action": State.BUG_FILED}, follow=True)
    assert (
        _message(page)
        == "1 of 2 regressions marked “bug filed”. The other was “bug filed” already: nothing else changed."
    )
    html = page.content.decode()
    assert '<ul class="messages" role="status"><li class="info">' in html  # a styled box (benchdash.css)


def _make_regressions(count: int, offset: int = 0) -> None:
    dbms, _ = Dbms.objects.get_or_create(name="MySQL")
    version, _ = Version.objects.get_or_create(dbms=dbms, text="8.0.30")
    before, _ = Version.objects.get_or_create(dbms=dbms, text="8.0.28")
    server, _ = Server.objects.get_or_create(name="s")
    workload, _ = Workload.objects.get_or_create(name="w")
    for i in range(offset, offset + count):
        mb = Microbenchmark.objects.create(test=f"test-{i}", range_size=100)
        r = Regression.objects.create(
            server=server,
            workload=workload,
            microbenchmark=mb,
            group="writes",
            arrived_in=version,
            previous_version=before,
            persists_until=version,
            level_before=1.0,
            level_after=0.8,
            change=-0.2,
        )
        r.bugs.add(*(Bug.objects.get_or_create(tracker="url", key=f"https://e.org/{i}-{j}")[0] for j in range(2)))


def _queries(client: Client, url: str) -> int:
    with CaptureQueriesContext(connection) as queries:
        assert client.get(url).status_code == 200
    return len(queries)


def test_page_query_counts_do_not_grow_with_the_number_of_regressions(logged_in: Client) -> None:
    _make_regressions(3)
    few_list = _queries(logged_in, reverse("regressions:regression_list"))
    first = Regression.objects.first()
    assert first is not None
    few_detail = _queries(logged_in, first.get_absolute_url())
    _make_regressions(30, offset=3)
    for r in Regression.objects.all()[:10]:
        triage([r.pk], State.ACKNOWLEDGED, None, "more history")
    assert _queries(logged_in, reverse("regressions:regression_list")) == few_list
    assert _queries(logged_in, first.get_absolute_url()) == few_detail


def test_the_list_reads_every_row_s_base_run_in_its_own_query(detected: list[Regression], logged_in: Client) -> None:
    """Each row's figures name the story's base run: the list selects it with the rows, so a list of stories with
    a base run takes the queries of one without (a query per row before)."""
    url = reverse("regressions:regression_list")
    shown = Regression.objects.filter(metric="qps", fixed_in__isnull=True, base_run__isnull=False).count()
    assert shown > 3  # enough rows that a query per row would show
    cache.clear()
    with_base = _queries(logged_in, url)
    Regression.objects.update(base_run=None)
    cache.clear()  # the page is kept under a stamp that a base run's change does not move
    assert _queries(logged_in, url) == with_base


# --------------------------------------------------------------------------- command, task, API


def test_the_command_prints_the_records_it_found(small_base: Run) -> None:
    out = io.StringIO()
    call_command("detect_regressions", "--base", SMALL_BASE_RUN, stdout=out)
    text = out.getvalue()
    assert "point queries (group)" in text
    assert "arrived in 5.7.44 (−11%), worse in 8.0.43" in text
    count = Regression.objects.count()
    assert f"{count} stories ({count} new, 0 updated, 0 unchanged;" in text
    # One line per record, then the counts, then which releases the view left out.
    assert text.count("\n") == count + 2
    assert text.splitlines()[-1] == (
        "Long-term releases and the newest (MySQL 9.5.0 on 8-CPU server: provisional until a newer release "
        "arrives); left out: MySQL 9.4.0 on 8-CPU server; --releases all for every release."
    )


def test_the_task_takes_ids_and_can_run_twice(small_base: Run) -> None:
    first = detect_regressions_task.delay(small_base.server_id, small_base.workload_id).get()
    second = detect_regressions_task.delay(small_base.server_id, small_base.workload_id).get()
    assert first["created"] == second["unchanged"] == Regression.objects.count() > 0
    assert detect_regressions_task.delay(small_base.server_id, 10**9).get()["error"].startswith("no runs")


def test_the_api_lists_regressions_and_needs_a_login_to_change_them(detected: list[Regression], user: User) -> None:
    api = TestClient(regressions_router)
    listed = api.get("/regressions?group=point%20queries").json()
    assert listed["count"] == 1 and listed["items"][0]["arrived_in"] == "5.7.44"
    record = listed["items"][0]
    assert record["open"] and record["builds"] and record["noise_rule"] and record["previous_version"] == "5.6.51"
    assert [e["kind"] for e in record["story_events"]] == ["arrival", "further"]
    assert api.patch(f"/regressions/{record['id']}", json={"state": "noise"}).status_code == 401

    patched = api.patch(f"/regressions/{record['id']}", json={"state": "acknowledged", "note": "ok"}, user=user)
    assert patched.status_code == 200 and patched.json()["state"] == "acknowledged"
    assert patched.json()["events"][-1]["note"] == "ok"

    linked = api.post(f"/regressions/{record['id']}/bugs", json={"bug": "RocksDB #12038"}, user=user).json()
    assert linked["bug"]["url"] == "https://github.com/facebook/rocksdb/issues/12038"
    assert api.post(f"/regressions/{record['id']}/bugs", json={"bug": "?"}, user=user).status_code == 400
    assert api.delete(f"/regressions/{record['id']}/bugs/{linked['bug']['id']}", user=user).status_code == 204

    ids = [r.pk for r in detected[:4]]
    assert api.post("/regressions/triage", json={"ids": ids, "state": "expected"}, user=user).json() == {"changed": 4}


def test_the_api_creates_a_regression_by_hand_once(small_base: Run, user: User) -> None:
    api = TestClient(regressions_router)
    payload = {
        "server": small_base.server.name,
        "workload": small_base.workload.name,
        "dbms": "MySQL",
        "arrived_in": "8.0.30",
        "microbenchmark": "update-index_range=100",
        "level_before": 1.0,
        "level_after": 0.8,
        "bugs": ["bug #102037"],
    }
    created = api.post("/regressions", json=payload, user=user)
    assert created.status_code == 201, created.content
    body = created.json()
    assert body["change"] == pytest.approx(-0.2) and body["state"] == "bug_filed"
    assert body["bugs"][0]["label"] == "MySQL bug #102037"
    again = api.post("/regressions", json=payload, user=user)
    assert again.status_code == 409 and str(body["id"]) in again.json()["detail"]
    assert api.post("/regressions", json={**payload, "microbenchmark": "nope"}, user=user).status_code == 400


def test_the_api_queues_detection_for_a_server_and_workload(small_base: Run, user: User) -> None:
    api = TestClient(regressions_router)
    payload = {"server": small_base.server.name, "workload": small_base.workload.name}
    assert api.post("/regressions/detect", json=payload).status_code == 401
    response = api.post("/regressions/detect", json=payload, user=user)
    assert response.status_code == 202
    queued = response.json()
    assert (queued["server"], queued["workload"]) == (payload["server"], payload["workload"]) and queued["task_id"]
    # Celery is eager here, so the task has run: its records are at the listing the answer names.
    listing = Client().get(queued["regressions"].removeprefix("http://testserver"))
    assert listing.status_code == 200
    assert listing.json()["count"] == Regression.objects.count() > 0
    assert api.post("/regressions/detect", json={**payload, "server": "nope"}, user=user).status_code == 400


# --------------------------------------------------------------------------- release lines, builds, noise, JSON


def _json_records(*args: str) -> list[dict]:
    out = io.StringIO()
    call_command("detect_regressions", "--format", "json", *args, stdout=out)
    return json.loads(out.getvalue())


def test_the_json_list_reads_like_the_authors_summary_of_mysql_5_6_to_9_5(small_base: Run) -> None:
    everything = _json_records("--base", SMALL_BASE_RUN)
    assert len(everything) == Regression.objects.count() > 0
    # The HW metrics' own stories have their own test file; this one reads the QPS stories.
    records = [r for r in everything if r["metric"] == "qps"]
    for record in records:
        assert record["releases"] == "long-term"
        assert record["kind"] in ("regression", "improvement") and record["builds"]
        assert record["noise_source"] == "MAD" and record["noise"] >= 0.01 and record["noise_rule"]
        assert {"subject", "arrived_in", "previous_version", "fixed_in", "change", "outlier", "events"} <= set(record)
    groups = {r["subject"]: r for r in records if r["is_group"] and r["kind"] == "regression"}
    # Point queries ~10% slower in 5.7.44 and ~30% from 8.0 on; range queries without aggregation ~15% then
    # ~30%; writes 10-20% then 40-50% (the group's median member; delete and insert lose 40-45%).
    assert -0.15 < groups["point queries"]["change"] < -0.07
    assert -0.35 < groups["point queries"]["current_change"] < -0.22
    assert -0.20 < groups["range queries without aggregation"]["change"] < -0.10
    assert -0.38 < groups["range queries without aggregation"]["current_change"] < -0.25
    assert -0.20 < groups["writes"]["change"] < -0.10
    assert -0.45 < groups["writes"]["current_change"] < -0.30
    assert all(g["arrived_in"] == "5.7.44" and g["previous_version"] == "5.6.51" for g in groups.values())
    # Nothing after 8.0.43: 8.0.44, 8.4.x and the newest release, 9.5.0 (read, provisional), stay within the
    # noise; 9.4.0 is not read. (This corpus's 9.5.0 writes are 4-5 % below 8.4.7, under the gate.)
    assert {e["version"] for r in records for e in r["events"]} <= {"5.7.44", "8.0.43"}
    assert groups["writes"]["builds"][-1] == "my9500_rel_o2nofp"
    assert groups["writes"]["persists_until"] == "9.5.0" and groups["writes"]["provisional_release"] == "9.5.0"


def test_the_json_stays_one_array_and_the_left_out_releases_go_to_stderr_with_the_switch(small_base: Run) -> None:
    out, err = io.StringIO(), io.StringIO()
    call_command("detect_regressions", "--format", "json", "--base", SMALL_BASE_RUN, stdout=out, stderr=err)
    assert isinstance(json.loads(out.getvalue()), list)
    assert err.getvalue().strip() == (
        "Long-term releases and the newest (MySQL 9.5.0 on 8-CPU server: provisional until a newer release "
        "arrives); left out: MySQL 9.4.0 on 8-CPU server; --releases all for every release."
    )
    err = io.StringIO()
    call_command(
        "detect_regressions", "--format", "json", "--base", SMALL_BASE_RUN, "--releases", "all", stdout=out, stderr=err
    )
    assert err.getvalue().startswith("Every release, short-term ones included; --releases long-term")


def test_the_api_list_says_which_releases_the_view_left_out(small_base: Run) -> None:
    detect_regressions(small_base.server_id, small_base.workload_id)
    api = TestClient(regressions_router)
    body = api.get("/regressions").json()
    assert body["left_out"] == ["MySQL 9.4.0 on 8-CPU server"]
    assert body["provisional"] == ["MySQL 9.5.0 on 8-CPU server"]
    assert "left out: MySQL 9.4.0 on 8-CPU server; releases=all for every release." in body["releases_note"]
    assert {item["provisional_release"] for item in body["items"]} == {"9.5.0"}
    every = api.get("/regressions?releases=all").json()
    assert every["left_out"] == [] and every["releases_note"].startswith("Every release")


def test_every_release_is_read_on_request(small_base: Run) -> None:
    records = _json_records("--base", SMALL_BASE_RUN, "--releases", "all")
    assert {r["releases"] for r in records} == {"all"}
    stored = Regression.objects.get(pk=records[0]["id"])
    assert [p["version"] for p in stored.evidence["points"] if p["used"]][-2:] == ["9.4.0", "9.5.0"]
    # The innovation releases add nothing that reads as a regression story: at most a step at the 5% edge.
    late = [r for r in records if r["arrived_in"] in ("9.4.0", "9.5.0") and r["metric"] == "qps"]
    assert all(abs(r["change"]) < 0.06 for r in late)


def test_a_setting_moves_release_lines_for_one_servers_series(small_base: Run, settings: Any) -> None:
    settings.BENCHDASH_RELEASE_LINES = {f"MySQL @ {small_base.server.name}": {"long_term": ["9.4", "9.5"]}}
    detect_regressions(small_base.server_id, small_base.workload_id)
    points = Regression.objects.first().evidence["points"]  # type: ignore[union-attr]
    assert {p["version"] for p in points if p["used"]} >= {"9.4.0", "9.5.0"}
    settings.BENCHDASH_RELEASE_LINES = {"MySQL": {"long": ["9.4"]}}
    with pytest.raises(ValueError, match="release-line override 'MySQL'"):
        detect_regressions(small_base.server_id, small_base.workload_id)


def test_the_insert_benchmarks_l_i1_drop_is_found_on_a_three_version_series(corpus: Path) -> None:
    submit_and_import(
        archive_directory(corpus / "ibench-2021"),
        name="ibench.tar.gz",
        source=Bundle.Source.COMMAND,
        overrides={"server": "ibench server"},
    )
    records = _json_records("--server", "ibench server")
    l_i1 = [
        e
        for r in records
        if r["subject"] == "l.i1" and r["kind"] == "regression"
        for e in r["events"]
        if e["version"] == "8.0.22"
    ]
    assert len(l_i1) == 1 and l_i1[0]["change"] == pytest.approx(-0.376, abs=0.02)
    # Three MySQL versions and no repeats: the default noise, not an estimate from two differences.
    assert {r["noise_source"] for r in records} == {"default"}
    assert {"my5731", "my8022"} <= {b for r in records if r["subject"] == "l.i1" for b in r["builds"]}


def test_the_detail_page_names_the_builds_and_the_noise_of_a_record(detected: list[Regression]) -> None:
    record = next(r for r in detected if r.is_group and r.group == "writes" and r.arrived_in.text == "5.7.44")
    page = Client().get(record.get_absolute_url()).content.decode()
    assert "<code>my5651_rel_o2nofp</code>, <code>my5744_rel_o2nofp</code>" in page
    assert escape(record.noise_rule) in page  # the rule's text says "this test's": escaped on the page
    assert "not a point: short-term release" in page and "not a point: another build of this version" in page
    listing = Client().get(reverse("regressions:regression_list")).content.decode()
    assert f"σ {record.noise:.1%} ({record.noise_source})" in listing and "<code>my5651_rel_o2nofp</code>" in listing


def test_an_experimental_build_is_not_a_point_unless_asked_for(corpus: Path, tmp_path: Path) -> None:
    # The real series plus a build of a patch: 9.5.0's results under the name of an 8.4.8 with a bug-fix flavour.
    series = tmp_path / "series"
    shutil.copytree(corpus / "sysbench-mysql-small", series)
    shutil.copytree(
        corpus / "sysbench-mysql-small" / "x.my9500_rel_o2nofp.z12a_c8r32.pk1",
        series / "x.my8408_bug99999_rel_o2nofp.z12a_c8r32.pk1",
    )
    submit_and_import(archive_directory(series), name="series.tar.gz", source=Bundle.Source.COMMAND)
    records = _json_records("--base", SMALL_BASE_RUN)
    assert "8.4.8" not in {r["arrived_in"] for r in records}
    assert not [r for r in records if any("bug99999" in build for build in r["builds"])]
    points = Regression.objects.get(pk=records[0]["id"]).evidence["points"]
    (patched,) = [p for p in points if p["version"] == "8.4.8"]
    assert patched["used"] is False and patched["unused_because"] == "experimental build"
    asked = _json_records("--base", SMALL_BASE_RUN, "--experimental-builds")
    points = Regression.objects.get(pk=asked[0]["id"]).evidence["points"]
    assert next(p for p in points if p["version"] == "8.4.8")["used"] is True
