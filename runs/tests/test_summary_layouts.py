"""Every layout of the author's summary tables, read and reproduced: file-name variants of one archive, the older
5- and 4-column metric tables (``met.<name>.txt``, o.met of Dec 2020), metrics at another concurrency, the ``.pre``
rows of his 2023-2024 tables, and the December 2020 ``o.qps.abs`` layout.

The cells are the corpus's real ones (``sysbench-summary-dops``, ``sysbench-mysql-small``), put in the file names
and layouts the author's scripts of each era write (``sum_qps_csv.sh``, ``sum_met.sh``, ``sumr.sh``); where a layout
differs from the corpus's, the test says how it was made from it."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from runs.importer import ImportFailed, archive_directory, submit_and_import
from runs.models import Bundle, Result, Run
from runs.parse import MANIFEST_READ

pytestmark = pytest.mark.django_db

DOPS = "sysbench-summary-dops"
BASE = "x.my5651_rel_o2nofp.z11a_c32r128.pk1"
MANIFEST = 'server = "c48"\nworkload = "sysbench 8 tables × 10M rows"\n'


def _import(folder: Path) -> object:
    return submit_and_import(archive_directory(folder), name=f"{folder.name}.tar.gz", source=Bundle.Source.COMMAND)


def _compare(*args: str) -> str:
    out = io.StringIO()
    call_command("compare", *args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def _folder(tmp_path: Path, name: str, files: dict[str, str | Path]) -> Path:
    folder = tmp_path / name
    folder.mkdir(parents=True)
    for target, source in files.items():
        (folder / target).write_text(source.read_text() if isinstance(source, Path) else source)
    return folder


# --------------------------------------------------------------------------- variants in the file names


def test_two_tables_told_apart_by_their_names_are_two_runs_each_resolved_by_its_variant(
    corpus: Path, tmp_path: Path
) -> None:
    """``qps.abs.in.dop8.prep0.tsv`` beside ``….prep1.tsv`` (the author's Dec 2024 archives): the same run names,
    two experiments. The prep1 table here holds dop10's real cells, so its relative table is dop10's."""
    folder = _folder(
        tmp_path,
        "c48",
        {
            "qps.abs.in.dop8.prep0.tsv": corpus / DOPS / "dop8" / "qps.abs.in.tsv",
            "qps.abs.in.dop8.prep1.tsv": corpus / DOPS / "dop10" / "qps.abs.in.tsv",
            "benchdash.toml": MANIFEST,
        },
    )
    _import(folder)
    assert sorted(Run.objects.filter(name=BASE).values_list("summary_table", flat=True)) == [
        "in.prep0.dop8",
        "in.prep1.dop8",
    ]
    with pytest.raises(CommandError) as refused:
        _compare("--base", BASE, "--dop", "8")
    assert "names runs of 2 summary tables: in.prep0.dop8 (run" in str(refused.value)
    prep1 = _compare("--base", BASE, "--dop", "8", "--variant", "prep1")
    assert prep1 == (corpus / DOPS / "dop10" / "qps.rel.in.tsv").read_text()
    prep0 = _compare("--base", BASE, "--variant", "prep0")
    assert prep0 == (corpus / DOPS / "dop8" / "qps.rel.in.tsv").read_text()


# --------------------------------------------------------------------------- older metric tables


def _drop_columns(o_met: str, names: tuple[str, ...]) -> str:
    """An o.met as an older sum_met.sh printed it: the same blocks without the metric columns it did not have
    (cs/o before 2024; r/o too before 2021-01-19). The double tab after cpu/o stays, as the scripts print it."""
    header = ["cpu/o", "", "cs/o", "r/o", "rKB/o", "wKB/o", "o/s", "dbms"]
    named = [h for h in header if h]  # the absolute rows have no empty cell after cpu/o
    lines = []
    for line in o_met.splitlines():
        cells = line.split("\t")
        if len(cells) == len(header):  # the header and the relative rows
            cells = [c for c, h in zip(cells, header, strict=True) if h not in names]
        elif len(cells) == len(named):
            cells = [c for c, h in zip(cells, named, strict=True) if h not in names]
        lines.append("\t".join(cells))
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(
    ("name", "dropped", "kept"),
    [
        ("met.in.txt", ("cs/o",), ("cpu_o", "r_o", "rkb_o", "wkb_o", "o_s")),  # 2021-2024: 5 metric columns
        ("o.met.in", ("cs/o", "r/o"), ("cpu_o", "rkb_o", "wkb_o", "o_s")),  # Dec 2020: 4 metric columns
    ],
)
def test_older_metric_tables_are_read_by_their_column_names(
    corpus: Path, tmp_path: Path, name: str, dropped: tuple[str, ...], kept: tuple[str, ...]
) -> None:
    older = _drop_columns((corpus / DOPS / "dop8" / "o.met").read_text(), dropped)
    assert older.splitlines()[2].count("\t") == 7 - len(dropped)
    folder = _folder(tmp_path, "dop8", {"qps.abs.in.tsv": corpus / DOPS / "dop8" / "qps.abs.in.tsv", name: older})
    report = _import(folder)
    assert not report.ignored, report.ignored
    point = Result.objects.get(run__name=BASE, microbenchmark__test="point-query", microbenchmark__range_size=100)
    assert (point.dop, point.qps, point.cpu_o, point.o_s) == (8, 225420, 0.000077, 225420)
    assert all(getattr(point, key) is not None for key in kept) and point.cs_o is None
    assert any(
        item["path"] == f"dop8/{name}" and item["what"].startswith("HW metrics: 30 blocks") for item in report.read
    )


@pytest.mark.parametrize("name", ["met.notes.txt", "o.met"])
def test_a_file_named_like_a_metric_table_that_is_not_one_is_listed_not_refused(
    corpus: Path, tmp_path: Path, name: str
) -> None:
    folder = _folder(
        tmp_path,
        "dop8",
        {"qps.abs.in.tsv": corpus / DOPS / "dop8" / "qps.abs.in.tsv", name: "ran on a quiet box\n"},
    )
    report = _import(folder)
    assert Run.objects.count() == 6
    assert [item["path"] for item in report.ignored] == [f"dop8/{name}"]
    assert report.ignored[0]["reason"].startswith("named like an o.met table but not one: ")


# --------------------------------------------------------------------------- metrics at another concurrency


def test_metrics_measured_at_another_concurrency_are_kept_at_theirs_and_do_not_move_the_tables(
    corpus: Path, tmp_path: Path
) -> None:
    """A 1-client table whose o.met also holds the scan's block of an 8-client run (a truncated o.met like the
    corpus's dop4 one): the table stays at 1 client, the scan metrics are kept at 8, nothing is dropped."""
    dop1 = (corpus / DOPS / "dop1" / "o.met").read_text()
    dop8_scan = re.search(
        r"sb\.met\.scan\.range100\.pk1\.dop8\n.*?\n\n", (corpus / DOPS / "dop8" / "o.met").read_text(), re.S
    )
    assert dop8_scan is not None
    folder = _folder(
        tmp_path,
        "c48",
        {"qps.abs.in.tsv": corpus / DOPS / "dop1" / "qps.abs.in.tsv", "o.met": dop8_scan.group() + dop1},
    )
    report = _import(folder)
    base = Run.objects.get(name=BASE)
    assert base.summary_table == "in.dop1"
    scans = dict(Result.objects.filter(run=base, microbenchmark__test="scan").values_list("dop", "o_s"))
    assert scans == {1: 6700, 8: 49700}
    assert not any("not imported" in w for w in report.warnings)
    assert _compare("--base", BASE, "--format", "tsv") == (corpus / DOPS / "dop1" / "qps.rel.in.tsv").read_text()


# --------------------------------------------------------------------------- .pre rows of 2023-2024


def test_tables_with_pre_rows_print_them_in_the_authors_order(corpus: Path, tmp_path: Path) -> None:
    """The author's tables of 2023 to October 2024 (sum_qps_csv.sh) keep the .pre tests' rows. Made from the
    dop8 table: its runs' point-query.pre and range-notcovered-si.pre QPS are their o.met blocks' o/s (the value
    the scripts pass to the metrics script), put where ``ls | sort`` puts them."""
    o_met = (corpus / DOPS / "dop8" / "o.met").read_text()

    def o_s(test: str) -> list[str]:
        block = re.search(rf"sb\.met\.{re.escape(test)}\.range100\.pk1\.dop8\n(.*?)\n--- relative", o_met, re.S)
        assert block is not None
        return [row.split("\t")[5] for row in block.group(1).splitlines()[2:]]

    lines = (corpus / DOPS / "dop8" / "qps.abs.in.tsv").read_text().splitlines()
    at = {line.rsplit("\t", 1)[-1]: i for i, line in enumerate(lines)}
    lines.insert(at["point-query_range=100"], "\t".join([*o_s("point-query.pre"), "point-query.pre_range=100"]))
    at = {line.rsplit("\t", 1)[-1]: i for i, line in enumerate(lines)}
    lines.insert(
        at["range-notcovered-si_range=100"],
        "\t".join([*o_s("range-notcovered-si.pre"), "range-notcovered-si.pre_range=100"]),
    )
    table = "\n".join(lines) + "\n"
    folder = _folder(tmp_path, "dop8", {"qps.abs.in.tsv": table, "o.met": o_met})
    _import(folder)
    assert Run.objects.get(name=BASE).summary_layout["pre_rows"] is True
    assert _compare("--base", BASE, "--format", "tsv", "--absolute") == table


# --------------------------------------------------------------------------- December 2020: o.qps.abs


def _oqps(corpus: Path, dops: tuple[int, ...]) -> str:
    """``o.qps.abs.in`` as ``sumr.sh sb.r.qps <base> <ncols> 0 <others> | sed 's/sb\\.r\\.qps\\.//g'`` printed it:
    per sb.r.qps file its name, then per run its QPS at each concurrency and its name, a blank line. Made from
    the dops tables' cells (one column per concurrency, in ``dops`` order)."""
    tables = [(corpus / DOPS / f"dop{dop}" / "qps.abs.in.tsv").read_text().splitlines() for dop in dops]
    runs = [line.split(" : ")[1] for line in tables[0] if line.startswith("col-") and " : " in line]
    header = tables[0].index("\t".join(f"col-{n}" for n in range(1, len(runs) + 1)))
    out = []
    for rows in zip(*(table[header + 1 :] for table in tables), strict=True):
        label = rows[0].rsplit("\t", 1)[1]
        test, _, range_size = label.rpartition("_range=")
        out.append(f"{test}.range{range_size}.pk1")
        for column, run in enumerate(runs):
            out.append("\t".join([*(row.split("\t")[column] for row in rows), run]))
        out.append("")
    return "\n".join(out) + "\n"


def test_the_december_2020_layout_is_imported_and_every_cell_reproduced(corpus: Path, tmp_path: Path) -> None:
    folder = _folder(tmp_path, "c48/dop8", {"o.qps.abs.in": _oqps(corpus, (8,)), "benchdash.toml": MANIFEST})
    # Its relative twin (sumr.sh with ratio=1) is derived: listed, not imported.
    (folder / "o.qps.rel.in").write_text("point-query.range100.pk1\n0.95\tx.my5744_rel_o2nofp.z11a_c32r128.pk1\n")
    report = _import(folder.parent)
    assert Run.objects.count() == 6
    assert report.read == [
        {"path": "c48/dop8/benchdash.toml", "what": MANIFEST_READ},
        {"path": "c48/dop8/o.qps.abs.in", "what": "QPS of 6 runs × 27 microbenchmarks at concurrencies 8"},
    ]
    assert [item["path"] for item in report.ignored] == ["c48/dop8/o.qps.rel.in"]
    for kind in ("abs", "rel"):
        for ext in ("tsv", "csv"):
            ours = _compare("--base", BASE, "--format", ext, *(["--absolute"] if kind == "abs" else []))
            assert ours == (corpus / DOPS / "dop8" / f"qps.{kind}.in.{ext}").read_text(), (kind, ext)


def test_a_december_2020_table_of_several_concurrencies_says_how_it_read_its_columns(
    corpus: Path, tmp_path: Path
) -> None:
    folder = _folder(tmp_path, "c48", {"o.qps.abs.in": _oqps(corpus, (1, 4)), "benchdash.toml": MANIFEST})
    report = _import(folder)
    base = Run.objects.get(name=BASE)
    assert base.summary_table == "in.dop1-2"
    point = dict(
        Result.objects.filter(run=base, microbenchmark__test="point-query", microbenchmark__range_size=100).values_list(
            "dop", "qps"
        )
    )
    assert point == {1: 32646, 2: 116934}  # dop4's cells, in the second column: taken as 2, and said
    assert any("one per concurrency, which the table does not name; taken as 1, 2" in w for w in report.warnings)


def test_a_damaged_december_2020_table_is_refused_with_its_line(corpus: Path, tmp_path: Path) -> None:
    text = _oqps(corpus, (8,)).replace("point-query.range100.pk1", "point query", 1)
    folder = _folder(tmp_path, "dop8", {"o.qps.abs.in": text})
    with pytest.raises(ImportFailed, match=r"o\.qps\.abs\.in: line \d+: expected an sb\.r\.qps file name"):
        _import(folder)
    assert not Run.objects.exists()
