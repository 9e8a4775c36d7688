"""db_bench, Insert Benchmark and summary-table files a suite recognised but did not read are listed one by one
with why, exactly as the files of sysbench run directories are: on the bundle page, in import_bundle's output
and in the API's bundle resource."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.management import call_command
from django.test import Client

from runs.importer import submit_and_import
from runs.models import Bundle, Run
from runs.tests.hostile import tgz_of_files
from suites.dbbench import suite as dbbench
from suites.ibench import parse as ibench

pytestmark = pytest.mark.django_db

VARIANCE = "dbbench/results/aws_variance_rocksdb/c6i.4xlarge.ht0.nt4"
IBENCH = "ibench-2021/100m"


def _listed(bundle: Bundle) -> dict[str, str]:
    return {item["path"]: item["reason"] for item in bundle.stats["ignored"]}


def test_a_db_bench_summary_beside_its_sdev_copy_is_listed_with_why_on_the_page_in_the_output_and_the_api(
    corpus: Path, tmp_path: Path, capsys
) -> None:
    folder = tmp_path / "c6i"
    folder.mkdir()
    for name in ("sum.byrx.txt", "sum.byrx.txt.sdev"):
        (folder / name).write_bytes((corpus / VARIANCE / name).read_bytes())
    call_command("import_bundle", str(folder), "--server", "c6i.4xlarge")
    out = capsys.readouterr().out
    bundle = Bundle.objects.get()
    assert Run.objects.exists()

    assert _listed(bundle) == {"c6i/sum.byrx.txt": dbbench.SDEV_COPY}
    assert bundle.stats["ignored_files"] == 1
    assert f"  1 files not read:\n    c6i/sum.byrx.txt: {dbbench.SDEV_COPY}\n" in out

    page = Client().get(bundle.get_absolute_url()).content.decode()
    assert "<code>c6i/sum.byrx.txt</code>" in page
    assert "its .sdev copy, which was read instead" in page
    assert "file(s)" not in page  # no bare count in place of the files

    resource = Client().get(f"/api/bundles/{bundle.pk}").json()
    assert resource["ignored"] == [{"path": "c6i/sum.byrx.txt", "reason": dbbench.SDEV_COPY}]


def test_notes_named_like_a_db_bench_summary_are_listed_beside_the_real_summary(corpus: Path) -> None:
    files = {
        "8core/sum.byrx.txt": (corpus / "dbbench/arc/dec25.dbb.clang/8core/sum.byrx.txt").read_bytes(),
        "8core/sum.todo.txt": b"rerun 10.9 with the new compiler\n",
    }
    report = submit_and_import(tgz_of_files(files), name="notes.tar.gz", source=Bundle.Source.COMMAND)
    bundle = Bundle.objects.get(pk=report.bundle_id)
    assert _listed(bundle) == {"8core/sum.todo.txt": dbbench.NO_HEADER}
    assert report.ignored == [{"path": "8core/sum.todo.txt", "reason": dbbench.NO_HEADER}]


def test_the_comma_twin_of_an_insert_benchmark_summary_is_listed_and_the_authors_tables_too(corpus: Path) -> None:
    summary = (corpus / IBENCH / "o.sum.t.100m.my8022.cx6d").read_bytes()
    files = {
        "ib/o.sum.t.100m.my8022.cx6d": summary,
        # The scripts print each summary twice, tab- and comma-separated: the same rows.
        "ib/o.sum.c.100m.my8022.cx6d": summary.replace(b"\t", b","),
        "ib/res.in/rel.l.i1": (corpus / IBENCH / "res.in" / "rel.l.i1").read_bytes(),
    }
    report = submit_and_import(tgz_of_files(files), name="ib.tar.gz", source=Bundle.Source.COMMAND)
    bundle = Bundle.objects.get(pk=report.bundle_id)
    listed = _listed(bundle)
    assert listed["ib/o.sum.c.100m.my8022.cx6d"] == ibench.COMMA_TWIN
    assert "ib/res.in/rel.l.i1" in listed  # not an Insert Benchmark result: the bundle reader says so
    assert bundle.stats["ignored_files"] == len(listed) == 2
    page = Client().get(bundle.get_absolute_url()).content.decode()
    assert "<code>ib/o.sum.c.100m.my8022.cx6d</code>" in page
