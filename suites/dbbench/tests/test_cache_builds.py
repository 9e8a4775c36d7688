"""Two db_bench builds of one version that differ by their block cache (``sum.byrx.lru.txt``, ``sum.byrx.hcc.txt``,
and both in ``sum.byrx.both.txt``) are told apart by what differs, and addressable by that name."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from runs.importer import archive_directory, submit_and_import
from runs.models import Bundle, Run

pytestmark = pytest.mark.django_db

BYRX = "dbbench/arc/may25.db_bench/ser7/byrx"


def _compare(*args: str) -> str:
    out = io.StringIO()
    call_command("compare", "--suite", "db_bench", *args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def test_the_lru_and_hcc_builds_of_10_2_1_are_named_by_their_cache_and_reproduce_the_authors_table(
    corpus: Path,
) -> None:
    report = submit_and_import(archive_directory(corpus / BYRX), name="byrx.tar.gz", source=Bundle.Source.COMMAND)
    builds = sorted(Run.objects.filter(build__version__text="10.2.1").values_list("build__name", flat=True))
    assert builds == ["10.2.1.hcc", "10.2.1.lru"]
    assert not Run.objects.filter(build__name__contains="#").exists()
    assert any("10.2.1#1 is 10.2.1.lru of byrx/sum.byrx.lru.txt" in w for w in report.warnings)
    read = {item["path"]: item["what"] for item in report.read}
    assert read["byrx/sum.byrx.both.txt"] == "db_bench results: 2 builds × 7 tests (ops_sec and the rest)"
    theirs = (corpus / BYRX / "fmt.byrx.both.abs0.tsv").read_text()
    assert _compare("--base", "10.2.1.lru", "--runs", "10.2.1.hcc") == theirs
    with pytest.raises(CommandError, match=r"version 10\.2\.1 has 2 builds here: 10\.2\.1\.hcc, 10\.2\.1\.lru"):
        _compare("--base", "10.2.1")
