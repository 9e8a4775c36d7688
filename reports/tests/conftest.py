"""Fixtures shared by the comparison tests."""

from __future__ import annotations

import pytest

from reports.compare import Comparison, ComparisonSpec, compute_comparison
from runs.models import Run


@pytest.fixture
def comparison(small_base: Run) -> Comparison:
    """The real sysbench-mysql-small series compared against MySQL 5.6.51, as the reference tables are."""
    return compute_comparison(ComparisonSpec(base_run_id=small_base.pk))


def members(comparison: Comparison, group: str) -> list[str]:
    """The labels of one group, in the comparison's order."""
    return [label for label in comparison.labels if comparison.group_of.get(label) == group]
