"""A disk that fills up while a bundle's archive is stored: a clear 507 (API and upload page) or a clear error (the
import command), no bundle row and the space handed back. For real: the archive chunks' table is moved to a
tablespace on a small tmpfs of the test's own, so PostgreSQL itself runs out of room (root only: mount/umount;
the database server on this machine, as CREATE TABLESPACE needs its directory)."""

from __future__ import annotations

import contextlib
import io
import json
import os
import pwd
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.db import DatabaseError, connection, transaction
from django.test import Client

from accounts.permissions import UPLOADER, create_token
from runs.importer import submit_and_import
from runs.models import Bundle, BundleChunk
from runs.tests import hostile
from runs.tests.test_upload_doors import _exchange, _head
from tests import live

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

TABLESPACE_BYTES = 4 * 1024 * 1024
MB = 1024 * 1024


def _used(where: Path) -> int:
    stat = os.statvfs(where)
    return (stat.f_blocks - stat.f_bfree) * stat.f_frsize


@pytest.fixture
def full_storage() -> Iterator[Path]:
    """The chunk table on a 4 MB tmpfs tablespace of this test's own, holding an earlier bundle and vacuumed once,
    as a server's is; moved back, the tablespace dropped and unmounted at the end."""
    with _chunks_on_a_small_disk() as where:
        yield where


@contextlib.contextmanager
def _chunks_on_a_small_disk() -> Iterator[Path]:
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    try:
        owner = pwd.getpwnam("postgres")
    except KeyError:
        pytest.skip("no postgres user here: the database server is elsewhere")
    # Not under pytest's tmp_path: its folders are the test user's alone, and the server must reach this one.
    where = Path(tempfile.mkdtemp(prefix="benchdash-full-"))
    where.chmod(0o755)
    options = f"size={TABLESPACE_BYTES},mode=0700,uid={owner.pw_uid},gid={owner.pw_gid}"
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(where)], capture_output=True, check=False
    )
    if mounted.returncode != 0:
        where.rmdir()
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    name = f"bd_full_{uuid.uuid4().hex[:12]}"
    table = BundleChunk._meta.db_table
    try:
        with connection.cursor() as cursor:
            try:
                cursor.execute(f"CREATE TABLESPACE {name} LOCATION %s", [str(where)])
            except DatabaseError as exc:
                pytest.skip(f"cannot make a tablespace on the tmpfs (a database server elsewhere?): {exc}")
            _move_emptied(cursor, table, name)
        assert _used(where) <= 256 * 1024, f"the tablespace holds {_used(where):,} bytes before any archive"
        # A server's chunk table has archives and has been vacuumed: its visibility and free-space maps exist.
        # (On a table that never had them, the VACUUM after a full disk cannot write them and the space comes
        # back only at the next autovacuum once there is room; the 507 and the rollback are the same.)
        # Its archive is big enough to be stored out of line (TOAST), where the chunks of a big one go.
        earlier = {"sb.o.point-query.range100.pk1.dop1": hostile.sb_o(qps="15000.00", tps="15000.00")}
        earlier["notes.bin"] = os.urandom(64 * 1024)
        submit_and_import(hostile.tgz(hostile.good_run(extra=earlier)), name="earlier.tgz", source=Bundle.Source.API)
        with connection.cursor() as cursor:
            cursor.execute(f"VACUUM {table}")
        yield where
    finally:
        with connection.cursor() as cursor:
            cursor.execute(f"ALTER TABLE {table} SET TABLESPACE pg_default")
            cursor.execute(f"DROP TABLESPACE IF EXISTS {name}")
        subprocess.run(["umount", "-l", str(where)], check=False, timeout=30)
        shutil.rmtree(where, ignore_errors=True)


def _move_emptied(cursor: Any, table: str, tablespace: str) -> None:
    """The chunk table, with no rows at a transactional test's start, emptied for real and moved to the tablespace.

    Its files may still hold the dead rows of earlier tests of this process that stored archives and rolled back
    (a test in a transaction): they stay until an autovacuum (now or a minute later) or a flush that truncates,
    and SET TABLESPACE copies the files as they are, dead rows and all. A dozen rolled-back imports of the corpus'
    small series are 4 MB: the tablespace was full before the test stored anything. Truncated, the table takes
    there only what the test puts in it."""
    assert not BundleChunk.objects.exists(), "a transactional test starts with no archive chunks"
    cursor.execute(f"TRUNCATE {table}")
    cursor.execute(f"ALTER TABLE {table} SET TABLESPACE {tablespace}")


def _big_bundle() -> bytes:
    """A valid run directory with 6 MB of random bytes beside it: incompressible (gzip, then PostgreSQL's TOAST),
    so storing it needs more room than the tablespace has."""
    return hostile.tgz(hostile.good_run(extra={"notes.bin": os.urandom(6 * MB)}))


def _nothing_left(where: Path, before: int) -> None:
    assert list(Bundle.objects.values_list("original_name", flat=True)) == ["earlier.tgz"]
    assert BundleChunk.objects.count() == 1
    # The rolled-back chunks' pages were vacuumed off the table's end: the tablespace is as it was, but for the
    # free-space and visibility maps VACUUM writes for the table and its TOAST table (a few pages each: 72 KB seen),
    # nothing like the 6 MB the refused archive took.
    assert _used(where) - before <= 256 * 1024, (_used(where), before)


def test_the_api_answers_507_leaves_nothing_and_takes_the_next_bundle(
    tmp_path: Path, full_storage: Path, user_with_role: Callable[..., Any]
) -> None:
    live.require_postgresql()
    token = create_token(user_with_role(UPLOADER), "uploader")[1]
    boundary = uuid.uuid4().hex
    body = _head(boundary) + _big_bundle() + f"\r\n--{boundary}--\r\n".encode()
    headers = {
        "Authorization": f"Bearer {token}",
        "Content-Type": f"multipart/form-data; boundary={boundary}",
        "Content-Length": str(len(body)),
    }
    before = _used(full_storage)
    with live.gunicorn(tmp_path, workers=1, threads=2) as server:
        status, _, answer = _exchange(server.port, "/api/bundles/", headers, iter([body]))
        assert status == 507, answer[:300]
        assert json.loads(answer) == {
            "detail": "b.tar.gz: the server's bundle storage is full; nothing was stored, try again later or ask "
            "an administrator"
        }
        _nothing_left(full_storage, before)
        # The space came back: a normal bundle right after is stored and imported.
        good = _head(boundary) + hostile.tgz(hostile.good_run()) + f"\r\n--{boundary}--\r\n".encode()
        status, _, answer = _exchange(
            server.port, "/api/bundles/", {**headers, "Content-Length": str(len(good))}, iter([good])
        )
        assert status == 201, answer[:300]
    assert Bundle.objects.get(original_name="b.tar.gz").status == Bundle.Status.IMPORTED
    # The schema says so: a client generated from it knows the 507 and its body.
    upload = Client().get("/api/openapi.json").json()["paths"]["/api/bundles/"]["post"]["responses"]
    assert upload["507"]["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/ErrorOut"}


def test_the_upload_page_answers_507_with_the_reason_on_the_form(
    full_storage: Path, user_with_role: Callable[..., Any]
) -> None:
    client = Client()
    client.force_login(user_with_role(UPLOADER))
    before = _used(full_storage)
    upload = SimpleUploadedFile("big.tar.gz", _big_bundle(), content_type="application/gzip")
    response = client.post("/upload/", {"bundle": upload})
    assert response.status_code == 507
    page = response.content.decode()
    assert "big.tar.gz: the server&#x27;s bundle storage is full; nothing was stored" in page
    assert 'name="bundle"' in page  # the form, to send it again
    _nothing_left(full_storage, before)


def test_the_import_command_fails_with_the_reason_and_writes_nothing(tmp_path: Path, full_storage: Path) -> None:
    archive = tmp_path / "big.tar.gz"
    archive.write_bytes(_big_bundle())
    before = _used(full_storage)
    err = io.StringIO()
    with pytest.raises(CommandError, match=r"bundle storage is full: big\.tar\.gz and the bundles after it were not"):
        call_command("import_bundle", str(archive), "--jobs", "1", stdout=io.StringIO(), stderr=err)
    assert "error: big.tar.gz: the server's bundle storage is full; nothing was stored" in err.getvalue()
    _nothing_left(full_storage, before)


def test_archives_rolled_back_before_the_test_take_no_room_on_the_small_disk() -> None:
    # What an earlier test in a transaction leaves behind: an archive's chunks stored, then rolled back. Their dead
    # rows (5 MB, more than the whole tablespace) stay in the table's files until a vacuum.
    with transaction.atomic():
        bundle = Bundle.objects.create(sha256="0" * 64, original_name="gone.tgz", size=5 * MB, source=Bundle.Source.API)
        BundleChunk.objects.create(bundle=bundle, seq=0, data=os.urandom(5 * MB))
        transaction.set_rollback(True)
    with _chunks_on_a_small_disk() as where:
        assert list(Bundle.objects.values_list("original_name", flat=True)) == ["earlier.tgz"]
        assert _used(where) < MB, _used(where)
