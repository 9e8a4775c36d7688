"""A series whose after-import refresh was lost (broker down when the import committed) is refreshed later."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from reports.models import SeriesSummary
from reports.tasks import REFRESH_GRACE, REFRESH_LOOKBACK, refresh_lost_series
from runs.importer import import_bundle, store_bundle
from runs.models import Bundle
from runs.tests.hostile import RUN, sb_met, sb_o, tgz_of_files

pytestmark = pytest.mark.django_db


def _imported(name: str, run: str = RUN, qps: str = "14178.15") -> Bundle:
    files = {
        f"{run}/sb.o.point-query.range100.pk1.dop1": sb_o(qps=qps),
        f"{run}/sb.met.point-query.range100.pk1.dop1": sb_met(),
    }
    bundle, _ = store_bundle(tgz_of_files(files), name=name, source=Bundle.Source.UPLOAD)
    import_bundle(bundle.pk)
    bundle.refresh_from_db()
    assert bundle.status == Bundle.Status.IMPORTED
    return bundle


def _age(bundle: Bundle, by: timedelta) -> None:
    Bundle.objects.filter(pk=bundle.pk).update(imported_at=timezone.now() - by)


def test_a_series_whose_refresh_was_lost_gets_its_summary_back() -> None:
    bundle = _imported("lost.tgz")
    _age(bundle, REFRESH_GRACE * 2)
    SeriesSummary.objects.all().delete()  # the refresh never ran

    assert refresh_lost_series() == 1
    summary = SeriesSummary.objects.get()
    assert summary.runs == 1 and summary.latest_run.bundle_id == bundle.pk
    assert refresh_lost_series() == 0  # refreshed once, then left alone


def test_a_summary_older_than_the_newest_import_of_its_series_is_refreshed() -> None:
    _imported("first.tgz")
    second = _imported("second.tgz", run=RUN.replace("my8044", "my8045"), qps="15000.0")
    SeriesSummary.objects.update(computed_at=timezone.now() - REFRESH_GRACE * 3)
    _age(second, REFRESH_GRACE * 2)

    assert refresh_lost_series() == 1
    assert SeriesSummary.objects.get().runs == 2


def test_fresh_and_old_imports_are_left_to_their_own_refresh() -> None:
    fresh = _imported("fresh.tgz")
    SeriesSummary.objects.all().delete()
    assert refresh_lost_series() == 0  # its refresh may still be queued
    _age(fresh, REFRESH_LOOKBACK + timedelta(hours=1))
    assert refresh_lost_series() == 0  # beyond the look-back: not re-read every minute forever
