"""An import's memory follows the limits on one file, not what the bundle keeps in total.

Kept members go to a spill store (memory up to a budget, then a temporary
file) and are read back one at a time; the stored archive comes out of the
database in slices; overlapping zip entries, the way a tiny zip unpacks to
gigabytes, are refused before anything is unpacked. The memory figures come
from a real ``manage.py import_bundle`` process (its own peak resident size)
and from tracemalloc for the in-process reader.
"""

from __future__ import annotations

import os
import pickle
import sqlite3
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest

from runs import archive_store, importer
from runs import bundle as bundle_module
from runs.bundle import BundleError, read_bundle
from runs.models import Bundle, BundleChunk, Config, Result, Run, RunFile
from runs.parse import wanted
from runs.tests import hostile

ROOT = Path(__file__).resolve().parents[2]
MiB = hostile.MiB
# The process's whole peak: Django and the libraries (~100 MiB) plus one 64 MiB file being read or stored.
# The bundle below keeps 1 GiB of files, which the importer used to hold all at once.
IMPORT_RSS_BOUND = 512 * MiB


def _peak(action: object) -> tuple[object, int]:
    tracemalloc.start()
    try:
        result = action()  # type: ignore[operator]
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_it_refuses_a_zip_whose_entries_overlap_before_unpacking_any_of_them() -> None:
    data = hostile.overlapping_zip(entries=20, kernel_size=8 * MiB)  # 160 MiB of kept files from ~20 KiB

    def read() -> None:
        with pytest.raises(BundleError, match=r"overlaps another entry's data in the zip \(overlapping entries"):
            read_bundle(data, name="overlap.zip", wanted=wanted)

    _none, peak = _peak(read)
    assert peak < 4 * MiB, f"peak {peak / MiB:.1f} MiB: entries were unpacked before the refusal"


def test_it_refuses_overlapping_entries_in_a_zip_nested_in_a_tarball() -> None:
    data = hostile.tgz_of_files({"results/inner.zip": hostile.overlapping_zip(entries=3, kernel_size=MiB)})
    with pytest.raises(BundleError, match=r"in nested archive 'results/inner\.zip', .* overlaps another entry"):
        read_bundle(data, name="outer.tar.gz", wanted=wanted)


def test_a_zip_with_entries_side_by_side_is_not_taken_for_an_overlap() -> None:
    files = {f"{hostile.RUN}/sb.o.point-query.range100.pk1.dop{n}": hostile.sb_o() for n in (1, 2, 4)}
    files[f"{hostile.RUN}/my.cnf"] = b"[mysqld]\n"
    contents = read_bundle(hostile.zip_files(files), name="ok.zip", wanted=wanted)
    assert sorted(contents.runs[0].files) == sorted(name.rsplit("/", 1)[1] for name in files)


def test_kept_files_past_the_memory_budget_come_back_byte_for_byte_from_disk(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(bundle_module, "SPILL_MEMORY_BYTES", 64 * 1024)
    files = {f"{hostile.RUN}/sb.o.t{n}.range100.pk1.dop1": os.urandom(40_000) + hostile.sb_o() for n in range(8)}
    contents = read_bundle(hostile.tgz_of_files(files), name="spill.tar.gz", wanted=wanted)
    run = contents.runs[0]
    assert {name: kept.read() for name, kept in run.files.items()} == {
        name.rsplit("/", 1)[1]: data for name, data in files.items()
    }
    # A parse made in a worker process travels by pickle: the file goes as its bytes.
    kept = run.files["sb.o.t3.range100.pk1.dop1"]
    assert pickle.loads(pickle.dumps(kept)) == files[f"{hostile.RUN}/sb.o.t3.range100.pk1.dop1"]


@pytest.mark.django_db
def test_a_stored_archive_read_back_in_small_slices_imports_the_same_results(
    corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = (corpus / "sysbench-pg-tarballs" / "x.pg1122_o2nofp.x10a_wm1_c32r128.pk1.tar.gz").read_bytes()
    whole = importer.parse_bundle(data, name="pg1122.tar.gz")
    # Thousands of chunks, the last one short: any off-by-one in the offsets breaks the gzip stream.
    monkeypatch.setattr(archive_store, "CHUNK_BYTES", 1000)
    report = importer.submit_and_import(data, name="pg1122.tar.gz", source=Bundle.Source.COMMAND)
    assert len(data) % 1000 != 0
    assert BundleChunk.objects.count() == len(data) // 1000 + 1
    assert [run.results for run in report.runs] == [len(run.results) for run in whole.runs]
    stored = sorted(Result.objects.values_list("microbenchmark__test", "dop", "qps"))
    assert stored == sorted((row["test"], row["dop"], row["qps"]) for run in whole.runs for row in run.results)
    assert sorted(RunFile.objects.values_list("name", "text")) == sorted(
        (name, kept.decode("utf-8", "replace")) for run in whole.runs for (name, _kind, kept) in run.files
    )


# --------------------------------------------------------------------------- a real import process


def _command_env(folder: Path) -> dict[str, str]:
    keep = ("PATH", "HOME", "LANG")
    return {
        **{key: os.environ[key] for key in keep if key in os.environ},
        "DJANGO_SETTINGS_MODULE": "benchdash.settings",
        "BENCHDASH_VAR_DIR": str(folder),
        "TMPDIR": str(folder),
        # As in production: DEBUG's query log would keep a copy of every statement, a 64 MiB file's included.
        "DEBUG": "0",
    }


def _import_process(folder: Path, path: Path) -> tuple[int, str, int]:
    """(exit code, output, peak RSS) of ``manage.py import_bundle path`` against a SQLite file of its own."""
    env = _command_env(folder)
    done = subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput", "-v0"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    log = folder / "output"
    hwm = folder / "peak"
    with log.open("w") as out:
        process = subprocess.Popen(
            [sys.executable, "-c", _REPORTS_ITS_PEAK, str(hwm), "import_bundle", str(path), "--server", "pn53"],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
        try:
            process.wait(timeout=600)  # a stuck import must not hang the suite
        except subprocess.TimeoutExpired:
            process.kill()
            raise
    peak = hwm.read_text()
    hwm.unlink()
    return process.returncode, log.read_text(), int(peak.split()[1]) * 1024


# The command, then its own peak resident size (VmHWM, in kB) written to a file. Not the child's rusage: the
# kernel carries the address space it replaced at exec into ru_maxrss, so a child of a big test process would
# report that process's peak (seen in the full suite: this test's process then "peaked" at the suite's size).
_REPORTS_ITS_PEAK = """
import sys
from django.core.management import execute_from_command_line
peak_file = sys.argv.pop(1)
try:
    execute_from_command_line(["manage.py", *sys.argv[1:]])
finally:
    with open("/proc/self/status") as status, open(peak_file, "w") as out:
        out.write(next(line for line in status if line.startswith("VmHWM:")))
"""


def test_an_import_that_keeps_a_gigabyte_of_files_stays_under_512_mb_and_stores_what_it_keeps(
    tmp_path: Path,
) -> None:
    # A valid run plus 16 sb.gv files (kept: server variables) of 64 MiB: 1 GiB kept, held whole before.
    path = tmp_path / "kept.tar.gz"
    path.write_bytes(hostile.many_big_kept_files(files=16, name="sb.gv.{n}"))
    code, output, peak = _import_process(tmp_path, path)
    assert code == 0, output
    assert f"{hostile.RUN}: MySQL 8.0.44 on pn53, 1 tests, 1 results" in output
    assert peak < IMPORT_RSS_BOUND, f"peak RSS {peak / MiB:.0f} MiB"
    assert not [p.name for p in tmp_path.iterdir() if p.name not in {"kept.tar.gz", "output", "benchdash.sqlite3"}]
    # One copy per kind is stored (the first in name order), whole.
    with sqlite3.connect(tmp_path / "benchdash.sqlite3") as db:
        stored = db.execute("SELECT name, length(text), substr(text, -40) FROM runs_runfile").fetchall()
    assert stored == [("sb.gv.0", 64 * MiB - 4 * 1024, hostile.sb_o().decode()[-40:])]


@pytest.mark.django_db
def test_the_bundle_of_big_kept_files_imports_the_same_qps_as_its_small_twin() -> None:
    # The explain-like lines before the statistics change nothing in what is read.
    big = importer.submit_and_import(
        hostile.many_big_kept_files(files=2, size=2 * MiB), name="big.tar.gz", source=Bundle.Source.COMMAND
    )
    assert [run.results for run in big.runs] == [2]
    assert sorted(Result.objects.values_list("qps", flat=True)) == [14178.15, 14178.15]
    small = importer.parse_bundle(hostile.tgz(hostile.good_run()), name="small.tar.gz")
    assert {row["qps"] for row in small.runs[0].results} == {14178.15}


@pytest.mark.django_db
def test_configs_are_created_in_batches_of_bounded_text_and_shared_by_runs_with_the_same_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(importer, "CONFIG_BATCH_BYTES", 100_000)  # every big config is a batch of its own
    texts = [b"[mysqld]\n" + bytes([65 + n]) * 80_000 + b"\n" for n in range(3)]
    files: dict[str, bytes] = {}
    for n, version in enumerate(("8044", "8043", "8406", "5744")):
        run = f"x.my{version}_rel_o2nofp.z12a_c8r32.pk1"
        files[f"{run}/sb.o.point-query.range100.pk1.dop1"] = hostile.sb_o(qps=f"{1000 + n}")
        files[f"{run}/my.cnf"] = texts[min(n, 2)]  # the last two runs share a config
    importer.submit_and_import(hostile.tgz_of_files(files), name="configs.tar.gz", source=Bundle.Source.COMMAND)
    assert sorted(Config.objects.values_list("text", flat=True)) == sorted(t.decode() for t in texts)
    by_run = dict(Run.objects.values_list("name", "config__text"))
    assert (
        by_run["x.my8406_rel_o2nofp.z12a_c8r32.pk1"]
        == by_run["x.my5744_rel_o2nofp.z12a_c8r32.pk1"]
        == (texts[2].decode())
    )
    assert by_run["x.my8044_rel_o2nofp.z12a_c8r32.pk1"] == texts[0].decode()
