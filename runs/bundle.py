"""Read an uploaded result bundle and return the run directories it holds.

A bundle is a tar (plain, gzip, bzip2, xz or zstd compressed) or zip archive, or a
directory on disk, holding sysbench run directories (``x.<build>.<config>.pk<0|1>``)
at any depth, and/or the result files of the other registered suites (RocksDB
db_bench, the Insert Benchmark, …): each suite says which files are its own
(``suites.base.Suite.recognise``), and they are kept by suite in ``suite_files``.
One level of nested archives is opened too, so a user can tar up several result
tarballs into one upload. Any kept member may itself be gzip-, bzip2-, xz- or
zstd-compressed (older result directories gzip every file): that is decided by its
content, it is decompressed as it is read, within the same limits, and its name
is matched without the compression suffix (``plain_name``). Folders that hold
sysbench files but are not named like run directories become run directories when
a manifest's ``[run_dirs]`` table names them.

Uploads are untrusted: nothing is ever extracted under its own name, names and
member types are checked before anything is read, only members the caller wants
are read, and every size is bounded (see ``Limits``). The members that are kept
go to one spill store per bundle (``KeptFile``): memory up to a small budget,
then an anonymous temporary file, so a bundle of gigabytes of kept files costs
disk, not RAM. Any problem is a ``BundleError`` whose
message is meant for the user, and nothing is returned.

This module is deliberately free of Django so it can be used and tested alone.
"""

from __future__ import annotations

import bz2
import calendar
import contextlib
import copy
import functools
import gzip
import io
import lzma
import os
import re
import stat
import struct
import tarfile
import tempfile
import time
import weakref
import zipfile
import zlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Protocol, cast

import zstandard

import suites
from runs.manifest import ManifestError, parse_manifest
from runs.tarstream import TarDamage, TarStream
from suites.sysbench import parse as sysbench

# A `date` line is about 32 bytes; a sample file's first line longer than this is not one.
_FIRST_LINE_BYTES = 80

RUN_DIR_RE = re.compile(r"x\.[^.]+\..+\.pk[01]")
MANIFEST_NAME = "benchdash.toml"
NESTED_ARCHIVE_SUFFIXES = (".tar", ".tar.gz", ".tgz", ".tar.zst", ".tar.bz2", ".tar.xz", ".zip")
IGNORED_LIST_CAP = 20_000
# Why a member outside any run directory was not read, in the words the bundle page and the import output show.
OUTSIDE_RUN_DIR = "outside a run directory (x.<build>.<config>.pk<N>)"
UNNAMED_FOLDER = "in a folder not named like a run directory and not named in a manifest's [run_dirs]"
NOT_A_RESULT = "not a result file of any suite"
NESTED_TOO_DEEP = "an archive inside a nested archive (only one level of nesting is opened)"
# Files of a run directory besides the sb.* ones: kept with them when the folder is not named like a run directory.
_RUN_FOLDER_COMPANIONS = ("my.cnf", "conf.diff")

_CHUNK = 64 * 1024
# zstandard's decompressobj has no output cap, and one zstd byte can expand to
# about 32 KiB, so feeding 1 KiB at a time keeps one step's output to ~32 MiB.
_ZSTD_INPUT_CHUNK = 1024
_SNIFF_BYTES = 512
# Enough of a member's first bytes to recognise a compressed one by its magic number.
_MAGIC_BYTES = 8
# Compressions a single member may use (older result directories gzip every file), and how messages name them.
MEMBER_COMPRESSIONS = {
    "gz": "gzip-compressed",
    "bz2": "bzip2-compressed",
    "xz": "xz-compressed",
    "zst": "zstd-compressed",
}
MEMBER_SUFFIXES = (".gz", ".bz2", ".xz", ".zst")
# Kept files of a typical bundle (a few MB of sb.o / sb.met) stay in memory; past this the spill store moves to
# a temporary file, so what a bundle keeps is bounded by disk, not RAM.
SPILL_MEMORY_BYTES = 16 * 1024**2
_SHOW_MAX = 200

_CONTROL_RE = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_DRIVE_RE = re.compile(r"[A-Za-z]:")
_SEPARATORS_RE = re.compile(r"[/\\]")
_UNSUPPORTED = "not a tar, tar.gz, tar.bz2, tar.xz, tar.zst or zip archive"
# An upload of one open-format result document, not an archive (the custom suite reads it).
BARE_DOCUMENT_SUFFIXES = (".json", ".result.csv")
_NOT_CONTENT = "(only files and folders are allowed in a bundle)"
_KIND_PROBLEMS = {
    "symlink": "is a symbolic link (links are not allowed in a bundle)",
    "hardlink": "is a hard link (links are not allowed in a bundle)",
    "chardev": f"is a character device {_NOT_CONTENT}",
    "blockdev": f"is a block device {_NOT_CONTENT}",
    "fifo": f"is a FIFO / named pipe {_NOT_CONTENT}",
    "socket": f"is a socket {_NOT_CONTENT}",
}
_ZIP_UTF8_FLAG = 0x800
_ZIP_UNIX = 3
_ZIP_EXTENDED_TIMESTAMP = 0x5455
_ZIP_LOCAL_HEADER = 30


class BundleError(ValueError):
    """The bundle cannot be imported; the message says why, for the user."""


@dataclass(frozen=True)
class Limits:
    max_bytes: int = 512 * 1024**2
    max_members: int = 100_000
    max_unpacked_bytes: int = 4 * 1024**3
    max_member_bytes: int = 64 * 1024**2
    max_depth: int = 64
    max_name_length: int = 4096


DEFAULT_LIMITS = Limits()


class _Spill:
    """Where one bundle's kept members go: appended one after another, read back by offset."""

    def __init__(self) -> None:
        self._file = tempfile.SpooledTemporaryFile(max_size=SPILL_MEMORY_BYTES)  # noqa: SIM115 - lives with its files
        self._end = 0
        # Its KeptFiles may outlive the parse (they are decoded when stored): closed when the last one goes.
        self._closer = weakref.finalize(self, self._file.close)

    def append(self, chunks: Callable[[], bytes], first: bytes = b"") -> tuple[int, int]:
        """Write ``first``, then what ``chunks()`` returns until it returns b""; (offset, size) of what was
        written. ``first`` goes with the first chunk in one write: most members are one chunk."""
        start = self._end
        self._file.seek(start)
        chunk = first + chunks()
        while chunk:
            self._file.write(chunk)
            self._end += len(chunk)
            chunk = chunks()
        return start, self._end - start

    def read(self, offset: int, size: int) -> bytes:
        self._file.seek(offset)
        return self._file.read(size)

    def close(self) -> None:
        self._closer()


class KeptFile:
    """The bytes of one kept member, held in its bundle's spill store rather than as a ``bytes`` object.

    ``read()`` returns them, ``decode()`` their text; it compares equal to the same bytes. Pickled (a parse made
    in a worker process), it travels as its bytes.
    """

    __slots__ = ("_offset", "_spill", "size")

    def __init__(self, spill: _Spill | bytes, offset: int = 0, size: int | None = None) -> None:
        self._spill = spill
        self._offset = offset
        self.size = len(spill) if isinstance(spill, bytes) else (size or 0)

    def read(self) -> bytes:
        if isinstance(self._spill, bytes):
            return self._spill
        return self._spill.read(self._offset, self.size)

    def decode(self, encoding: str = "utf-8", errors: str = "strict") -> str:
        return self.read().decode(encoding, errors)

    def contains_byte(self, byte: bytes, chunk: int = 1024 * 1024) -> bool:
        """Whether the one byte ``byte`` occurs, read a slice at a time (never the whole file in memory)."""
        if isinstance(self._spill, bytes):
            return byte in self._spill
        return any(
            byte in self._spill.read(self._offset + start, min(chunk, self.size - start))
            for start in range(0, self.size, chunk)
        )

    def __eq__(self, other: object) -> bool:
        if isinstance(other, KeptFile):
            return self.read() == other.read()
        if isinstance(other, bytes | bytearray):
            return self.read() == other
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __reduce__(self) -> tuple[type[KeptFile], tuple[bytes]]:
        return KeptFile, (self.read(),)

    def __repr__(self) -> str:
        return f"KeptFile({self.size:,} bytes)"


@dataclass
class RunDir:
    path: str
    name: str
    files: dict[str, KeptFile] = field(default_factory=dict)
    mtimes: dict[str, float] = field(default_factory=dict)
    ignored: list[str] = field(default_factory=list)
    # The first line of each ps sample file, left unread otherwise: it is the clock time its step began.
    first_lines: dict[str, str] = field(default_factory=dict)
    origin: str = ""  # the nested archive it came from ("" for the bundle itself): whose manifest applies


@dataclass
class SuiteFile:
    """A result file of a suite other than sysbench: where it is in the bundle (its folders often say workload,
    build, server), when it was written, and its bytes (kept, read when the suite parses it)."""

    path: str
    kept: KeptFile
    mtime: float
    origin: str = ""  # the nested archive it came from ("" for the bundle itself): whose manifest applies

    @property
    def data(self) -> bytes:
        return self.kept.read()

    def read(self) -> bytes:
        return self.kept.read()

    def decode(self, encoding: str = "utf-8", errors: str = "strict") -> str:
        return self.kept.decode(encoding, errors)


@dataclass
class BundleContents:
    format: str
    runs: list[RunDir]
    manifests: dict[str, KeptFile]
    members: int
    unpacked_bytes: int
    ignored: list[str]
    ignored_count: int
    # Path → why it was not read, for the paths in ``ignored``.
    ignored_reasons: dict[str, str] = field(default_factory=dict)
    # Suite name → its recognised files, in path order.
    suite_files: dict[str, list[SuiteFile]] = field(default_factory=dict)

    def files_of(self, suite: str) -> list[SuiteFile]:
        return self.suite_files.get(suite, [])


def manifest_path(path: str, origin: str) -> str:
    """Where a manifest lookup for ``path`` (a run directory or result file) walks from the root down.

    Contents of a nested archive sit in the folder the archive is in (``path``), but its manifests are kept
    under the archive's own path (``_Scope.folder``): the walk passes the outer folders' manifests, then the
    archive's, then its inner folders'.
    """
    if not origin:
        return path
    parent = origin.rpartition("/")[0]
    inner = path[len(parent) + 1 :] if parent else path
    return f"{origin}/{inner}"


def archive_directory(path: Path) -> bytes:
    """A directory as a deterministic .tar.gz, so it is stored and hashed like an uploaded bundle."""
    buffer = io.BytesIO()
    # mtime=0 in the gzip header: the same tree gives the same bytes, so the same hash.
    with (
        gzip.GzipFile(fileobj=buffer, mode="wb", compresslevel=6, mtime=0) as gz,
        tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar,
    ):
        base = path.resolve()
        for root, dirs, files in os.walk(base, followlinks=False):
            dirs.sort()
            for file_name in sorted(files):
                full = Path(root) / file_name
                arcname = str(Path(base.name) / full.relative_to(base))
                info = tar.gettarinfo(str(full), arcname=arcname)
                info.uid = info.gid = 0
                info.uname = info.gname = ""
                if info.isreg():
                    with full.open("rb") as fh:
                        tar.addfile(info, fh)
                else:
                    tar.addfile(info)  # the reader refuses links and devices with a clear error
    return buffer.getvalue()


def _keep_all(basename: str) -> bool:
    return True


def read_bundle(
    source: bytes | str | os.PathLike[str] | IO[bytes],
    *,
    name: str = "",
    limits: Limits = DEFAULT_LIMITS,
    wanted: Callable[[str], bool] = _keep_all,
) -> BundleContents:
    """Return the run directories in ``source`` (archive bytes, an open archive file, or a path to an archive
    or a directory).

    Only files directly inside a run directory for which ``wanted(basename)`` is true
    are read, and db_bench result files wherever they are; ``name`` is how the
    bundle is called in error messages.
    """
    if isinstance(source, bytes | bytearray | memoryview):
        label = _printable(name or "bundle")
        if len(source) > limits.max_bytes:
            raise BundleError(f"{label}: is {len(source):,} bytes, over the {limits.max_bytes:,}-byte upload limit")
        reader = _Reader(label, limits, wanted)
        with reader.discarded_on_error():
            fmt = reader.read_archive(_TOP, io.BytesIO(source), seekable=True)
            return reader.result(fmt)

    if hasattr(source, "read"):
        archive = cast("IO[bytes]", source)
        label = _printable(name or "bundle")
        size = archive.seek(0, io.SEEK_END)
        archive.seek(0)
        if size > limits.max_bytes:
            raise BundleError(f"{label}: is {size:,} bytes, over the {limits.max_bytes:,}-byte upload limit")
        reader = _Reader(label, limits, wanted)
        with reader.discarded_on_error():
            fmt = reader.read_archive(_TOP, archive, seekable=True)
            return reader.result(fmt)

    path = os.fspath(source)
    label = _printable(name or os.path.basename(os.path.normpath(path)) or "bundle")
    try:
        mode = os.stat(path).st_mode
        if stat.S_ISDIR(mode):
            reader = _Reader(label, limits, wanted, noun="entry")
            with reader.discarded_on_error():
                reader.read_dir(path)
                return reader.result("directory")
        if not stat.S_ISREG(mode):
            raise BundleError(f"{label}: is neither an archive file nor a directory")
        with open(path, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            # Checked on the open file, before reading anything, so a huge upload costs nothing.
            if size > limits.max_bytes:
                raise BundleError(f"{label}: is {size:,} bytes, over the {limits.max_bytes:,}-byte upload limit")
            reader = _Reader(label, limits, wanted)
            with reader.discarded_on_error():
                fmt = reader.read_archive(_TOP, fh, seekable=True)
                return reader.result(fmt)
    except OSError as exc:
        # The user sees this: the OS reason only, never the server-side path.
        raise BundleError(f"{label}: cannot be read ({exc.strerror or type(exc).__name__})") from exc


class _Readable(Protocol):
    def read(self, size: int = -1, /) -> bytes: ...


class _ClosableReadable(_Readable, Protocol):
    def close(self) -> None: ...


_Opener = Callable[[int], IO[bytes]]


@dataclass(frozen=True)
class _Scope:
    """Where members come from: the bundle itself, or a nested archive inside it."""

    origin: str = ""  # the nested archive's path in the bundle; "" for the bundle itself
    prefix: tuple[str, ...] = ()  # folders the nested archive sits in; its run dirs are placed there

    @property
    def nested(self) -> bool:
        return bool(self.origin)

    @property
    def folder(self) -> tuple[str, ...]:
        """The folder a manifest at this scope's root governs: a nested archive's is named after the archive,
        so its manifest applies to its own contents only (tarballs that each carry a manifest can be tarred
        up side by side); see ``manifest_path``."""
        return tuple(self.origin.split("/")) if self.nested else self.prefix


_TOP = _Scope()


class _Corrupt(Exception):
    """Damage found by our own checks; reported like the archive libraries' errors."""


# Everything the archive and decompression libraries raise on damaged or hostile
# input. ValueError is in the list because zipfile and io raise it on nonsense
# offsets; BundleError is a ValueError too, so it is re-raised before this is tried.
_DAMAGE: tuple[type[BaseException], ...] = (
    zipfile.BadZipFile,
    zipfile.LargeZipFile,
    EOFError,
    zlib.error,
    lzma.LZMAError,
    zstandard.ZstdError,
    OSError,
    struct.error,
    ValueError,
    _Corrupt,
    TarDamage,
)


class _Reader:
    """Walks the members of one bundle (and its nested archives) against shared limits."""

    def __init__(self, name: str, limits: Limits, wanted: Callable[[str], bool], *, noun: str = "member") -> None:
        self.name = name
        self.limits = limits
        self.wanted = wanted
        self.noun = noun
        self.members = 0
        self.unpacked = 0
        self.runs: dict[str, RunDir] = {}
        self.run_origin: dict[str, str] = {}
        self.manifests: dict[str, KeptFile] = {}
        self.ignored: list[str] = []
        self.ignored_reasons: dict[str, str] = {}
        self.ignored_count = 0
        # Suite name → path → file: each suite's own result files (``suites.base.Suite.recognise``).
        self.suite_files: dict[str, dict[str, SuiteFile]] = {}
        self.stray_sysbench_files = 0
        # Folders not named like a run directory that hold sysbench files, by (origin, path): kept until the
        # end, when a manifest's [run_dirs] table may name them (it can come after them in a tar).
        self.folders: dict[tuple[str, str], RunDir] = {}
        self.spill = _Spill()

    @contextlib.contextmanager
    def discarded_on_error(self) -> Iterator[None]:
        """Free what was kept as soon as the bundle is refused, not when the traceback goes."""
        try:
            yield
        except BaseException:
            self.spill.close()
            raise

    # -- results and errors -------------------------------------------------

    def result(self, fmt: str) -> BundleContents:
        unnamed = self._adopt_named_folders()
        if not self.runs and not any(self.suite_files.values()):
            raise BundleError(f"{self.name}: {self._nothing_found(unnamed)}")
        return BundleContents(
            format=fmt,
            runs=[self.runs[path] for path in sorted(self.runs)],
            manifests=dict(sorted(self.manifests.items())),
            members=self.members,
            unpacked_bytes=self.unpacked,
            ignored=self.ignored,
            ignored_count=self.ignored_count,
            ignored_reasons=self.ignored_reasons,
            suite_files={suite: [files[path] for path in sorted(files)] for suite, files in self.suite_files.items()},
        )

    def _adopt_named_folders(self) -> list[str]:
        """Make run directories of the folders a manifest names in its ``[run_dirs]`` table; the files of the
        others are listed as not read. Returns the paths of the unnamed folders that hold sysbench results."""
        names = _run_dir_names(self.manifests) if self.folders else {}
        unnamed: list[str] = []
        for (origin, path), folder in sorted(self.folders.items()):
            members = [*folder.files, *folder.ignored]
            results = sum(name.startswith("sb.") for name in members)
            named = _named_in(names, manifest_path(path, origin)) if results else None
            if named is None:
                if results:
                    unnamed.append(path)
                self.stray_sysbench_files += results
                for name in members:
                    self._not_read(f"{path}/{name}", UNNAMED_FOLDER)
                continue
            folder.name = named
            self.runs[path] = folder
        return unnamed

    def _nothing_found(self, unnamed: Sequence[str] = ()) -> str:
        sysbench = "no run directories (x.<build>.<config>.pk<0|1>) found"
        if unnamed:
            shown = ", ".join(_show(path) for path in unnamed[:5]) + (
                f" and {len(unnamed) - 5} more" if len(unnamed) > 5 else ""
            )
            example = unnamed[0].rpartition("/")[2]
            return (
                f"{sysbench}: {shown} {'holds' if len(unnamed) == 1 else 'hold'} sysbench result files (sb.*) but "
                f"{'is' if len(unnamed) == 1 else 'are'} not named x.<build>.<config>.pk<0|1>. Rename each such "
                f"folder (e.g. {example!r} to 'x.fbmy5635_rel.c8r32.pk1': FB MyRocks 5.6.35, build flavour rel, "
                f"config c8r32), or name it in a {MANIFEST_NAME} at the bundle's root, one line per folder: "
                f'[run_dirs] "{example}" = "x.<build>.<config>.pk1"'
            )
        if self.stray_sysbench_files:
            # sysbench result files outside a run directory: the user meant a sysbench bundle, say what it lacks.
            return sysbench
        others = [f"no {suite.files_hint}" for suite in suites.all() if suite.recognise is not None]
        if not others:
            return sysbench
        listed = ", ".join([sysbench, *others[:-1]]) + (", and " if len(others) > 1 else ", ") + others[-1]
        return f"{listed}; a bundle must hold one of these"

    def error(self, scope: _Scope, member: str, problem: str) -> BundleError:
        where = f"in nested archive {_show(scope.origin)}, " if scope.nested else ""
        return BundleError(f"{self.name}: {where}{self.noun} {_show(member)} {problem}")

    def _what(self, scope: _Scope) -> str:
        return f"nested archive {_show(scope.origin)}" if scope.nested else "the archive"

    def _too_many_members(self) -> BundleError:
        return BundleError(
            f"{self.name}: has more than {self.limits.max_members:,} members "
            "(files and folders, nested archives included)"
        )

    # -- archives -----------------------------------------------------------

    def read_archive(self, scope: _Scope, fh: IO[bytes], *, seekable: bool) -> str:
        """Read one archive stream and return its format; library errors become BundleErrors."""
        try:
            return self._read_archive(scope, fh, seekable=seekable)
        except BundleError:
            raise
        except UnicodeDecodeError as exc:
            # zipfile decodes names flagged UTF-8 strictly while listing, before we see the member.
            bad = _show_bytes(exc.object)
            raise BundleError(
                f"{self.name}: {self._what(scope)} has a member name that is not valid UTF-8 ({bad})"
            ) from exc
        except _DAMAGE as exc:
            raise BundleError(f"{self.name}: {self._what(scope)} is truncated or corrupt ({_describe(exc)})") from exc

    def _unsupported(self, scope: _Scope, detail: str = "") -> BundleError:
        subject = f"nested archive {_show(scope.origin)} is " if scope.nested else ""
        return BundleError(f"{self.name}: {subject}{_UNSUPPORTED}{detail}")

    def _read_archive(self, scope: _Scope, fh: IO[bytes], *, seekable: bool) -> str:
        head = _read_exact(fh, _SNIFF_BYTES)
        kind = _sniff(head)
        if kind is None and seekable and not scope.nested and self.name.endswith(BARE_DOCUMENT_SUFFIXES):
            # One open-format document uploaded as it is: read as a bundle holding that one file.
            size = fh.seek(0, io.SEEK_END)
            fh.seek(0)
            self.visit(
                scope,
                self.name.rpartition("/")[2],
                "file",
                size,
                time.time(),
                lambda _bound: cast("IO[bytes]", _Unclosed(fh)),
            )
            return "document"
        if kind is None:
            raise self._unsupported(scope, "" if scope.nested else " (nor a .json or .result.csv result document)")
        if kind == "zip":
            if seekable:
                fh.seek(0)
                self._read_zip(scope, fh)
            else:
                # zip needs random access: a nested zip in a stream is copied to a temporary file (memory up to
                # the spill budget), within the archive size limit.
                with tempfile.SpooledTemporaryFile(max_size=SPILL_MEMORY_BYTES) as copy:
                    copy.write(head)
                    copied = len(head)
                    while copied <= self.limits.max_bytes and (chunk := fh.read(_CHUNK * 16)):
                        copy.write(chunk)
                        copied += len(chunk)
                    if copied > self.limits.max_bytes:
                        raise BundleError(
                            f"{self.name}: {self._what(scope)} is over the {self.limits.max_bytes:,}-byte archive limit"
                        )
                    copy.seek(0)
                    self._read_zip(scope, cast("IO[bytes]", copy))
            return "zip"
        stream = _Prefixed(head, fh)
        if kind == "tar":
            self._read_tar(scope, stream, drain=False)
            return "tar"
        with contextlib.closing(_decompressor(kind, stream)) as plain:
            inner = _read_exact(plain, _SNIFF_BYTES)
            if not _is_tar_head(inner):
                raise self._unsupported(scope, f" (it is {kind}-compressed but does not hold a tar archive)")
            self._read_tar(scope, _Prefixed(inner, plain), drain=True)
        return f"tar.{kind}"

    def _read_tar(self, scope: _Scope, stream: _Readable, *, drain: bool) -> None:
        tar = TarStream(stream)
        for entry in tar.entries():
            self.visit(scope, entry.name, entry.kind, entry.size, entry.mtime, functools.partial(_open_tar_member, tar))
        if drain:
            # Read a compressed stream to its end, so its checksum and length are verified.
            budget = self.limits.max_unpacked_bytes - self.unpacked
            if tar.drain(budget) > budget:
                raise BundleError(
                    f"{self.name}: {self._what(scope)} has more data after its tar end marker than the "
                    f"{self.limits.max_unpacked_bytes:,}-byte unpacked limit allows (compression bomb?)"
                )

    def _read_zip(self, scope: _Scope, fh: IO[bytes]) -> None:
        # zipfile builds an object per central-directory entry up front; refuse a huge count before that.
        declared = _zip_declared_entries(fh)
        if declared is not None and self.members + declared > self.limits.max_members:
            raise self._too_many_members()
        with zipfile.ZipFile(fh) as zf:
            infos = zf.infolist()
            if self.members + len(infos) > self.limits.max_members:
                raise self._too_many_members()
            self._refuse_overlaps(scope, zf, infos)
            seen: set[str] = set()
            for info in infos:
                if info.orig_filename in seen:
                    raise self.error(
                        scope, _zip_name(info), "appears twice in the zip (duplicate names are not allowed)"
                    )
                seen.add(info.orig_filename)
            for info in infos:
                opener = functools.partial(_open_zip_member, zf, info)
                self.visit(scope, _zip_name(info), _zip_kind(info), info.file_size, _zip_mtime(info), opener)

    def _refuse_overlaps(self, scope: _Scope, zf: zipfile.ZipFile, infos: list[zipfile.ZipInfo]) -> None:
        """Refuse entries whose data overlaps another's: the trick that makes a small zip unpack to gigabytes.

        Each entry's local header and data must end before the next entry (in file order) begins, and the last
        before the central directory. The local header's extra field is not counted, so a real zip never trips.
        """
        placed = sorted(infos, key=lambda info: info.header_offset)
        ends = [info.header_offset for info in placed[1:]] + [zf.start_dir] * bool(placed)
        for info, end in zip(placed, ends, strict=True):
            name_bytes = len(info.orig_filename.encode("utf-8" if info.flag_bits & _ZIP_UTF8_FLAG else "cp437"))
            if info.header_offset + _ZIP_LOCAL_HEADER + name_bytes + info.compress_size > end:
                raise self.error(
                    scope,
                    _zip_name(info),
                    "overlaps another entry's data in the zip (overlapping entries are a zip bomb; "
                    "not allowed in a bundle)",
                )

    # -- directories --------------------------------------------------------

    def read_dir(self, root: str) -> None:
        pending: list[tuple[tuple[str, ...], str]] = [((), root)]
        while pending:
            rel, folder = pending.pop()
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda entry: entry.name)
            subdirs: list[tuple[tuple[str, ...], str]] = []
            for entry in entries:
                parts = (*rel, entry.name)
                st = entry.stat(follow_symlinks=False)
                kind = _mode_kind(st.st_mode)
                size = st.st_size if kind == "file" else 0
                opener = functools.partial(_open_file, entry.path)
                self.visit(_TOP, "/".join(parts), kind, size, st.st_mtime, opener, path=entry.path)
                if kind == "dir":
                    subdirs.append((parts, entry.path))
            pending.extend(reversed(subdirs))

    # -- members ------------------------------------------------------------

    def visit(
        self,
        scope: _Scope,
        raw: str,
        kind: str,
        size: int,
        mtime: float,
        opener: _Opener,
        *,
        path: str | None = None,
    ) -> None:
        """Check one member and keep, skip or open it; ``path`` is set when it is a file on disk."""
        self.members += 1
        if self.members > self.limits.max_members:
            raise self._too_many_members()
        parts = self._check_name(scope, raw)
        if kind not in ("file", "dir"):
            raise self.error(scope, raw, _KIND_PROBLEMS.get(kind, f"has an unsupported type {_NOT_CONTENT}"))
        size = max(size, 0)
        self._account(scope, raw, size)

        if kind == "dir":
            at = _run_index(parts)
            if at is not None:
                self._run_for(scope, parts[: at + 1])
            return
        if not parts:
            raise self.error(scope, raw, "has an empty name")

        base = parts[-1]
        # A compressed member is matched by its name without the compression suffix; its content is
        # decompressed when it is read (``_read_kept``), so parsers see plain names and plain bytes.
        plain = plain_name(base)
        plain_parts = [*parts[:-1], plain]
        at = _run_index(parts[:-1])
        run = self._run_for(scope, parts[: at + 1]) if at is not None else None
        if plain == MANIFEST_NAME:
            self._add_manifest(scope, raw, parts, size, opener)
        elif run is not None and at is not None:
            self._add_to_run(scope, raw, run, parts[at + 1 :], size, mtime, opener)
        elif not scope.nested and base.endswith(NESTED_ARCHIVE_SUFFIXES):
            self._read_nested(scope, raw, parts, size, opener, path)
        elif (suite := suite_of(plain_parts)) is not None:
            self._add_suite_file(suite, scope, raw, plain_parts, size, mtime, opener)
        elif len(parts) > 1 and (plain.startswith("sb.") or plain in _RUN_FOLDER_COMPANIONS):
            self._add_to_folder(scope, raw, parts, plain, size, mtime, opener)
        else:
            self.stray_sysbench_files += plain.startswith("sb.")
            self._skip(scope, parts)

    def _add_to_run(
        self, scope: _Scope, raw: str, run: RunDir, inside: list[str], size: int, mtime: float, opener: _Opener
    ) -> None:
        """A member of a run directory (``inside``: its path there): kept if the parsers read it, else listed as
        ignored (with the first line of a sample file, whose clock dates the run)."""
        base = inside[-1]
        plain = plain_name(base)
        if len(inside) > 1:
            run.ignored.append("/".join(inside))
        elif not self.wanted(plain):
            run.ignored.append(base)
            if plain == base and sysbench.SAMPLE_CLOCK_RE.match(plain):
                with self._open(scope, raw, opener, _FIRST_LINE_BYTES) as fh:
                    head = _read_exact(fh, _FIRST_LINE_BYTES)
                run.first_lines[plain] = head.split(b"\n", 1)[0].decode("utf-8", errors="replace")
        elif plain in run.files:
            twice = "appears twice in the same run directory"
            raise self.error(scope, raw, f"{twice} (as {_show(plain)}, compressed or not)" if plain != base else twice)
        else:
            run.files[plain] = self._read_kept(scope, raw, size, opener)
            run.mtimes[plain] = mtime

    def _check_name(self, scope: _Scope, raw: str) -> list[str]:
        """Refuse unsafe or unreadable names and return the path's components."""
        if "\x00" in raw:
            raise self.error(scope, raw, "has a NUL character in its name")
        if _CONTROL_RE.search(raw):
            raise self.error(scope, raw, "has a control character in its name")
        try:
            length = len(raw.encode("utf-8"))
        except UnicodeEncodeError:
            # Undecodable bytes arrive as surrogate escapes from tar headers and os.scandir.
            raise self.error(scope, raw, "has a name that is not valid UTF-8") from None
        if length > self.limits.max_name_length:
            raise self.error(
                scope, raw, f"has a {length:,}-byte name, over the {self.limits.max_name_length:,}-byte limit"
            )
        if raw.startswith(("/", "\\")) or _DRIVE_RE.match(raw):
            raise self.error(scope, raw, "is an absolute path (only relative paths are allowed)")
        # Backslashes count as separators here so Windows-style "..\\" is refused too.
        if ".." in _SEPARATORS_RE.split(raw):
            raise self.error(scope, raw, "has a '..' component (path traversal is not allowed)")
        parts = [part for part in raw.split("/") if part not in ("", ".")]
        if len(parts) > self.limits.max_depth:
            raise self.error(
                scope, raw, f"is {len(parts)} levels deep, over the limit of {self.limits.max_depth} path components"
            )
        return parts

    def _account(self, scope: _Scope, raw: str, size: int) -> None:
        self.unpacked += size
        if self.unpacked > self.limits.max_unpacked_bytes:
            raise self.error(
                scope,
                raw,
                f"brings the unpacked size to {self.unpacked:,} bytes, over the "
                f"{self.limits.max_unpacked_bytes:,}-byte limit (compression bomb?)",
            )

    def _run_for(self, scope: _Scope, run_parts: list[str]) -> RunDir:
        path = "/".join((*scope.prefix, *run_parts))
        run = self.runs.get(path)
        if run is None:
            run = self.runs[path] = RunDir(path=path, name=run_parts[-1], origin=scope.origin)
            self.run_origin[path] = scope.origin
        elif self.run_origin[path] != scope.origin:
            first, second = (_origin_text(origin) for origin in (self.run_origin[path], scope.origin))
            raise BundleError(
                f"{self.name}: run directory {_show(path)} appears twice ({first} and {second}); include each run once"
            )
        return run

    def _add_to_folder(
        self, scope: _Scope, raw: str, parts: list[str], plain: str, size: int, mtime: float, opener: _Opener
    ) -> None:
        """A sysbench file (or a run's settings file) in a folder not named like a run directory: kept in case a
        manifest names the folder (see ``_adopt_named_folders``)."""
        path = "/".join((*scope.prefix, *parts[:-1]))
        folder = self.folders.setdefault((scope.origin, path), RunDir(path=path, name=parts[-2], origin=scope.origin))
        if not self.wanted(plain):
            folder.ignored.append(parts[-1])
        elif plain in folder.files:
            raise self.error(scope, raw, "appears twice in the same folder")
        else:
            folder.files[plain] = self._read_kept(scope, raw, size, opener)
            folder.mtimes[plain] = mtime

    def _add_manifest(self, scope: _Scope, raw: str, parts: list[str], size: int, opener: _Opener) -> None:
        folder = "/".join((*scope.folder, *parts[:-1]))
        if folder in self.manifests:
            raise self.error(scope, raw, f"is a second {MANIFEST_NAME} for folder {_show(folder)}")
        self.manifests[folder] = self._read_kept(scope, raw, size, opener)

    def _add_suite_file(
        self, suite: str, scope: _Scope, raw: str, parts: list[str], size: int, mtime: float, opener: _Opener
    ) -> None:
        path = "/".join((*scope.prefix, *parts))
        files = self.suite_files.setdefault(suite, {})
        if path in files:
            first, second = (_origin_text(origin) for origin in (files[path].origin, scope.origin))
            raise BundleError(f"{self.name}: {_show(path)} appears twice ({first} and {second}); include it once")
        files[path] = SuiteFile(
            path=path, kept=self._read_kept(scope, raw, size, opener), mtime=mtime, origin=scope.origin
        )

    def _read_kept(self, scope: _Scope, raw: str, size: int, opener: _Opener) -> KeptFile:
        """Keep one member's bytes, decompressed when its content is gzip, bzip2, xz or zstd (whatever its name)."""
        limit = self.limits.max_member_bytes
        if size > limit:
            raise self.error(scope, raw, f"is {size:,} bytes, over the {limit:,}-byte limit for one file")
        # The bound is ours, not the header's: a zip entry's declared size can lie, and a compressed
        # member's size says nothing of what it unpacks to.
        with self._open(scope, raw, opener, limit + 1) as fh:
            head = _read_exact(fh, _MAGIC_BYTES)
            compression = _sniff(head)
            if compression not in MEMBER_COMPRESSIONS:
                compression = None
            # Plain bytes: the sniffed head is written as it is, ahead of the rest (no replaying stream).
            first = b"" if compression else head
            plain = _decompressor(compression, _Prefixed(head, fh)) if compression else fh
            left = limit + 1 - len(first)

            def chunk() -> bytes:
                nonlocal left
                data = plain.read(min(_CHUNK * 16, left)) if left > 0 else b""
                left -= len(data)
                return data

            try:
                offset, got = self.spill.append(chunk, first)
            except _DAMAGE as exc:
                if compression is None:
                    raise
                raise self.error(
                    scope, raw, f"is {MEMBER_COMPRESSIONS[compression]} but cannot be decompressed ({_describe(exc)})"
                ) from exc
        if got > limit:
            if compression:
                raise self.error(
                    scope,
                    raw,
                    f"is {MEMBER_COMPRESSIONS[compression]} and unpacks to more than the {limit:,}-byte limit "
                    "for one file (compression bomb?)",
                )
            raise self.error(
                scope,
                raw,
                f"unpacks to more than the {limit:,}-byte limit for one file (its header claims {size:,} bytes)",
            )
        if got > size:
            self._account(scope, raw, got - size)
        return KeptFile(self.spill, offset, got)

    def _read_nested(
        self, scope: _Scope, raw: str, parts: list[str], size: int, opener: _Opener, path: str | None
    ) -> None:
        if size > self.limits.max_bytes:
            raise self.error(
                scope, raw, f"is a nested archive of {size:,} bytes, over the {self.limits.max_bytes:,}-byte limit"
            )
        inner = _Scope(origin="/".join(parts), prefix=tuple(parts[:-1]))
        if path is not None:
            with open(path, "rb") as fh:
                self.read_archive(inner, fh, seekable=True)
        else:
            with self._open(scope, raw, opener, self.limits.max_bytes) as fh:
                self.read_archive(inner, fh, seekable=False)

    def _open(self, scope: _Scope, raw: str, opener: _Opener, bound: int) -> IO[bytes]:
        try:
            return opener(bound)
        except (RuntimeError, NotImplementedError) as exc:
            # zipfile: encrypted entries and compression methods it does not implement.
            raise self.error(scope, raw, f"cannot be read ({exc})") from exc

    def _skip(self, scope: _Scope, parts: list[str]) -> None:
        shown = "/".join(parts)
        base = plain_name(parts[-1])
        if scope.nested and parts[-1].endswith(NESTED_ARCHIVE_SUFFIXES):
            reason = NESTED_TOO_DEEP
        elif base.startswith("sb.") or base in _RUN_FOLDER_COMPANIONS:
            reason = OUTSIDE_RUN_DIR
        else:
            reason = NOT_A_RESULT
        self._not_read(f"{scope.origin}/{shown}" if scope.nested else shown, reason)

    def _not_read(self, path: str, reason: str) -> None:
        self.ignored_count += 1
        if len(self.ignored) < IGNORED_LIST_CAP:
            self.ignored.append(path)
            self.ignored_reasons[path] = reason


# -- tar helpers -----------------------------------------------------------


class _TarMember:
    """The current tar member's data as a file object; ``bound`` is enforced by the caller's read."""

    def __init__(self, tar: TarStream) -> None:
        self._tar = tar

    def read(self, size: int = -1, /) -> bytes:
        return self._tar.read(size)

    def close(self) -> None:
        """Nothing to release: the stream skips what was not read at the next header."""

    def __enter__(self) -> _TarMember:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _open_tar_member(tar: TarStream, bound: int) -> IO[bytes]:
    return cast("IO[bytes]", _TarMember(tar))


# -- zip helpers -----------------------------------------------------------


def _zip_name(info: zipfile.ZipInfo) -> str:
    """The entry's name, with undecodable bytes kept as surrogate escapes so the name check refuses it."""
    if info.flag_bits & _ZIP_UTF8_FLAG:
        return info.orig_filename
    # Without the UTF-8 flag zipfile decodes as cp437, but most tools write UTF-8 regardless.
    raw = info.orig_filename.encode("cp437")
    return raw.decode("utf-8", "surrogateescape")


def _zip_kind(info: zipfile.ZipInfo) -> str:
    mode = info.external_attr >> 16
    if info.create_system == _ZIP_UNIX and mode:
        kind = _mode_kind(mode)
        if kind not in ("file", "other"):
            return kind
    return "dir" if info.is_dir() else "file"


def _zip_mtime(info: zipfile.ZipInfo) -> float:
    """Prefer the UTC 'extended timestamp'; DOS times have no zone, so they are read as UTC to stay deterministic."""
    extra = info.extra
    at = 0
    while at + 4 <= len(extra):
        tag, size = struct.unpack_from("<HH", extra, at)
        body = extra[at + 4 : at + 4 + size]
        if tag == _ZIP_EXTENDED_TIMESTAMP and len(body) >= 5 and body[0] & 1:
            return float(struct.unpack_from("<i", body, 1)[0])
        at += 4 + size
    try:
        return float(calendar.timegm((*info.date_time, 0, 0, 0)))
    except (ValueError, OverflowError):
        return 0.0


def _open_zip_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, bound: int) -> IO[bytes]:
    # zipfile stops at the declared size and then checks the CRC of what it has, so a
    # lying (small) size would surface as a CRC error. Declaring a size just past our own
    # bound lets the caller read up to the bound and report the entry as too big.
    resized = copy.copy(info)
    resized.file_size = max(bound, info.file_size) + 1
    return zf.open(resized)


def _zip_declared_entries(fh: IO[bytes]) -> int | None:
    """Entry count from the end-of-central-directory record, or None when it cannot be found."""
    try:
        end = fh.seek(0, io.SEEK_END)
        tail_size = min(end, 22 + 0xFFFF + 20)
        fh.seek(end - tail_size)
        tail = fh.read(tail_size)
        at = tail.rfind(b"PK\x05\x06")
        if at < 0 or len(tail) - at < 22:
            return None
        entries: int = struct.unpack_from("<H", tail, at + 10)[0]
        if entries == 0xFFFF and at >= 20 and tail[at - 20 : at - 16] == b"PK\x06\x07":
            (record_at,) = struct.unpack_from("<Q", tail, at - 20 + 8)
            fh.seek(record_at)
            record = fh.read(56)
            if len(record) == 56 and record[:4] == b"PK\x06\x06":
                entries = struct.unpack_from("<Q", record, 32)[0]
        return entries
    except (OSError, ValueError, struct.error):
        return None
    finally:
        fh.seek(0)


# -- streams ---------------------------------------------------------------


class _Unclosed(io.BufferedIOBase):
    """The upload itself read as its one member: closing the member must leave the upload open for its caller."""

    def __init__(self, source: IO[bytes]) -> None:
        super().__init__()
        self._source = source

    def readable(self) -> bool:
        return True

    def read(self, size: int | None = -1, /) -> bytes:
        return self._source.read(-1 if size is None else size)


class _Prefixed:
    """Replays the bytes read to sniff the format, then continues from the source stream."""

    def __init__(self, head: bytes, source: _Readable) -> None:
        self._head = head
        self._source = source

    def read(self, size: int = -1, /) -> bytes:
        if not self._head:
            return self._source.read(size)
        if size < 0:
            data, self._head = self._head + self._source.read(), b""
            return data
        data, self._head = self._head[:size], self._head[size:]
        return data


class _ZstdReader:
    """Streaming zstd decompression that, unlike zstandard's stream_reader, notices a truncated frame."""

    def __init__(self, source: _Readable) -> None:
        self._source = source
        self._dctx = zstandard.ZstdDecompressor()
        self._frame: zstandard.ZstdDecompressionObj | None = None
        self._out = bytearray()
        self._eof = False

    def read(self, size: int = -1, /) -> bytes:
        while not self._eof and (size < 0 or len(self._out) < size):
            self._fill()
        end = len(self._out) if size < 0 else size
        data = bytes(self._out[:end])
        del self._out[:end]
        return data

    def _fill(self) -> None:
        data = self._source.read(_ZSTD_INPUT_CHUNK)
        if not data:
            if self._frame is not None:
                raise EOFError("the zstd stream ends in the middle of a frame")
            self._eof = True
            return
        while data:
            if self._frame is None:
                self._frame = self._dctx.decompressobj()
            self._out += self._frame.decompress(data)
            if self._frame.eof:
                # A new frame may follow (pzstd and `cat a.zst b.zst` write several).
                data = self._frame.unused_data
                self._frame = None
            else:
                data = b""

    def close(self) -> None:
        self._out.clear()


def _decompressor(kind: str, stream: _Readable) -> _ClosableReadable:
    source = _as_io(stream)
    if kind == "gz":
        return gzip.GzipFile(fileobj=source, mode="rb")
    if kind == "bz2":
        return bz2.BZ2File(source, mode="rb")
    if kind == "xz":
        return lzma.LZMAFile(source, mode="rb")
    return _ZstdReader(stream)


def _as_io(stream: _Readable) -> IO[bytes]:
    # The standard readers only ever call read() on the objects we hand them.
    return cast("IO[bytes]", stream)


def _sniff(head: bytes) -> str | None:
    if head.startswith(b"\x1f\x8b"):
        return "gz"
    if head.startswith(b"BZh"):
        return "bz2"
    if head.startswith(b"\xfd7zXZ\x00"):
        return "xz"
    if head.startswith(b"\x28\xb5\x2f\xfd"):
        return "zst"
    if head.startswith((b"PK\x03\x04", b"PK\x05\x06")):
        return "zip"
    if _is_tar_head(head):
        return "tar"
    return None


def _is_tar_head(head: bytes) -> bool:
    # An empty tar is only zero blocks, with no "ustar" magic to find.
    return head[257:262] == b"ustar" or head == bytes(_SNIFF_BYTES)


def _read_exact(fh: _Readable, size: int) -> bytes:
    """Read ``size`` bytes, fewer only at the end of the stream (some streams return short reads)."""
    chunks: list[bytes] = []
    got = 0
    while got < size:
        chunk = fh.read(size - got)
        if not chunk:
            break
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def _open_file(path: str, bound: int) -> IO[bytes]:
    return open(path, "rb")


# -- small helpers ---------------------------------------------------------


def _mode_kind(mode: int) -> str:
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISDIR(mode):
        return "dir"
    if stat.S_ISLNK(mode):
        return "symlink"
    if stat.S_ISCHR(mode):
        return "chardev"
    if stat.S_ISBLK(mode):
        return "blockdev"
    if stat.S_ISFIFO(mode):
        return "fifo"
    if stat.S_ISSOCK(mode):
        return "socket"
    return "other"


def plain_name(name: str) -> str:
    """A member's name without a compression suffix (``sb.o.scan.range100.pk1.dop1.gz`` → ``….dop1``); archives
    (``.tar.gz``, ``.tgz``) keep theirs, and a name that is only a suffix stays as it is."""
    if name.endswith(NESTED_ARCHIVE_SUFFIXES):
        return name
    for suffix in MEMBER_SUFFIXES:
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return name


def _run_dir_names(manifests: dict[str, KeptFile]) -> dict[str, dict[str, str]]:
    """Each manifest's ``[run_dirs]`` table (folder name → run directory name), by the folder it governs. A
    manifest that does not parse names nothing here: the importer reports its error."""
    tables: dict[str, dict[str, str]] = {}
    for folder, kept in manifests.items():
        try:
            tables[folder] = parse_manifest(kept.read()).run_dirs
        except ManifestError:
            continue
    return tables


def _named_in(tables: dict[str, dict[str, str]], path: str) -> str | None:
    """The run directory name the nearest manifest above ``path`` (or in it) gives that folder, if any."""
    parts = path.split("/")
    named = None
    for depth in range(len(parts) + 1):
        table = tables.get("/".join(parts[:depth]))
        if table is not None and parts[-1] in table:
            named = table[parts[-1]]
    return named


def _run_index(parts: list[str]) -> int | None:
    # The outermost match wins: a run-like folder inside a run dir is just a sub-folder of it.
    return next((at for at, part in enumerate(parts) if RUN_DIR_RE.fullmatch(part)), None)


def suite_of(parts: list[str]) -> str | None:
    """The registered suite whose result file this is (path parts, compression suffix removed), if any."""
    return next((suite.name for suite in suites.all() if suite.recognise is not None and suite.recognise(parts)), None)


def _origin_text(origin: str) -> str:
    return f"in nested archive {_show(origin)}" if origin else "in the bundle itself"


def _show(name: str) -> str:
    """A printable, bounded rendering of a member name for messages."""
    try:
        name.encode("utf-8")
        text = repr(name)
    except UnicodeEncodeError:
        text = repr(name.encode("utf-8", "surrogateescape"))
    return text if len(text) <= _SHOW_MAX else text[: _SHOW_MAX - 3] + "..."


def _show_bytes(raw: bytes | bytearray | object) -> str:
    text = repr(bytes(raw)) if isinstance(raw, bytes | bytearray) else repr(raw)
    return text if len(text) <= _SHOW_MAX else text[: _SHOW_MAX - 3] + "..."


def _printable(name: str) -> str:
    return name if name.isprintable() else _show(name)


def _describe(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return text if len(text) <= _SHOW_MAX else text[: _SHOW_MAX - 3] + "..."
