"""The synthetic series name every version so that it reads back as itself: N versions are N versions."""

from __future__ import annotations

import pytest

from bench.generate import DBMS
from runs.synthetic import build_token
from suites.naming import parse_run_dir


@pytest.mark.parametrize(("code", "version"), [("my", "8.10.0"), ("fbmy", "5.13.34")])
def test_a_version_the_directory_name_cannot_hold_is_refused_with_what_it_would_read_as(
    code: str, version: str
) -> None:
    with pytest.raises(ValueError, match=r"reads as \d+\.\d+\.\d+"):
        build_token(code, version, "rel")


@pytest.mark.parametrize(("code", "flavour", "_config", "version"), DBMS)
def test_the_generators_200_versions_of_every_dbms_read_back_as_200_distinct_versions(
    code: str, flavour: str, _config: str, version: object
) -> None:
    names = [version(i) for i in range(200)]  # type: ignore[operator]
    read = [parse_run_dir(f"x.{build_token(code, name, flavour)}.z12a_c8r32.pk1").version for name in names]
    assert read == names
    assert len(set(read)) == 200
