"""Compressed members: older result directories gzip every file; any member may be gzip, xz or zstd.

Real runs of the corpus are compressed member by member at test time (nothing compressed is committed) and
must import to exactly the same results as the plain files.
"""

from __future__ import annotations

import gzip
import io
import lzma
import tarfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import zstandard

from runs.bundle import BundleError, Limits, plain_name, read_bundle
from runs.importer import parse_bundle, submit_and_import
from runs.models import Bundle, Result

RUNS = ("x.my5651_rel_o2nofp.z12a_c8r32.pk1", "x.my8406_rel_o2nofp.z12a_c8r32.pk1")
COMPRESS: dict[str, tuple[str, Callable[[bytes], bytes]]] = {
    "gzip": (".gz", gzip.compress),
    "xz": (".xz", lzma.compress),
    "zstd": (".zst", zstandard.ZstdCompressor().compress),
}


def tar_of(files: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mtime = 1_700_000_000
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def corpus_runs(corpus: Path) -> dict[str, bytes]:
    """Every file of two real MySQL run directories, by its path in the bundle."""
    small = corpus / "sysbench-mysql-small"
    return {f"{run}/{path.name}": path.read_bytes() for run in RUNS for path in sorted((small / run).iterdir())}


def compressed(files: dict[str, bytes], how: str, *, keep_names: bool = False) -> dict[str, bytes]:
    suffix, compress = COMPRESS[how]
    return {name if keep_names else name + suffix: compress(data) for name, data in files.items()}


def cells(data: bytes) -> dict[tuple[str, str, int, int], dict[str, Any]]:
    parsed = parse_bundle(data, name="b.tar.gz")
    return {(run.name, r["test"], r["range_size"], r["dop"]): r for run in parsed.runs for r in run.results}


@pytest.mark.parametrize("how", sorted(COMPRESS))
def test_every_cell_of_real_runs_with_compressed_members_equals_the_plain_import(corpus: Path, how: str) -> None:
    files = corpus_runs(corpus)
    plain = cells(tar_of(files))

    assert len(plain) > 70
    assert cells(tar_of(compressed(files, how))) == plain


def test_compression_is_recognised_by_content_when_the_name_has_no_suffix(corpus: Path) -> None:
    files = corpus_runs(corpus)

    assert cells(tar_of(compressed(files, "gzip", keep_names=True))) == cells(tar_of(files))


def test_a_gzipped_run_directory_imports_into_the_database_cell_for_cell(corpus: Path, db: None) -> None:
    files = corpus_runs(corpus)
    expected = cells(tar_of(files))

    report = submit_and_import(tar_of(compressed(files, "gzip")), name="old.tar.gz", source=Bundle.Source.COMMAND)

    assert len(report.runs) == len(RUNS)
    stored = Result.objects.select_related("run", "microbenchmark")
    assert stored.count() == len(expected)
    for result in stored:
        cell = expected[(result.run.name, result.microbenchmark.test, result.microbenchmark.range_size, result.dop)]
        for field in ("qps", "tps", "lat_avg_ms", "lat_pct_ms", "cpu_o", "cs_o", "r_o", "rkb_o", "wkb_o", "o_s"):
            assert getattr(result, field) == cell.get(field), (result, field)


def test_a_member_and_its_gzipped_copy_are_the_same_file_twice() -> None:
    files = {"x.a.c.pk1/sb.o.a.dop1": b"plain", "x.a.c.pk1/sb.o.a.dop1.gz": gzip.compress(b"packed")}

    with pytest.raises(BundleError, match=r"appears twice in the same run directory \(as 'sb\.o\.a\.dop1'"):
        read_bundle(tar_of(files))


def test_compressed_result_files_outside_run_directories_are_recognised_without_their_suffix(corpus: Path) -> None:
    report = corpus / "dbbench"
    summary = next(report.rglob("sum*.txt"))
    bundle = read_bundle(tar_of({f"res/{summary.name}.xz": lzma.compress(summary.read_bytes())}))

    assert [f.path for f in bundle.files_of("db_bench")] == [f"res/{summary.name}"]
    assert bundle.files_of("db_bench")[0].data == summary.read_bytes()


def test_a_gzipped_member_that_unpacks_past_the_one_file_limit_is_refused_as_a_bomb() -> None:
    bomb = gzip.compress(bytes(8 * 1024 * 1024))
    assert len(bomb) < 10_000

    with pytest.raises(
        BundleError,
        match=r"member 'x\.a\.c\.pk1/sb\.o\.a\.dop1\.gz' is gzip-compressed and unpacks to more than the "
        r"1,048,576-byte limit for one file \(compression bomb\?\)",
    ):
        read_bundle(tar_of({"x.a.c.pk1/sb.o.a.dop1.gz": bomb}), limits=Limits(max_member_bytes=1024 * 1024))


def test_compressed_members_count_their_unpacked_size_against_the_bundle_limit() -> None:
    files = {f"x.a.c.pk1/sb.o.t{n}.dop1.zst": zstandard.ZstdCompressor().compress(bytes(600_000)) for n in range(4)}

    with pytest.raises(BundleError, match=r"over the 2,000,000-byte limit \(compression bomb\?\)"):
        read_bundle(tar_of(files), limits=Limits(max_unpacked_bytes=2_000_000))


def test_a_damaged_compressed_member_is_named_in_the_error() -> None:
    damaged = gzip.compress(b"sysbench output\n" * 100)[:-12]

    with pytest.raises(BundleError, match=r"'x\.a\.c\.pk1/sb\.o\.a\.dop1\.gz' is gzip-compressed but cannot be"):
        read_bundle(tar_of({"x.a.c.pk1/sb.o.a.dop1.gz": damaged}))


@pytest.mark.parametrize(
    ("name", "plain"),
    [
        ("sb.o.scan.range100.pk1.dop8.gz", "sb.o.scan.range100.pk1.dop8"),
        ("sb.met.insert.range100.pk1.dop1.zst", "sb.met.insert.range100.pk1.dop1"),
        ("report.tsv.xz", "report.tsv"),
        ("x.pg174.cfg.pk1.tar.gz", "x.pg174.cfg.pk1.tar.gz"),
        ("results.tgz", "results.tgz"),
        (".gz", ".gz"),
    ],
)
def test_names_are_matched_without_a_compression_suffix_but_archives_keep_theirs(name: str, plain: str) -> None:
    assert plain_name(name) == plain
