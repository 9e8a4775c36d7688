"""The import report accounts for every file of a bundle once: read (with what it became) or not read (with why),
on real archives of each layout."""

from __future__ import annotations

import io
import tarfile
from collections import Counter
from pathlib import Path

import pytest

from runs.importer import ImportReport, archive_directory, submit_and_import
from runs.models import Bundle

pytestmark = pytest.mark.django_db

PG174 = "x.pg174_o2nofp.x10a_wm1_c32r128.pk1"


def _files(data: bytes) -> set[str]:
    with tarfile.open(fileobj=io.BytesIO(data)) as archive:
        return {member.name.removeprefix("./") for member in archive if member.isfile()}


def _accounted(report: ImportReport) -> Counter[str]:
    assert report.ignored_files == len(report.ignored)  # none counted without being listed
    return Counter([item["path"] for item in report.read] + [item["path"] for item in report.ignored])


def _import(data: bytes, name: str) -> ImportReport:
    return submit_and_import(data, name=name, source=Bundle.Source.COMMAND, overrides={"server": "s"})


def test_every_file_of_a_sysbench_run_directory_archive_is_read_or_not_read_once(corpus: Path) -> None:
    data = (corpus / "sysbench-pg-tarballs" / f"{PG174}.tar.gz").read_bytes()
    report = _import(data, f"{PG174}.tar.gz")
    accounted = _accounted(report)
    assert set(accounted) == _files(data) and set(accounted.values()) == {1}
    read = {item["path"]: item["what"] for item in report.read}
    assert read[f"{PG174}/sb.o.point-query.range100.pk1.dop40"] == (
        f"run {PG174}: point-query_range=100 at 40 clients: QPS, transactions/s and latency (its result)"
    )
    assert read[f"{PG174}/sb.met.point-query.range100.pk1.dop40"].startswith(
        f"run {PG174}: point-query_range=100 at 40 clients: HW metrics"
    )
    load = f"{PG174}/sb.prepare.o.point-query.warm.range100.pk1"
    assert read[load] == f"run {PG174}: the load step: rows loaded and how long it took"
    not_read = {item["path"]: item["reason"] for item in report.ignored}
    assert not_read[f"{PG174}/sb.prepare.vm.point-query.warm.range100.pk1"].startswith("raw vmstat/iostat/ps samples")


def test_every_file_of_an_insert_benchmark_archive_is_read_or_not_read_once(corpus: Path) -> None:
    data = archive_directory(corpus / "ibench-2021")
    report = _import(data, "ibench-2021.tar.gz")
    accounted = _accounted(report)
    assert set(accounted) == _files(data) and set(accounted.values()) == {1}
    read = {item["path"].rpartition("100m/")[2]: item["what"] for item in report.read}
    assert read["o.sum.t.100m.pg131.cx5"].startswith("summary table of run 100m.pg131.cx5: a row for each of its ")
    assert read["res.in/mrg.q100.1"].startswith("merged table of step q100.1: a row for each of runs 100m.")
    assert sorted(read) == [
        "o.sum.t.100m.my8022.cx6d",
        "o.sum.t.100m.pg131.cx5",
        "res.in/mrg.l.i0",
        "res.in/mrg.l.i1",
        "res.in/mrg.l.x",
        "res.in/mrg.q100.1",
        "res.in/mrg.q100.2",
    ]


def test_every_file_of_run_directories_beside_their_summary_tables_is_read_or_not_read_once(corpus: Path) -> None:
    data = archive_directory(corpus / "sysbench-mysql-small")
    report = _import(data, "small.tar.gz")
    accounted = _accounted(report)
    assert set(accounted) == _files(data) and set(accounted.values()) == {1}
