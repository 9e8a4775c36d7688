"""A story's evidence shows its series' points; they are stored once per series and release view
(``SharedPoints``), and ``Regression.evidence`` gives the evidence back as detection made it."""

from __future__ import annotations

import json

import pytest
from django.conf import settings

from regressions import detection
from regressions.detection import detect_regressions
from regressions.models import Regression, SharedPoints
from regressions.records import natural_key
from runs.models import Run

pytestmark = pytest.mark.django_db


def test_every_story_of_a_view_names_one_copy_of_the_points_and_reads_its_evidence_as_made(small_base: Run) -> None:
    detect_regressions(small_base.server_id, small_base.workload_id)
    candidates, _ = detection.find_candidates(
        detection.load_series(small_base.pk), release_overrides=settings.BENCHDASH_RELEASE_LINES
    )
    made = {c.key: json.loads(json.dumps(c.evidence.as_json())) for c in candidates if c.evidence is not None}
    records = list(Regression.objects.filter(releases="long-term"))
    assert len(records) == len(made) > 10
    assert {r.shared_points_id for r in records} == {SharedPoints.objects.get().pk}
    for record in records:
        assert record.stored_evidence["points"] is None
        key = natural_key(record.microbenchmark_id, record.group, record.kind, record.arrived_in_id, record.metric)
        assert record.evidence == made[key]
        assert list(record.evidence) == list(record.stored_evidence)  # the points in their place


def test_points_no_story_names_any_more_are_deleted_when_the_series_changes(small_base: Run) -> None:
    detect_regressions(small_base.server_id, small_base.workload_id)
    before = set(SharedPoints.objects.values_list("pk", flat=True))
    newest = Run.objects.filter(server_id=small_base.server_id, workload_id=small_base.workload_id).order_by(
        "-build__version__sort_key", "-pk"
    )[0]
    newest.delete()

    detect_regressions(small_base.server_id, small_base.workload_id)
    after = set(SharedPoints.objects.values_list("pk", flat=True))
    assert after and not after & before
    assert not SharedPoints.objects.filter(regressions__isnull=True).exists()
    points = Regression.objects.exclude(microbenchmark=None).first().evidence["points"]  # type: ignore[union-attr]
    assert newest.build.version.text not in {p["version"] for p in points}


def test_a_record_given_its_evidence_whole_keeps_it_whole(small_base: Run) -> None:
    detect_regressions(small_base.server_id, small_base.workload_id)
    record = Regression.objects.exclude(microbenchmark=None).first()
    assert record is not None and record.shared_points_id is not None
    record.evidence = {"points": [{"version": "1.0"}], "values": {}}
    record.save()
    record.refresh_from_db()
    assert record.shared_points_id is None and record.evidence == {"points": [{"version": "1.0"}], "values": {}}


def test_the_hourly_sweep_deletes_the_points_of_stories_deleted_outside_detection_and_keeps_named_ones(
    small_base: Run,
) -> None:
    from regressions.tasks import sweep_unused_points

    detect_regressions(small_base.server_id, small_base.workload_id)
    named = SharedPoints.objects.get()
    orphan = SharedPoints.objects.create(
        server_id=small_base.server_id, workload_id=small_base.workload_id, digest="0" * 64, points=[]
    )
    assert sweep_unused_points.delay().get() == 1
    assert set(SharedPoints.objects.values_list("pk", flat=True)) == {named.pk} != {orphan.pk}

    # As the admin deletes stories: the points they named stay until the sweep.
    Regression.objects.all().delete()
    assert SharedPoints.objects.filter(pk=named.pk).exists()
    assert sweep_unused_points.delay().get() == 1
    assert not SharedPoints.objects.exists()
    assert "sweep-unused-points" in settings.CELERY_BEAT_SCHEDULE
