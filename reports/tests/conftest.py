"""Fixtures shared by the comparison tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from reports.compare import Comparison, ComparisonSpec, build_comparison
from runs.importer import archive_directory, submit_and_import
from runs.models import Run

SMALL_BASE_RUN = "x.my5651_rel_o2nofp.z12a_c8r32.pk1"


@pytest.fixture
def comparison(db: None, corpus: Path) -> Comparison:
    """The real sysbench-mysql-small series compared against MySQL 5.6.51, as the reference tables are."""
    submit_and_import(archive_directory(corpus / "sysbench-mysql-small"), name="small.tar.gz", source="command")
    base = Run.objects.get(name=SMALL_BASE_RUN)
    return build_comparison(ComparisonSpec(base_run_id=base.pk))


def members(comparison: Comparison, group: str) -> list[str]:
    """The labels of one group, in the comparison's order."""
    return [label for label in comparison.labels if comparison.group_of.get(label) == group]
