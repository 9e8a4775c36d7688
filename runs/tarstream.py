"""A streaming reader of tar archives for bundles: headers and member data, one pass, bounded memory.

Bundles are tarballs of thousands of small files (two per sysbench result).
The standard library's stream mode spends about 90 µs per member in Python
(header objects, a file object per member, reads in 512-byte steps); this
reader parses the headers straight from a buffer filled in large chunks and
costs a few µs per member, which is what lets an import keep up with
thousands of results a second.

It reads what bundle writers produce: POSIX ustar and pax (GNU tar's and
Python's default), and GNU tar's long names. Every header's checksum is
verified; extended headers are bounded in size; the archive must end with its
end-of-archive block. It judges nothing else: names, types and sizes are
reported as found and ``runs.bundle`` decides what is allowed. Damage raises
``TarDamage`` with a reason.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol

BLOCK = 512
READ_SIZE = 1024 * 1024
MAX_METADATA = 1024 * 1024  # a pax header or GNU long name larger than this is not a real one

KINDS = {
    b"0": "file",
    b"\x00": "file",
    b"7": "file",  # contiguous file: a regular file everywhere that matters
    b"1": "hardlink",
    b"2": "symlink",
    b"3": "chardev",
    b"4": "blockdev",
    b"5": "dir",
    b"6": "fifo",
}
PAX_NEXT = (b"x", b"X")  # pax extended header for the next member (X: Solaris)
PAX_GLOBAL = b"g"
GNU_LONGNAME = b"L"
GNU_LONGLINK = b"K"


class TarDamage(ValueError):
    """The tar data is damaged or cut short; the message says how."""


class Readable(Protocol):
    def read(self, size: int = -1, /) -> bytes: ...


@dataclass(frozen=True)
class Entry:
    name: str  # decoded as UTF-8 with surrogate escapes, so undecodable bytes stay visible to the caller
    kind: str  # file, dir, symlink, hardlink, chardev, blockdev, fifo, other
    size: int  # data bytes that follow (0 for everything but files)
    mtime: float


class TarStream:
    """Walk the members of a tar stream: ``for entry in tar.entries(): … tar.read(n) …``.

    While an entry is current, ``read`` returns its data; whatever the caller
    does not read is skipped before the next header.
    """

    def __init__(self, source: Readable) -> None:
        self._source = source
        self._buf = b""
        self._pos = 0
        self._left = 0  # data bytes of the current member not read yet
        self._pad = 0  # padding after the current member's data
        self.ended = False  # the end-of-archive block was seen

    # -- bytes --------------------------------------------------------------

    def _take(self, size: int) -> bytes:
        """Exactly ``size`` bytes, fewer only at the end of the stream."""
        end = self._pos + size
        if end <= len(self._buf):
            data = self._buf[self._pos : end]
            self._pos = end
            return data
        parts = [self._buf[self._pos :]]
        have = len(parts[0])
        self._buf, self._pos = b"", 0
        while have < size:
            chunk = self._source.read(max(READ_SIZE, size - have))
            if not chunk:
                break
            need = size - have
            if len(chunk) > need:
                parts.append(chunk[:need])
                self._buf, self._pos = chunk, need
                have = size
            else:
                parts.append(chunk)
                have += len(chunk)
        return b"".join(parts)

    def _skip(self, size: int) -> int:
        """Skip up to ``size`` bytes; returns how many there were."""
        skipped = 0
        while skipped < size:
            in_buf = len(self._buf) - self._pos
            if in_buf == 0:
                self._buf, self._pos = self._source.read(max(READ_SIZE, min(size - skipped, 16 * READ_SIZE))), 0
                if not self._buf:
                    break
                continue
            step = min(in_buf, size - skipped)
            self._pos += step
            skipped += step
        return skipped

    def read(self, size: int = -1, /) -> bytes:
        """Data of the current member, at most ``size`` bytes (all that is left when negative)."""
        if size < 0 or size > self._left:
            size = self._left
        data = self._take(size)
        self._left -= len(data)
        if len(data) < size:
            raise TarDamage("the tar data stops inside a member's data")
        return data

    def drain(self, limit: int) -> int:
        """Read the rest of the stream (after the end marker), at most ``limit`` + 1 bytes; returns the count."""
        return self._skip(limit + 1)

    # -- headers ------------------------------------------------------------

    def entries(self) -> Iterator[Entry]:
        pax_global: dict[str, bytes] = {}
        pax: dict[str, bytes] = {}
        long_name: bytes | None = None
        while True:
            self._finish_member()
            block = self._take(BLOCK)
            if len(block) < BLOCK:
                if not block:
                    raise TarDamage("the tar data stops before its end-of-archive marker")
                raise TarDamage("the tar data stops inside a header")
            if block.count(0) == BLOCK:
                self.ended = True
                return
            _verify_checksum(block)
            kind_flag = block[156:157]
            size = _number(block[124:136], "size")
            if kind_flag in PAX_NEXT or kind_flag == PAX_GLOBAL or kind_flag in (GNU_LONGNAME, GNU_LONGLINK):
                if size > MAX_METADATA:
                    raise TarDamage(
                        f"a tar extended header claims {size:,} bytes, over the {MAX_METADATA:,}-byte sanity limit"
                    )
                data = self._member_data(size)
                if kind_flag in PAX_NEXT:
                    pax.update(_pax_records(data))
                elif kind_flag == PAX_GLOBAL:
                    pax_global.update(_pax_records(data))
                elif kind_flag == GNU_LONGNAME:
                    long_name = data.split(b"\x00", 1)[0]
                continue  # a long link target is of no use: links are refused anyway

            fields = {**pax_global, **pax}
            name = _member_name(block, fields, long_name).decode("utf-8", "surrogateescape")
            kind = KINDS.get(kind_flag, "other")
            if kind == "file" and kind_flag == b"\x00" and name.endswith("/"):
                kind = "dir"  # old tars mark folders only by the trailing slash
            if kind == "dir":
                name = name.rstrip("/")
            if "size" in fields:
                size = _pax_int(fields["size"], "size")
            mtime = _pax_float(fields["mtime"]) if "mtime" in fields else float(_number(block[136:148], "mtime"))
            pax, long_name = {}, None
            # Only regular files carry data that matters; other types' sizes still say how much to skip.
            self._left = size if kind in ("file", "other") else 0
            self._pad = -size % BLOCK if self._left else 0
            yield Entry(name=name, kind=kind, size=size if kind == "file" else 0, mtime=mtime)

    def _member_data(self, size: int) -> bytes:
        data = self._take(size)
        if len(data) < size or self._skip(-size % BLOCK) < -size % BLOCK:
            raise TarDamage("the tar data stops inside an extended header")
        return data

    def _finish_member(self) -> None:
        rest = self._left + self._pad
        self._left = self._pad = 0
        if rest and self._skip(rest) < rest:
            raise TarDamage("the tar data stops inside a member's data")


def _cstring(field: bytes) -> bytes:
    end = field.find(b"\x00")
    return field if end < 0 else field[:end]


def _number(field: bytes, what: str) -> int:
    """A header number: octal text, or GNU's base-256 for big values (first byte 0x80 or 0xff)."""
    if field[:1] in (b"\x80", b"\xff"):
        value = int.from_bytes(field[1:], "big")
        if field[0] == 0xFF:
            value -= 256 ** (len(field) - 1)
        if value < 0:
            raise TarDamage(f"a tar header has a negative {what}")
        return value
    text = _cstring(field).strip(b" ")
    if not text:
        return 0
    try:
        return int(text, 8)
    except ValueError:
        raise TarDamage(f"a tar header has an unreadable {what} field ({text[:20]!r})") from None


def _verify_checksum(block: bytes) -> None:
    stored = _number(block[148:156], "checksum")
    unsigned = sum(block) - sum(block[148:156]) + 8 * 32
    if stored == unsigned:
        return
    signed = unsigned - 2 * sum(b for b in block if b > 127)  # some old writers summed signed chars
    if stored != signed:
        raise TarDamage("a tar header fails its checksum")


def _pax_records(data: bytes) -> dict[str, bytes]:
    """``"<length> <key>=<value>\\n"`` records → {key: value bytes}."""
    records: dict[str, bytes] = {}
    at = 0
    while at < len(data):
        if data[at] == 0:  # padding
            break
        space = data.find(b" ", at)
        if space < 0:
            raise TarDamage("a tar extended header has a malformed record")
        try:
            length = int(data[at:space])
        except ValueError:
            raise TarDamage("a tar extended header has a malformed record length") from None
        record = data[space + 1 : at + length]
        if length <= space - at or at + length > len(data) or not record.endswith(b"\n") or b"=" not in record:
            raise TarDamage("a tar extended header has a malformed record")
        key, value = record[:-1].split(b"=", 1)
        records[key.decode("utf-8", "replace")] = value
        at += length
    return records


def _pax_int(value: bytes, what: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise TarDamage(f"a tar extended header has an unreadable {what}") from None
    if number < 0:
        raise TarDamage(f"a tar extended header has a negative {what}")
    return number


def _pax_float(value: bytes) -> float:
    try:
        return float(value)
    except ValueError:
        raise TarDamage("a tar extended header has an unreadable mtime") from None


def _member_name(block: bytes, fields: dict[str, bytes], long_name: bytes | None) -> bytes:
    """A member's name: its pax ``path``, else its GNU long name, else the header's (ustar: after its prefix)."""
    if "path" in fields:
        return fields["path"]
    if long_name is not None:
        return long_name
    raw_name = _cstring(block[0:100])
    if block[257:263] == b"ustar\x00":  # POSIX ustar: a prefix may hold the leading folders
        prefix = _cstring(block[345:500])
        if prefix:
            raw_name = prefix + b"/" + raw_name
    return raw_name
