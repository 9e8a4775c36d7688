"""Settings experiments, "settings or code?": a hook between the pages that show two runs of two versions (a
story's, a run diff's) and the app that can measure again (runner), which import neither each other.

A page hands a ``RunPair`` to ``split_for``; the provider (runner.experiments, through benchdash.hooks) answers with a
``SettingsSplit``: whether the new version can be measured again with the old version's settings (and where to
ask for it), and once it has been, the split of the change into what the changed defaults did and what the code
did. Per microbenchmark and concurrency::

    total    = new / old
    defaults = new / new-with-old-settings
    code     = new-with-old-settings / old          so  total = defaults × code, exactly

and over the microbenchmarks their geometric means, which multiply back the same way.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from benchdash import hooks

# A factor is the ratio of two single runs, each with the noise model's σ: it counts beyond noise when it is
# further from 1 than twice the σ of such a ratio (√2 σ).
NOISE_SIGMAS = 2.0


@dataclass(frozen=True)
class RunPair:
    old_run_id: int
    new_run_id: int
    labels: tuple[str, ...]  # the microbenchmarks to measure again
    story_id: int | None = None
    noise: float | None = None  # σ of one point, relative (the story's noise model)


@dataclass(frozen=True)
class SettingRow:
    name: str
    old: str | None  # the old version's value: what the experiment applies
    new: str | None
    applied: bool | None  # None: not tried yet
    reason: str = ""  # why it was not applied
    now: str | None = None  # the value read back once set


@dataclass(frozen=True)
class MicrobenchmarkSplit:
    label: str
    dop: int
    old_qps: float
    new_qps: float
    with_old_settings_qps: float

    @property
    def total(self) -> float:
        return self.new_qps / self.old_qps

    @property
    def defaults(self) -> float:
        return self.new_qps / self.with_old_settings_qps

    @property
    def code(self) -> float:
        return self.with_old_settings_qps / self.old_qps


def _geomean(values: Sequence[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values))


@dataclass(frozen=True)
class SettingsSplit:
    state: str  # unavailable, offered, queued, running, importing, done, failed, cancelled
    reason: str = ""  # why it is unavailable, or how the run failed
    old_version: str = ""
    new_version: str = ""
    target: str = ""
    host: str = ""  # "" : the general workers
    settings: tuple[SettingRow, ...] = ()
    tests: tuple[MicrobenchmarkSplit, ...] = ()
    missing: tuple[str, ...] = ()  # microbenchmarks the experiment's run has no result for
    sigma: float | None = None
    start_url: str = ""
    form: dict[str, str] = field(default_factory=dict)  # the fields the start form posts
    run_url: str = ""
    run_id: int | None = None
    restore_error: str = ""

    @property
    def applied(self) -> list[SettingRow]:
        return [s for s in self.settings if s.applied]

    @property
    def to_apply(self) -> list[SettingRow]:
        return [s for s in self.settings if s.applied is None]

    @property
    def not_applied(self) -> list[SettingRow]:
        return [s for s in self.settings if s.applied is False]

    @property
    def partial(self) -> bool:
        """Some differing setting could not be applied: the defaults' share is only the applied ones'."""
        return bool(self.not_applied)

    @property
    def total(self) -> float | None:
        return _geomean([t.total for t in self.tests]) if self.tests else None

    @property
    def defaults(self) -> float | None:
        return _geomean([t.defaults for t in self.tests]) if self.tests else None

    @property
    def code(self) -> float | None:
        return _geomean([t.code for t in self.tests]) if self.tests else None

    @property
    def gate(self) -> float | None:
        """How far from 1 a factor must be to count beyond noise (None without a σ)."""
        return NOISE_SIGMAS * math.sqrt(2) * self.sigma if self.sigma is not None else None

    def beyond_noise(self, factor: float | None) -> bool | None:
        gate = self.gate
        if factor is None or gate is None:
            return None
        return abs(factor - 1) > gate

    @property
    def defaults_beyond_noise(self) -> bool | None:
        return self.beyond_noise(self.defaults)

    @property
    def code_beyond_noise(self) -> bool | None:
        return self.beyond_noise(self.code)

    @property
    def verdict(self) -> str:
        """The split in one line: which part the change came from (``partial`` says when it is partial)."""
        if self.defaults is None or self.code is None:
            return ""
        by_defaults, by_code = self.defaults_beyond_noise, self.code_beyond_noise
        if by_defaults is None:
            return (
                f"From the changed defaults ×{self.defaults:.3f}, from the code ×{self.code:.3f}: no noise model σ "
                f"to judge them by."
            )
        if by_defaults and not by_code:
            return "The change comes from the changed defaults; the code's part is within noise."
        if by_code and not by_defaults:
            return "The change comes from the code; the changed defaults' part is within noise."
        if by_code and by_defaults:
            return "The change comes from both the changed defaults and the code."
        return "Neither part is beyond noise."

    def as_json(self) -> dict[str, Any]:
        return {
            "state": self.state,
            "reason": self.reason,
            "old_version": self.old_version,
            "new_version": self.new_version,
            "target": self.target,
            "host": self.host or None,
            "run_id": self.run_id,
            "total": self.total,
            "from_defaults": self.defaults,
            "from_code": self.code,
            "sigma": self.sigma,
            "noise_gate": self.gate,
            "from_defaults_beyond_noise": self.defaults_beyond_noise,
            "from_code_beyond_noise": self.code_beyond_noise,
            "partial": self.partial,
            "verdict": self.verdict,
            "restore_error": self.restore_error,
            "tests": [
                {
                    "label": t.label,
                    "dop": t.dop,
                    "old_qps": t.old_qps,
                    "new_qps": t.new_qps,
                    "new_with_old_settings_qps": t.with_old_settings_qps,
                    "total": t.total,
                    "from_defaults": t.defaults,
                    "from_code": t.code,
                }
                for t in self.tests
            ],
            "missing": list(self.missing),
            "settings": [
                {"name": s.name, "old": s.old, "new": s.new, "applied": s.applied, "reason": s.reason, "now": s.now}
                for s in self.settings
            ],
        }


Provider = Callable[[RunPair], "SettingsSplit | None"]


def split_for(pair: RunPair) -> SettingsSplit | None:
    """The first provider's answer: None when the two runs differ in no setting (nothing to split)."""
    providers: tuple[Provider, ...] = hooks.provided(hooks.SETTINGS_SPLITS)
    for provider in providers:
        found = provider(pair)
        if found is not None:
            return found
    return None
