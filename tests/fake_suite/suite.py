"""The fake suite as the registry knows it."""

from __future__ import annotations

from suites import groups
from suites.base import Suite
from tests.fake_suite import parse

GROUPS = groups.user_group_set("fake-groups", {"reads": "re:^READ_", "writes": "re:^WRITE_"})

SUITE = Suite(
    name="fake",
    label="A team's own suite",
    parse_error=parse.ParseError,
    is_warmup=parse.is_warmup,
    group_sets=(GROUPS,),
    recognise=parse.recognise,
    files_hint="fake results (<server>/fakedb-<version>/results.fake)",
    parse_files=parse.parse_files,
    extra_metrics=(),
)
