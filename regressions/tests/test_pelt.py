"""Detection's own PELT finds exactly the segmentation ruptures' PELT finds, in a fraction of the time."""

from __future__ import annotations

import random
import time

import numpy as np
import pytest
import ruptures

from regressions.changepoints import pelt_l2


def _ruptures_ends(signal: list[float], penalty: float) -> list[int]:
    algo = ruptures.Pelt(model="l2", min_size=1, jump=1).fit(np.asarray(signal, dtype=float).reshape(-1, 1))
    return list(algo.predict(pen=penalty))


def _series(rng: random.Random, n: int, *, rounded: bool) -> list[float]:
    """Relative QPS of a series: levels with steps, run-to-run noise, now and then an outlier."""
    level = rng.uniform(0.5, 1.5)
    values = []
    for _ in range(n):
        if rng.random() < 0.08:
            level *= rng.uniform(0.6, 1.4)
        value = level * (1 + rng.gauss(0, rng.choice([0.005, 0.02, 0.1])))
        if rng.random() < 0.03:
            value *= rng.uniform(0.3, 3)
        values.append(round(value, 2) if rounded else value)
    return values


@pytest.mark.parametrize("seed", range(40))
def test_it_finds_the_same_breakpoints_as_ruptures_on_noisy_series_with_steps(seed: int) -> None:
    rng = random.Random(seed)
    signal = _series(rng, rng.randint(1, 120), rounded=seed % 2 == 0)
    for sigma in (0.001, 0.01, 0.05, 0.3):
        penalty = sigma**2 * np.log(max(len(signal), 2))
        assert pelt_l2(signal, penalty) == _ruptures_ends(signal, penalty)


@pytest.mark.parametrize(
    "signal",
    [
        [1.0],
        [1.0, 1.0, 1.0, 1.0],
        [1.0, 1.0, 1.0, 0.5, 0.5, 0.5],
        [0.5, 1.0, 0.5, 1.0, 0.5, 1.0],
        [1e6, 1e6 + 1, 1e6, 2e6, 2e6 + 1],
        [0.0, 0.0, 0.0, 3.0],
    ],
)
def test_it_agrees_with_ruptures_on_constant_alternating_and_far_from_zero_signals(signal: list[float]) -> None:
    for penalty in (1e-6, 0.01, 1.0, 100.0):
        assert pelt_l2(signal, penalty) == _ruptures_ends(signal, penalty)


def test_a_long_series_is_segmented_in_milliseconds() -> None:
    signal = _series(random.Random(7), 300, rounded=False)
    started = time.perf_counter()
    ends = pelt_l2(signal, 0.01**2 * np.log(300))
    elapsed = time.perf_counter() - started
    assert ends[-1] == 300
    # ruptures takes tens of milliseconds here; a tenth of a second leaves room for a busy machine.
    assert elapsed < 0.1
