"""A generated corpus of hostile and broken bundles, for the upload API and the import command to refuse.

Every case is built in memory, cheaply: archives that expand to gigabytes are
made from one compressed block repeated (gzip allows concatenated members,
deflate allows full-flush blocks, zstd compresses zeros to almost nothing), so a
5 GiB bomb costs milliseconds to build and a few MiB to hold. Names that would
land outside the import's folder if anything were extracted carry ``MARKER``, so
a test can look for them on disk afterwards (nothing is ever extracted).

Each ``Hostile`` says what the user must be told (``error``, a regular
expression) and, rarely, a smaller limit to use (``settings``) so that the
accumulating checks trip after megabytes instead of gigabytes.
"""

from __future__ import annotations

import gzip
import io
import struct
import tarfile
import uuid
import warnings
import zipfile
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import zstandard

MARKER = f"benchdash-hostile-{uuid.uuid4().hex[:8]}"
RUN = "x.my8044_rel_o2nofp.z12a_c8r32.pk1"
KiB, MiB, GiB = 1024, 1024**2, 1024**3

SB_O = """sysbench --db-driver=mysql --tables=8 --table-size=10000000 --threads=1 --time=300 oltp_point_select run
8 CPUs
sysbench 1.0.20 (using bundled LuaJIT 2.1.0-beta2)

Running the test with following options:
Number of threads: 1

SQL statistics:
    queries performed:
        read:                            4253446
        other:                           0
        total:                           4253446
    transactions:                        4253446 ({tps} per sec.)
    queries:                             4253446 ({qps} per sec.)
    ignored errors:                      0      (0.00 per sec.)
    reconnects:                          0      (0.00 per sec.)

General statistics:
    total time:                          300.0020s
    total number of events:              4253446

Latency (ms):
         min:                                    0.06
         avg:                                    {avg}
         max:                                   12.30
         95th percentile:                        0.08
         sum:                               299051.37
"""

SB_MET = """iostat, vmstat normalized by operation rate
samp\tr/s\trMB/s\tw/s\twMB/s\tr/o\trKB/o\twKB/o\to/s
904\t{rps}\t5.7\t983.0\t35.2\t0.104\t0.414\t2.545\t14169.79

samp\tcs/s\tcpu/s\tcs/o\tcpu/o
948\t300753\t26.0\t21.225\t{cpu_o}
"""


def sb_o(qps: str = "14178.15", tps: str = "14178.15", avg: str = "0.07") -> bytes:
    return SB_O.format(qps=qps, tps=tps, avg=avg).encode()


def sb_met(rps: str = "1467.8", cpu_o: str = "0.001835") -> bytes:
    return SB_MET.format(rps=rps, cpu_o=cpu_o).encode()


@dataclass(frozen=True)
class Hostile:
    id: str
    filename: str
    build: Callable[[], bytes] = field(repr=False)
    error: str
    settings: dict[str, int] = field(default_factory=dict)
    what: str = ""


# --------------------------------------------------------------------------- archive builders


def tar_members(members: Iterable[tuple[tarfile.TarInfo, bytes | None]], fmt: int = tarfile.PAX_FORMAT) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=fmt, encoding="utf-8", errors="surrogateescape") as tar:
        for info, data in members:
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return buffer.getvalue()


def member(
    name: str, data: bytes = b"1\n", kind: bytes = tarfile.REGTYPE, target: str = ""
) -> tuple[tarfile.TarInfo, bytes | None]:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = target
    info.mtime = 1_700_000_000
    if kind == tarfile.REGTYPE:
        info.size = len(data)
        return info, data
    return info, None


def good_run(extra: dict[str, bytes] | None = None, run: str = RUN) -> list[tuple[tarfile.TarInfo, bytes | None]]:
    """A valid run directory (one test), plus ``extra`` files in it: the hostile part rides on a real-looking run."""
    files = {"sb.o.point-query.range100.pk1.dop1": sb_o(), "sb.met.point-query.range100.pk1.dop1": sb_met()}
    files.update(extra or {})
    return [member(f"{run}/{name}", data) for name, data in files.items()]


def tgz(members: Iterable[tuple[tarfile.TarInfo, bytes | None]]) -> bytes:
    return gzip.compress(tar_members(members), mtime=0)


def tgz_of_files(files: dict[str, bytes]) -> bytes:
    """A .tar.gz of regular files (path → bytes), as the benchmark scripts' tarballs are."""
    return tgz(member(name, data) for name, data in files.items())


def zip_files(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in files.items():
            zf.writestr(name, data)
    return buffer.getvalue()


def gzip_repeated(header: bytes, piece: bytes, times: int, trailer: bytes) -> bytes:
    """gzip(header) + gzip(piece) × times + gzip(trailer): one gzip stream of members, as gzip allows."""
    piece_gz = gzip.compress(piece, compresslevel=9, mtime=0)
    return gzip.compress(header, mtime=0) + piece_gz * times + gzip.compress(trailer, mtime=0)


def tar_header(name: str, size: int) -> bytes:
    info = tarfile.TarInfo(name)
    info.size = size
    info.mtime = 1_700_000_000
    return info.tobuf(tarfile.GNU_FORMAT)


def raw_members(members: Iterable[tuple[tarfile.TarInfo, bytes | None]]) -> bytes:
    """Tar members without the end-of-archive blocks, so more can follow in the same stream."""
    return b"".join(
        info.tobuf(tarfile.GNU_FORMAT) + (data or b"") + bytes(-len(data or b"") % 512) for info, data in members
    )


def tar_end(size: int) -> bytes:
    """Padding of the last member to a whole block, then the two zero blocks that end a tar."""
    return bytes(-size % 512) + bytes(1024)


def zip_raw_deflate(name: str, raw: bytes, crc: int, declared_size: int) -> bytes:
    """A one-entry zip around an already deflated stream, its uncompressed size written as given (it may lie)."""
    encoded = name.encode()
    local = struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, 8, 0, 0x21, crc, len(raw), declared_size, len(encoded), 0)
    central = struct.pack(
        "<IHHHHHHIIIHHHHHII",
        0x02014B50,
        20,
        20,
        0,
        8,
        0,
        0x21,
        crc,
        len(raw),
        declared_size,
        len(encoded),
        0,
        0,
        0,
        0,
        0,
        0,
    )
    body = local + encoded + raw
    directory = central + encoded
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 1, 1, len(directory), len(body), 0)
    return body + directory + end


def deflate_repeated(piece: bytes, times: int) -> tuple[bytes, int]:
    """A raw deflate stream of ``piece`` × times, and its CRC-32. Full flushes make each block self-contained."""
    # Level 1, not 9: zipfile decides an entry has ended once all its compressed bytes are fed in, so an
    # entry denser than ~1000:1 would end (and fail its CRC check) before the size limit is reached.
    block_compressor = zlib.compressobj(1, zlib.DEFLATED, -15)
    block = block_compressor.compress(piece) + block_compressor.flush(zlib.Z_FULL_FLUSH)
    end = zlib.compressobj(9, zlib.DEFLATED, -15).flush(zlib.Z_FINISH)
    crc = 0
    for _ in range(times):
        crc = zlib.crc32(piece, crc)
    return block * times + end, crc


def zip_declaring_entries(count: int) -> bytes:
    """A zip whose end records (zip64) claim ``count`` entries: the central directory itself is not there."""
    local = zip_files({f"{RUN}/sb.o.a": b"1"})
    cut = local.index(b"PK\x01\x02")
    body = local[:cut]
    zip64_end = struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 45, 45, 0, 0, count, count, 0, len(body))
    locator = struct.pack("<IIQI", 0x07064B50, 0, len(body), 1)
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0)
    return body + zip64_end + locator + end


def zstd_tar_of_zeros(name: str, size: int) -> bytes:
    """A tar.zst of one member of ``size`` zeros, as concatenated frames (zstd allows them, pzstd writes them)."""
    compressor = zstandard.ZstdCompressor(level=3)
    zeros = compressor.compress(bytes(MiB))
    return compressor.compress(tar_header(name, size)) + zeros * (size // MiB) + compressor.compress(tar_end(size))


# --------------------------------------------------------------------------- the cases


def _five_gib_member() -> bytes:
    size = 5 * GiB
    return gzip_repeated(tar_header(f"{RUN}/sb.vm.zeros", size), bytes(MiB), size // MiB, tar_end(size))


def _many_members_of_real_zeros() -> bytes:
    # A good run, then 64 unwanted members of 8 MiB of real zeros: 512 MiB unpacked from ~0.5 MiB of gzip.
    parts = [gzip.compress(raw_members(good_run()), mtime=0)]
    zeros = gzip.compress(bytes(8 * MiB), compresslevel=9, mtime=0)
    for n in range(64):
        parts.append(gzip.compress(tar_header(f"{RUN}/sb.vm.{n}", 8 * MiB), mtime=0))
        parts.append(zeros)
    parts.append(gzip.compress(bytes(1024), mtime=0))
    return b"".join(parts)


def _one_gib_line_declared() -> bytes:
    size = GiB
    return gzip_repeated(tar_header(f"{RUN}/sb.o.point-query.range100.pk1.dop1", size), b"a" * MiB, 1024, tar_end(size))


def _one_gib_line_in_a_lying_zip() -> bytes:
    raw, crc = deflate_repeated(b"a" * MiB, 1024)
    return zip_raw_deflate(f"{RUN}/sb.o.point-query.range100.pk1.dop1", raw, crc, declared_size=100)


def _million_members() -> bytes:
    header = tar_header("junk/f", 0)
    return gzip_repeated(b"", header * 10_000, 100, bytes(1024))


def _ten_thousand_nested_dirs() -> bytes:
    deep = "/".join(["d"] * 10_000)
    return tar_members([member(f"{deep}/{RUN}/sb.o.a")])


def _deep_dir_members() -> bytes:
    return tar_members([member("/".join(["d"] * depth) + "/", kind=tarfile.DIRTYPE) for depth in range(1, 100)])


def _nul_in_name() -> bytes:
    # A ustar name field ends at its first NUL; a pax "path" record carries the NUL through to the reader.
    info, data = member(f"{RUN}/sb.o.point-query.range100.pk1.dop1", sb_o())
    info.pax_headers = {"path": f"{RUN}/sb.o.point-query.range100.pk1.dop1\x00.sh"}
    return tar_members([(info, data)])


def _duplicate_zip() -> bytes:
    # zipfile writes the duplicate (it only warns); the first copy is innocent, the second would replace it.
    buffer = io.BytesIO()
    with warnings.catch_warnings(), zipfile.ZipFile(buffer, "w") as zf:
        warnings.simplefilter("ignore", UserWarning)
        for data in (sb_o(), sb_o(qps="99999999")):
            zf.writestr(zipfile.ZipInfo(f"{RUN}/sb.o.point-query.range100.pk1.dop1"), data)
    return buffer.getvalue()


def _symlink_zip() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        link = zipfile.ZipInfo(f"{RUN}/sb.o.point-query.range100.pk1.dop1")
        link.create_system = 3
        link.external_attr = (0o120777) << 16
        zf.writestr(link, f"../../{MARKER}")
    return buffer.getvalue()


def _non_utf8_zip_name() -> bytes:
    return zip_files({f"{RUN}/caf?": b"1"}).replace(b"caf?", b"caf\xe9")


def _truncated(data: bytes, keep: float) -> bytes:
    return data[: int(len(data) * keep)]


def _good_tgz() -> bytes:
    return tgz(good_run())


def _one_run(files: dict[str, bytes]) -> Callable[[], bytes]:
    """The good run with some of its files replaced or added."""
    return lambda: tgz(good_run(files))


def cases() -> list[Hostile]:
    """Every hostile bundle, in a fixed order (ids are stable test ids)."""
    point = "sb.o.point-query.range100.pk1.dop1"
    met = "sb.met.point-query.range100.pk1.dop1"
    number = r"a measurement must be a finite number ≥ 0"
    return [
        # --- where members would land
        Hostile(
            "tar-traversal",
            "t.tar.gz",
            lambda: tgz([*good_run(), member(f"{RUN}/../../../{MARKER}")]),
            r"has a '\.\.' component \(path traversal is not allowed\)",
        ),
        Hostile(
            "zip-traversal",
            "t.zip",
            lambda: zip_files({f"../{MARKER}": b"x", f"{RUN}/sb.o.a": b"1"}),
            r"has a '\.\.' component",
        ),
        Hostile(
            "backslash-traversal",
            "t.zip",
            lambda: zip_files({f"{RUN}\\..\\..\\{MARKER}": b"x"}),
            r"has a '\.\.' component",
        ),
        Hostile(
            "tar-absolute",
            "a.tar",
            lambda: tar_members([member(f"/tmp/{MARKER}/{RUN}/sb.o.a")]),
            r"is an absolute path",
        ),
        Hostile(
            "zip-drive-letter",
            "a.zip",
            lambda: zip_files({f"C:\\{MARKER}\\{RUN}\\sb.o.a": b"1"}),
            r"is an absolute path",
        ),
        # --- links and special files
        Hostile(
            "symlink-out",
            "l.tgz",
            lambda: tgz(
                [*good_run(), member(f"{RUN}/sb.o.x.range1.pk1.dop1", kind=tarfile.SYMTYPE, target="/etc/passwd")]
            ),
            r"is a symbolic link",
        ),
        Hostile(
            "symlink-relative-out",
            "l.tgz",
            lambda: tgz([member(f"{RUN}/sb.o.x", kind=tarfile.SYMTYPE, target=f"../../{MARKER}")]),
            r"is a symbolic link",
        ),
        Hostile(
            "hardlink-out",
            "h.tgz",
            lambda: tgz([*good_run(), member(f"{RUN}/my.cnf", kind=tarfile.LNKTYPE, target="/etc/shadow")]),
            r"is a hard link",
        ),
        Hostile("zip-symlink", "l.zip", _symlink_zip, r"is a symbolic link"),
        Hostile(
            "char-device",
            "d.tar",
            lambda: tar_members([member(f"{RUN}/sb.o.zero", kind=tarfile.CHRTYPE)]),
            r"is a character device",
        ),
        Hostile(
            "block-device",
            "d.tar",
            lambda: tar_members([member(f"{RUN}/sda", kind=tarfile.BLKTYPE)]),
            r"is a block device",
        ),
        Hostile(
            "fifo", "f.tar", lambda: tar_members([member(f"{RUN}/sb.o.pipe", kind=tarfile.FIFOTYPE)]), r"is a FIFO"
        ),
        # --- sizes
        Hostile(
            "gzip-bomb-5gib-member",
            "bomb.tar.gz",
            _five_gib_member,
            r"5,368,709,120 bytes, over the 4,294,967,296-byte limit \(compression bomb\?\)",
            what="a 5 MiB gzip that unpacks to 5 GiB of zeros in one member",
        ),
        Hostile(
            "zstd-bomb-5gib-member",
            "bomb.tar.zst",
            lambda: zstd_tar_of_zeros(f"{RUN}/sb.io.zeros", 5 * GiB),
            r"over the 4,294,967,296-byte limit \(compression bomb\?\)",
            what="a zstd stream of 5 GiB of zeros",
        ),
        Hostile(
            "gzip-bomb-accumulated",
            "many.tar.gz",
            _many_members_of_real_zeros,
            r"brings the unpacked size to .* over the 268,435,456-byte limit \(compression bomb\?\)",
            settings={"BUNDLE_MAX_UNPACKED_BYTES": 256 * MiB},
            what="64 members of 8 MiB of real zeros, read until the total passes the limit",
        ),
        Hostile(
            "one-gib-line-declared",
            "line.tar.gz",
            _one_gib_line_declared,
            r"is 1,073,741,824 bytes, over the 67,108,864-byte limit for one file",
            what="an sb.o of one 1 GiB line",
        ),
        Hostile(
            "one-gib-line-lying-zip",
            "line.zip",
            _one_gib_line_in_a_lying_zip,
            # zipfile reads ahead to the size our reader declares and then checks the CRC, so with the default
            # limits this entry is refused as corrupt rather than as too big (runs/bundle.py's _open_zip_member).
            r"unpacks to more than the 67,108,864-byte limit for one file \(its header claims 100 bytes\)"
            r"|truncated or corrupt \(Bad CRC-32",
            what="a zip entry declared as 100 bytes that inflates to a 1 GiB line",
        ),
        Hostile(
            "million-members",
            "many.tar.gz",
            _million_members,
            r"has more than 10,000 members",
            settings={"BUNDLE_MAX_MEMBERS": 10_000},
            what="10^6 empty members (the default limit of 100,000 stops it the same way, in ~4 s)",
        ),
        Hostile(
            "zip-declaring-million-entries",
            "many.zip",
            lambda: zip_declaring_entries(1_000_000),
            r"has more than 100,000 members",
        ),
        Hostile(
            "ten-thousand-nested-dirs",
            "deep.tar",
            _ten_thousand_nested_dirs,
            r"has a 20,\d{3}-byte name, over the 4,096-byte limit",
        ),
        Hostile(
            "ninety-nine-nested-dir-members",
            "deep.tar",
            _deep_dir_members,
            r"is 65 levels deep, over the limit of 64 path components",
        ),
        # --- names and bytes
        Hostile(
            "nul-in-name",
            "n.tar",
            _nul_in_name,
            r"has a NUL character in its name",
        ),
        Hostile(
            "control-in-name",
            "n.tar",
            lambda: tar_members([member(f"{RUN}/sb.o\x1b[2J")]),
            r"has a control character in its name",
        ),
        Hostile(
            "non-utf8-tar-name",
            "n.tar",
            lambda: tar_members([member(f"{RUN}/caf\udce9")], fmt=tarfile.GNU_FORMAT),
            r"has a name that is not valid UTF-8",
        ),
        Hostile("non-utf8-zip-name", "n.zip", _non_utf8_zip_name, r"not valid UTF-8"),
        Hostile(
            "non-utf8-sb-o",
            "c.tgz",
            _one_run({"sb.o.point-query.range100.pk1.dop1": b"\xff\xfe\x80 garbage \xc3\x28\n"}),
            r"no 'queries:' line, so no QPS",
        ),
        Hostile(
            "nul-in-sb-o",
            "c.tgz",
            _one_run({"sb.o.point-query.range100.pk1.dop1": sb_o() + b"\x00" * 4096}),
            r"contains NUL bytes, so it is damaged",
        ),
        Hostile(
            "nul-in-sb-met",
            "c.tgz",
            _one_run({"sb.met.point-query.range100.pk1.dop1": b"\x00" * 512}),
            r"contains NUL bytes",
        ),
        Hostile(
            "non-utf8-manifest",
            "m.tgz",
            lambda: tgz([*good_run(), member("benchdash.toml", b'server = "\xff"\n')]),
            r"benchdash\.toml: not valid TOML",
        ),
        # --- damaged archives
        Hostile("truncated-gzip", "cut.tar.gz", lambda: _truncated(_good_tgz(), 0.5), r"truncated or corrupt"),
        Hostile("gzip-without-trailer", "cut.tar.gz", lambda: _good_tgz()[:-4], r"truncated or corrupt"),
        Hostile(
            "truncated-zip",
            "cut.zip",
            lambda: _truncated(zip_files({f"{RUN}/{point}": sb_o()}), 0.6),
            r"truncated or corrupt",
        ),
        Hostile(
            "truncated-zstd",
            "cut.tar.zst",
            lambda: _truncated(zstandard.ZstdCompressor().compress(tar_members(good_run())), 0.5),
            r"truncated or corrupt",
        ),
        Hostile("zip-duplicate-names", "dup.zip", _duplicate_zip, r"appears twice in the zip"),
        Hostile(
            "tar-duplicate-in-run",
            "dup.tar",
            lambda: tar_members([*good_run(), member(f"./{RUN}/{point}", sb_o("1"))]),
            r"appears twice in the same run directory",
        ),
        Hostile("not-an-archive", "notes.tgz", lambda: b"these are my notes\n" * 100, r"not a tar, tar\.gz"),
        Hostile("empty-file", "empty.tar.gz", lambda: b"", r"not a tar, tar\.gz"),
        Hostile(
            "no-run-directory",
            "none.tar",
            lambda: tar_members([member("results/sb.o.point-query", sb_o())]),
            r"no run directories",
        ),
        # --- numbers
        Hostile(
            "qps-nan", "n.tgz", _one_run({point: sb_o(qps="nan")}), rf"queries per second \(QPS\) is 'nan'; {number}"
        ),
        Hostile(
            "qps-inf", "n.tgz", _one_run({point: sb_o(qps="inf")}), rf"queries per second \(QPS\) is 'inf'; {number}"
        ),
        Hostile("qps-negative", "n.tgz", _one_run({point: sb_o(qps="-14178.15")}), rf"is '-14178\.15'; {number}"),
        Hostile("qps-not-a-number", "n.tgz", _one_run({point: sb_o(qps="1.2.3")}), r"QPS\) is '1\.2\.3', not a number"),
        Hostile(
            "tps-nan", "n.tgz", _one_run({point: sb_o(tps="-nan")}), rf"transactions per second is '-nan'; {number}"
        ),
        Hostile("latency-inf", "n.tgz", _one_run({point: sb_o(avg="inf")}), rf"latency avg is 'inf'; {number}"),
        Hostile("met-nan", "n.tgz", _one_run({met: sb_met(cpu_o="nan")}), rf"cpu/o is 'nan'; {number}"),
        Hostile("met-negative", "n.tgz", _one_run({met: sb_met(rps="-3")}), rf"r/s is '-3'; {number}"),
        Hostile("met-overflow", "n.tgz", _one_run({met: sb_met(rps="1e999")}), rf"r/s is '1e999'; {number}"),
        Hostile(
            "summary-nan",
            "n.tgz",
            _one_run({"sb.r.qps.point-query.range100.pk1": b"nan\tInnoDB point-query range=100\n"}),
            rf"value 1 is 'nan'; {number}",
        ),
        Hostile(
            "count-overflow",
            "n.tgz",
            _one_run(
                {
                    point: sb_o().replace(
                        b"queries:                             4253446", b"queries:     99999999999999999999999"
                    )
                }
            ),
            r"the query count is 99999999999999999999999, more than any run can have",
        ),
        Hostile(
            "dop-overflow",
            "n.tgz",
            _one_run({"sb.o.point-query.range100.pk1.dop99999999999": sb_o()}),
            r"the concurrency in the name is 99999999999, more than any run can have",
        ),
    ]


def _manifest(text: str) -> Callable[[], bytes]:
    return lambda: tgz([*good_run(), member("benchdash.toml", text.encode())])


def cases_beyond_the_archive() -> list[Hostile]:
    """Values that parse but that no column can hold: refused with the key or the part named, not by the database."""
    long_build = "my8044_" + "r" * 250
    return [
        Hostile(
            "overlong-run-dir-name",
            "long.tgz",
            lambda: tgz(good_run(run=f"x.{long_build}.z12a_c8r32.pk1")),
            r"its name is 274 characters long, over the 255 a run can have",
        ),
        Hostile(
            "overlong-version-digits",
            "long.tgz",
            lambda: tgz(good_run(run="x.my" + "8" * 80 + ".z12a_c8r32.pk1")),
            r"its version is \d+ characters long, over the 64 a run can have",
        ),
        Hostile(
            "manifest-overlong-server",
            "m.tgz",
            _manifest(f'server = "{"s" * 300}"\n'),
            r"benchdash\.toml: server: String should have at most 200 characters",
        ),
        Hostile(
            "nul-in-mycnf",
            "c.tgz",
            lambda: tgz(good_run({"my.cnf": b"[mysqld]\x00\ninnodb_buffer_pool_size=1G\n"})),
            r"NUL byte in my\.cnf of run x\.my8044_rel_o2nofp\.z12a_c8r32\.pk1",
        ),
        Hostile(
            "nul-in-manifest-value",
            "m.tgz",
            _manifest('server = "pn\\u000053"\n'),
            r"benchdash\.toml: manifest value 'server' contains a NUL byte",
        ),
        Hostile(
            "manifest-nested-deeply",
            "m.tgz",
            _manifest("notes = " + "[" * 5000 + "]" * 5000 + "\n"),
            r"benchdash\.toml: manifest nested too deeply",
        ),
        Hostile(
            "manifest-absurd-cpus",
            "m.tgz",
            _manifest("[server_info]\ncpus = 99999999999999\n"),
            r"benchdash\.toml: server_info\.cpus: Input should be less than or equal to 2147483647",
        ),
    ]


def every_case() -> list[Hostile]:
    return cases() + cases_beyond_the_archive()


def by_id() -> dict[str, Hostile]:
    return {case.id: case for case in every_case()}


# --------------------------------------------------------------------------- bundles that aim at memory


def many_big_kept_files(
    files: int = 63, size: int = 64 * MiB - 4 * KiB, name: str = "sb.o.t{n}.range100.pk1.dop1"
) -> bytes:
    """One run of ``files`` kept files of ``size`` bytes each (explain-like lines, then a valid sb.o output):
    inside every default limit, about 4 GiB of kept files from a ~9 MiB upload. With another ``name`` (sb.gv.{n},
    say) the run's own result files come first."""
    line = b"x" * 1023 + b"\n"
    piece = gzip.compress(line * (MiB // len(line)), compresslevel=9, mtime=0)
    parts = [] if name.startswith("sb.o.") else [gzip.compress(raw_members(good_run()), mtime=0)]
    for n in range(files):
        full, rest = divmod(size - MiB, MiB)
        tail_text = sb_o()
        tail_lines, odd = divmod(MiB + rest - len(tail_text), len(line))
        tail = line * tail_lines + b"y" * (odd - 1) + b"\n" + tail_text if odd else line * tail_lines + tail_text
        assert len(tail) == MiB + rest
        parts.append(gzip.compress(tar_header(f"{RUN}/{name.format(n=n)}", size), mtime=0))
        parts.append(piece * full)
        parts.append(gzip.compress(tail + bytes(-size % 512), mtime=0))
    parts.append(gzip.compress(bytes(1024), mtime=0))
    return b"".join(parts)


def overlapping_zip(entries: int = 60, kernel_size: int = 63 * MiB) -> bytes:
    """A zip whose entries' data overlap (each entry's data quotes the next entry's local header and then runs on
    into the same compressed kernel): ``entries`` × ``kernel_size`` unpacked from some tens of KiB."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    kernel = compressor.compress(b"a" * kernel_size) + compressor.flush()
    names = [f"{RUN}/sb.o.t{n}.range100.pk1.dop1".encode() for n in range(entries)]
    # Built from the last entry back: an entry's data is a stored block quoting the next local header.
    body = kernel
    output_prefix = b""
    headers: list[bytes] = []
    for name in reversed(names):
        crc = zlib.crc32(b"a" * kernel_size, zlib.crc32(output_prefix))
        usize = len(output_prefix) + kernel_size
        local = struct.pack("<4s2B4HL2L2H", b"PK\x03\x04", 20, 0, 0, 8, 0, 0x21, crc, len(body), usize, len(name), 0)
        local += name
        headers.append(local)
        quote = b"\x00" + struct.pack("<HH", len(local), 0xFFFF ^ len(local))
        body = quote + local + body
        output_prefix = local + output_prefix
    # ``body`` now starts with a quote of the first local header: the file starts with that header instead.
    first = headers[-1]
    data = body[5:]
    assert data.startswith(first)
    central = b""
    offset = 0
    for local in reversed(headers):
        _, _, _, flags, method, mtime, mdate, crc, csize, usize, name_len, _ = struct.unpack_from("<4s2B4HL2L2H", local)
        name = local[30 : 30 + name_len]
        central += (
            struct.pack(
                "<4s4B4HL2L5H2L",
                b"PK\x01\x02",
                20,
                3,
                20,
                0,
                flags,
                method,
                mtime,
                mdate,
                crc,
                csize,
                usize,
                name_len,
                0,
                0,
                0,
                0,
                0o100644 << 16,
                offset,
            )
            + name
        )
        offset += len(local) + 5  # the next header sits after this one and the next quote's 5 bytes
    end = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, entries, entries, len(central), len(data), 0)
    return data + central + end


def memory_cases() -> list[Hostile]:
    """Bundles inside (or just at) the limits that used to cost gigabytes of memory to import."""
    return [
        Hostile(
            "kept-files-4gib",
            "kept.tar.gz",
            many_big_kept_files,
            r"",
            what="63 valid sb.o files of 64 MiB each in ~4 MiB: every one is kept",
        ),
        Hostile(
            "zip-overlapping-entries",
            "overlap.zip",
            overlapping_zip,
            r"overlaps another entry's data in the zip",
            what="60 entries sharing one 63 MiB deflate kernel in ~70 KiB",
        ),
    ]
