"""Runs read from summary tables get their concurrency, server and workload from what says them: the o.met
blocks, the table's own name (``qps.abs.pgo.dop40.prep0.tsv``), the scripts' ``<server>/dop<N>/`` folders, or
else benchdash.toml; each run keeps where they came from, and its page says it.

The tables are the author's real ``sysbench-mysql-small`` summaries, put under the names and folders the
author's archives use for other concurrencies and servers."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from django.test import Client

from runs.importer import archive_directory, submit_and_import
from runs.models import Bundle, Result, Run
from runs.parse import MANIFEST_SAYS, parse_bundle
from runs.summaries import BESIDE
from suites.summary import parse as summary

pytestmark = pytest.mark.django_db

SMALL = "sysbench-mysql-small"
BASE = "x.my5651_rel_o2nofp.z12a_c8r32.pk1"
WORKLOAD = "sysbench 8 tables × 10M rows"


def _table(corpus: Path, into: Path, name: str = "qps.abs.all.tsv", *, source: str = "qps.abs.all.tsv") -> Path:
    into.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(corpus / SMALL / source, into / name if into.is_dir() else into)
    return into


def _import(folder: Path, name: str) -> object:
    return submit_and_import(archive_directory(folder), name=name, source=Bundle.Source.COMMAND)


def _dops(run: Run) -> set[int]:
    return set(Result.objects.filter(run=run).values_list("dop", flat=True))


def test_the_concurrency_in_the_tables_name_is_the_results_and_the_page_says_where_it_came_from(
    corpus: Path, tmp_path: Path, client: Client
) -> None:
    folder = tmp_path / "b"
    folder.mkdir()
    _table(corpus, folder, "qps.abs.my.dop8.prep0.tsv")
    (folder / "benchdash.toml").write_text(f'server = "c8r32"\nworkload = "{WORKLOAD}"\n')
    report = _import(folder, "dop8.tar.gz")
    base = Run.objects.get(name=BASE)
    assert _dops(base) == {8} and base.results.count() == 33
    assert base.summary_sources == {
        "concurrency": "from the table's file name (dop8)",
        "server": MANIFEST_SAYS,
        "workload": MANIFEST_SAYS,
    }
    assert not any("concurrency" in w for w in report.warnings)

    page = client.get(base.get_absolute_url()).content.decode()
    sources = page[page.index('id="summary-sources"') :]
    sources = sources[: sources.index("</ul>")]
    assert "Concurrency 8: from the table&#x27;s file name (dop8)" in sources
    assert f"Server c8r32: {MANIFEST_SAYS}" in sources
    assert f"Workload {WORKLOAD}: {MANIFEST_SAYS}" in sources


def test_the_scripts_server_and_dop_folders_give_the_server_and_the_concurrency(corpus: Path, tmp_path: Path) -> None:
    folder = tmp_path / "b"
    _table(corpus, folder / "pn53" / "dop4" / "qps.abs.all.tsv")
    parsed = parse_bundle(archive_directory(folder), name="pn53.tar.gz")
    assert {run.server for run in parsed.runs} == {"pn53"}
    assert {row["dop"] for run in parsed.runs for row in run.results} == {4}
    first = parsed.runs[0]
    assert first.summary_sources["concurrency"] == "from the folder it sits in (dop4)"
    assert first.summary_sources["server"] == "from the folder above its dop4 folder (pn53)"
    assert first.summary_sources["workload"] == summary.NO_WORKLOAD
    # Nothing says the server is unknown: the folder said it.
    assert not any("no server named" in w for w in parsed.warnings)


def test_an_archives_own_folder_is_not_taken_for_a_server(corpus: Path, tmp_path: Path) -> None:
    folder = tmp_path / "b"
    _table(corpus, folder / "aug25.sb.mem.in.1u.50m" / "qps.abs.all.tsv")
    parsed = parse_bundle(archive_directory(folder), name="a.tar.gz")
    assert {run.server for run in parsed.runs} == {"unknown server"}
    assert parsed.runs[0].summary_sources["server"].startswith("not said")


def test_the_manifest_gives_the_concurrency_a_table_does_not_say(corpus: Path, tmp_path: Path) -> None:
    folder = tmp_path / "b"
    folder.mkdir()
    _table(corpus, folder)
    (folder / "benchdash.toml").write_text(f'server = "c8r32"\nworkload = "{WORKLOAD}"\nconcurrency = 16\n')
    report = _import(folder, "c16.tar.gz")
    base = Run.objects.get(name=BASE)
    assert _dops(base) == {16}
    assert base.summary_sources["concurrency"] == MANIFEST_SAYS
    assert not any("does not say its concurrency" in w for w in report.warnings)


def test_without_anything_saying_it_the_concurrency_is_1_and_said_once(corpus: Path, tmp_path: Path) -> None:
    folder = tmp_path / "b"
    folder.mkdir()
    _table(corpus, folder)
    report = _import(folder, "c1.tar.gz")
    assert {dop for run in Run.objects.all() for dop in _dops(run)} == {1}
    said = [w for w in report.warnings if "does not say its concurrency" in w]
    assert len(said) == 1 and "set concurrency in benchdash.toml" in said[0]
    assert Run.objects.get(name=BASE).summary_sources["concurrency"] == summary.NOT_SAID


def test_the_o_met_blocks_win_over_a_name_that_disagrees_and_the_manifest_does_not_overrule_them(
    corpus: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "b"
    folder.mkdir()
    _table(corpus, folder, "qps.abs.all.dop8.tsv")
    _table(corpus, folder, "o.met.all.dop8", source="o.met.all")
    (folder / "benchdash.toml").write_text(f'server = "c8r32"\nworkload = "{WORKLOAD}"\nconcurrency = 2\n')
    report = _import(folder, "met.tar.gz")
    base = Run.objects.get(name=BASE)
    # The o.met blocks are the sb.met files' own names (…pk1.dop1): the results are at 1, with their metrics.
    assert _dops(base) == {1}
    assert Result.objects.get(run=base, microbenchmark__test="point-query", microbenchmark__range_size=100).cpu_o
    # The blocks whose o/s is the table's QPS are the table's own: their concurrency is the table's.
    assert base.summary_sources["concurrency"] == summary.FROM_MET_QPS
    text = " ".join(report.warnings)
    assert "concurrency 8 from the table's file name (dop8), but 1 from the o.met blocks whose o/s is" in text
    assert "concurrency 2 of the manifest or upload not used" in text


def test_tables_in_the_scripts_folders_beside_their_run_directories_are_recognised_as_their_copies(
    corpus: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "b"
    dop1 = folder / "pn53" / "dop1"
    dop1.mkdir(parents=True)
    shutil.copytree(corpus / SMALL / BASE, dop1 / BASE)
    _table(corpus, dop1)
    report = _import(folder, "both.tar.gz")
    raw = Run.objects.get(name=BASE, from_summary=False)
    copies = Run.objects.filter(from_summary=True)
    # The folder's server name stood in for a server nothing named: the directory's is taken, so its copy is known.
    assert not Run.objects.filter(name=BASE, from_summary=True).exists()
    assert any(w.startswith(f"{BASE}: in the summary tables and as a run directory") for w in report.warnings)
    assert {run.server_id for run in copies} == {raw.server_id}
    assert {run.workload_id for run in copies} == {raw.workload_id}
    assert copies.first().summary_sources["server"] == BESIDE


def test_the_same_table_at_two_concurrencies_is_two_sets_of_runs(corpus: Path, tmp_path: Path) -> None:
    for dop in (1, 16):
        folder = tmp_path / f"c{dop}"
        folder.mkdir()
        _table(corpus, folder)
        (folder / "benchdash.toml").write_text(f'server = "c8r32"\nworkload = "{WORKLOAD}"\nconcurrency = {dop}\n')
        _import(folder, f"c{dop}.tar.gz")
    assert Run.objects.filter(name=BASE).count() == 2
    assert sorted(dop for run in Run.objects.filter(name=BASE) for dop in _dops(run)) == [1, 16]


def test_a_concurrency_in_the_manifest_must_be_a_client_count(corpus: Path, tmp_path: Path) -> None:
    from runs.importer import ImportFailed

    folder = tmp_path / "b"
    folder.mkdir()
    _table(corpus, folder)
    (folder / "benchdash.toml").write_text("concurrency = 0\n")
    with pytest.raises(ImportFailed, match="concurrency"):
        _import(folder, "bad.tar.gz")
