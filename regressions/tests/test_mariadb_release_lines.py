"""MariaDB release lines on real sysbench output of ours, not synthetic series.

tests/data/sysbench-mariadb-quick.tar.gz holds four runs of the quick microbenchmarks against the MariaDB
10.11.19 of the development machine (see tests/data/README.md): three plain ones and one measured while a
second client loaded the same server, a real slowdown of the read tests. One server version cannot make a
release series, so the test names the runs as the versions of a series that mixes MariaDB's release lines —
long-term 10.6 and 10.11, short-term 11.0, long-term 11.4 — and checks what the two release views make of it.
"""

from __future__ import annotations

import io
import tarfile
from pathlib import Path
from typing import Any

import pytest
from django.db.models import Q

from regressions.detection import detect_regressions, load_series, mixes_release_lines, story_series
from regressions.models import Regression
from runs.importer import submit_and_import
from runs.models import Bundle, Run
from runs.signals import announce_import

pytestmark = pytest.mark.django_db

FIXTURE = Path(__file__).resolve().parents[2] / "tests" / "data" / "sysbench-mariadb-quick.tar.gz"
# Run directory in the fixture → the version the test names it. The loaded run is the short-term release.
AS_VERSION = {
    "x.ma101119_rel.c1r10.pk1": "x.ma100620_rel.c1r10.pk1",  # 10.6.20, long-term: the base
    "x.ma101119_rel2.c1r10.pk1": "x.ma101119_rel.c1r10.pk1",  # 10.11.19, long-term
    "x.ma101119_rel3.c1r10.pk1": "x.ma110006_rel.c1r10.pk1",  # 11.0.6, short-term: the loaded run
    "x.ma101119_rel4.c1r10.pk1": "x.ma110408_rel.c1r10.pk1",  # 11.4.8, long-term
}
SHORT_TERM = "11.0.6"
READS = ("point-query_range=100", "read-only_range=10", "range-notcovered-si_range=100")


def renamed_archive() -> bytes:
    """The fixture with each run directory named as its version in the series (the files are untouched)."""
    out = io.BytesIO()
    with tarfile.open(FIXTURE) as source, tarfile.open(fileobj=out, mode="w:gz") as target:
        for member in source:
            run, sep, rest = member.name.partition("/")
            data = source.extractfile(member) if member.isfile() else None
            member.name = AS_VERSION[run] + sep + rest
            target.addfile(member, data)
    return out.getvalue()


def _import(capture: Any) -> Run:
    with capture(execute=True):
        report = submit_and_import(
            renamed_archive(), name="mariadb.tgz", source=Bundle.Source.COMMAND, overrides={"server": "2-core dev"}
        )
        announce_import(report.bundle_id)
    return Run.objects.get(build__name="ma100620_rel")


def _qps(run_name: str, test: str) -> float:
    with tarfile.open(FIXTURE) as tar:
        text = tar.extractfile(f"{run_name}/sb.o.{test}.range{100 if test != 'read-only' else 10}.pk1.dop1")
        assert text is not None
        line = next(x for x in text.read().decode().splitlines() if "queries:" in x)
    return float(line.split("(")[1].split()[0])


def test_the_loaded_run_is_a_real_slowdown_of_the_read_tests() -> None:
    # What the test rests on, read from sysbench's own output: under the second client's load each read test
    # ran well below the slowest plain run.
    plain = ("x.ma101119_rel.c1r10.pk1", "x.ma101119_rel2.c1r10.pk1", "x.ma101119_rel4.c1r10.pk1")
    for test in ("point-query", "read-only", "range-notcovered-si"):
        assert _qps("x.ma101119_rel3.c1r10.pk1", test) < 0.7 * min(_qps(run, test) for run in plain)


def test_the_long_term_view_of_a_mariadb_series_leaves_the_short_term_release_out(
    django_capture_on_commit_callbacks: Any, settings: Any
) -> None:
    settings.BENCHDASH_RELEASE_LINES = {}
    base = _import(django_capture_on_commit_callbacks)
    series = load_series(base.pk)
    assert [p.version for p in series.points] == ["10.6.20", "10.11.19", SHORT_TERM, "11.4.8"]
    assert mixes_release_lines(series)
    long_term = story_series(series, view="long-term")
    assert long_term.versions == ["10.6.20", "10.11.19", "11.4.8"]
    assert long_term.unused == {2: "short-term release"} and long_term.long_term == [True, True, False, True]
    assert story_series(series, view="all").versions == ["10.6.20", "10.11.19", SHORT_TERM, "11.4.8"]

    detect_regressions(base.server_id, base.workload_id, every_release=True)
    at_short_term = (
        Q(arrived_in__text=SHORT_TERM)
        | Q(previous_version__text=SHORT_TERM)
        | Q(fixed_in__text=SHORT_TERM)
        | Q(persists_until__text=SHORT_TERM)
    )
    long_term_records = Regression.objects.filter(releases="long-term")
    # The short-term release creates no arrival, no fix, no step in the long-term view, nor is it an outlier.
    assert not long_term_records.filter(at_short_term).exists()
    for record in long_term_records:
        assert SHORT_TERM not in [e["version"] for e in record.story_events] + list(record.outliers)
        assert SHORT_TERM not in record.summary
    # Over every release the loaded 11.0.6 shows on each read test: a step there, or an outlier.
    every = Regression.objects.filter(releases="all", microbenchmark__isnull=False).select_related("microbenchmark")
    for label in READS:
        told = [r for r in every if r.microbenchmark.label == label and r.metric == "qps"]  # type: ignore[union-attr]
        assert any(
            SHORT_TERM in r.outliers
            or any(e["version"] == SHORT_TERM and e["change"] < -0.3 for e in r.story_events)
            or (r.outlier and r.arrived_in.text == SHORT_TERM)
            for r in told
        ), (label, [r.summary for r in told])


def test_an_override_that_makes_11_0_long_term_puts_it_back_in_the_long_term_view(
    django_capture_on_commit_callbacks: Any, settings: Any
) -> None:
    settings.BENCHDASH_RELEASE_LINES = {"MariaDB": {"long_term": ["11.0"]}}
    base = _import(django_capture_on_commit_callbacks)
    series = load_series(base.pk)
    assert not mixes_release_lines(series)
    overridden = story_series(series, view="long-term", release_overrides=settings.BENCHDASH_RELEASE_LINES)
    assert overridden.versions == ["10.6.20", "10.11.19", SHORT_TERM, "11.4.8"]
    detect_regressions(base.server_id, base.workload_id)
    assert not Regression.objects.filter(releases="all").exists()
    assert Regression.objects.filter(
        Q(arrived_in__text=SHORT_TERM) | Q(outlier=True, arrived_in__text=SHORT_TERM) | Q(fixed_in__text="11.4.8"),
        releases="long-term",
        same_over_every_release=True,
    ).exists()
