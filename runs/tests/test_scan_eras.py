"""Which formula a run directory's own scan values used, told from its files and kept on its run."""

from __future__ import annotations

import re
import tarfile
from pathlib import Path

import pytest

from runs.importer import submit_and_import
from runs.models import Bundle, Result, Run
from runs.tests.hostile import tgz_of_files
from suites.sysbench import parse as sysbench

pytestmark = pytest.mark.django_db

PG174 = "x.pg174_o2nofp.x10a_wm1_c32r128.pk1"
PG1122 = "x.pg1122_o2nofp.x10a_wm1_c32r128.pk1"
SCAN_QPS = "sb.r.qps.scan.range100.pk1"


def run_files(corpus: Path, run: str, tests: tuple[str, ...] = ("scan", "point-query")) -> dict[str, bytes]:
    """The real files of a few tests of one Postgres tarball's run directory, as archive members."""
    files = {}
    with tarfile.open(corpus / "sysbench-pg-tarballs" / f"{run}.tar.gz") as tar:
        for m in tar:
            name = m.name.rsplit("/", 1)[-1]
            if (
                m.isfile()
                and name.startswith(("sb.o.", "sb.met.", "sb.r."))
                and any(f".{test}.range100.pk1" in name for test in tests)
            ):
                extracted = tar.extractfile(m)
                assert extracted is not None
                files[f"{run}/{name}"] = extracted.read()
    return files


def spec_value(files: dict[str, bytes], run: str) -> float:
    out = sysbench.parse_output(files[f"{run}/sb.o.scan.range100.pk1.dop40"].decode(), test="scan")
    return out.qps


def test_the_pg_tarballs_own_scan_value_is_tps_times_rows_and_its_run_is_marked_so(corpus: Path) -> None:
    data = (corpus / "sysbench-pg-tarballs" / f"{PG174}.tar.gz").read_bytes()
    report = submit_and_import(data, name=f"{PG174}.tar.gz", source="cli", overrides={"server": "pg-48"})

    run = Run.objects.get()
    assert run.scan_formula == sysbench.SCAN_TPS_ROWS
    # Stored as the spec computes it, not as the scripts reported it (112500 = 11.25 tps × 10M rows / 1000).
    scan = Result.objects.get(run=run, microbenchmark__test="scan")
    assert scan.qps == pytest.approx(10_000 / 3.54548)
    assert scan.tps == pytest.approx(11.25)
    warning = next(w for w in report.warnings if "sb.r.qps.scan" in w)
    assert warning.startswith(
        f"{PG174}: sb.r.qps.scan.range100 gives scan at 40 clients as 112,500 QPS: transactions/s × table size / 1000"
    )
    assert "Stored: 2,820.49 QPS, by the usual formula, (table size / 1000) / average latency" in warning
    assert_plain_words(warning)
    assert warning in Bundle.objects.get().stats["warnings"]


def test_a_run_whose_scan_value_is_the_specs_is_marked_spec_without_a_warning(corpus: Path) -> None:
    files = run_files(corpus, PG174)
    files[f"{PG174}/{SCAN_QPS}"] = f"{spec_value(files, PG174):.1f}\tpgsql scan range=100\n".encode()
    report = submit_and_import(tgz_of_files(files), name="spec-era.tgz", source="cli", overrides={"server": "pg-48"})

    assert Run.objects.get().scan_formula == sysbench.SCAN_SPEC
    assert not [w for w in report.warnings if "scan" in w]


def test_a_scan_value_of_neither_formula_is_warned_about_and_the_era_left_unknown(corpus: Path) -> None:
    files = run_files(corpus, PG174)
    files[f"{PG174}/{SCAN_QPS}"] = b"55555\tpgsql scan range=100\n"
    report = submit_and_import(tgz_of_files(files), name="odd.tgz", source="cli", overrides={"server": "pg-48"})

    assert Run.objects.get().scan_formula == ""
    (warning,) = [w for w in report.warnings if "sb.r.qps.scan" in w]
    assert (
        "gives scan at 40 clients as 55,555 QPS, which no known formula gives; transactions/s × table size / 1000 "
        "gives 112,500. Stored: 2,820.49 QPS, by the usual formula" in warning
    )
    assert_plain_words(warning)


def assert_plain_words(warning: str) -> None:
    """A warning a user reads names formulas by what they compute, not by the code's names for them."""
    jargon = [word for word in ("spec", "era", "tps×rows", "threads") if re.search(rf"\b{re.escape(word)}\b", warning)]
    assert not jargon, (jargon, warning)


def test_a_run_without_its_own_scan_value_has_no_era(corpus: Path) -> None:
    files = run_files(corpus, PG174)
    del files[f"{PG174}/{SCAN_QPS}"]
    report = submit_and_import(tgz_of_files(files), name="no-own.tgz", source="cli", overrides={"server": "pg-48"})

    assert Run.objects.get().scan_formula == ""
    assert not [w for w in report.warnings if "scan" in w]


def test_with_one_client_both_formulas_agree_and_the_value_reads_as_the_specs() -> None:
    # 1M rows scanned in 500 ms by one client: 2 scans/s, 2000 thousand rows/s by both formulas.
    text = (
        "sysbench --table-size=1000000 --threads=1 oltp_scan.lua run\n1 CPUs\n"
        "    transactions:                        600    (2.00 per sec.)\n"
        "    queries:                             600    (2.00 per sec.)\n"
        "Latency (ms):\n         avg:                                  500.00\n"
    )
    out = sysbench.parse_output(text, test="scan")
    assert out.qps == pytest.approx(2000)
    assert sysbench.scan_formula(2000, out) == sysbench.SCAN_SPEC
    assert sysbench.run_scan_formula({("scan", 100, 1): out}, {("scan", 100): [2000.0]}) == (sysbench.SCAN_SPEC, [])
