"""RocksDB db_bench comparisons: the author's tables from imported summaries, groups, base choice and noise."""

from __future__ import annotations

import io
import statistics
import tarfile
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from reports.compare import ComparisonSpec, get_comparison
from reports.exports import export_table
from runs.importer import archive_directory, submit_and_import
from runs.models import Bundle, Run
from suites.dbbench import layout as dbbench_layout
from suites.dbbench.groups import DBBENCH, LOAD, READ_ONLY, READ_WHILE_WRITING, WRITE

pytestmark = pytest.mark.django_db

ARC = "dbbench/arc"
DEC25 = f"{ARC}/dec25.dbb.clang/8core"
NOV23 = f"{ARC}/nov23.c2.db_bench"
MAY25 = f"{ARC}/may25.db_bench/ser7/byrx"
ARM = f"{ARC}/dec25.dbb.gcp.8core.arm/byrx"
VARIANCE = "dbbench/results/aws_variance_rocksdb/c6i.4xlarge.ht0.nt4"


def _import(files: dict[str, bytes], name: str = "bundle.tgz") -> None:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for path, data in files.items():
            info = tarfile.TarInfo(path)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    submit_and_import(buffer.getvalue(), name=name, source=Bundle.Source.COMMAND)


def _compare(*args: str) -> str:
    out = io.StringIO()
    call_command("compare", "--suite", "db_bench", *args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def _table(base: str, workload: str = "byrx") -> tuple[list[str], list[str], list[str], dict[tuple[str, str], Any]]:
    """The comparison behind the command's output, for layouts the command does not print (nov23's)."""
    run = next(
        r
        for r in Run.objects.filter(workload__params__workload=workload).select_related("build__version")
        if base in (r.build.version.text, r.build.name)
    )
    return dbbench_layout.sum_parts(export_table(get_comparison(ComparisonSpec(base_run_id=run.pk))))


def _cells(table: str) -> dict[tuple[int, str], str]:
    """(column, test) → cell of a sum.abs*.tsv table."""
    lines = table.splitlines()
    cells = {}
    for line in lines[1:]:
        *values, test = line.split("\t")
        cells.update({(i, test): value for i, value in enumerate(values)})
    return cells


@pytest.fixture
def dec25(corpus: Path) -> Path:
    directory = corpus / DEC25
    submit_and_import(archive_directory(directory), name="8core.tgz", source=Bundle.Source.COMMAND)
    return directory


# --------------------------------------------------------------------------- dec25: sum.abs0 / sum.abs1


@pytest.mark.parametrize("workload", ["byrx", "iobuf", "iodir"])
def test_dec25_reproduces_sum_abs0_and_abs1_tsv_byte_for_byte(dec25: Path, workload: str) -> None:
    assert _compare("--workload", workload, "--base", "9.8.4") == (dec25 / f"sum.abs0.{workload}.tsv").read_text()
    absolute = _compare("--workload", workload, "--base", "9.8.4", "--absolute")
    assert absolute == (dec25 / f"sum.abs1.{workload}.tsv").read_text()


@pytest.mark.parametrize("workload", ["byrx", "iobuf", "iodir"])
def test_dec25_reproduces_the_csv_twins_byte_for_byte(dec25: Path, workload: str) -> None:
    assert (
        _compare("--workload", workload, "--base", "9.8.4", "--format", "csv")
        == (dec25 / f"sum.abs0.{workload}.csv").read_text()
    )
    assert (
        _compare("--workload", workload, "--base", "9.8.4", "--format", "csv", "--absolute")
        == (dec25 / f"sum.abs1.{workload}.csv").read_text()
    )


@pytest.mark.parametrize("workload", ["byrx", "iobuf", "iodir"])
def test_dec25_every_cell_of_sum_abs0_is_the_comparisons_relative_qps(dec25: Path, workload: str) -> None:
    # Independent of the formatter: each cell against the comparison's own relative QPS.
    run = Run.objects.get(workload__params__workload=workload, build__version__text="9.8.4")
    comparison = get_comparison(ComparisonSpec(base_run_id=run.pk))
    reference_table = (dec25 / f"sum.abs0.{workload}.tsv").read_text()
    versions = reference_table.splitlines()[0].split("\t")[:-1]
    keys = [comparison.base, *(c.key for c in comparison.others)]

    assert [comparison.column(k).version for k in keys] == versions
    for (column, test), cell in _cells(reference_table).items():
        key = keys[column]
        relative = 1.0 if key == comparison.base else comparison.relative[key][test]
        assert f"{relative:.2f}" == cell, (versions[column], test)
    assert len(_cells(reference_table)) == 15 * 5


def test_dec25_groups_are_db_bench_groups_and_the_warm_ups_count_in_none(dec25: Path) -> None:
    run = Run.objects.get(workload__params__workload="byrx", build__version__text="9.8.4")
    comparison = get_comparison(ComparisonSpec(base_run_id=run.pk))

    assert comparison.group_set == DBBENCH.name == "db_bench"
    assert comparison.groups == [LOAD, READ_ONLY, READ_WHILE_WRITING, WRITE]
    members = {g: [label for label in comparison.labels if comparison.group_of[label] == g] for g in comparison.groups}
    assert members == {
        LOAD: ["fillseq.wal_disabled.v400"],
        READ_ONLY: [],
        READ_WHILE_WRITING: ["fwdrangewhilewriting.t1", "readwhilewriting.t1", "revrangewhilewriting.t1"],
        WRITE: ["overwriteandwait.t1.s0"],
    }
    # Warm-ups are left out of comparisons by default, as for sysbench; asked for, they come back ungrouped.
    assert comparison.ungrouped == [] and "revrange.t1" not in comparison.labels
    with_warmups = get_comparison(ComparisonSpec(base_run_id=run.pk, include_warmups=True))
    assert sorted(with_warmups.ungrouped) == ["overwritesome.t1.s0", "revrange.t1"]
    other = comparison.others[-1].key
    assert comparison.summaries[WRITE][other].count_text == "1"


def test_a_version_that_is_not_there_is_an_error_listing_the_versions(dec25: Path) -> None:
    with pytest.raises(CommandError, match=r"no db_bench run .* '9\.7\.4'; versions: 9\.8\.4, 9\.9\.3, 9\.10\.0"):
        _compare("--workload", "byrx", "--base", "9.7.4")


def test_a_version_on_several_workloads_asks_which(dec25: Path) -> None:
    with pytest.raises(CommandError, match=r"several servers/workloads.*--workload 'db_bench byrx nt1 d0'"):
        _compare("--base", "9.8.4")


# --------------------------------------------------------------------------- nov23: abs.* and rel2.*


@pytest.mark.parametrize("workload", ["byrx", "iobuf"])
def test_nov23_8x_reproduces_abs_tsv_and_rel2_csv_byte_for_byte(corpus: Path, workload: str) -> None:
    _import({f"c2/sum.{workload}.8x.txt": (corpus / NOV23 / f"sum.{workload}.8x.txt").read_bytes()})
    runs, versions, tests, values = _table("8.0.0", workload)

    absolute = dbbench_layout.format_dbbench_tsv(runs, versions, tests, values, relative=False, header=False)
    assert absolute == (corpus / NOV23 / f"abs.{workload}.8x.tsv").read_text()
    relative = dbbench_layout.format_dbbench_csv(runs, versions, tests, values, header=False, base_column=False)
    assert relative == (corpus / NOV23 / f"rel2.{workload}.8x.csv").read_text()


def test_nov23_u5_reproduces_abs_tsv_and_rel2_csv_of_the_fb_gcc_builds(corpus: Path) -> None:
    directory = corpus / f"{ARC}/nov23.u.db_bench.8x/u5"
    _import({"u5/sum.byrx.8x.txt": (directory / "sum.byrx.8x.txt").read_bytes()})
    runs, versions, tests, values = _table("8.0.0")

    assert Run.objects.filter(build__name="8.0.0.fb.gcc", name="8.0.fb.gcc").exists()
    absolute = dbbench_layout.format_dbbench_tsv(runs, versions, tests, values, relative=False, header=False)
    assert absolute == (directory / "abs.byrx.8x.tsv").read_text()
    relative = dbbench_layout.format_dbbench_csv(runs, versions, tests, values, header=False, base_column=False)
    assert relative == (directory / "rel2.byrx.8x.csv").read_text()


def test_nov23_some4_matches_abs_and_rel2_except_where_the_author_merged_overwrite_into_overwriteandwait(
    corpus: Path,
) -> None:
    # 4.4.1 … 6.15.5 ran overwrite.t8.s0, later versions overwriteandwait.t8.s0; the author's tables print both
    # in one row named overwriteandwait. They are different tests, so they stay two rows here.
    _import({"c2/sum.byrx.some4.txt": (corpus / NOV23 / "sum.byrx.some4.txt").read_bytes()})
    runs, versions, tests, values = _table("4.4.1")
    ours = dbbench_layout.format_dbbench_tsv(runs, versions, tests, values, relative=False, header=False).splitlines()
    theirs = (corpus / NOV23 / "abs.byrx.some4.tsv").read_text().splitlines()
    merged = "overwriteandwait.t8.s0"

    assert [line for line in ours if "overwrite" not in line] == [line for line in theirs if merged not in line]
    split = {line.rsplit("\t", 1)[1]: line.split("\t")[:-1] for line in ours if "overwrite" in line}
    their_row = next(line for line in theirs if merged in line).split("\t")[:-1]
    assert [o if o != "NA" else a for o, a in zip(split["overwrite.t8.s0"], split[merged], strict=True)] == their_row
    assert split["overwrite.t8.s0"].count("NA") == 12 and split[merged].count("NA") == 8

    ours_rel = dbbench_layout.format_dbbench_csv(runs, versions, tests, values, header=False, base_column=False)
    theirs_rel = (corpus / NOV23 / "rel2.byrx.some4.csv").read_text().splitlines()
    assert [line for line in ours_rel.splitlines() if "overwrite" not in line] == theirs_rel[:-1]
    assert (
        next(line for line in ours_rel.splitlines() if line.startswith("overwrite.t8.s0,")).split(",")[1:8]
        == (theirs_rel[-1].split(",")[1:8])
    )


def test_the_8x_and_some4_summaries_share_their_common_runs(corpus: Path) -> None:
    _import({f"c2/{name}": (corpus / NOV23 / name).read_bytes() for name in ("sum.byrx.8x.txt", "sum.byrx.some4.txt")})

    # some4 holds six of 8x's nine runs row for row: they are the same runs, stored once.
    assert Run.objects.count() == 20 + 3


# --------------------------------------------------------------------------- may25: fmt.*


@pytest.mark.parametrize("cache", ["lru", "hcc"])
def test_may25_reproduces_fmt_abs0_tsv_of_each_block_cache(corpus: Path, cache: str) -> None:
    _import({f"ser7/byrx/sum.byrx.{cache}.txt": (corpus / MAY25 / f"sum.byrx.{cache}.txt").read_bytes()})
    base = "6.29.5" if cache == "lru" else "8.11.4"

    assert _compare("--workload", "byrx", "--base", base) == (corpus / MAY25 / f"fmt.byrx.{cache}.abs0.tsv").read_text()


def test_may25_reproduces_fmt_lru_abs1_csv_which_holds_relative_values(corpus: Path) -> None:
    _import({"ser7/byrx/sum.byrx.lru.txt": (corpus / MAY25 / "sum.byrx.lru.txt").read_bytes()})

    out = _compare("--workload", "byrx", "--base", "6.29.5.lru", "--format", "csv")
    assert out == (corpus / MAY25 / "fmt.byrx.lru.abs1.csv").read_text()


def test_may25_both_reproduces_fmt_both_abs0_and_the_repeated_version_needs_a_build(corpus: Path) -> None:
    _import({"ser7/byrx/sum.byrx.both.txt": (corpus / MAY25 / "sum.byrx.both.txt").read_bytes()})

    with pytest.raises(CommandError, match=r"version 10\.2\.1 has 2 builds here: 10\.2\.1#1, 10\.2\.1#2"):
        _compare("--workload", "byrx", "--base", "10.2.1")
    assert (
        _compare("--workload", "byrx", "--base", "10.2.1#1") == (corpus / MAY25 / "fmt.byrx.both.abs0.tsv").read_text()
    )


# --------------------------------------------------------------------------- the arm set: csum*.csv, summary.tsv


def test_arm_gcc_reproduces_csum_byrx_gcc_csv(corpus: Path) -> None:
    _import({"arm/byrx/sum.byrx.gcc.txt": (corpus / ARM / "sum.byrx.gcc.txt").read_bytes()})

    out = _compare("--workload", "byrx", "--base", "6.29.5", "--format", "csv")
    assert out == (corpus / ARM / "csum.byrx.gcc.csv").read_text()


def test_arm_clang_reproduces_csum2_byrx_clang_csv_against_the_first_of_two_6_29_5_builds(corpus: Path) -> None:
    _import({"arm/byrx/sum2.byrx.clang.txt": (corpus / ARM / "sum2.byrx.clang.txt").read_bytes()})

    out = _compare("--workload", "byrx", "--base", "6.29.5.clang#1", "--format", "csv")
    assert out == (corpus / ARM / "csum2.byrx.clang.csv").read_text()


def test_arm_summary_tsv_imports_43_builds_and_a_version_with_two_builds_needs_one_named(corpus: Path) -> None:
    _import({"arm/byrx/summary.tsv": (corpus / ARM / "summary.tsv").read_bytes()})

    assert Run.objects.count() == 43
    assert set(Run.objects.values_list("build__flavour", flat=True)) == {"gcc", "clang", "clang.lto"}
    with pytest.raises(CommandError, match=r"9\.8\.4 has 2 builds here: 9\.8\.4\.clang, 9\.8\.4\.clang\.lto"):
        _compare("--workload", "byrx", "--base", "9.8.4")
    table = _compare("--workload", "byrx", "--base", "6.29.gcc").splitlines()
    assert len(table[0].split("\t")) == 43 + 1 and table[0].startswith("6.29.5\t6.29.5\t6.29.5\t7.0.4\t7.0.4")
    # The gcc build of 6.29.5 is the same run in summary.tsv and in sum.byrx.gcc.txt (same rows).
    assert table[1].split("\t")[:2] == ["1.00", f"{1403964 / 1371997:.2f}"]


# --------------------------------------------------------------------------- the variance study: noise


def _candidate(sdev: str, version: str, factor: dict[str, float]) -> bytes:
    """The variance study's three repeats as if a new build ran them, some tests ``factor`` times as fast."""
    lines: list[str] = []
    block: list[int] = []
    for line in sdev.splitlines():
        fields = line.split("\t")
        if line.startswith("mean="):
            mean = statistics.fmean(block)
            sdev_ = statistics.pstdev(block)
            lines.append(f"mean={mean:g}\tstddev={sdev_:.1f}\tsdev/mean={sdev_ / mean:.3f}")
            block = []
        elif len(fields) == 28 and fields[0].isdigit():
            ops = round(int(fields[0]) * factor.get(fields[23], 1.0))
            block.append(ops)
            lines.append("\t".join([str(ops), *fields[1:25], version, fields[26], "0000000000"]))
        else:
            lines.append(line)
    return ("\n".join(lines) + "\n").encode()


def test_a_change_inside_the_measured_spread_is_grey_and_one_outside_it_is_red(corpus: Path) -> None:
    sdev = (corpus / VARIANCE / "sum.byrx.txt.sdev").read_text()
    _import({"c6i.4xlarge.ht0.nt4/sum.byrx.txt.sdev": sdev.encode()}, name="variance.tgz")
    candidate = _candidate(sdev, "7.10.2", {"readrandom.t4": 0.94, "fillseq.wal_disabled.v400": 0.94})
    _import({"c6i.4xlarge.ht0.nt4/sum.byrx.txt.sdev": candidate}, name="candidate.tgz")
    base = Run.objects.filter(build__name="7.9.0").order_by("pk").first()
    assert base is not None
    comparison = get_comparison(ComparisonSpec(base_run_id=base.pk))
    new = comparison.others[0].key

    # The three repeats of each build are one column: their mean and spread.
    assert [c.repeats for c in comparison.columns] == [3, 3]
    assert comparison.qps[comparison.base]["readrandom.t4"] == pytest.approx(804699, abs=1)
    # The file's stddev is the population one (n); the rule uses the sample one (n − 1) of the same three runs.
    assert comparison.cv[comparison.base]["readrandom.t4"] == pytest.approx(17270.0 / 804699 * (3 / 2) ** 0.5, rel=1e-3)

    # 0.94 is red by the thresholds; readrandom's repeats spread ~2.6 %, so 6 % is inside 2 × the combined spread.
    assert comparison.relative[new]["readrandom.t4"] == pytest.approx(0.94, abs=1e-4)
    assert comparison.result.flags[new]["readrandom.t4"] == "red"
    assert comparison.noisy[new]["readrandom.t4"] and comparison.flags[new]["readrandom.t4"] == "grey"
    # fillseq's repeats agree within ~0.9 %: the same 6 % drop is a real regression.
    assert not comparison.noisy[new]["fillseq.wal_disabled.v400"]
    assert comparison.flags[new]["fillseq.wal_disabled.v400"] == "red"
    # Unchanged tests stay unflagged.
    assert comparison.flags[new]["readwhilewriting.t4"] == "grey" and not comparison.noisy[new]["readwhilewriting.t4"]


# --------------------------------------------------------------------------- the drill-down's suite metrics


def test_the_drill_down_loads_db_bench_s_own_metrics_after_its_first_response(dec25: Path) -> None:
    from django.test import Client

    from reports.compare import get_microbenchmark_comparison
    from reports.views import _extra_metric_rows
    from runs.models import Result

    run = Run.objects.filter(workload__params__workload="byrx").order_by("build__version__sort_key").first()
    assert run is not None
    measured = Result.objects.filter(run=run, microbenchmark__is_warmup=False, extra__has_key="usec_op")
    mb = measured.values_list("microbenchmark_id", flat=True).first()
    assert mb is not None
    client = Client()
    first = client.get(f"/microbenchmarks/{mb}/", {"base": run.pk}).content.decode()
    assert '<div id="drill-suite-metrics"></div>' in first and "Suite metrics" not in first
    fragment = client.get(f"/microbenchmarks/{mb}/details", {"base": run.pk}, headers={"HX-Request": "true"})
    alone = client.get(f"/microbenchmarks/{mb}/details", {"base": run.pk})
    # What the page showed in one piece before, from a comparison computed from scratch: every version's row.
    comparison = get_microbenchmark_comparison(ComparisonSpec(base_run_id=run.pk), mb)
    column_of_run = {rid: c.key for c in comparison.columns for rid in c.run_ids}
    (block,) = _extra_metric_rows(comparison, mb, column_of_run)
    assert "usec_op" in block["names"] and len(block["rows"]) == len(comparison.columns) > 1
    for html in (fragment.content.decode(), alone.content.decode()):
        metrics = html.split('<div id="drill-suite-metrics" hx-swap-oob="true">', 1)[1]
        assert "<h2>Suite metrics</h2>" in metrics
        assert all(f'<th class="num">{name}</th>' in metrics for name in block["names"])
        assert all(f"<tr><td>{row['label']}</td>" in metrics for row in block["rows"])
