"""Debian's Chromium as every browser test and benchmark starts it (never a browser download)."""

from __future__ import annotations

from pathlib import Path

CHROMIUM = Path("/usr/bin/chromium")
# The machine has no internet: without these, Chromium keeps trying to reach Google services
# (sync, component updates, QUIC probes) and floods the log with refused connections.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
