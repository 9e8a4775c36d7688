"""Text exports keep every cell in its column and never hand a spreadsheet a formula; columns come in the order
``--runs`` asked for, in every layout, the header-less CSV included."""

from __future__ import annotations

import csv
import io
import shutil
from pathlib import Path

import pytest
from django.core.management import call_command

from runs.importer import archive_directory, submit_and_import
from runs.models import Bundle
from suites.cells import csv_text, neutralised, tsv_line
from suites.dbbench.layout import format_dbbench_csv
from suites.sysbench.layout import format_qps_csv, format_qps_tsv

SMALL = "sysbench-mysql-small"
BASE = "x.my5651_rel_o2nofp.z12a_c8r32.pk1"


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ('=HYPERLINK("http://x")', '\'=HYPERLINK("http://x")'),
        ("+1+cmd", "'+1+cmd"),
        ("-2+3", "'-2+3"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\t=1", "'\t=1"),
        ("-0.5", "-0.5"),  # a number stays a number
        ("point-query_range=100", "point-query_range=100"),
        ("NA", "NA"),
    ],
)
def test_a_cell_a_spreadsheet_would_run_is_printed_as_text(text: str, shown: str) -> None:
    assert neutralised(text) == shown


def test_a_label_with_a_comma_or_quote_stays_in_its_column_of_the_csv() -> None:
    labels = ['odd,"test"_range=1', "=cmd|' /C calc'!A0_range=1"]
    values = {("a", labels[0]): 10.0, ("b", labels[0]): 20.0, ("a", labels[1]): 30.0, ("b", labels[1]): 60.0}
    text = format_qps_csv(["a", "b"], labels, values, relative_to="a")
    rows = list(csv.reader(io.StringIO(text)))
    assert rows == [['odd,"test"_range=1', "2.00"], ["'=cmd|' /C calc'!A0_range=1", "2.00"]]


def test_tsv_exports_neutralise_names_too() -> None:
    values = {("=evil", "t_range=1"): 10.0, ("b", "t_range=1"): 20.0}
    text = format_qps_tsv(["=evil", "b"], ["t_range=1"], values)
    assert text.splitlines()[0] == "col-1 : =evil"  # inside the col line: not a cell a spreadsheet runs
    assert tsv_line(["=1", "x\ty"]) == "'=1\tx y"
    db = format_dbbench_csv(
        ["r1", "r2"], ["=1.0", "2.0"], ["fillseq"], {("r1", "fillseq"): 1.0, ("r2", "fillseq"): 2.0}
    )
    assert db.splitlines()[0] == "test,'=1.0,2.0,"
    assert csv_text([["a", "b,c"]]) == 'a,"b,c"\n'


# --------------------------------------------------------------------------- --runs order


def _compare(*args: str) -> str:
    out = io.StringIO()
    call_command("compare", *args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


@pytest.mark.django_db
def test_the_runs_come_in_the_order_asked_in_the_tsv_and_in_the_header_less_csv(corpus: Path, tmp_path: Path) -> None:
    folder = tmp_path / "b"
    folder.mkdir()
    for name in ("qps.abs.all.tsv", "o.met.all"):
        shutil.copyfile(corpus / SMALL / name, folder / name)
    (folder / "benchdash.toml").write_text('server = "c8r32"\nworkload = "sysbench 8 tables × 10M rows"\n')
    submit_and_import(archive_directory(folder), name="b.tar.gz", source=Bundle.Source.COMMAND)
    theirs = (corpus / SMALL / "qps.abs.all.tsv").read_text().splitlines()
    names = [line.split(" : ")[1] for line in theirs if line.startswith("col-") and " : " in line]
    asked = [names[5], names[2], names[7]]  # 8.0.44 / 5.7.44 / 9.5.0-ish: not version order
    tsv = _compare("--base", BASE, "--runs", *asked, "--format", "tsv", "--absolute").splitlines()
    assert tsv[:4] == [f"col-{i} : {name}" for i, name in enumerate([BASE, *asked], start=1)]
    # The csv names no runs: each run's cells must be in the column it was asked in.
    rows = list(csv.reader(io.StringIO(_compare("--base", BASE, "--runs", *asked, "--format", "csv", "--absolute"))))
    header_at = theirs.index("\t".join(f"col-{n}" for n in range(1, len(names) + 1)))
    by_label = {line.split("\t")[-1]: line.split("\t")[:-1] for line in theirs[header_at + 1 :]}
    columns = [names.index(name) for name in [BASE, *asked]]
    assert rows and all(row[1:] == [by_label[row[0]][c] for c in columns] for row in rows)
    # The base named among the runs stays first: the author's tables are relative to their first column.
    moved = _compare("--base", BASE, "--runs", asked[0], BASE, "--format", "tsv", "--absolute").splitlines()
    assert moved[:3] == [f"col-1 : {BASE}", f"col-2 : {asked[0]}", ""]
