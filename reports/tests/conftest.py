"""Fixtures shared by the comparison tests."""

from __future__ import annotations

import pytest

from reports.compare import Cells, Comparison, ComparisonSpec, compute_comparison
from runs.models import Run


@pytest.fixture
def comparison(small_base: Run) -> Comparison:
    """The real sysbench-mysql-small series compared against MySQL 5.6.51, as the reference tables are."""
    return compute_comparison(ComparisonSpec(base_run_id=small_base.pk))


def set_relative(comparison: Comparison, key: str, label: str, value: float | None) -> None:
    """A relative QPS changed in place for a test: in the comparison's view and, for a computed comparison, in the
    arrays its charts read it from (``charts._grid_lines``)."""
    comparison.relative[key][label] = value
    if isinstance(comparison.cells, Cells):
        grid = comparison.cells.grid
        at = grid.keys.index(key), grid.labels.index(label)
        grid.relative[at] = 0.0 if value is None else value
        grid.has_relative[at] = value is not None


def members(comparison: Comparison, group: str) -> list[str]:
    """The labels of one group, in the comparison's order."""
    return [label for label in comparison.labels if comparison.group_of.get(label) == group]
