"""The load step (sysbench prepare) imported as a result of its own, on the real Postgres tarballs.

Its QPS is the inserts/s of ``sb.prepare.o``, its HW metrics those of ``sb.prepare.met``; the o.met export
prints it first, as the author's ``o.met.all`` does, and the relative-QPS tables and group summaries leave it
out.
"""

from __future__ import annotations

import tarfile
from pathlib import Path

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from reports.compare import ComparisonSpec, compute_comparison
from runs.models import Microbenchmark, Result, Run
from suites.sysbench import parse as sysbench
from suites.sysbench.layout import MET_HEADER

pytestmark = pytest.mark.django_db

PG_TARBALLS = "sysbench-pg-tarballs"
# In version order: the columns of a comparison based on the first.
PG_RUNS = (
    "x.pg1023_o2nofp.x10a_wm1_c32r128.pk1",
    "x.pg1122_o2nofp.x10a_wm1_c32r128.pk1",
    "x.pg174_o2nofp.x10a_wm1_c32r128.pk1",
)
PREPARE_BLOCK = "sb.prepare.met.point-query.warm.range100.pk1"


def _member(corpus: Path, run: str, name: str) -> str:
    with tarfile.open(corpus / PG_TARBALLS / f"{run}.tar.gz") as tar:
        fh = tar.extractfile(f"{run}/{name}")
        assert fh is not None
        return fh.read().decode()


@pytest.fixture
def pg_series(corpus: Path) -> list[Run]:
    call_command("import_bundle", *(str(corpus / PG_TARBALLS / f"{run}.tar.gz") for run in PG_RUNS), "--server", "pg")
    runs = {run.name: run for run in Run.objects.all()}
    return [runs[name] for name in PG_RUNS]


def test_the_load_is_a_result_with_the_inserts_per_second_and_the_prepare_metrics(corpus: Path, pg_series):
    for run in pg_series:
        load = Result.objects.select_related("microbenchmark").get(run=run, microbenchmark__test=sysbench.LOAD_TEST)
        rate = sysbench.parse_prepare(_member(corpus, run.name, "sb.prepare.o.point-query.warm.range100.pk1"))
        met = sysbench.parse_met(_member(corpus, run.name, PREPARE_BLOCK))
        assert rate is not None
        assert load.qps == rate.inserts_per_s == run.load_inserts_per_s
        assert load.elapsed_s == rate.seconds == run.load_seconds
        assert load.dop == 1  # the prepare command names no --threads
        assert load.microbenchmark.range_size == 100
        assert load.extra == {"prepared_for": "point-query.warm", "tables": 8}
        for key in ("cpu_o", "cs_o", "r_o", "rkb_o", "wkb_o", "o_s", "wps", "wmbps", "cs_s", "cpu_s"):
            assert getattr(load, key) == pytest.approx(met[key]), (run.name, key)
        # Out of comparisons by default, like a warm-up.
        assert load.microbenchmark.is_warmup
    pg174 = Result.objects.get(run=pg_series[2], microbenchmark__test=sysbench.LOAD_TEST)
    assert (pg174.qps, pg174.elapsed_s, pg174.cpu_o, pg174.o_s) == (134228, 596, 0.000017, 134228)


def test_metrics_export_starts_with_the_prepare_block_in_the_reference_layout(corpus: Path, pg_series, capsys):
    call_command("compare", "--base", PG_RUNS[0], "--metrics")
    out = capsys.readouterr().out
    block, rest = out.split("\n\n", 1)
    # The author's o.met.all starts with this block; its layout line for line, as the reference prints it.
    reference_first = (corpus / "sysbench-mysql-small" / "o.met.all").read_text().split("\n\n", 1)[0]
    lines, reference_lines = block.split("\n"), reference_first.split("\n")
    assert lines[:3] == [PREPARE_BLOCK, "--- absolute", MET_HEADER] == reference_lines[:3]
    absolute, relative = lines[3:6], lines[7:]
    assert lines[6] == "--- relative to first result" == reference_lines[reference_lines.index(lines[6])]
    expected_absolute = []
    for run in PG_RUNS:
        met = sysbench.parse_met(_member(corpus, run, PREPARE_BLOCK))
        expected_absolute.append(
            f"{met['cpu_o']:.6f}\t{met['cs_o']:.3f}\t{met['r_o']:.6g}\t{met['rkb_o']:.6g}\t{met['wkb_o']:.6g}\t"
            f"{met['o_s']:.0f}\t{run}"
        )
    assert absolute == expected_absolute
    assert absolute[2] == "0.000017\t0.026\t0\t0\t0.914\t134228\tx.pg174_o2nofp.x10a_wm1_c32r128.pk1"
    assert relative == [
        "1.04\t\t1.93\t1\t1\t1.00\t1.12\tx.pg1122_o2nofp.x10a_wm1_c32r128.pk1",
        "0.74\t\t0.96\t1\t1\t1.00\t1.22\tx.pg174_o2nofp.x10a_wm1_c32r128.pk1",
    ]
    # Then the tests' own sb.met blocks, at the series' concurrency, and the load nowhere else.
    assert rest.startswith("sb.met.") and ".dop40\n" in rest.split("\n", 1)[0] + "\n"
    assert "load" not in rest and out.count("sb.prepare.met.") == 1


def test_the_load_is_in_no_qps_table_and_no_group(pg_series, capsys):
    base = pg_series[0]
    call_command("compare", "--base", base.name)
    tsv = capsys.readouterr().out
    call_command("compare", "--base", base.name, "--format", "csv")
    csv = capsys.readouterr().out
    assert "load" not in tsv and "load" not in csv
    for warmups in (False, True):
        comparison = compute_comparison(ComparisonSpec(base_run_id=base.pk, include_warmups=warmups))
        assert comparison.dop == 40  # the load's single client does not move the series' concurrency
        assert not any(label.startswith("load_") for label in comparison.labels)
    at_one = compute_comparison(ComparisonSpec(base_run_id=base.pk, include_warmups=True, dop=1))
    assert at_one.labels == ["load_range=100"]
    assert at_one.group_of["load_range=100"] is None and at_one.ungrouped == ["load_range=100"]
    assert all(summary.n == 0 for by_group in at_one.summaries.values() for summary in by_group.values())


def test_the_run_page_shows_the_load_and_links_its_drill_down(pg_series):
    run = pg_series[2]
    page = Client().get(run.get_absolute_url()).content.decode()
    assert "<h2>Load step</h2>" in page and "prepare for point-query.warm, range=100" in page
    load = Microbenchmark.objects.get(test=sysbench.LOAD_TEST)
    link = f"{reverse('reports:drilldown', args=[load.pk])}?base={run.pk}&amp;dop=1&amp;include_warmups=on"
    assert link in page
    drill = Client().get(link.replace("&amp;", "&"))
    assert drill.status_code == 200
    text = drill.content.decode()
    assert "load_range=100" in text
    # The chart of the load's inserts/s across versions.
    assert '"y":[109589,122699,134228]' in text


def test_the_import_counts_the_load_as_a_result_but_not_as_a_test(corpus: Path, capsys) -> None:
    call_command("import_bundle", str(corpus / PG_TARBALLS / f"{PG_RUNS[2]}.tar.gz"), "--server", "pg")
    assert f"  {PG_RUNS[2]}: Postgres 17.4 on pg, 39 tests, 40 results\n" in capsys.readouterr().out
