"""The custom suite as the registry knows it: runs read from open-format documents of any harness."""

from __future__ import annotations

from suites.base import Suite
from suites.groups import GroupSet
from suites.openformat import parse

# A custom suite's own names fit no built-in group set: without groups of its own, every microbenchmark is listed
# ungrouped rather than guessed into one.
UNGROUPED = GroupSet("ungrouped", (), lambda _label: None)

SUITE = Suite(
    name=parse.SUITE_NAME,
    label="Custom suite (open result format)",
    parse_error=parse.ParseError,
    is_warmup=parse.is_warmup,
    group_sets=(UNGROUPED,),
    recognise=parse.recognise,
    files_hint="open-format result documents (*.json or *.result.csv, see docs/result-format.md)",
    parse_files=parse.parse_files,
)
