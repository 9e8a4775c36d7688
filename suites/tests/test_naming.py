"""Run-directory names → DBMS, version, flavour, config; and semantic version order."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from runs.versions import parse_version, sort_key
from suites.naming import UNKNOWN_DBMS, parse_run_dir


@pytest.mark.parametrize(
    ("name", "dbms", "version", "flavour", "config", "pk"),
    [
        ("x.my5651_rel_o2nofp.z12a_c8r32.pk1", "MySQL", "5.6.51", "rel_o2nofp", "z12a_c8r32", 1),
        ("x.my8406v2_rel_o2nofp.z12a_c8r32.pk1", "MySQL", "8.4.6", "v2_rel_o2nofp", "z12a_c8r32", 1),
        ("x.my9500_rel_o2nofp.z12a_c8r32.pk1", "MySQL", "9.5.0", "rel_o2nofp", "z12a_c8r32", 1),
        ("x.ma100244_rel_withdbg.cz11b_c24r64.pk0", "MariaDB", "10.2.44", "rel_withdbg", "cz11b_c24r64", 0),
        ("x.ma110402_rel.cz11b_c24r64.pk1", "MariaDB", "11.4.2", "rel", "cz11b_c24r64", 1),
        ("x.pg1023_o2nofp.x10a_wm1_c32r128.pk1", "Postgres", "10.23", "o2nofp", "x10a_wm1_c32r128", 1),
        ("x.pg174_o2nofp.x10a_wm1_c32r128.pk1", "Postgres", "17.4", "o2nofp", "x10a_wm1_c32r128", 1),
        ("x.pg18beta1_o2nofp.x10b_c8r32.pk1", "Postgres", "18beta1", "o2nofp", "x10b_c8r32", 1),
        ("x.fbmy5635_rel_221222.cza1_c8r32.pk1", "FB MyRocks", "5.6.35", "rel_221222", "cza1_c8r32", 1),
        # The Insert Benchmark archives' engine codes: MyRocks 5.6 and 8.0, InnoDB (MySQL), MongoDB.
        ("x.rx56.cx6d.pk1", "FB MyRocks", "5.6", "", "cx6d", 1),
        ("x.rx80.cx6d.pk1", "FB MyRocks", "8.0", "", "cx6d", 1),
        ("x.in80.cx6d.pk1", "MySQL", "8.0", "", "cx6d", 1),
        ("x.mo40.cx6d.pk1", "MongoDB", "4.0", "", "cx6d", 1),
        # A Postgres fork's patches over a release: Postgres of that release, the fork first in the flavour.
        ("x.pg_oriole_patches17_5_o2nofp.x10a_c8r32.pk1", "Postgres", "17.5", "oriole_o2nofp", "x10a_c8r32", 1),
        ("x.pg_oriole_patches17_6_o2nofp.x10a_c8r32.pk1", "Postgres", "17.6", "oriole_o2nofp", "x10a_c8r32", 1),
    ],
)
def test_it_reads_dbms_version_flavour_and_config_from_the_directory_name(
    name: str, dbms: str, version: str, flavour: str, config: str, pk: int
) -> None:
    run = parse_run_dir(name)
    assert (run.dbms, run.version, run.flavour, run.config, run.pk) == (dbms, version, flavour, config, pk)
    assert run.warnings == ()


def test_an_unknown_dbms_code_imports_as_unknown_and_says_so() -> None:
    run = parse_run_dir("x.ps8028_rel.z11a.pk1")
    assert run.dbms == UNKNOWN_DBMS
    assert run.version == "ps8028_rel"
    assert "unknown DBMS code 'ps'" in run.warnings[0]


def test_an_unknown_postgres_fork_is_postgres_of_its_release_and_says_so() -> None:
    run = parse_run_dir("x.pg_neon_patches16_2_o2nofp.x10a_c8r32.pk1")
    assert (run.dbms, run.version, run.flavour) == ("Postgres", "16.2", "neon_o2nofp")
    assert "unknown fork 'neon'" in run.warnings[0]


def test_a_name_that_is_not_a_run_directory_is_rejected() -> None:
    with pytest.raises(ValueError, match="not a run directory"):
        parse_run_dir("results-2025")


def test_config_hardware_suffix_is_read() -> None:
    run = parse_run_dir("x.my8044_rel.z12a_c8r32.pk1")
    assert (run.config_cores, run.config_ram_gb) == (8, 32)


def test_versions_order_semantically() -> None:
    expected = [
        "5.6.51", "5.7.44", "8.0.9", "8.0.10", "8.0.28", "8.0.30", "8.4.6", "9.0.0", "9.5.0",
        "10.2.44", "10.11.8", "11.4.2", "17.4", "18beta1", "18beta2", "18rc1", "18.0", "18.1",
    ]  # fmt: skip
    shuffled = sorted(expected, key=lambda v: hash(v) % 97)
    assert sorted(shuffled, key=sort_key) == expected


def test_a_version_that_does_not_parse_sorts_after_real_ones() -> None:
    assert sort_key("9.9.9") < sort_key("trunk")


@given(
    st.lists(st.integers(min_value=0, max_value=999_999), min_size=1, max_size=4),
    st.lists(st.integers(min_value=0, max_value=999_999), min_size=1, max_size=4),
)
def test_sort_key_orders_like_the_numeric_release_tuple(a: list[int], b: list[int]) -> None:
    va, vb = ".".join(map(str, a)), ".".join(map(str, b))
    pad_a, pad_b = tuple(a + [0] * (4 - len(a))), tuple(b + [0] * (4 - len(b)))
    assert (sort_key(va) < sort_key(vb)) == (pad_a < pad_b)
    assert parse_version(va).release == tuple(a)
