"""An uploaded archive kept in the database a chunk at a time, and read back the same way.

An upload near the size limit is hundreds of megabytes. It arrives in a temporary
file (Django's upload handler), and from there it is hashed and written as
BundleChunk rows of at most CHUNK_BYTES each, in one transaction: the process
never holds more than one chunk, and a failure half-way (the database gone, the
size limit passed by a stream) leaves no bundle at all. The content hash is the
bundle's identity, so the same bytes twice are one bundle, whichever door they
came through.

A seekable source (a file, bytes) is hashed first: bytes seen before are answered
with their bundle without writing anything, and two simultaneous uploads of new
bytes meet on the hash's unique index before either writes its chunks. A source
that can be read only once (an iterator of pieces) is written under a provisional
hash that the real one replaces at the end.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import logging
import tempfile
import uuid
from collections.abc import Iterable, Iterator, Mapping
from typing import IO, Any

from django.conf import settings
from django.db import DatabaseError, IntegrityError, connection, transaction
from django.db.models import BinaryField
from django.db.models.functions import Length, Substr

from runs.models import Bundle, BundleChunk, BundleData

log = logging.getLogger(__name__)

CHUNK_BYTES = 8 * 1024 * 1024
# What the hash column holds while a once-only stream is written (never visible: it is inside the transaction).
PROVISIONAL_PREFIX = "provisional-"

Source = bytes | bytearray | memoryview | IO[bytes] | Iterable[bytes]


class TooLarge(Exception):
    """The archive is over the bundle limit; nothing was stored."""


class ChangedWhileRead(Exception):
    """A file's bytes differ between its hashing and its storing (someone wrote to it meanwhile)."""


class StorageFull(Exception):
    """The disk that keeps the archives (the database's) filled up while this one was written; nothing was stored."""


STORAGE_FULL = "the server's bundle storage is full; nothing was stored, try again later or ask an administrator"
# SQLSTATE 53100 (disk_full): the database could not extend a file. Its ENOSPC, or EDQUOT on a disk with quotas.
_DISK_FULL_SQLSTATE = "53100"


def disk_full(exc: BaseException) -> bool:
    """Whether an error says a disk is full: an OSError of ENOSPC or EDQUOT, or the database's disk_full."""
    if isinstance(exc, OSError):
        return exc.errno in (errno.ENOSPC, errno.EDQUOT)
    return getattr(exc.__cause__, "sqlstate", None) == _DISK_FULL_SQLSTATE


def give_back_space() -> None:
    """After a write that filled the disk was rolled back: vacuum the chunk table, so the pages its chunks took
    are free for the next archive now rather than at the next autovacuum. Only outside a transaction (VACUUM
    cannot run in one); a caller inside one calls it after its transaction ended."""
    if connection.vendor != "postgresql" or connection.in_atomic_block:
        return
    try:
        with connection.cursor() as cursor:
            cursor.execute(f"VACUUM {BundleChunk._meta.db_table}")
    except DatabaseError:
        log.warning("could not vacuum the bundle chunks after a full disk", exc_info=True)


def _is_buffer(source: object) -> bool:
    return isinstance(source, bytes | bytearray | memoryview)


def rewindable(source: object) -> bool:
    """Bytes, or a file that can be read again from its start."""
    if _is_buffer(source):
        return True
    seekable = getattr(source, "seekable", None)
    return bool(hasattr(source, "read") and callable(seekable) and seekable())


def chunks(source: Source, size: int | None = None) -> Iterator[bytes]:
    """The archive's bytes in pieces of ``size`` (the last one shorter), from its start."""
    size = size or CHUNK_BYTES
    if _is_buffer(source):
        view = memoryview(source)  # type: ignore[arg-type]
        for start in range(0, len(view), size):
            yield bytes(view[start : start + size])
        return
    if hasattr(source, "read"):
        stream: IO[bytes] = source  # type: ignore[assignment]
        if rewindable(stream):
            stream.seek(0)
        while block := stream.read(size):
            yield block
        return
    pending = bytearray()
    pieces: Iterable[bytes] = source  # type: ignore[assignment]
    for piece in pieces:
        pending += piece
        while len(pending) >= size:
            yield bytes(pending[:size])
            del pending[:size]
    if pending:
        yield bytes(pending)


def sha256_of(source: bytes | bytearray | memoryview | IO[bytes]) -> tuple[str, int]:
    """(hex digest, size) of rewindable bytes or a file, read a chunk at a time."""
    hasher = hashlib.sha256()
    size = 0
    for block in chunks(source):
        hasher.update(block)
        size += len(block)
    return hasher.hexdigest(), size


def too_large(name: str, size: int) -> str:
    return f"{name}: {size:,} bytes or more is over the bundle limit of {settings.BUNDLE_MAX_BYTES:,}"


def store(
    source: Source,
    *,
    name: str,
    kind: str,
    user: Any = None,
    overrides: Mapping[str, Any] | None = None,
) -> tuple[Bundle, bool]:
    """Keep an archive as a bundle: (bundle, created). The same bytes twice give the same bundle.

    A bundle that failed before is queued again, so fixing the parser and uploading again retries it.
    Raises TooLarge (nothing stored) past BUNDLE_MAX_BYTES, ChangedWhileRead if a file changed under us,
    StorageFull (nothing stored: the transaction rolled back) if the disk filled up on the way.
    """
    limit = settings.BUNDLE_MAX_BYTES
    known: str | None = None
    if rewindable(source):
        known, size = sha256_of(source)  # type: ignore[arg-type]
        if size > limit:
            raise TooLarge(too_large(name, size))
        earlier = Bundle.objects.filter(sha256=known).first()
        if earlier is not None:
            return _again(earlier), False
    digest = known or ""
    try:
        with transaction.atomic():
            bundle = Bundle.objects.create(
                # The real hash when known: a simultaneous upload of the same bytes waits here on the unique index
                # and then finds this bundle, instead of writing its own chunks first.
                sha256=known or f"{PROVISIONAL_PREFIX}{uuid.uuid4().hex}",
                original_name=name[:255],
                size=0,
                source=kind,
                uploaded_by=user if getattr(user, "is_authenticated", False) else None,
                overrides={k: v for k, v in (overrides or {}).items() if v},
            )
            digest, size = _write_chunks(bundle, source, name=name, limit=limit)
            if known is not None and digest != known:
                raise ChangedWhileRead(f"{name}: the file changed while it was stored; nothing was stored")
            # With a provisional hash, this is where bytes stored meanwhile by another upload are found.
            Bundle.objects.filter(pk=bundle.pk).update(sha256=digest, size=size)
            bundle.sha256, bundle.size = digest, size
            return bundle, True
    except IntegrityError:
        # A concurrent or earlier upload of the same bytes won; it is that bundle.
        if not digest:
            raise
        return _again(Bundle.objects.get(sha256=digest)), False
    except (DatabaseError, OSError) as exc:
        if not disk_full(exc):
            raise
        log.error("bundle %s not stored: the disk is full (%s)", name, exc)
        give_back_space()
        raise StorageFull(f"{name}: {STORAGE_FULL}") from exc


def _write_chunks(bundle: Bundle, source: Source, *, name: str, limit: int) -> tuple[str, int]:
    hasher = hashlib.sha256()
    size = 0
    for seq, block in enumerate(chunks(source)):
        size += len(block)
        if size > limit:
            raise TooLarge(too_large(name, size))
        hasher.update(block)
        _insert_chunk(bundle.pk, seq, block)
        del block  # one chunk in memory at a time, not this one and the next
    return hasher.hexdigest(), size


def _insert_chunk(bundle_id: int, seq: int, block: bytes) -> None:
    """One chunk's row. On PostgreSQL its bytes go as a binary parameter: Django's client-side binding would
    send them as a hex literal, four more copies of the chunk in memory at once (64 MiB for 8 MiB)."""
    if connection.vendor != "postgresql":
        BundleChunk.objects.create(bundle_id=bundle_id, seq=seq, data=block)
        return
    import psycopg

    table = BundleChunk._meta.db_table
    connection.ensure_connection()
    with connection.wrap_database_errors, psycopg.Cursor(connection.connection) as cursor:
        cursor.execute(
            f"INSERT INTO {table} (bundle_id, seq, data) VALUES (%s, %s, %s)",
            [bundle_id, seq, block],
            binary=True,
        )


def _chunk_data(pk: int) -> bytes:
    """One chunk's bytes; on PostgreSQL in the binary protocol (the text one is hex: twice the size, decoded)."""
    if connection.vendor != "postgresql":
        return bytes(BundleChunk.objects.filter(pk=pk).values_list("data", flat=True).get())
    import psycopg

    connection.ensure_connection()
    with connection.wrap_database_errors, psycopg.Cursor(connection.connection) as cursor:
        cursor.execute(f"SELECT data FROM {BundleChunk._meta.db_table} WHERE id = %s", [pk], binary=True)
        row = cursor.fetchone()
    if row is None:
        raise BundleChunk.DoesNotExist(f"chunk {pk}")
    return bytes(row[0])


def _again(bundle: Bundle) -> Bundle:
    if bundle.status == Bundle.Status.FAILED:
        Bundle.objects.filter(pk=bundle.pk, status=Bundle.Status.FAILED).update(status=Bundle.Status.QUEUED, error="")
        bundle.refresh_from_db()
    return bundle


@contextlib.contextmanager
def archive_file(bundle: Bundle) -> Iterator[IO[bytes]]:
    """The stored archive copied to a temporary file one chunk at a time, so it is never whole in memory."""
    with tempfile.TemporaryFile(prefix="benchdash-bundle-") as out:
        ids = list(BundleChunk.objects.filter(bundle=bundle).order_by("seq").values_list("pk", flat=True))
        for pk in ids:
            out.write(_chunk_data(pk))
        if not ids:
            _copy_legacy(bundle, out)
        out.seek(0)
        yield out


def _copy_legacy(bundle: Bundle, out: IO[bytes]) -> None:
    """A bundle stored before chunks: its one BundleData value, read in SUBSTRING slices of CHUNK_BYTES."""
    stored = BundleData.objects.filter(bundle=bundle)
    size = stored.annotate(n=Length("content")).values_list("n", flat=True).first()
    for start in range(0, size or 0, CHUNK_BYTES):
        # SQL counts from 1; SUBSTRING of a bytea / blob is bytes, not text.
        part = Substr("content", start + 1, CHUNK_BYTES, output_field=BinaryField())
        out.write(bytes(stored.annotate(part=part).values_list("part", flat=True).get()))


def archive_bytes(bundle: Bundle) -> bytes:
    """The whole archive (for tests and small tools; the import reads ``archive_file``)."""
    with archive_file(bundle) as stored:
        return stored.read()
