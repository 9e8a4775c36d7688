"""A colour-blind-safe diverging palette for the heatmap: orange for slower than the base, blue for faster.

Red against green is the pair the commonest colour-vision deficiencies (deuteranopia, protanopia) cannot
tell apart. Orange against blue stays distinct for them and in greyscale print, since the two ends also
differ in lightness. The heatmap's colour scale keeps its stops (the thresholds, where the colour changes,
and the flat grey between them); only the colours at those stops change.
"""

from __future__ import annotations

import copy
from typing import Any

WORSE_DARK = "#b35806"  # orange, far below the red threshold
WORSE_LIGHT = "#fdb863"  # orange, just below it
NEUTRAL = "#eceef2"  # between the thresholds
BETTER_LIGHT = "#9ecae1"  # blue, just above the green threshold
BETTER_DARK = "#08519c"  # blue, far above it

LEGEND = (
    ("worse", WORSE_DARK, "slower than the base: at or below"),
    ("same", NEUTRAL, "between the thresholds"),
    ("better", BETTER_DARK, "faster than the base: at or above"),
)


def diverging_colorscale(stops: list[list[Any]]) -> list[list[Any]]:
    """The heatmap's six-stop threshold scale (dark and light worse, grey twice, light and dark better)
    recoloured; any other shape is returned as it is."""
    if len(stops) != 6:
        return stops
    colours = (WORSE_DARK, WORSE_LIGHT, NEUTRAL, NEUTRAL, BETTER_LIGHT, BETTER_DARK)
    return [[stop[0], colour] for stop, colour in zip(stops, colours, strict=True)]


def colour_blind_heatmap(figure: dict[str, Any]) -> dict[str, Any]:
    """A copy of a heatmap figure whose heatmap traces use the orange–blue scale (the cached one is not changed)."""
    result = copy.copy(figure)
    result["data"] = []
    for trace in figure.get("data", []):
        if trace.get("type") == "heatmap" and isinstance(trace.get("colorscale"), list):
            trace = {**trace, "colorscale": diverging_colorscale(trace["colorscale"])}
        result["data"].append(trace)
    return result
