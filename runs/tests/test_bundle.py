"""runs.bundle: real corpus bundles in every format, and hostile archives built in memory."""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import random
import re
import stat
import struct
import tarfile
import zipfile
import zlib
from collections.abc import Callable, Iterable
from pathlib import Path

import pytest
import zstandard

from runs.bundle import BundleContents, BundleError, Limits, read_bundle

PG_TARBALLS = (
    "x.pg1023_o2nofp.x10a_wm1_c32r128.pk1.tar.gz",
    "x.pg1122_o2nofp.x10a_wm1_c32r128.pk1.tar.gz",
    "x.pg174_o2nofp.x10a_wm1_c32r128.pk1.tar.gz",
)
RESULT_PREFIXES = ("sb.o.", "sb.met.", "sb.r.", "sb.prepare.", "conf.diff", "my.cnf", "sb.gv.", "sb.pg.conf.", "sb.hp.")
NO_RUNS = re.escape("no run directories (x.<build>.<config>.pk<0|1>) found")
RUN = "x.my8044_rel_o2nofp.z12a_c8r32.pk1"


def keep_sb_o(name: str) -> bool:
    return name.startswith("sb.o.")


def keep_results(name: str) -> bool:
    return name.startswith(RESULT_PREFIXES)


# -- builders ----------------------------------------------------------------


def tar_bytes(members: Iterable[tuple[tarfile.TarInfo, bytes | None]], fmt: int = tarfile.GNU_FORMAT) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=fmt, encoding="utf-8", errors="surrogateescape") as tf:
        for info, data in members:
            tf.addfile(info, io.BytesIO(data) if data is not None else None)
    return buf.getvalue()


def file_member(name: str, data: bytes = b"payload\n", mtime: int = 1_700_000_000) -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mtime = mtime
    return info, data


def special_member(name: str, kind: bytes, target: str = "") -> tuple[tarfile.TarInfo, None]:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = target
    return info, None


def tar_of_dir(root: Path, prefix: str = "") -> bytes:
    """The directory's contents as a plain tar, each path under ``prefix``."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tf:
        for path in sorted(root.iterdir()):
            tf.add(path, arcname=prefix + path.name)
    return buf.getvalue()


def zip_of_dir(root: Path) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in sorted(root.rglob("*")):
            zf.write(path, path.relative_to(root).as_posix())
    return buf.getvalue()


def tar_of_files(files: dict[str, bytes]) -> bytes:
    return tar_bytes(file_member(name, data) for name, data in files.items())


def zip_of_files(files: dict[str, bytes], compression: int = zipfile.ZIP_DEFLATED) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression) as zf:
        for name, data in files.items():
            zf.writestr(name, data)
    return buf.getvalue()


def zstd(data: bytes) -> bytes:
    return zstandard.ZstdCompressor(level=1).compress(data)


def gzip_stream() -> Callable[[bytes | None], bytes]:
    """A gzip writer fed piece by piece, so a bomb is built without holding it whole."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)

    def feed(piece: bytes | None) -> bytes:
        return compressor.flush() if piece is None else compressor.compress(piece)

    return feed


def read_corpus_run(run_dir: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in run_dir.iterdir() if path.is_file()}


# -- fixtures ----------------------------------------------------------------


@pytest.fixture(scope="module")
def pg_dir(corpus: Path) -> Path:
    return corpus / "sysbench-pg-tarballs"


@pytest.fixture(scope="module")
def mysql_dir(corpus: Path) -> Path:
    return corpus / "sysbench-mysql-small"


@pytest.fixture(scope="module")
def mysql_tar(mysql_dir: Path) -> bytes:
    return tar_of_dir(mysql_dir)


@pytest.fixture(scope="module")
def mysql_runs(mysql_dir: Path) -> dict[str, dict[str, bytes]]:
    return {path.name: read_corpus_run(path) for path in sorted(mysql_dir.glob("x.*"))}


# -- real bundles --------------------------------------------------------------


@pytest.mark.parametrize("tarball", PG_TARBALLS)
def test_each_real_pg_tarball_reads_as_one_run_with_its_sb_o_files(pg_dir: Path, tarball: str) -> None:
    path = pg_dir / tarball
    with tarfile.open(path) as tf:
        listed = {info.name.split("/")[-1]: info for info in tf.getmembers() if info.isfile()}
        expected_sb_o = {name for name in listed if name.startswith("sb.o.")}
        one = sorted(expected_sb_o)[0]
        one_data = tf.extractfile(listed[one]).read()  # type: ignore[union-attr]

    bundle = read_bundle(path, wanted=keep_sb_o)

    run_name = tarball.removesuffix(".tar.gz")
    assert bundle.format == "tar.gz"
    assert [(run.path, run.name) for run in bundle.runs] == [(run_name, run_name)]
    run = bundle.runs[0]
    assert len(expected_sb_o) == 48
    assert set(run.files) == expected_sb_o
    assert run.files[one] == one_data
    assert run.mtimes[one] == listed[one].mtime
    assert sorted(run.ignored) == sorted(set(listed) - expected_sb_o)
    assert bundle.members == len(listed) + 1  # the files and the run dir itself
    assert bundle.unpacked_bytes == sum(info.size for info in listed.values())
    assert bundle.ignored == []
    assert bundle.ignored_count == 0


def test_the_bundle_name_defaults_to_the_file_name_and_can_be_given(pg_dir: Path, tmp_path: Path) -> None:
    truncated = tmp_path / "cut.tar.gz"
    truncated.write_bytes((pg_dir / PG_TARBALLS[0]).read_bytes()[:5000])
    with pytest.raises(BundleError, match=r"^cut\.tar\.gz: "):
        read_bundle(truncated)
    with pytest.raises(BundleError, match=r"^upload\.tgz: "):
        read_bundle(truncated, name="upload.tgz")
    with pytest.raises(BundleError, match=r"^bundle: "):
        read_bundle(truncated.read_bytes())


def test_a_real_pg_tarball_keeps_only_the_result_files_asked_for(pg_dir: Path) -> None:
    # What is kept, not how long it took (a timed assertion fails on a loaded machine): the files the parsers do
    # not read are listed as ignored, never held.
    for tarball in PG_TARBALLS:
        everything = read_bundle(pg_dir / tarball).runs[0]
        run = read_bundle(pg_dir / tarball, wanted=keep_results).runs[0]
        assert len(run.files) > 300
        assert set(run.files) == {name for name in everything.files if keep_results(name)}
        assert all(run.files[name] == everything.files[name] for name in run.files)
        left_out = set(everything.files) - set(run.files)
        assert left_out and left_out <= set(run.ignored)


def test_the_mysql_directory_reads_as_nine_runs(mysql_dir: Path, mysql_runs: dict[str, dict[str, bytes]]) -> None:
    bundle = read_bundle(mysql_dir)

    assert bundle.format == "directory"
    assert len(bundle.runs) == 9
    assert {run.name: run.files for run in bundle.runs} == mysql_runs
    assert [run.path for run in bundle.runs] == sorted(mysql_runs)
    sample = mysql_dir / RUN / "sb.o.point-query.range100.pk1.dop1"
    run = next(run for run in bundle.runs if run.name == RUN)
    assert run.mtimes[sample.name] == sample.stat().st_mtime
    # The relative tables are the summary suite's too: it lists them as derived (not read) with their reason.
    assert [f.path for f in bundle.files_of("sysbench-summary")] == [
        "o.met.all",
        "qps.abs.all.csv",
        "qps.abs.all.tsv",
        "qps.rel.all.csv",
        "qps.rel.all.tsv",
    ]
    assert bundle.ignored == []
    assert bundle.ignored_count == 0


@pytest.mark.parametrize(
    ("fmt", "pack"),
    [
        ("tar", lambda tar: tar),
        ("tar.gz", lambda tar: gzip.compress(tar, compresslevel=1)),
        ("tar.zst", zstd),
        ("tar.bz2", lambda tar: bz2.compress(tar, compresslevel=1)),
        ("tar.xz", lambda tar: lzma.compress(tar, preset=0)),
    ],
)
def test_the_mysql_runs_read_the_same_from_every_tar_format(
    mysql_tar: bytes, mysql_runs: dict[str, dict[str, bytes]], fmt: str, pack: Callable[[bytes], bytes]
) -> None:
    bundle = read_bundle(pack(mysql_tar), name=f"mysql.{fmt}")

    assert bundle.format == fmt
    assert {run.name: run.files for run in bundle.runs} == mysql_runs
    assert bundle.ignored == []  # every table, qps.rel.all.* included, is the summary suite's to read or list


def test_the_mysql_runs_read_the_same_from_a_zip(mysql_dir: Path, mysql_runs: dict[str, dict[str, bytes]]) -> None:
    bundle = read_bundle(zip_of_dir(mysql_dir), name="mysql.zip")

    assert bundle.format == "zip"
    assert {run.name: run.files for run in bundle.runs} == mysql_runs


def test_a_zstd_bundle_written_as_several_frames_reads_whole(
    mysql_tar: bytes, mysql_runs: dict[str, dict[str, bytes]]
) -> None:
    # Parallel compressors (pzstd, zstd -T) and `cat a.zst b.zst` produce several frames.
    cut = len(mysql_tar) // 3
    data = zstd(mysql_tar[:cut]) + zstd(mysql_tar[cut:])

    bundle = read_bundle(data)

    assert bundle.format == "tar.zst"
    assert {run.name: run.files for run in bundle.runs} == mysql_runs


def test_the_format_comes_from_the_content_not_the_file_name(mysql_tar: bytes, tmp_path: Path) -> None:
    misnamed = tmp_path / "results.zip"
    misnamed.write_bytes(zstd(mysql_tar))

    assert read_bundle(misnamed).format == "tar.zst"


def test_run_dirs_under_extra_folders_keep_their_path(mysql_dir: Path) -> None:
    bundle = read_bundle(gzip.compress(tar_of_dir(mysql_dir, prefix="dop1/"), compresslevel=1))

    assert len(bundle.runs) == 9
    assert f"dop1/{RUN}" in [run.path for run in bundle.runs]
    assert all(run.path == f"dop1/{run.name}" for run in bundle.runs)
    # The author's summary tables beside them are the summary suite's files (it lists the relative ones as derived).
    assert [f.path for f in bundle.files_of("sysbench-summary")] == [
        "dop1/o.met.all",
        "dop1/qps.abs.all.csv",
        "dop1/qps.abs.all.tsv",
        "dop1/qps.rel.all.csv",
        "dop1/qps.rel.all.tsv",
    ]


def test_a_tar_of_the_three_pg_tarballs_reads_as_three_runs(pg_dir: Path) -> None:
    outer = tar_bytes(file_member(f"uploads/{name}", (pg_dir / name).read_bytes()) for name in PG_TARBALLS)

    bundle = read_bundle(outer, name="all.tar", wanted=keep_sb_o)

    assert bundle.format == "tar"
    assert [run.path for run in bundle.runs] == [f"uploads/{name.removesuffix('.tar.gz')}" for name in PG_TARBALLS]
    assert [len(run.files) for run in bundle.runs] == [48, 48, 48]
    assert bundle.members == 3 + 3 * 1313


def test_a_pg_tarball_inside_a_zip_is_opened_too(pg_dir: Path) -> None:
    outer = zip_of_files({PG_TARBALLS[2]: (pg_dir / PG_TARBALLS[2]).read_bytes()}, zipfile.ZIP_STORED)

    bundle = read_bundle(outer, wanted=keep_sb_o)

    assert bundle.format == "zip"
    assert [run.name for run in bundle.runs] == [PG_TARBALLS[2].removesuffix(".tar.gz")]
    assert len(bundle.runs[0].files) == 48


def test_nested_archives_in_a_directory_source_are_opened(mysql_tar: bytes, tmp_path: Path) -> None:
    (tmp_path / "mysql.zip").write_bytes(zip_of_files({f"{RUN}/sb.o.x": b"1"}))
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "mysql.tar.zst").write_bytes(zstd(mysql_tar))

    bundle = read_bundle(tmp_path, wanted=keep_sb_o)

    assert RUN in [run.path for run in bundle.runs]
    assert f"other/{RUN}" in [run.path for run in bundle.runs]
    assert len(bundle.runs) == 10


def test_the_same_run_from_two_nested_archives_is_refused(pg_dir: Path) -> None:
    data = (pg_dir / PG_TARBALLS[0]).read_bytes()
    outer = tar_bytes([file_member("a.tar.gz", data), file_member("b.tar.gz", data)])

    with pytest.raises(BundleError) as caught:
        read_bundle(outer, name="twice.tar", wanted=keep_sb_o)

    message = str(caught.value)
    assert "'x.pg1023_o2nofp.x10a_wm1_c32r128.pk1' appears twice" in message
    assert "'a.tar.gz'" in message
    assert "'b.tar.gz'" in message


def test_an_archive_nested_two_levels_deep_is_ignored_and_counted() -> None:
    innermost = tar_of_files({"x.deep.c1.pk1/sb.o.a": b"1"})
    middle = tar_of_files({"x.mid.c1.pk1/sb.o.a": b"1", "inner.tar": innermost})
    outer = tar_of_files({"middle.tar": middle})

    bundle = read_bundle(outer)

    assert [run.name for run in bundle.runs] == ["x.mid.c1.pk1"]
    assert bundle.ignored == ["middle.tar/inner.tar"]
    assert bundle.ignored_count == 1


def test_manifests_are_found_by_folder() -> None:
    files = {
        "benchdash.toml": b"server = 'a'\n",
        "dop1/benchdash.toml": b"server = 'b'\n",
        "dop1/x.my8044_rel.c8.pk1/sb.o.a": b"1",
    }

    bundle = read_bundle(tar_of_files(files), wanted=keep_sb_o)

    assert bundle.manifests == {"": b"server = 'a'\n", "dop1": b"server = 'b'\n"}
    assert bundle.ignored == []


def test_files_in_sub_folders_of_a_run_dir_and_unwanted_files_are_listed_as_ignored() -> None:
    files = {
        "r/x.a.c.pk0/sb.o.one": b"1",
        "r/x.a.c.pk0/sb.vm.one": b"2",
        "r/x.a.c.pk0/old/sb.o.one": b"3",
        "r/notes.txt": b"4",
    }

    bundle = read_bundle(zip_of_files(files), wanted=keep_sb_o)

    (run,) = bundle.runs
    assert (run.path, run.name) == ("r/x.a.c.pk0", "x.a.c.pk0")
    assert run.files == {"sb.o.one": b"1"}
    assert sorted(run.ignored) == ["old/sb.o.one", "sb.vm.one"]
    assert bundle.ignored == ["r/notes.txt"]


def test_unwanted_members_are_never_read() -> None:
    data = bytearray(zip_of_files({"x.a.c.pk1/sb.o.a": b"1", "x.a.c.pk1/sb.vm.big": b"A" * 1000}, zipfile.ZIP_STORED))
    # Damage the unwanted member's bytes: reading it would fail its CRC check.
    at = data.index(b"A" * 1000)
    data[at : at + 4] = b"BBBB"

    bundle = read_bundle(bytes(data), wanted=keep_sb_o)
    assert bundle.runs[0].files == {"sb.o.a": b"1"}

    with pytest.raises(BundleError, match=r"truncated or corrupt.*CRC"):
        read_bundle(bytes(data))


def test_the_ignored_list_is_capped_but_every_skipped_member_is_counted(monkeypatch: pytest.MonkeyPatch) -> None:
    # A cap below the 1,005 members, to see what happens past it without 20,000 members.
    monkeypatch.setattr("runs.bundle.IGNORED_LIST_CAP", 1000)
    files = {f"loose/{n:04}.txt": b"" for n in range(1005)} | {"x.a.c.pk1/sb.o.a": b"1"}

    bundle = read_bundle(tar_of_files(files))

    assert len(bundle.ignored) == 1000
    assert bundle.ignored_count == 1005


# -- hostile names -----------------------------------------------------------


@pytest.mark.parametrize("name", ["x.a.c.pk1/../../etc/passwd", "../x.a.c.pk1/sb.o.a", "x.a.c.pk1/..\\..\\sb.o.a"])
def test_it_rejects_path_traversal(name: str) -> None:
    with pytest.raises(BundleError, match=r"^evil\.tar: member .* has a '\.\.' component \(path traversal"):
        read_bundle(tar_bytes([file_member(name)]), name="evil.tar")


@pytest.mark.parametrize("name", ["/etc/x.a.c.pk1/sb.o.a", "C:\\x.a.c.pk1\\sb.o.a", "\\\\host\\share\\x"])
def test_it_rejects_absolute_paths(name: str) -> None:
    with pytest.raises(BundleError, match="is an absolute path") as caught:
        read_bundle(zip_of_files({name: b"1"}))
    assert repr(name) in str(caught.value)


def test_it_rejects_a_nul_in_a_name() -> None:
    info, data = file_member("x.a.c.pk1/sb.o.a")
    info.pax_headers = {"path": "x.a.c.pk1/sb.o.a\x00.sh"}

    with pytest.raises(BundleError, match=r"'x\.a\.c\.pk1/sb\.o\.a\\x00\.sh' has a NUL character"):
        read_bundle(tar_bytes([(info, data)], fmt=tarfile.PAX_FORMAT))


def test_it_rejects_control_characters_in_a_name() -> None:
    with pytest.raises(BundleError, match=r"'x\.a\.c\.pk1/sb\.o\\x1b\[2J' has a control character"):
        read_bundle(tar_bytes([file_member("x.a.c.pk1/sb.o\x1b[2J")]))


def test_it_rejects_non_utf8_names_in_a_tar() -> None:
    with pytest.raises(BundleError, match=r"b'x\.a\.c\.pk1/caf\\xe9' has a name that is not valid UTF-8"):
        read_bundle(tar_bytes([file_member("x.a.c.pk1/caf\udce9")]))


@pytest.mark.parametrize("utf8_flag", [False, True])
def test_it_rejects_non_utf8_names_in_a_zip(utf8_flag: bool) -> None:
    data = bytearray(zip_of_files({"x.a.c.pk1/caf?": b"1"}).replace(b"caf?", b"caf\xe9"))
    if utf8_flag:
        data[6] |= 0x08  # general-purpose flag bit 11, in the local header...
        data[data.index(b"PK\x01\x02") + 9] |= 0x08  # ...and in the central directory

    with pytest.raises(BundleError, match=r"caf\\xe9.*not valid UTF-8|not valid UTF-8.*caf\\xe9"):
        read_bundle(bytes(data))


def test_it_rejects_names_that_are_too_deep() -> None:
    name = "/".join(["d"] * 70) + "/x.a.c.pk1/sb.o.a"
    with pytest.raises(BundleError, match="is 72 levels deep, over the limit of 64"):
        read_bundle(tar_bytes([file_member(name)]))
    with pytest.raises(BundleError, match="is 4 levels deep, over the limit of 3"):
        read_bundle(tar_bytes([file_member("a/b/x.a.c.pk1/sb.o.a")]), limits=Limits(max_depth=3))


def test_it_rejects_names_that_are_too_long() -> None:
    name = "x.a.c.pk1/" + "n" * 100
    with pytest.raises(BundleError, match="has a 110-byte name, over the 64-byte limit"):
        read_bundle(tar_bytes([file_member(name)]), limits=Limits(max_name_length=64))


# -- hostile member types ----------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "problem"),
    [
        (tarfile.SYMTYPE, "is a symbolic link"),
        (tarfile.LNKTYPE, "is a hard link"),
        (tarfile.CHRTYPE, "is a character device"),
        (tarfile.BLKTYPE, "is a block device"),
        (tarfile.FIFOTYPE, "is a FIFO"),
    ],
)
def test_it_rejects_links_devices_and_fifos_in_a_tar(kind: bytes, problem: str) -> None:
    members = [file_member("x.a.c.pk1/sb.o.a"), special_member("x.a.c.pk1/sb.o.b", kind, "/etc/passwd")]

    with pytest.raises(BundleError, match=rf"^t\.tar: member 'x\.a\.c\.pk1/sb\.o\.b' {problem}"):
        read_bundle(tar_bytes(members), name="t.tar")


def test_it_rejects_a_symlink_in_a_zip() -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        link = zipfile.ZipInfo("x.a.c.pk1/sb.o.a")
        link.create_system = 3
        link.external_attr = (stat.S_IFLNK | 0o777) << 16
        zf.writestr(link, "/etc/passwd")

    with pytest.raises(BundleError, match=r"'x\.a\.c\.pk1/sb\.o\.a' is a symbolic link"):
        read_bundle(buf.getvalue())


def test_it_rejects_a_symlink_in_a_directory_source(tmp_path: Path) -> None:
    run = tmp_path / "x.a.c.pk1"
    run.mkdir()
    (run / "sb.o.a").write_bytes(b"1")
    (run / "sb.o.b").symlink_to("/etc/passwd")

    with pytest.raises(BundleError, match=r"entry 'x\.a\.c\.pk1/sb\.o\.b' is a symbolic link"):
        read_bundle(tmp_path, name="results")


def test_it_rejects_a_fifo_in_a_directory_source(tmp_path: Path) -> None:
    run = tmp_path / "x.a.c.pk1"
    run.mkdir()
    os.mkfifo(run / "sb.o.pipe")

    with pytest.raises(BundleError, match=r"^results: entry 'x\.a\.c\.pk1/sb\.o\.pipe' is a FIFO"):
        read_bundle(tmp_path, name="results")


def test_it_rejects_duplicate_names_in_a_zip() -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("x.a.c.pk1/sb.o.a", b"good")
        with pytest.warns(UserWarning, match="Duplicate name"):
            zf.writestr("x.a.c.pk1/sb.o.a", b"evil")

    with pytest.raises(BundleError, match=r"'x\.a\.c\.pk1/sb\.o\.a' appears twice in the zip"):
        read_bundle(buf.getvalue())


def test_it_rejects_the_same_file_twice_in_a_tar_run_dir() -> None:
    members = [file_member("x.a.c.pk1/sb.o.a", b"good"), file_member("./x.a.c.pk1/sb.o.a", b"evil")]

    with pytest.raises(BundleError, match="appears twice in the same run directory"):
        read_bundle(tar_bytes(members))


# -- sizes and bombs ---------------------------------------------------------


def test_it_rejects_a_header_claiming_5_gb_before_reading_the_data() -> None:
    huge = tarfile.TarInfo("x.a.c.pk1/sb.o.zeros")
    huge.size = 5 * 1024**3
    # Only the header is there: were the 5 GB read, this would be a "truncated" error instead.
    bomb = gzip.compress(huge.tobuf(tarfile.GNU_FORMAT))

    with pytest.raises(BundleError, match=r"5,368,709,120 bytes, over the 4,294,967,296-byte limit \(compression bomb"):
        read_bundle(bomb, name="bomb.tar.gz")


def test_it_rejects_a_real_stream_of_zeros_past_the_unpacked_limit() -> None:
    zeros = tarfile.TarInfo("x.a.c.pk1/sb.vm.zeros")
    zeros.size = 8 * 1024**2
    packer = gzip_stream()
    bomb = packer(zeros.tobuf(tarfile.GNU_FORMAT)) + b"".join(packer(bytes(1024**2)) for _ in range(8)) + packer(None)
    assert len(bomb) < 64 * 1024

    with pytest.raises(BundleError, match="over the 4,000,000-byte limit"):
        read_bundle(bomb, limits=Limits(max_unpacked_bytes=4_000_000), wanted=keep_sb_o)


def test_it_rejects_a_wanted_member_over_the_one_file_limit_before_reading_it() -> None:
    big = tarfile.TarInfo("x.a.c.pk1/sb.o.big")
    big.size = 100 * 1024**2

    with pytest.raises(BundleError, match=r"'x\.a\.c\.pk1/sb\.o\.big' is 104,857,600 bytes, over the 67,108,864-byte"):
        read_bundle(big.tobuf(tarfile.GNU_FORMAT))


def test_a_big_member_that_is_not_wanted_is_skipped() -> None:
    tar = tar_of_files({"x.a.c.pk1/sb.o.a": b"1", "x.a.c.pk1/sb.vm.big": bytes(5000)})

    bundle = read_bundle(tar, limits=Limits(max_member_bytes=1000), wanted=keep_sb_o)

    assert bundle.runs[0].files == {"sb.o.a": b"1"}
    assert bundle.unpacked_bytes == 5001
    with pytest.raises(BundleError, match=r"'x\.a\.c\.pk1/sb\.vm\.big' is 5,000 bytes, over the 1,000-byte limit"):
        read_bundle(tar, limits=Limits(max_member_bytes=1000))


def test_it_rejects_a_zip_entry_that_unpacks_past_its_small_declared_size() -> None:
    data = bytearray(zip_of_files({"x.a.c.pk1/sb.o.bomb": bytes(100_000)}))
    assert len(data) < 1000
    struct.pack_into("<I", data, 22, 100)  # uncompressed size in the local header
    struct.pack_into("<I", data, data.index(b"PK\x01\x02") + 24, 100)  # ... and in the central directory

    with pytest.raises(BundleError, match=r"unpacks to more than the 10,000-byte limit .*claims 100 bytes"):
        read_bundle(bytes(data), limits=Limits(max_member_bytes=10_000))


def test_it_counts_real_sizes_against_the_unpacked_limit(mysql_dir: Path) -> None:
    with pytest.raises(BundleError, match=r"over the 1,000,000-byte limit \(compression bomb"):
        read_bundle(mysql_dir, limits=Limits(max_unpacked_bytes=1_000_000))


def test_it_rejects_too_many_members(mysql_tar: bytes, mysql_dir: Path) -> None:
    small = Limits(max_members=50)
    with pytest.raises(BundleError, match=r"^m\.tar: has more than 50 members"):
        read_bundle(mysql_tar, name="m.tar", limits=small)
    with pytest.raises(BundleError, match="has more than 50 members"):
        read_bundle(zip_of_dir(mysql_dir), limits=small)
    with pytest.raises(BundleError, match="has more than 50 members"):
        read_bundle(mysql_dir, limits=small)


def test_it_rejects_a_source_over_the_size_limit(mysql_tar: bytes, tmp_path: Path) -> None:
    path = tmp_path / "m.tar"
    path.write_bytes(mysql_tar)
    limits = Limits(max_bytes=len(mysql_tar) - 1)

    with pytest.raises(BundleError, match=rf"^m\.tar: is {len(mysql_tar):,} bytes, over the"):
        read_bundle(path, limits=limits)
    with pytest.raises(BundleError, match="upload limit"):
        read_bundle(mysql_tar, limits=limits)


def test_it_rejects_a_tar_extended_header_too_big_to_buffer() -> None:
    pax = tarfile.TarInfo("././@PaxHeader")
    pax.type = tarfile.XHDTYPE
    pax.size = 2 * 1024**2

    with pytest.raises(BundleError, match=r"truncated or corrupt .*extended header claims 2,097,152 bytes"):
        read_bundle(gzip.compress(pax.tobuf(tarfile.USTAR_FORMAT)))


# -- damaged and foreign data ------------------------------------------------


def test_it_rejects_a_truncated_gzip(pg_dir: Path) -> None:
    data = (pg_dir / PG_TARBALLS[0]).read_bytes()

    with pytest.raises(BundleError, match=r"^half\.tar\.gz: the archive is truncated or corrupt"):
        read_bundle(data[: len(data) // 2], name="half.tar.gz", wanted=keep_sb_o)
    # Only the gzip trailer is missing: every member is complete, the stream is not.
    with pytest.raises(BundleError, match="truncated or corrupt"):
        read_bundle(data[:-4], wanted=keep_sb_o)


def test_it_rejects_a_truncated_zstd(mysql_tar: bytes) -> None:
    data = zstd(mysql_tar)

    with pytest.raises(BundleError, match="truncated or corrupt"):
        read_bundle(data[: len(data) // 2])
    with pytest.raises(BundleError, match="truncated or corrupt"):
        read_bundle(data[:-3])


@pytest.mark.parametrize(("pack", "cut"), [(gzip.compress, 4), (zstd, 3)], ids=["gzip", "zstd"])
def test_damage_after_the_tar_end_marker_is_still_noticed(pack: Callable[[bytes], bytes], cut: int) -> None:
    # Far more padding than tarfile reads ahead, so only reading the stream to its end finds the cut.
    padded = tar_of_files({"x.a.c.pk1/sb.o.a": b"1"}) + bytes(512 * 1024)
    data = pack(padded)
    assert read_bundle(data).runs[0].files == {"sb.o.a": b"1"}

    with pytest.raises(BundleError, match=r"^p: the archive is truncated or corrupt"):
        read_bundle(data[:-cut], name="p")


def test_it_rejects_a_plain_tar_cut_at_a_member_boundary() -> None:
    tar = tar_of_files({"x.a.c.pk1/sb.o.a": b"1" * 700, "x.a.c.pk1/sb.o.b": b"2"})
    with tarfile.open(fileobj=io.BytesIO(tar)) as tf:
        first = tf.getmembers()[0]
    end_of_first = first.offset_data + 1024  # 700 bytes padded to whole blocks

    with pytest.raises(BundleError, match=r"truncated or corrupt .*end-of-archive marker"):
        read_bundle(tar[:end_of_first])


def test_it_rejects_a_corrupt_zip(mysql_dir: Path) -> None:
    data = zip_of_dir(mysql_dir)

    with pytest.raises(BundleError, match=r"^m\.zip: the archive is truncated or corrupt"):
        read_bundle(data[: len(data) // 2], name="m.zip")
    with pytest.raises(BundleError, match="truncated or corrupt"):
        read_bundle(data[:-10])


@pytest.mark.parametrize(
    "data",
    [
        random.Random(7).randbytes(4096),
        b"qps\t1234.5\n" * 100,
        b"",
        b"PK",
    ],
    ids=["random", "text", "empty", "tiny"],
)
def test_it_rejects_data_that_is_not_an_archive(data: bytes) -> None:
    with pytest.raises(BundleError, match=r"^x\.tgz: not a tar, tar\.gz, tar\.bz2, tar\.xz, tar\.zst or zip archive"):
        read_bundle(data, name="x.tgz")


def test_it_rejects_a_compressed_file_that_is_not_a_tar(tmp_path: Path) -> None:
    path = tmp_path / "notes.gz"
    path.write_bytes(gzip.compress(b"just some notes\n" * 100))

    with pytest.raises(BundleError, match=r"^notes\.gz: not a tar.* \(it is gz-compressed but does not hold a tar"):
        read_bundle(path)


def test_an_empty_tar_has_no_run_directories() -> None:
    with pytest.raises(BundleError, match=rf"^empty\.tar: {NO_RUNS}"):
        read_bundle(tar_bytes([]), name="empty.tar")
    with pytest.raises(BundleError, match=NO_RUNS):
        read_bundle(gzip.compress(tar_bytes([])))
    with pytest.raises(BundleError, match=NO_RUNS):
        read_bundle(zip_of_files({}))


def test_a_tar_without_a_run_dir_is_refused() -> None:
    files = {"results/sb.o.point-query": b"1", "x.notarun/sb.o.a": b"2", "x.a.c.pk2/sb.o.a": b"3"}

    with pytest.raises(BundleError, match=rf"^r\.tar: {NO_RUNS}: 'results', 'x\.a\.c\.pk2', 'x\.notarun' hold "):
        read_bundle(tar_of_files(files), name="r.tar")


def test_members_and_unpacked_bytes_count_everything_seen(mysql_tar: bytes, mysql_dir: Path) -> None:
    entries = list(mysql_dir.rglob("*"))
    sizes = sum(path.stat().st_size for path in entries if path.is_file())

    for bundle in (read_bundle(mysql_tar, wanted=keep_sb_o), read_bundle(mysql_dir, wanted=keep_sb_o)):
        assert isinstance(bundle, BundleContents)
        assert bundle.members == len(entries) == 761
        assert bundle.unpacked_bytes == sizes
