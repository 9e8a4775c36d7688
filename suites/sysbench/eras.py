"""sysbench's two scan eras: before March 2025 the author's scripts computed scan's QPS by another formula
(tps × table size / 1000), so a comparison can read each run by its own era's formula, and says when a table
mixes them. Pure: the comparison (``reports.compare``) asks this through the suite (``Suite.scan_eras``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence

from suites.sysbench import parse as sysbench


def other_era(run_formula: str) -> bool:
    """Whether a run's own scripts computed scan by the formula that is not the spec's."""
    return run_formula == sysbench.SCAN_TPS_ROWS


def era_qps(
    test: str, range_size: int | None, qps: float, tps: float | None, run_formula: str, commands: Mapping[str, str]
) -> float:
    """A result's QPS read by its run's own era's formula: only a scan of a run of the other era changes."""
    if run_formula != sysbench.SCAN_TPS_ROWS or sysbench.base_test(test) != "scan":
        return qps
    command = commands.get(sysbench.test_label(test, range_size or 0), "")
    table_size = sysbench.parse_command(command).get("table-size", "")
    value = sysbench.scan_value(
        sysbench.SCAN_TPS_ROWS,
        table_size=int(table_size) if table_size.isdigit() else None,
        tps=tps,
        lat_avg_ms=None,
    )
    return value if value is not None else qps


def eras_of(runs: Iterable[tuple[str, str]], labels: Sequence[str]) -> dict[str, list[str]]:
    """The runs (name, their scan formula) of each formula when a table with scan in it mixes both; {} when it
    does not."""
    if not any(sysbench.base_test(label.rsplit("_range=", 1)[0]) == "scan" for label in labels):
        return {}
    found: dict[str, list[str]] = defaultdict(list)
    for name, formula in runs:
        # A run that reported no scan value of its own is stored and read by the spec's formula; one imported
        # before the formula was recorded is read so too, and named apart: it may be of either era.
        if formula in (sysbench.SCAN_TPS_ROWS, sysbench.SCAN_UNKNOWN):
            found[formula].append(name)
        else:
            found[sysbench.SCAN_SPEC].append(name)
    return dict(found) if sysbench.SCAN_TPS_ROWS in found and len(found) > 1 else {}
