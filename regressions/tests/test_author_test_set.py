"""The test set of the author's tables (SPEC §2): scan.warm is a measured scan; the 2025 tables' omitted
``.pre`` tests and the warm-up passes tell no stories of their own."""

from __future__ import annotations

import importlib

import pytest
from django.apps import apps as django_apps

import suites
from regressions.detection import detect_regressions
from regressions.models import Regression
from reports.compare import ComparisonSpec, compute_comparison
from runs.models import Microbenchmark, Run
from suites.groups import CURRENT_32
from suites.sysbench.parse import is_warmup

pytestmark = pytest.mark.django_db


def test_scan_warm_is_measured_and_the_other_warm_passes_are_warm_ups() -> None:
    assert not is_warmup("scan.warm") and not suites.get("sysbench").excluded("scan.warm")
    assert all(is_warmup(t) for t in ("point-query.warm", "points-covered-si.warm", "scan.warmpre"))
    # Compared and told like any test, but no member of the standard group sets (their counts are the author's).
    assert CURRENT_32.classify("scan.warm_range=100") is None


def test_the_small_series_compares_and_tells_the_authors_33_tests(small_base: Run) -> None:
    comparison = compute_comparison(ComparisonSpec(base_run_id=small_base.pk))
    assert "scan.warm_range=100" in comparison.labels
    assert comparison.group_of["scan.warm_range=100"] is None
    assert not any(".warm_" in label and label != "scan.warm_range=100" for label in comparison.labels)
    assert not any(".warmpre" in label for label in comparison.labels)

    detect_regressions(small_base.server_id, small_base.workload_id, view="all")
    told = {r.microbenchmark.label for r in Regression.objects.exclude(microbenchmark=None)}  # type: ignore[union-attr]
    # The 2025 tables list no .pre test: they repeat their test's story, and are left out.
    assert not {label for label in told if ".pre_" in label}
    assert "scan.warm_range=100" in told


def test_scan_warm_stored_as_a_warm_up_before_is_measured_after_the_migration() -> None:
    stored = Microbenchmark.objects.create(suite="sysbench", test="scan.warm", range_size=100, is_warmup=True)
    migration = importlib.import_module("runs.migrations.0018_scan_warm_is_a_measured_scan")
    migration.measured(django_apps, None)
    stored.refresh_from_db()
    assert not stored.is_warmup
