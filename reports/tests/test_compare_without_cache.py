"""A comparison is computed, not refused, while the cache Redis is unreachable: nothing in the cache is needed."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import override_settings

from reports.compare import ComparisonSpec, compute_comparison, get_comparison
from tests.live import closed_port

pytestmark = pytest.mark.django_db


def test_a_comparison_is_computed_afresh_while_the_cache_is_unreachable(
    small_base: Any, caplog: pytest.LogCaptureFixture
) -> None:
    spec = ComparisonSpec(base_run_id=small_base.pk)
    unreachable = {
        "default": {
            "BACKEND": "benchdash.cache.PrefixedRedisCache",
            "LOCATION": f"redis://127.0.0.1:{closed_port()}/0",
            "KEY_PREFIX": "benchdash-unreachable",
            "OPTIONS": {"socket_connect_timeout": 1, "socket_timeout": 1},
        }
    }
    with override_settings(CACHES=unreachable):
        comparison = get_comparison(spec)
    expected = compute_comparison(spec)
    assert comparison.relative == expected.relative and comparison.summaries == expected.summaries
    assert len(comparison.columns) == len(expected.columns) > 1
    assert "cache unavailable" in caplog.text
