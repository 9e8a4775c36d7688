"""A story's figures, each with its label: the step at arrival, the level now, the base. Pure.

One number per claim: the list, the story page, the JSON (``records.record_as_dict`` and the API) and the
alert bodies all print these, computed here once from the record's fields, never re-derived on a page.

- **step at arrival**: the change between the two versions the story names (``previous_version`` →
  ``arrived_in``), exactly the ratio the comparison shows for them; the levels on both sides are the
  values at those versions (relative QPS against the base, or the metric per operation);
- **now**: the newest version of the view against the level before the arrival (``reference_version``:
  ``previous_version``, or for a story that starts when a gain is lost and more, the level before the gain);
- **base**: what the levels are relative to (a metric's levels are absolute, per operation).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from reports import stats

QPS = "qps"


def percent(value: float | None) -> str:
    """A relative change as the write-ups print it: ``−12.1%``; unknown is ``–``."""
    if value is None or math.isnan(value):
        return "–"
    if math.isinf(value):
        return "+∞" if value > 0 else "−∞"
    return f"{value:+.1%}".replace("-", "−")


def level_text(value: float | None, metric: str) -> str:
    if value is None:
        return "–"
    return f"{value:.2f}" if metric == QPS else f"{value:.4g}"


@dataclass(frozen=True)
class Figures:
    metric: str
    step: float | None  # previous_version → arrived_in
    previous_version: str | None
    arrived_in: str
    level_before: float | None  # at previous_version
    level_at_arrival: float | None  # at arrived_in
    now: float | None  # the newest version against the reference level
    latest_version: str | None
    level_now: float | None
    reference_version: str | None
    base: str  # the base's name; "" for a metric's absolute levels

    @property
    def level_name(self) -> str:
        return "relative QPS" if self.metric == QPS else f"{self.metric} per operation"

    @property
    def near_zero(self) -> bool:
        """A metric's story from a level about zero (``reports.stats.ABOUT_ZERO``): no ratio, the two levels."""
        return self.metric != QPS and stats.about_zero(self.metric, self.level_before)

    @property
    def step_text(self) -> str:
        """Like "−30.2% at 8.0.43 against 5.7.44 (relative QPS 0.87 → 0.63)"."""
        against = f" against {self.previous_version}" if self.previous_version else ""
        levels = ""
        if self.level_before is not None and self.level_at_arrival is not None:
            before, after = level_text(self.level_before, self.metric), level_text(self.level_at_arrival, self.metric)
            levels = f" ({self.level_name} {before} → {after})"
            if self.near_zero:
                return f"{self.level_name} {before} → {after} at {self.arrived_in}{against} (from about zero: no ratio)"
        return f"{percent(self.step)} at {self.arrived_in}{against}{levels}"

    @property
    def now_text(self) -> str:
        """Like "−24.1% at 8.4.7 against 5.7.44 (relative QPS 0.66)"."""
        at = f" at {self.latest_version}" if self.latest_version else ""
        against = f" against {self.reference_version}" if self.reference_version else ""
        level = f" ({self.level_name} {level_text(self.level_now, self.metric)})" if self.level_now is not None else ""
        return f"{percent(self.now)}{at}{against}{level}"

    @property
    def base_text(self) -> str:
        if self.metric != QPS:
            return "none: the levels are the metric as measured, per operation"
        return self.base or "–"

    def labelled(self) -> list[tuple[str, str]]:
        """(label, text) lines, in the order every place prints them."""
        return [("Step at arrival", self.step_text), ("Now", self.now_text), ("Base", self.base_text)]

    def as_json(self) -> dict[str, Any]:
        return {
            "step_at_arrival": {
                "change": self.step,
                "from": self.previous_version,
                "to": self.arrived_in,
                "level_before": self.level_before,
                "level_after": self.level_at_arrival,
            },
            "now": {
                "change": self.now,
                "version": self.latest_version,
                "level": self.level_now,
                "against": self.reference_version,
            },
            "base": self.base if self.metric == QPS else None,
            "levels": self.level_name,
        }


def _finite(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and math.isfinite(value) else None


def story_figures(
    *,
    metric: str,
    change: float | None,
    current_change: float | None,
    level_before: float | None,
    level_after: float | None,
    arrived_in: str,
    previous_version: str | None,
    latest_version: str | None,
    events: Sequence[Mapping[str, Any]] | None,
    base: str = "",
) -> Figures:
    """The figures of a stored story. ``level_after`` is the level now (``level_before`` × (1 + ``current_change``),
    as detection stores it); the step's two levels are the arrival event's own, read at its two versions."""
    arrival = next((e for e in events or () if e.get("kind") == "arrival"), None) or {}
    return Figures(
        metric=metric,
        step=change,
        previous_version=previous_version,
        arrived_in=arrived_in,
        level_before=_finite(arrival.get("previous_level", level_before)),
        level_at_arrival=_finite(arrival.get("level")),
        now=current_change,
        latest_version=latest_version,
        level_now=level_after,
        reference_version=arrival.get("against") or previous_version,
        base=base,
    )
