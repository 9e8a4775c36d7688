"""Suites: the registry knows the built-in ones, and a suite added as its own package is found through it."""

from __future__ import annotations

import io
import subprocess
import sys
import tarfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.core.exceptions import ValidationError

import suites
from reports.compare import ComparisonSpec, choose_group_set, get_comparison
from runs.bundle import BundleError, read_bundle
from runs.importer import ImportFailed, bad_input, submit_and_import
from runs.models import Bundle, Microbenchmark, Run, Workload
from suites import groups
from suites import names as suite_names
from suites.base import STARTED_CONTENT, STARTED_FILE_TIME, Suite
from suites.dbbench.groups import DBBENCH
from suites.ibench.groups import IBENCH
from tests.fake_suite import parse as fake_parse
from tests.fake_suite import suite as fake

ROOT = Path(__file__).resolve().parents[1]


def test_the_registry_knows_each_built_in_suite_by_the_name_stored_on_workloads() -> None:
    # The summary tables' suite stores its runs as sysbench's, so no workload carries its name.
    assert {s.name for s in suites.all() if s.summary_of is None} == {"sysbench", "ibench", "db_bench", "custom"}
    assert suites.get("sysbench-summary").summary_of == "sysbench"
    assert suites.get("sysbench").is_warmup("point-query.warm") and not suites.get("sysbench").is_warmup("scan")
    assert suites.get("ibench").choose_group_set(["l.i0", "qr100"]) is IBENCH
    assert suites.get("db_bench").choose_group_set(["fillseq"]) is DBBENCH
    with pytest.raises(LookupError, match="no suite named 'nosuch'"):
        suites.get("nosuch")
    # What other code asks a suite instead of naming it.
    assert (
        suites.get("ibench").metric_label("p99") == "p99 rate" and suites.get("db_bench").metric_label("p99") == "p99"
    )
    assert suites.get("ibench").checks_sla and not suites.get("sysbench").checks_sla
    assert {s.reference_layout for s in suites.all()} == {"qps", "steps", "sum"}
    assert len({hash(s) for s in suites.all()}) == len(suites.all())  # descriptions are values: hashable, comparable


def test_the_names_the_models_store_are_the_registered_suites_names() -> None:
    # The models name the built-ins without importing them (suites.names): the same strings the registry holds.
    assert (suites.SYSBENCH.name, suites.DBBENCH.name) == (suite_names.SYSBENCH, suite_names.DBBENCH)
    assert suites.get(suite_names.SYSBENCH) is suites.SYSBENCH and suites.get(suite_names.DBBENCH) is suites.DBBENCH
    assert Workload._meta.get_field("suite").default == Microbenchmark._meta.get_field("suite").default == "sysbench"
    assert {Run.StartedFrom.CONTENT.value, Run.StartedFrom.FILE_TIME.value} == {STARTED_CONTENT, STARTED_FILE_TIME}


def test_the_built_in_suites_are_registered_first_whenever_the_registry_is_first_asked() -> None:
    # Importing the package registers nothing; the first question registers the built-ins, in their order, before
    # a suite registered from its own package. In a fresh interpreter: here the registry was asked long ago.
    code = """
import sys
import suites
assert not suites._registry and "suites.sysbench.suite" not in sys.modules
from tests.fake_suite import suite as fake
suites.register(fake.SUITE)
print(",".join(suite.name for suite in suites.all()))
"""
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["sysbench,db_bench,ibench,sysbench-summary,custom,fake"]


def test_sysbench_picks_classic_42_only_for_the_pre_and_post_layout() -> None:
    pre_post = [f"{test}.pre_range=100" for test in ("point-query", "points-covered-pk", "points-covered-si")]
    pre_post += [f"{test}.pre_range=100" for test in ("range-covered-pk", "range-covered-si", "range-notcovered-pk")]
    assert choose_group_set("sysbench", pre_post) is groups.CLASSIC_42
    assert choose_group_set("sysbench", ["point-query.pre_range=100", "scan_range=100"]) is groups.CURRENT_32


@pytest.fixture
def fake_suite() -> Iterator[Suite]:
    suite = suites.register(fake.SUITE)
    yield suite
    suites.unregister(fake.SUITE.name)


def test_a_suite_registered_from_its_own_package_is_used_for_group_sets_and_bad_bundle_errors(
    fake_suite: Suite,
) -> None:
    assert suites.get("fake") is fake_suite
    # The comparison asks the registry for the group set: no suite name is spelled out in reports.
    assert choose_group_set("fake", ["READ_PK_POINT", "WRITE_ROW"]) is fake.GROUPS
    assert fake.GROUPS.classify("READ_PK_POINT") == "reads"
    # The importer's "bad bundle" errors include the suite's own parse error.
    assert fake_parse.ParseError in bad_input()
    suites.unregister("fake")
    assert fake_parse.ParseError not in bad_input()


def _tgz(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for path, data in files.items():
            info = tarfile.TarInfo(path)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


FAKE_BUNDLE = {
    "box1/fakedb-1.0/results.fake": b"READ_PK_POINT 1000\nWRITE_ROW 500\nREAD_PK_POINT.warm 10\n",
    "box1/fakedb-1.1/results.fake": b"READ_PK_POINT 800\nWRITE_ROW 600\nREAD_PK_POINT.warm 20\n",
    "box1/notes.txt": b"not a result",
}


def test_the_archive_reader_asks_the_registry_whose_files_a_bundle_holds(fake_suite: Suite) -> None:
    contents = read_bundle(_tgz(FAKE_BUNDLE), name="fake.tgz")
    assert [f.path for f in contents.files_of("fake")] == [
        "box1/fakedb-1.0/results.fake",
        "box1/fakedb-1.1/results.fake",
    ]
    assert contents.runs == [] and contents.files_of("db_bench") == []
    suites.unregister("fake")
    with pytest.raises(BundleError, match="no run directories"):
        read_bundle(_tgz(FAKE_BUNDLE), name="fake.tgz")


@pytest.mark.django_db
def test_a_suite_registered_from_its_own_package_is_imported_stored_and_compared_end_to_end(
    fake_suite: Suite,
) -> None:
    report = submit_and_import(_tgz(FAKE_BUNDLE), name="fake.tgz", source=Bundle.Source.COMMAND)
    assert sorted(run.line() for run in report.runs) == [
        "fakedb-1.0: FakeDB 1.0 on box1, 3 tests, 3 results",
        "fakedb-1.1: FakeDB 1.1 on box1, 3 tests, 3 results",
    ]
    workload = Workload.objects.get()
    assert (workload.suite, workload.name, workload.get_suite_display()) == ("fake", "fake 1 client", fake.SUITE.label)
    workload.full_clean()  # the stored suite name is one the registry knows
    warm = Microbenchmark.objects.get(test="READ_PK_POINT.warm")
    assert (warm.suite, warm.is_warmup) == ("fake", True)

    base = Run.objects.get(build__version__text="1.0")
    comparison = get_comparison(ComparisonSpec(base_run_id=base.pk))
    assert comparison.suite == "fake" and comparison.group_set == fake.GROUPS.name
    assert comparison.labels == ["READ_PK_POINT", "WRITE_ROW"]  # the warm-up is stored but not compared
    other = next(c.key for c in comparison.columns if c.key != comparison.base)
    assert comparison.relative[other] == {"READ_PK_POINT": pytest.approx(0.8), "WRITE_ROW": pytest.approx(1.2)}
    assert comparison.group_of == {"READ_PK_POINT": "reads", "WRITE_ROW": "writes"}


@pytest.mark.django_db
def test_a_bad_file_of_a_registered_suite_fails_the_import_with_its_message_and_stores_nothing(
    fake_suite: Suite,
) -> None:
    files = {**FAKE_BUNDLE, "box1/fakedb-1.2/results.fake": b"READ_PK_POINT lots\n"}
    with pytest.raises(ImportFailed, match=r"fakedb-1.2/results.fake: line 1 is not"):
        submit_and_import(_tgz(files), name="bad.tgz", source=Bundle.Source.COMMAND)
    assert not Run.objects.exists() and not Bundle.objects.exists()


def test_a_stored_suite_name_the_registry_does_not_know_is_refused_by_validation() -> None:
    with pytest.raises(ValidationError, match="no suite named 'nosuch'"):
        Workload(suite="nosuch", name="w").full_clean()


def test_registering_a_different_suite_under_a_taken_name_is_refused() -> None:
    taken = suites.get("sysbench")
    with pytest.raises(ValueError, match="already registered"):
        suites.register(Suite(name="sysbench", label="other", parse_error=ValueError, is_warmup=taken.is_warmup))
    assert suites.get("sysbench") is taken
