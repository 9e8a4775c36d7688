"""Stories keep their identity, triage is one across release views, the default view reads the newest release,
and the drill-down and the story page show the stories — on the corpus's MySQL series and on our own MariaDB
runs. (The same through imports on a real worker: tests/test_stable_stories_worker.py.)"""

from __future__ import annotations

import io
import json
import re
import tarfile
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from regressions import alerts
from regressions.detection import detect_regressions
from regressions.models import Delivery, Regression, Subscription
from regressions.triage import link_bug, triage
from runs import synthetic
from runs.importer import submit_and_import
from runs.models import Bundle, Microbenchmark, Run

pytestmark = pytest.mark.django_db

SERVER = "8-core server"
LOCAL_MARIADB = Path(__file__).resolve().parents[2] / "tests" / "data" / "sysbench-mariadb-quick.tar.gz"


def _mysql_bundle(corpus: Path, *, skip: tuple[str, ...] = (), only: dict[str, str] | None = None) -> bytes:
    """Run directories of the corpus's MySQL series as one tarball: ``skip`` leaves builds out; ``only`` takes
    just those run directories, each under the name given (a re-run of one version named as another)."""
    source = corpus / "sysbench-mysql-small"
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        for run_dir in sorted(source.iterdir()):
            if not run_dir.is_dir() or any(f".{build}_" in run_dir.name for build in skip):
                continue
            if only is None or run_dir.name in only:
                tar.add(run_dir, arcname=(only or {}).get(run_dir.name, run_dir.name))
    return out.getvalue()


def _import(data: bytes, name: str, server: str = SERVER) -> Run:
    report = submit_and_import(data, name=name, source=Bundle.Source.COMMAND, overrides={"server": server})
    run = Run.objects.filter(bundle_id=report.bundle_id).first()
    assert run is not None
    return run


def _hot_points() -> Regression:  # the 8.0 loss of hot-points_range=100
    return Regression.objects.get(
        releases="long-term", microbenchmark__test="hot-points", kind="regression", metric="qps"
    )


def _synthetic_runs(spec: synthetic.SeriesSpec, version: str | None = None) -> bytes:
    """A synthetic series as a bundle, or only the run directory of one of its versions."""
    data = synthetic.bundle_bytes(spec)
    if version is None:
        return data
    token = synthetic.build_token(spec.dbms_code, version, spec.flavour)
    out = io.BytesIO()
    with tarfile.open(fileobj=io.BytesIO(data)) as source, tarfile.open(fileobj=out, mode="w:gz") as target:
        for member in source:
            if member.name.startswith(f"x.{token}."):
                target.addfile(member, source.extractfile(member))
    return out.getvalue()


def test_a_story_the_data_tells_otherwise_is_superseded_keeps_what_was_told_and_its_old_link_redirects() -> None:
    versions = ("8.0.26", "8.0.28", "8.0.30", "8.0.32", "8.0.34", "8.0.36")
    told_spec = synthetic.SeriesSpec(versions=versions, steps=(synthetic.Step(2, "update-index", 0.7),), seed=5)
    run = _import(_synthetic_runs(told_spec), "series.tgz", server="box")
    detect_regressions(run.server_id, run.workload_id)
    told = Regression.objects.get(microbenchmark__test="update-index", kind="regression", metric="qps")
    assert (told.previous_version.text, told.arrived_in.text) == ("8.0.28", "8.0.30")  # type: ignore[union-attr]
    triage([told.pk], Regression.State.ACKNOWLEDGED, None, "the 8.0.30 update-index loss")
    link_bug(told, "MySQL bug 102037")
    Subscription.objects.create(name="perf", emails="perf@example.com")
    assert len(alerts.announce(told.pk)) == 1

    # 8.0.30 is run again and measures like 8.0.28: the loss arrives between 8.0.30 and 8.0.32, which does not
    # overlap the step as told. A new story, not the same one moved.
    Run.objects.filter(build__version__text="8.0.30").delete()
    rerun = synthetic.SeriesSpec(versions=versions, steps=(synthetic.Step(3, "update-index", 0.7),), seed=6)
    _import(_synthetic_runs(rerun, "8.0.30"), "rerun.tgz", server="box")
    detect_regressions(run.server_id, run.workload_id)
    successor = Regression.objects.get(
        microbenchmark__test="update-index", kind="regression", metric="qps", superseded_by=None
    )
    assert successor.arrived_in.text == "8.0.32" and successor.pk != told.pk
    told.refresh_from_db()
    assert told.no_longer_detected and told.superseded_by_id == successor.pk
    assert Delivery.objects.get().story_id == told.pk  # the alert history stays with the story told
    # The successor takes over the triage and the bug, saying where they came from.
    assert successor.state == Regression.State.BUG_FILED
    assert [b.key for b in successor.bugs.all()] == ["102037"]
    assert successor.events.filter(note__contains=f"story #{told.pk}").exists()
    # The old link leads to the story told now; the old story can still be read as it was.
    client = Client()
    response = client.get(told.get_absolute_url())
    assert response.status_code == 302
    assert response["Location"] == f"{successor.get_absolute_url()}?superseded={told.pk}"
    page = client.get(response["Location"]).content.decode()
    assert f'href="{told.get_absolute_url()}?as_was=1">story #{told.pk}</a>' in page
    old = client.get(told.get_absolute_url(), {"as_was": "1"}).content.decode()
    assert 'id="superseded"' in old and successor.get_absolute_url() in old


def _arrivals() -> dict[int, tuple[tuple[Any, ...], str]]:
    """Each default-view story: (its subject, direction and metric), and the version it arrived in."""
    rows = Regression.objects.filter(releases="long-term").values_list(
        "pk", "microbenchmark_id", "group", "kind", "metric", "arrived_in__text"
    )
    return {
        pk: ((mb, group if mb is None else "", kind, metric), arrived) for pk, mb, group, kind, metric, arrived in rows
    }


def test_an_older_point_release_moves_stories_in_place_and_detecting_again_changes_nothing(corpus: Path) -> None:
    run = _import(_mysql_bundle(corpus, skip=("my8043",)), "mysql.tar.gz")
    detect_regressions(run.server_id, run.workload_id)
    before = _arrivals()
    at_8_0_44 = {pk for pk, (_, arrived) in before.items() if arrived == "8.0.44"}
    assert at_8_0_44
    triage(sorted(at_8_0_44), Regression.State.ACKNOWLEDGED, None, "")
    older = "x.my8043_rel_o2nofp.z12a_c8r32.pk1"
    _import(_mysql_bundle(corpus, only={older: older}), "older.tar.gz")
    summary = detect_regressions(run.server_id, run.workload_id, announce_versions={"8.0.43"})
    after = _arrivals()
    # The losses first seen in 8.0.44 are told from where 8.0.43 places them now, in the same records with their
    # triage: no story of the same subject, direction and metric was deleted and created again.
    assert all(pk in after for pk in at_8_0_44)
    moved = {pk for pk in at_8_0_44 if after[pk][1] != "8.0.44"}
    assert moved and not Regression.objects.filter(pk__in=at_8_0_44, metric="qps", no_longer_detected=True).exists()
    assert set(Regression.objects.filter(pk__in=at_8_0_44).values_list("state", flat=True)) == {"acknowledged"}
    recreated = {after[pk][0] for pk in after if pk not in before} & {before[pk][0] for pk in at_8_0_44}
    assert not recreated
    assert not Regression.objects.filter(superseded_by__isnull=False).exists()
    # Only a story that involves 8.0.43 is news.
    for pk in summary.opened:
        events = Regression.objects.get(pk=pk).story_events
        assert "8.0.43" in {e["version"] for e in events} | {e["previous_version"] for e in events}
    again = detect_regressions(run.server_id, run.workload_id)
    assert (again.created, again.updated, again.removed, again.opened) == (0, 0, 0, [])


def test_triage_is_one_across_release_views(corpus: Path, settings: Any) -> None:
    settings.BENCHDASH_RELEASE_LINES = {}
    run = _import(_mysql_bundle(corpus), "mysql.tar.gz")
    detect_regressions(run.server_id, run.workload_id, every_release=True)
    default = Regression.objects.get(releases="long-term", group="point queries", microbenchmark=None)
    every = Regression.objects.get(releases="all", group="point queries", microbenchmark=None)
    assert triage([every.pk], Regression.State.ACKNOWLEDGED, None, "seen over every release") == 1
    link_bug(default, "MySQL bug 102037")
    for record in (default, every):
        record.refresh_from_db()
        assert record.state == Regression.State.BUG_FILED
        assert [b.key for b in record.bugs.all()] == ["102037"]
    # A record the other view creates later takes the triage the story has.
    every.delete()
    detect_regressions(run.server_id, run.workload_id, every_release=True)
    again = Regression.objects.get(releases="all", group="point queries", microbenchmark=None)
    assert again.state == Regression.State.BUG_FILED and again.bugs.count() == 1


def test_the_drilldown_lists_its_stories_and_bugs_and_the_story_page_charts_the_series(corpus: Path) -> None:
    run = _import(_mysql_bundle(corpus), "mysql.tar.gz")
    detect_regressions(run.server_id, run.workload_id)
    story = _hot_points()
    link_bug(story, "MySQL bug 102037")
    client = Client()
    mb = Microbenchmark.objects.get(test="hot-points", range_size=100)
    # The drill-down loads its stories after its first response, from its details.
    page = client.get(f"/microbenchmarks/{mb.pk}/details", {"base": run.pk}, headers={"HX-Request": "true"})
    section = page.content.decode().split('id="stories"')[1]
    assert f'href="{story.get_absolute_url()}"' in section and f"arrived in {story.arrived_in.text}" in section
    assert 'href="https://bugs.mysql.com/bug.php?id=102037"' in section
    # The story page: the series with the arrival marked, the outliers of a story that has some set apart.
    story_page = client.get(story.get_absolute_url()).content.decode()
    figure = _figure(story_page)
    # data-figure is the charts' hook (benchdash.js draws each with plotly.js): only charts carry it.
    hooks = re.findall(r'data-figure="([^"]*)"', story_page)
    assert hooks and all(f'<script id="{hook}" type="application/json">' in story_page for hook in hooks), hooks
    # One labelled line per event, at its version: the arrival first, then each later step.
    events = [e["version"] for e in story.story_events]
    columns = figure["layout"]["xaxis"]["categoryarray"]  # a label stands at its column's position
    marks = [(columns[a["x"]], a["text"]) for a in figure["layout"]["annotations"]]
    assert marks[0] == (story.arrived_in.text, "arrived") and [x for x, _ in marks] == events
    assert figure["data"][0]["x"][-1] == "9.5.0" and "9.4.0" not in figure["data"][0]["x"]
    outlier = Regression.objects.filter(releases="long-term", outlier=True, metric="qps").first()
    assert outlier is not None
    figure = _figure(client.get(outlier.get_absolute_url()).content.decode())
    traces = {trace["name"]: trace for trace in figure["data"]}
    assert traces["outlier (set aside)"]["x"] == [outlier.arrived_in.text]


def _figure(page: str) -> dict[str, Any]:
    found = re.search(r'<script id="story-figure" type="application/json">(.*?)</script>', page, re.S)
    assert found is not None, "no story chart"
    return json.loads(found.group(1))


def _local_mariadb(names: dict[str, str]) -> bytes:
    out = io.BytesIO()
    with tarfile.open(LOCAL_MARIADB) as source, tarfile.open(fileobj=out, mode="w:gz") as target:
        for member in source:
            run, sep, rest = member.name.partition("/")
            data = source.extractfile(member) if member.isfile() else None
            member.name = names[run] + sep + rest
            target.addfile(member, data)
    return out.getvalue()


def test_mariadb_stories_last_until_the_newest_release_marked_provisional(settings: Any) -> None:
    # Our own runs against the local MariaDB, named as a series ending in a short-term release, 12.1.1: the run
    # measured under a second client's load is the base (10.6.20), so the plain runs read as gains.
    settings.BENCHDASH_RELEASE_LINES = {}
    names = {
        "x.ma101119_rel3.c1r10.pk1": "x.ma100620_rel.c1r10.pk1",
        "x.ma101119_rel.c1r10.pk1": "x.ma101119_rel.c1r10.pk1",
        "x.ma101119_rel2.c1r10.pk1": "x.ma110803_rel.c1r10.pk1",
        "x.ma101119_rel4.c1r10.pk1": "x.ma120101_rel.c1r10.pk1",
    }
    run = _import(_local_mariadb(names), "mariadb.tgz", server="2-core dev")
    detect_regressions(run.server_id, run.workload_id)
    lasting = [r for r in Regression.objects.filter(releases="long-term", fixed_in=None, outlier=False)]
    assert lasting and {r.persists_until.text for r in lasting} == {"12.1.1"}  # type: ignore[union-attr]
    assert all(r.provisional_release == "12.1.1" and r.until_provisional for r in lasting)
    row = Client().get("/regressions/", {"tab": "all"}).content.decode()
    assert "until 12.1.1" in row and '<span class="provisional"' in row and "until 11.8.3" not in row


def test_the_compare_api_and_pages_say_which_releases_the_default_view_leaves_out(corpus: Path) -> None:
    run = _import(_mysql_bundle(corpus), "mysql.tar.gz")
    client = Client()
    view = client.get("/api/compare", {"base": run.pk, "releases": "long-term"}).json()["release_view"]
    assert [label.split()[-1] for label in view["left_out"]] == ["9.4.0"]
    assert [label.split()[-1] for label in view["provisional"]] == ["9.5.0"]
    assert view["note"].endswith("releases=all for every release.")
    assert client.get("/api/compare", {"base": run.pk}).json()["release_view"]["left_out"] == []
    # The comparison page's note: 9.4.0 left out of the charts, 9.5.0 read, provisional.
    page = client.get("/compare/", {"base": run.pk}).content.decode()
    note = re.search(r'<div class="card note" role="status" id="release-note".*?</div>', page, re.S)
    assert note is not None and "9.4.0" in note.group(0) and "9.5.0" in note.group(0)
    assert "provisional" in note.group(0) and 'id="releases-all"' in note.group(0)
