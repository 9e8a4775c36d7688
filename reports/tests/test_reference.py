"""The reference exports against the author's own tables for sysbench-mysql-small.

The corpus result directories are parsed with suites.sysbench.parse at run time; the
tables built from them must match ``qps.{abs,rel}.all.{tsv,csv}`` and
``o.met.all`` cell by cell and, beyond that, byte for byte.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from reports.reference import format_markdown_summary
from reports.stats import compare, metric_ratio
from suites.groups import CURRENT_32
from suites.sysbench import parse as sysbench
from suites.sysbench.layout import (
    format_met_blocks,
    format_qps_csv,
    format_qps_tsv,
    ls_sort_key,
    reference_block,
    reference_tests,
)
from suites.tables import NA

MET_COLUMNS = ("cpu_o", "cs_o", "r_o", "rkb_o", "wkb_o", "o_s")


@dataclass
class SmallCorpus:
    dir: Path
    runs: list[str]
    """The runs of the reference tables, in their column order."""
    qps: dict[tuple[str, str], float] = field(default_factory=dict)
    met: dict[tuple[str, str], dict[str, float]] = field(default_factory=dict)
    labels: set[str] = field(default_factory=set)

    def text(self, name: str) -> str:
        return (self.dir / name).read_text()


def _column_runs(text: str) -> list[str]:
    return [line.split(" : ", 1)[1] for line in text.splitlines() if line.startswith("col-") and " : " in line]


@pytest.fixture(scope="module")
def small(corpus: Path) -> SmallCorpus:
    root = corpus / "sysbench-mysql-small"
    runs = _column_runs((root / "qps.abs.all.tsv").read_text())
    data = SmallCorpus(dir=root, runs=runs)
    for run_dir in sorted(root.glob("x.*")):
        if run_dir.name not in runs:
            continue  # x.my8406v2 has results but is not in the reference tables
        for path in run_dir.iterdir():
            name = sysbench.parse_file_name(path.name)
            if name is None:
                continue
            if name.kind == "o":
                label = sysbench.test_label(name.test, name.range_size)
                output = sysbench.parse_output(path.read_text(), test=name.test, file_name=path.name)
                data.qps[(run_dir.name, label)] = output.qps
                data.labels.add(label)
            elif name.kind == "met":
                data.met[(run_dir.name, path.name)] = sysbench.parse_met(path.read_text(), file_name=path.name)
    return data


def _tsv_rows(text: str) -> list[list[str]]:
    """The data rows of a qps.*.all.tsv: everything after the col-1… header line."""
    lines = text.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("col-1\t") or line == "col-1")
    return [line.split("\t") for line in lines[header + 1 :]]


def _csv_rows(text: str) -> list[list[str]]:
    return [line.split(",") for line in text.splitlines()]


# --------------------------------------------------------------------------- the corpus itself


def test_the_reference_tables_hold_eight_of_the_nine_runs(small):
    dirs = sorted(p.name for p in small.dir.glob("x.*"))
    assert len(dirs) == 9
    assert len(small.runs) == 8
    assert "x.my8406v2_rel_o2nofp.z12a_c8r32.pk1" in dirs
    assert "x.my8406v2_rel_o2nofp.z12a_c8r32.pk1" not in small.runs
    assert small.runs[0] == "x.my5651_rel_o2nofp.z12a_c8r32.pk1"
    assert _column_runs(small.text("qps.rel.all.tsv")) == small.runs[1:]


# --------------------------------------------------------------------------- row order


def test_reference_tests_gives_exactly_the_labels_and_row_order_of_every_qps_table(small):
    expected = [row[-1] for row in _tsv_rows(small.text("qps.abs.all.tsv"))]
    assert len(expected) == 33
    ordered = reference_tests(small.labels)
    assert ordered == expected
    assert [row[-1] for row in _tsv_rows(small.text("qps.rel.all.tsv"))] == expected
    assert [row[0] for row in _csv_rows(small.text("qps.abs.all.csv"))] == expected
    assert [row[0] for row in _csv_rows(small.text("qps.rel.all.csv"))] == expected


def test_ls_sort_order_puts_longer_ranges_first_and_ignores_punctuation():
    names = [
        "random-points_range=10",
        "random-points_range=100",
        "random-points_range=1000",
        "read-only-simple_range=1000",
        "read-only_range=10000",
        "read-only-order_range=1000",
    ]
    assert reference_tests(names) == [
        "random-points_range=1000",
        "random-points_range=100",
        "random-points_range=10",
        "read-only-order_range=1000",
        "read-only_range=10000",
        "read-only-simple_range=1000",
    ]
    assert ls_sort_key("Scan.warm") < ls_sort_key("scanx")


def test_reference_tests_drop_the_pre_phase_and_point_warm_ups_but_keep_scan_warm():
    labels = [
        "scan.warm_range=100",
        "scan.warmpre_range=100",
        "point-query.pre_range=100",
        "point-query.warm_range=100",
        "update-one_range=100",
        "scan_range=100",
        "hot-points_range=100",
    ]
    assert reference_tests(labels) == [
        "hot-points_range=100",
        "scan_range=100",
        "scan.warm_range=100",
        "update-one_range=100",
    ]
    assert reference_block("points-covered-si.warm") is None
    assert reference_block("read-write") == "write"


# --------------------------------------------------------------------------- qps tables


def test_every_absolute_qps_cell_matches_the_reference_within_integer_rounding(small):
    rows = _tsv_rows(small.text("qps.abs.all.tsv"))
    for row in rows:
        label = row[-1]
        assert len(row) == len(small.runs) + 1
        for run, cell in zip(small.runs, row[:-1], strict=True):
            assert abs(int(cell) - small.qps[(run, label)]) <= 0.5, (run, label)


def test_every_relative_qps_cell_matches_the_reference_within_a_hundredth(small):
    base = small.runs[0]
    for row in _tsv_rows(small.text("qps.rel.all.tsv")):
        label = row[-1]
        for run, cell in zip(small.runs[1:], row[:-1], strict=True):
            exact = small.qps[(run, label)] / small.qps[(base, label)]
            assert abs(float(cell) - exact) <= 0.01, (run, label, cell, exact)


def test_the_relative_table_divides_the_printed_integers_not_the_exact_qps(small):
    """Two cells of mysql-small print differently from the exact ratio; the integer ratio matches all 231."""
    base = small.runs[0]
    exact_differs = 0
    for row in _tsv_rows(small.text("qps.rel.all.tsv")):
        label = row[-1]
        for run, cell in zip(small.runs[1:], row[:-1], strict=True):
            value, base_value = small.qps[(run, label)], small.qps[(base, label)]
            assert f"{round(value) / round(base_value):.2f}" == cell
            exact_differs += f"{value / base_value:.2f}" != cell
    assert exact_differs == 2


def test_the_absolute_tsv_is_reproduced_byte_for_byte(small):
    labels = reference_tests(small.labels)
    assert format_qps_tsv(small.runs, labels, small.qps) == small.text("qps.abs.all.tsv")


def test_the_relative_tsv_is_reproduced_byte_for_byte(small):
    labels = reference_tests(small.labels)
    produced = format_qps_tsv(small.runs, labels, small.qps, relative_to=small.runs[0])
    assert produced == small.text("qps.rel.all.tsv")


def test_every_csv_cell_matches_the_reference(small):
    base = small.runs[0]
    for row in _csv_rows(small.text("qps.abs.all.csv")):
        label = row[0]
        for run, cell in zip(small.runs, row[1:], strict=True):
            assert abs(int(cell) - small.qps[(run, label)]) <= 0.5, (run, label)
    for row in _csv_rows(small.text("qps.rel.all.csv")):
        label = row[0]
        for run, cell in zip(small.runs[1:], row[1:], strict=True):
            exact = small.qps[(run, label)] / small.qps[(base, label)]
            assert abs(float(cell) - exact) <= 0.01, (run, label)


def test_both_csv_files_are_reproduced_byte_for_byte(small):
    labels = reference_tests(small.labels)
    assert format_qps_csv(small.runs, labels, small.qps) == small.text("qps.abs.all.csv")
    relative = format_qps_csv(small.runs, labels, small.qps, relative_to=small.runs[0])
    assert relative == small.text("qps.rel.all.csv")


def test_missing_qps_cells_print_na_and_a_zero_base_prints_inf():
    values = {("a", "t_range=1"): 100.4, ("b", "t_range=1"): None, ("a", "u_range=1"): 0.0, ("b", "u_range=1"): 3.0}
    runs, labels = ["a", "b", "c"], ["t_range=1", "u_range=1"]
    # 3 QPS, whose printed precision nothing records, keeps three significant digits (reference.SIGNIFICANT_DIGITS).
    assert format_qps_tsv(runs, labels, values) == (
        "col-1 : a\ncol-2 : b\ncol-3 : c\n\ncol-1\tcol-2\tcol-3\n100\tNA\tNA\tt_range=1\n0\t3.00\tNA\tu_range=1\n"
    )
    assert format_qps_csv(runs, labels, values, relative_to="a") == "t_range=1,NA,NA\nu_range=1,inf,NA\n"
    relative = format_qps_tsv(runs, labels, values, relative_to="a")
    assert relative.splitlines()[:3] == ["Relative to: a", "col-1 : b", "col-2 : c"]


# --------------------------------------------------------------------------- o.met.all


def _met_blocks(text: str) -> dict[str, str]:
    """o.met.all split into its blocks, keyed by file name; each block keeps its lines and trailing blank line."""
    blocks: dict[str, str] = {}
    for chunk in text.split("\n\n"):
        if chunk.strip():
            blocks[chunk.split("\n", 1)[0]] = chunk + "\n\n"
    return blocks


def _met_rows(block: str) -> tuple[list[list[str]], list[list[str]]]:
    lines = block.rstrip("\n").split("\n")
    absolute_at, relative_at = lines.index("--- absolute"), lines.index("--- relative to first result")
    absolute = [line.split("\t") for line in lines[absolute_at + 2 : relative_at]]
    relative = [line.split("\t") for line in lines[relative_at + 1 :]]
    return absolute, relative


def _comparable_blocks(small: SmallCorpus) -> dict[str, str]:
    blocks = _met_blocks(small.text("o.met.all"))
    comparable = {name: block for name, block in blocks.items() if (small.runs[0], name) in small.met}
    # Every block but the sb.prepare.met one, whose files are not in this corpus directory: the load's block is
    # checked on the Postgres tarballs, which hold them (runs/tests/test_load_step.py).
    assert set(blocks) - set(comparable) == {"sb.prepare.met.point-query.warm.range100.pk1"}
    assert len(comparable) == 37
    return comparable


def test_every_o_met_all_cell_matches_the_sb_met_files(small):
    base = small.runs[0]
    for name, block in _comparable_blocks(small).items():
        absolute, relative = _met_rows(block)
        assert [row[-1] for row in absolute] == small.runs
        for row in absolute:
            metrics = small.met[(row[-1], name)]
            for key, cell in zip(MET_COLUMNS, row[:-1], strict=True):
                tolerance = 0.5 if key == "o_s" else 5e-6 * max(1.0, abs(metrics[key]))
                assert abs(float(cell) - metrics[key]) <= tolerance, (name, row[-1], key)
        assert [row[-1] for row in relative] == small.runs[1:]
        for row in relative:
            assert row[1] == ""  # the double tab after cpu/o
            cells = [row[0], *row[2:-1]]
            for key, cell in zip(MET_COLUMNS, cells, strict=True):
                value, base_value = small.met[(row[-1], name)][key], small.met[(base, name)][key]
                if value == 0 and base_value == 0:
                    assert cell == "1", (name, row[-1], key)
                elif base_value == 0:
                    assert cell == "inf", (name, row[-1], key)
                else:
                    ratio = metric_ratio(value, base_value)
                    assert ratio is not None
                    assert abs(float(cell) - ratio) <= 0.01, (name, row[-1], key, cell, ratio)


def test_every_comparable_o_met_all_block_is_reproduced_byte_for_byte(small):
    blocks = _comparable_blocks(small)
    produced = format_met_blocks(small.runs, list(blocks), small.met)
    assert produced == "".join(blocks.values())
    whole = small.text("o.met.all")
    assert whole.endswith(produced)  # the whole file after its prepare block


def test_o_met_all_spells_inf_and_one_like_the_script(small):
    blocks = _comparable_blocks(small)
    _, relative = _met_rows(blocks["sb.met.range-notcovered-si.pre.range100.pk1.dop1"])
    assert relative[0][3:5] == ["1", "1"]
    assert relative[1][3:5] == ["inf", "inf"]


def test_missing_met_files_print_na_rows():
    metrics = {
        ("base", "sb.met.x"): {"cpu_o": 0.0001, "cs_o": 2.0, "r_o": 0.0, "rkb_o": 0.0, "wkb_o": 1.5, "o_s": 999.6},
        ("other", "sb.met.x"): None,
    }
    text = format_met_blocks(["base", "other"], ["sb.met.x"], metrics)
    assert text.splitlines() == [
        "sb.met.x",
        "--- absolute",
        "cpu/o\t\tcs/o\tr/o\trKB/o\twKB/o\to/s\tdbms",
        "0.000100\t2.000\t0\t0\t1.5\t1000\tbase",
        f"{NA}\t{NA}\t{NA}\t{NA}\t{NA}\t{NA}\tother",
        "--- relative to first result",
        f"{NA}\t\t{NA}\t{NA}\t{NA}\t{NA}\t{NA}\tother",
        "",
    ]


# --------------------------------------------------------------------------- summaries over the corpus


def test_group_summaries_of_mysql_small_agree_with_an_independent_computation(small):
    base, others = small.runs[0], small.runs[1:]
    labels = sorted(small.labels)
    grouped, _ = CURRENT_32.partition(labels)
    qps = {run: {label: small.qps.get((run, label)) for label in labels} for run in small.runs}
    result = compare(qps, base, others, grouped)
    for group, members in grouped.items():
        for run in others:
            ratios = {label: small.qps[(run, label)] / small.qps[(base, label)] for label in members}
            summary = result.summary(group, run)
            assert summary.avg == pytest.approx(statistics.mean(ratios.values()), rel=1e-12)
            assert summary.median == pytest.approx(statistics.median(ratios.values()), rel=1e-12)
            assert summary.min == min(ratios.values())
            assert summary.max == max(ratios.values())
            assert summary.min_label is not None
            assert summary.max_label is not None
            assert ratios[summary.min_label] == summary.min
            assert ratios[summary.max_label] == summary.max
            assert (summary.n, summary.total) == (len(members), len(members))
    # mysql 5.7.44 is faster than 5.6.51 on read-only-distinct (1.44 in qps.rel.all.tsv).
    aggregation = result.summary("range queries with aggregation", small.runs[1])
    assert aggregation.max_label == "read-only-distinct_range=1000"
    assert f"{aggregation.max:.2f}" == "1.44"


def test_the_markdown_summary_shows_two_decimals_n_of_n_and_the_extreme_labels():
    qps = {
        "base": {"a_range=1": 100.0, "b_range=1": 100.0, "c_range=1": 100.0, "d_range=1": 0.0},
        "new": {"a_range=1": 80.0, "b_range=1": 124.0, "d_range=1": 5.0},
    }
    result = compare(qps, "base", ["new"], {"reads": ["a_range=1", "b_range=1", "c_range=1"], "d": ["d_range=1"]})
    text = format_markdown_summary(
        result, names={"base": "MySQL 5.6.51", "new": "MySQL 8.4.7"}, bugs={"reads": ["[MDEV-1](u): a bug"]}
    )
    lines = text.splitlines()
    assert lines[0] == "### reads (relative to MySQL 5.6.51)"
    assert "| version | min | max | avg | median | n | min at | max at |" in lines
    assert "| MySQL 8.4.7 | 0.80 | 1.24 | 1.02 | 1.02 | 2 of 3 | `a_range=1` | `b_range=1` |" in lines
    assert "### d (relative to MySQL 5.6.51)" in lines
    assert "| MySQL 8.4.7 | ∞ | ∞ | n/a | n/a | 1 | `d_range=1` | `d_range=1` |" in lines
    assert "- MySQL 8.4.7: missing `c_range=1`" in lines
    assert "- [MDEV-1](u): a bug" in lines
    assert any("left out of avg and median" in line for line in lines)
    assert math.isinf(result.summary("d", "new").max or 0.0)
