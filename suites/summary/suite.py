"""The sysbench summary tables as the registry knows them: files of their own, runs that are sysbench's."""

from __future__ import annotations

from suites.base import Suite
from suites.summary import parse

SUITE = Suite(
    name="sysbench-summary",
    label="sysbench summary tables",
    parse_error=parse.ParseError,
    is_warmup=parse.is_warmup,
    recognise=parse.recognise,
    files_hint="sysbench summary tables (qps.abs.<name>.tsv or .csv, with o.met.<name> beside them)",
    parse_files=parse.parse_files,
    summary_of="sysbench",
)
