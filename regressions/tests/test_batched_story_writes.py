"""Detection writes a series' new stories in batched inserts: the records, their links to the group stories
that stand for them, and the news they make are those of one insert per story, even when a concurrent
detection stored one of them first."""

from __future__ import annotations

from typing import Any

import pytest

from regressions import records
from regressions.detection import detect_regressions
from regressions.models import Regression
from runs.models import Run

pytestmark = pytest.mark.django_db

Key = tuple[Any, ...]


def _stored() -> dict[Key, dict[str, Any]]:
    """Every record by natural key, with the natural key of the record it is folded into instead of its id."""
    rows = list(Regression.objects.order_by("pk"))
    key_of = {r.pk: (r.microbenchmark_id, r.group, r.kind, r.arrived_in_id, r.metric, r.releases) for r in rows}
    fields = (*records.DETECTED_FIELDS, *records.STORY_FIELDS)
    return {
        key_of[r.pk]: {
            **{name: getattr(r, name) for name in fields if name != "folded_into_id"},
            "folded_into": key_of.get(r.folded_into_id) if r.folded_into_id else None,
        }
        for r in rows
    }


def test_member_stories_are_folded_into_group_stories_inserted_in_the_same_detection(small_base: Run) -> None:
    summary = detect_regressions(small_base.server_id, small_base.workload_id)
    stored = _stored()
    assert summary.created == len(stored)
    folded = [r for r in Regression.objects.filter(folded_into__isnull=False).select_related("folded_into")]
    assert folded and all(r.folded_into.is_group and r.folded_into.group == r.group for r in folded)  # type: ignore[union-attr]
    # Ids follow the stories' order, as one insert each gave them: every group story before its members.
    assert all(r.folded_into_id < r.pk for r in folded)  # type: ignore[operator]


def test_a_story_a_concurrent_detection_stored_first_is_updated_and_the_rest_inserted(
    small_base: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    detect_regressions(small_base.server_id, small_base.workload_id)
    expected = _stored()
    # The other detection's copy of a story this one is about to insert, folded into nothing yet.
    raced = Regression.objects.filter(folded_into__isnull=False).order_by("pk").last()
    assert raced is not None
    Regression.objects.all().delete()
    real = records._create_all
    calls: list[int] = []

    def racing(server_id: int, workload_id: int, batch: Any, now: Any) -> list[Regression | None]:
        if not calls:
            raced.pk = None  # type: ignore[assignment]
            raced.folded_into = None
            raced.save(force_insert=True)
        calls.append(len(batch))
        return real(server_id, workload_id, batch, now)

    monkeypatch.setattr(records, "_create_all", racing)
    summary = detect_regressions(small_base.server_id, small_base.workload_id)
    assert summary.created == len(expected) - 1 and summary.updated == 1, summary.as_dict()
    assert _stored() == expected
