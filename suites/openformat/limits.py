"""The result format's limits, its known metrics and its error: what the suite's reader needs without the
document's schema (pydantic), which is imported only when a document is read (``suites.openformat.document``)."""

from __future__ import annotations

FORMAT = "benchdash-result"
FORMAT_VERSION = 1
# The widest values the database stores (runs.models); longer ones are refused here, with their place.
MAX_NAME, MAX_TEXT, MAX_VERSION, MAX_TEST = 200, 200, 64, 200
MAX_RESULTS = 100_000
MAX_BYTES = 64 * 1024**2

# Metric names benchdash knows and shows in its own columns; any other name is kept with the result as it is.
KNOWN_METRICS: dict[str, str] = {
    "tps": "transactions per second",
    "lat_min_ms": "minimum latency, ms",
    "lat_avg_ms": "average latency, ms",
    "lat_max_ms": "maximum latency, ms",
    "lat_pct_ms": "latency at the percentile given by lat_pct, ms",
    "lat_pct": "which percentile lat_pct_ms is (95, 99)",
    "errors_per_s": "errors per second",
    "reconnects_per_s": "reconnects per second",
    "cpu_o": "CPU seconds per operation (vmstat us+sy over operations)",
    "cs_o": "context switches per operation",
    "r_o": "storage reads per operation",
    "rkb_o": "KB read from storage per operation",
    "wkb_o": "KB written to storage per operation",
    "o_s": "operations per second seen by the HW sampling",
}


class OpenFormatError(ValueError):
    """The document is not a valid result document; the message lists every problem, by place."""
