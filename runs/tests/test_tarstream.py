"""The streaming tar reader against archives written by the standard library in every format."""

from __future__ import annotations

import contextlib
import io
import tarfile

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from runs.tarstream import TarDamage, TarStream


def _tar(members: list[tuple[tarfile.TarInfo, bytes]], fmt: int = tarfile.PAX_FORMAT) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=fmt) as tf:
        for info, data in members:
            info.size = len(data) if info.isreg() else 0
            tf.addfile(info, io.BytesIO(data) if info.isreg() else None)
    return buf.getvalue()


def _file(name: str, mtime: int = 1_700_000_000) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.mtime = mtime
    return info


def _with_checksum(data: bytes) -> bytes:
    """The first header's checksum recomputed after an edit, so only the edit itself is wrong."""
    block = bytearray(data)
    block[148:156] = b"%06o\x00 " % (sum(block[:512]) - sum(block[148:156]) + 256)
    return bytes(block)


def _walk(data: bytes, *, read: bool = True) -> list[tuple[str, str, int, float, bytes]]:
    tar = TarStream(io.BytesIO(data))
    out = []
    for entry in tar.entries():
        body = tar.read() if read and entry.kind == "file" else b""
        out.append((entry.name, entry.kind, entry.size, entry.mtime, body))
    assert tar.ended
    return out


LONG = "x.my8044_rel_o2nofp.z12a_c8r32.pk1/" + "deep/" * 30 + "sb.o.point-query.range100.pk1.dop1"


@pytest.mark.parametrize("fmt", [tarfile.USTAR_FORMAT, tarfile.GNU_FORMAT, tarfile.PAX_FORMAT], ids=str)
def test_names_sizes_times_and_data_match_what_was_written_in_every_format(fmt: int) -> None:
    folder = _file("x.a.c.pk1")
    folder.type = tarfile.DIRTYPE
    members = [
        (folder, b""),
        (_file("x.a.c.pk1/sb.o.a", 1_600_000_000), b"queries: 5\n" * 100),
        (_file("x.a.c.pk1/empty"), b""),
        (_file("x.a.c.pk1/odd"), b"z" * 513),
    ]
    if fmt != tarfile.USTAR_FORMAT:  # ustar has no room for such a name
        members.append((_file(LONG), b"long"))
    else:
        members.append((_file("p/" * 60 + "f"), b"prefix field"))  # > 100 bytes: split into prefix + name

    walked = _walk(_tar(members, fmt))

    assert [(n, k, s, b) for n, k, s, _, b in walked] == [
        (info.name.rstrip("/"), "dir" if info.isdir() else "file", len(data), data) for info, data in members
    ]
    assert walked[1][3] == 1_600_000_000.0


def test_a_pax_header_overrides_the_name_size_and_a_fractional_mtime() -> None:
    info = _file("caf\u00e9/sb.o.\u2603")
    info.mtime = 1_700_000_000.25  # type: ignore[assignment]
    walked = _walk(_tar([(info, b"abc")], tarfile.PAX_FORMAT))
    assert walked == [("caf\u00e9/sb.o.\u2603", "file", 3, 1_700_000_000.25, b"abc")]


def test_links_devices_and_fifos_are_reported_by_kind_for_the_caller_to_refuse() -> None:
    kinds = {
        tarfile.SYMTYPE: "symlink",
        tarfile.LNKTYPE: "hardlink",
        tarfile.CHRTYPE: "chardev",
        tarfile.BLKTYPE: "blockdev",
        tarfile.FIFOTYPE: "fifo",
    }
    members = []
    for i, kind in enumerate(kinds):
        info = _file(f"m{i}")
        info.type = kind
        info.linkname = "/etc/passwd"
        members.append((info, b""))
    assert [k for _, k, *_ in _walk(_tar(members))] == list(kinds.values())


def test_unread_data_is_skipped_and_a_partial_read_resumes_at_the_next_header() -> None:
    data = _tar([(_file("a"), b"A" * 3000), (_file("b"), b"B" * 10), (_file("c"), b"C" * 700)])
    tar = TarStream(io.BytesIO(data))
    seen = []
    for entry in tar.entries():
        if entry.name == "a":
            assert tar.read(5) == b"AAAAA"  # the rest is skipped
        elif entry.name == "c":
            seen.append(tar.read(10**9))  # never more than the member holds
        seen.append(entry.name)
    assert seen == ["a", "b", b"C" * 700, "c"]


def test_a_folder_marked_only_by_its_trailing_slash_is_a_folder() -> None:
    info = _file("old/")
    info.type = tarfile.AREGTYPE
    data = bytearray(_tar([(info, b"")], tarfile.USTAR_FORMAT))
    assert _walk(bytes(data)) == [("old", "dir", 0, 1_700_000_000.0, b"")]


def test_a_base_256_size_is_read() -> None:
    block = bytearray(_tar([(_file("big"), b"x" * 5)], tarfile.GNU_FORMAT))
    block[124:136] = b"\x80" + (5).to_bytes(11, "big")
    assert _walk(_with_checksum(block)) == [("big", "file", 5, 1_700_000_000.0, b"xxxxx")]


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda t: t[:100], "stops inside a header"),
        (lambda t: t[: 512 + 200], "stops inside a member's data"),
        (lambda t: t[:1024], "stops before its end-of-archive marker"),
        (lambda t: t[:10] + b"?" + t[11:], "fails its checksum"),
        (lambda t: _with_checksum(t[:124] + b"12345678901z" + t[136:]), "unreadable size field"),
    ],
    ids=["cut-header", "cut-data", "no-end-marker", "checksum", "size-field"],
)
def test_damage_is_reported_with_its_reason(damage: object, message: str) -> None:
    data = _tar([(_file("a"), b"x" * 300)], tarfile.USTAR_FORMAT)
    with pytest.raises(TarDamage, match=message):
        _walk(damage(data))  # type: ignore[operator]


def test_an_extended_header_claiming_more_than_the_sanity_limit_is_refused_before_it_is_read() -> None:
    pax = tarfile.TarInfo("././@PaxHeader")
    pax.type = tarfile.XHDTYPE
    pax.size = 5 * 1024**3
    with pytest.raises(TarDamage, match="claims 5,368,709,120 bytes"):
        _walk(pax.tobuf(tarfile.USTAR_FORMAT))


def _reference(data: bytes) -> list[tuple[str, int, bytes]]:
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as tf:
        return [
            (m.name, m.size, tf.extractfile(m).read())  # type: ignore[union-attr]
            for m in tf.getmembers()
            if m.isreg()
        ]


names = st.text(
    alphabet=st.characters(min_codepoint=0x21, max_codepoint=0x2FF, exclude_characters="/\\"), min_size=1, max_size=40
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(st.lists(names, min_size=1, max_size=6).map("/".join), st.binary(max_size=2000)),
        min_size=1,
        max_size=8,
        unique_by=lambda m: m[0],
    ),
    st.sampled_from([tarfile.GNU_FORMAT, tarfile.PAX_FORMAT]),
)
def test_every_file_reads_as_the_standard_library_reads_it(members: list[tuple[str, bytes]], fmt: int) -> None:
    data = _tar([(_file(name), body) for name, body in members], fmt)
    ours = [(n, s, b) for n, k, s, _, b in _walk(data) if k == "file"]
    assert ours == _reference(data)


@settings(max_examples=200, deadline=None)
@given(st.integers(min_value=0, max_value=4095), st.integers(min_value=0, max_value=255))
def test_a_flipped_byte_anywhere_gives_the_right_bytes_or_a_clear_error(at: int, value: int) -> None:
    data = bytearray(_tar([(_file("x.a.c.pk1/sb.o.a"), b"q" * 700), (_file("b" * 120), b"w" * 10)]))
    at %= len(data)
    data[at] = value
    with contextlib.suppress(TarDamage):  # any other exception type fails the test
        _walk(bytes(data))
