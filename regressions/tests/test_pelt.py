"""Detection's segmentation (ruptures' kernel search with the linear kernel, in compiled code) finds exactly the
segmentation ruptures' least-squares PELT finds."""

from __future__ import annotations

import random

import numpy as np
import pytest
import ruptures

from regressions.changepoints import least_squares_breaks


def _ruptures_ends(signal: list[float], penalty: float) -> list[int]:
    algo = ruptures.Pelt(model="l2", min_size=1, jump=1).fit(np.asarray(signal, dtype=float).reshape(-1, 1))
    return list(algo.predict(pen=penalty))


def _cost(signal: list[float], ends: list[int], penalty: float) -> float:
    """The penalised least-squares cost of a segmentation: what both searches minimise."""
    total, start = 0.0, 0
    for end in ends:
        segment = np.asarray(signal[start:end], dtype=float)
        total += float(((segment - segment.mean()) ** 2).sum()) + penalty
        start = end
    return total


def _same_optimum(signal: list[float], penalty: float) -> None:
    """The same ends as ruptures' PELT; where two partitions cost exactly the same (rounded values make such
    ties) either may be kept, so the cost is compared instead."""
    ours, theirs = least_squares_breaks(signal, penalty), _ruptures_ends(signal, penalty)
    if ours != theirs:
        assert _cost(signal, ours, penalty) == pytest.approx(_cost(signal, theirs, penalty), rel=1e-9, abs=1e-12)


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
        _same_optimum(signal, penalty)


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
        _same_optimum(signal, penalty)
