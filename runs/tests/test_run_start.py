"""When a run began: a clock time its files record where they carry one, else the oldest result file's time,
stored with where it came from and named on the run page accordingly ("Started" or "File time").

sysbench, sb.met and sb.r output carry no clock time; the run scripts' ps sampler begins each file with `date`
(sb.prepare.ps.* when the load begins, sb.ps.* when each test does). The author's Postgres tarballs keep those
files; the mysql-small directories in the corpus kept only sb.o and sb.met, and the Insert Benchmark summaries
carry no time at all.
"""

from __future__ import annotations

import re
import tarfile
from datetime import UTC, datetime
from pathlib import Path

import pytest
from django.test import Client

from runs.importer import archive_directory, submit_and_import
from runs.models import Bundle, Run
from suites.sysbench.parse import sample_clock, started_from_samples

PG_TARBALLS = "sysbench-pg-tarballs"


def server_started(tarball: Path) -> datetime:
    """When PostgreSQL started for the run: its log's first line (a file the import does not read)."""
    with tarfile.open(tarball) as tar:
        member = next(m for m in tar if m.name.endswith("/logfile"))
        for line in tar.extractfile(member):  # type: ignore[union-attr]
            found = re.match(rb"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)\.\d+ UTC \[\d+\] LOG: ", line)
            if found:
                return datetime.strptime(found[1].decode(), "%Y-%m-%d %H:%M:%S").replace(tzinfo=UTC)
    raise AssertionError(f"no timestamped line in {tarball.name}")


def start_label(client: Client, run: Run) -> tuple[str, str]:
    html = client.get(f"/runs/{run.pk}/").content.decode()
    found = re.search(r'id="run-start-label">(.*?)</dt><dd>(.*?)</dd>', html, re.S)
    assert found is not None
    return found[1], re.sub(r"<[^>]+>", "", found[2])


def test_a_date_line_is_read_in_the_c_and_the_12_hour_english_forms_and_only_in_utc() -> None:
    assert sample_clock("Tue Mar 18 10:45:36 AM UTC 2025") == datetime(2025, 3, 18, 10, 45, 36, tzinfo=UTC)
    assert sample_clock("Tue Mar 18 03:02:03 PM UTC 2025") == datetime(2025, 3, 18, 15, 2, 3, tzinfo=UTC)
    assert sample_clock("Tue Mar  4 15:02:03 UTC 2025") == datetime(2025, 3, 4, 15, 2, 3, tzinfo=UTC)
    assert sample_clock("Tue Mar 18 15:02:03 CET 2025") is None  # no zone database guesses at an offset
    assert sample_clock("mdcallag 3149438  0.0  1.5 103018936") is None


def test_the_earliest_sample_clock_is_the_start_and_other_files_are_not_read_for_one() -> None:
    lines = {
        "sb.ps.point-query.range100.pk1.dop40": "Tue Mar 18 11:03:27 AM UTC 2025",
        "sb.prepare.ps.point-query.warm.range100.pk1": "Tue Mar 18 10:45:36 AM UTC 2025",
        "sb.vm.point-query.range100.pk1.dop40": "Tue Mar 18 09:00:00 AM UTC 2025",
        "sb.ps.scan.range100.pk1.dop40": "garbage",
    }
    assert started_from_samples(lines) == datetime(2025, 3, 18, 10, 45, 36, tzinfo=UTC)
    assert started_from_samples({"sb.ps.scan.range100.pk1.dop40": "garbage"}) is None


@pytest.mark.parametrize("version", ["1023", "1122", "174"])
def test_a_postgres_run_starts_when_its_load_began_as_its_ps_sampler_recorded(
    version: str, corpus: Path, client: Client, db: None
) -> None:
    tarball = next((corpus / PG_TARBALLS).glob(f"x.pg{version}_*.tar.gz"))
    report = submit_and_import(
        tarball.read_bytes(), name=tarball.name, source=Bundle.Source.COMMAND, overrides={"server": "pg"}
    )
    run = Run.objects.get(pk=report.runs[0].id)

    assert run.started_from == Run.StartedFrom.CONTENT
    assert run.started_at is not None
    # The server's own log says when it started; the load begins seconds later.
    assert 0 <= (run.started_at - server_started(tarball)).total_seconds() < 120
    label, shown = start_label(client, run)
    assert label == "Started"
    assert shown.startswith(f"{run.started_at:%Y-%m-%d %H:%M} UTC") and "ps sampler" in shown


def test_a_run_whose_files_record_no_clock_time_keeps_the_file_time_and_says_so(
    corpus: Path, client: Client, db: None, tmp_path: Path
) -> None:
    # The mysql-small directories kept sb.o and sb.met only; their vacuum logs do record a time, but one taken
    # halfway through the run, which is no start.
    report = submit_and_import(
        archive_directory(corpus / "sysbench-mysql-small"),
        name="mysql-small.tar.gz",
        source=Bundle.Source.COMMAND,
        overrides={"server": "c8r32"},
    )
    run = Run.objects.get(pk=report.runs[0].id)
    oldest = min(
        p.stat().st_mtime for p in (corpus / "sysbench-mysql-small" / run.name).iterdir() if p.name.startswith("sb.o.")
    )

    assert run.started_from == Run.StartedFrom.FILE_TIME
    assert run.started_at == datetime.fromtimestamp(oldest, tz=UTC)
    label, shown = start_label(client, run)
    assert label == "File time" and "oldest result file" in shown


def test_insert_benchmark_summaries_carry_no_clock_time_so_their_runs_keep_the_file_time(
    corpus: Path, db: None
) -> None:
    report = submit_and_import(
        archive_directory(corpus / "ibench-2021"), name="ibench.tgz", source=Bundle.Source.COMMAND
    )
    runs = Run.objects.filter(pk__in=[r.id for r in report.runs])

    assert runs.count() == 4
    assert {run.started_from for run in runs} == {Run.StartedFrom.FILE_TIME}
    assert all(run.started_at is not None for run in runs)


def test_a_db_bench_run_says_its_start_came_from_its_results(corpus: Path, db: None) -> None:
    directory = corpus / "dbbench" / "arc" / "dec25.dbb.clang" / "8core"
    report = submit_and_import(archive_directory(directory), name="8core.tgz", source=Bundle.Source.COMMAND)

    assert {Run.objects.get(pk=r.id).started_from for r in report.runs} == {Run.StartedFrom.CONTENT}


def test_the_timeline_dates_a_run_by_its_recorded_start_and_marks_only_file_times(
    corpus: Path, client: Client, db: None
) -> None:
    for version in ("1023", "174"):
        tarball = next((corpus / PG_TARBALLS).glob(f"x.pg{version}_*.tar.gz"))
        submit_and_import(
            tarball.read_bytes(), name=tarball.name, source=Bundle.Source.COMMAND, overrides={"server": "pg"}
        )
    base = Run.objects.get(name__startswith="x.pg1023")
    mb = base.results.filter(microbenchmark__test="point-query").first().microbenchmark  # type: ignore[union-attr]
    html = client.get(f"/microbenchmarks/{mb.pk}/timeline", {"base": base.pk}).content.decode()

    for run in Run.objects.all():
        row = re.search(rf'<tr data-run="{run.pk}">\s*<td[^>]*>(.*?)</td>', html, re.S)
        assert row is not None and row[1].strip() == f"{run.started_at:%Y-%m-%d %H:%M}", run.name
