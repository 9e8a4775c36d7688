"""What the database stores of the suites, as plain strings: the built-in suites' names and where a run's start
time came from. Pure constants, so the models (declared in every process) name them without importing a suite."""

from __future__ import annotations

SYSBENCH = "sysbench"
DBBENCH = "db_bench"

# Where a run's start time came from: a clock time its result files record, or the oldest file's time, which only
# says when the files were last written (and nothing once they have been copied).
STARTED_CONTENT, STARTED_FILE_TIME = "content", "file time"
