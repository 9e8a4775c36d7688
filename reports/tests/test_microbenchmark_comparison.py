"""The comparison of one microbenchmark (what a drill-down reads from scratch) has that microbenchmark's numbers
of the comparison of the whole series, and the latencies the drill-down would otherwise read apart."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.cache import cache

from reports.compare import (
    Comparison,
    ComparisonSpec,
    build_comparison,
    compute_comparison,
    get_comparison,
    get_microbenchmark_comparison,
    load_series,
)
from reports.views import _latencies
from runs import synthetic
from runs.importer import submit_and_import
from runs.models import Microbenchmark, Result, Run

pytestmark = pytest.mark.django_db


def _of(comparison: Comparison, label: str) -> dict[str, Any]:
    """Everything a page about ``label`` reads from a comparison."""
    keys = [c.key for c in comparison.columns]
    return {
        "columns": [(c.key, c.run_ids, comparison.version_label(c.key)) for c in comparison.columns],
        "base": comparison.base,
        "dop": comparison.dop,
        "dops": comparison.dops,
        "in": label in comparison.labels,
        "qps": [comparison.qps[k].get(label) for k in keys],
        "cv": [comparison.cv[k].get(label) for k in keys],
        "metrics": [comparison.metrics[k].get(label) for k in keys],
        "relative": [comparison.relative.get(k, {}).get(label) for k in keys],
        "flags": [comparison.flags.get(k, {}).get(label) for k in keys],
        "noisy": [comparison.noisy.get(k, {}).get(label) for k in keys],
        "ratios": [comparison.metric_ratios.get(k, {}).get(label) for k in keys],
    }


def _check_every_microbenchmark(spec: ComparisonSpec) -> int:
    whole = compute_comparison(spec)
    run_ids = [run_id for c in whole.columns for run_id in c.run_ids]
    checked = latencies = 0
    for microbenchmark in Microbenchmark.objects.filter(results__run_id__in=run_ids).distinct():
        one = build_comparison(load_series(spec, microbenchmark_id=microbenchmark.pk))
        assert _of(one, microbenchmark.label) == _of(whole, microbenchmark.label), microbenchmark.label
        assert one.labels == ([microbenchmark.label] if microbenchmark.label in whole.labels else [])
        # Read with its results, not in a query of their own (the whole comparison keeps none): the same rows,
        # for a microbenchmark the comparison shows (the page of another is not found).
        assert one.latency is not None and whole.latency is None
        column_of_run = {run_id: c.key for c in whole.columns for run_id in c.run_ids}
        if microbenchmark.label in whole.labels:
            found = _latencies(one, microbenchmark.pk, column_of_run)
            assert found == _latencies(whole, microbenchmark.pk, column_of_run)
            latencies += len(found)
        checked += 1
    assert latencies >= len(whole.labels)
    return checked


def test_each_microbenchmark_of_the_real_series_has_the_numbers_of_the_whole_comparison(small_base: Run) -> None:
    assert _check_every_microbenchmark(ComparisonSpec(base_run_id=small_base.pk)) > 30
    assert _check_every_microbenchmark(ComparisonSpec(base_run_id=small_base.pk, include_warmups=True)) > 30
    assert _check_every_microbenchmark(ComparisonSpec(base_run_id=small_base.pk, scan_formula="era")) > 30


def test_repeated_runs_and_other_concurrencies_give_the_same_spread_flags_and_concurrency() -> None:
    spec = synthetic.SeriesSpec(versions=("8.0.1", "8.0.2", "8.0.3"), repeats=2, dops=(1, 4), seed=3)
    submit_and_import(synthetic.bundle_bytes(spec), name="repeats.tgz", source="command")
    base = Run.objects.order_by("build__version__sort_key", "pk").first()
    assert base is not None
    assert _check_every_microbenchmark(ComparisonSpec(base_run_id=base.pk)) == 42
    assert _check_every_microbenchmark(ComparisonSpec(base_run_id=base.pk, dop=4)) == 42


def test_a_cached_whole_comparison_is_read_instead() -> None:
    submit_and_import(synthetic.bundle_bytes(synthetic.SeriesSpec(seed=4)), name="s.tgz", source="command")
    base = Run.objects.order_by("build__version__sort_key", "pk").first()
    assert base is not None
    spec = ComparisonSpec(base_run_id=base.pk)
    microbenchmark_id = Result.objects.filter(run=base).values_list("microbenchmark_id", flat=True).first()
    assert microbenchmark_id is not None
    cache.clear()
    assert len(get_microbenchmark_comparison(spec, microbenchmark_id).labels) == 1
    whole = get_comparison(spec)
    assert get_microbenchmark_comparison(spec, microbenchmark_id).labels == whole.labels


def test_one_columns_metric_ratios_are_those_of_every_column(small_base: Run) -> None:
    spec = ComparisonSpec(base_run_id=small_base.pk)
    every = compute_comparison(spec).metric_ratios
    for key in [*every, compute_comparison(spec).base, "no such column"]:
        # Each read from a comparison that has not worked out every column's, then from one that has.
        alone = compute_comparison(spec)
        assert alone.metric_ratios_of(key) == every.get(key, {}) and "metric_ratios" not in alone.__dict__
        assert alone.metric_ratios_of(key) == alone.metric_ratios.get(key, {})


def test_one_microbenchmark_read_by_sql_compiled_once_is_what_its_querysets_read(
    small_base: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pickle

    from reports import compare

    before = Run.objects.order_by("-pk").values_list("pk", flat=True)[0]
    spec = synthetic.SeriesSpec(versions=("8.0.1", "8.0.2", "8.0.3"), repeats=2, dops=(1, 4), seed=5)
    submit_and_import(synthetic.bundle_bytes(spec), name="repeats.tgz", source="command")
    repeated = Run.objects.filter(pk__gt=before).order_by("pk").first()
    assert repeated is not None
    checked = latencies = 0
    for base in (small_base, repeated):
        for include_warmups in (False, True):
            asked = ComparisonSpec(base_run_id=base.pk, include_warmups=include_warmups)
            for mb in sorted(set(Result.objects.filter(run=base).values_list("microbenchmark_id", flat=True)))[::4]:
                assert compare._compiled_reads()
                compiled = load_series(asked, microbenchmark_id=mb)
                with monkeypatch.context() as patched:
                    patched.setattr(compare, "_compiled_reads", lambda *args: False)
                    built = load_series(asked, microbenchmark_id=mb)
                assert repr(compiled) == repr(built) and compiled.results
                latencies += bool(compiled.latency)
                assert pickle.dumps(build_comparison(compiled)) == pickle.dumps(build_comparison(built))
                checked += 1
    assert checked > 10 and latencies > 5
