"""Uploaded archives are kept a chunk at a time and read back the same way (runs.archive_store).

On PostgreSQL (as CI runs them) these use the real bytea chunks; the same
bytes through any door are one bundle, and a store that fails half-way
leaves nothing behind.
"""

from __future__ import annotations

import hashlib
import io
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.test import override_settings

from runs import archive_store, importer, submit
from runs.models import Bundle, BundleChunk, BundleData, Result, Run
from runs.tests import big_upload, hostile

pytestmark = pytest.mark.django_db(transaction=True)

KiB = 1024


@pytest.fixture
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setattr(archive_store, "CHUNK_BYTES", 64 * KiB)
    return 64 * KiB


def _stored(bundle: Bundle) -> list[bytes]:
    return [
        bytes(data) for data in BundleChunk.objects.filter(bundle=bundle).order_by("seq").values_list("data", flat=True)
    ]


def test_an_archive_is_kept_in_chunks_of_at_most_the_chunk_size_and_read_back_byte_for_byte(
    tmp_path: Path, small_chunks: int
) -> None:
    path = big_upload.write(tmp_path / "big.tar", 1024 * KiB)
    with path.open("rb") as upload:
        bundle, created = importer.store_bundle(upload, name="big.tar", source=Bundle.Source.UPLOAD)
    data = path.read_bytes()
    chunks = _stored(bundle)
    assert created and len(chunks) == -(-len(data) // small_chunks)
    assert all(len(chunk) == small_chunks for chunk in chunks[:-1]) and 0 < len(chunks[-1]) <= small_chunks
    assert b"".join(chunks) == data == archive_store.archive_bytes(bundle)
    assert bundle.sha256 == hashlib.sha256(data).hexdigest() and bundle.size == len(data)
    assert not BundleData.objects.exists()


def test_the_same_bytes_as_a_file_a_stream_of_pieces_or_bytes_are_one_bundle(tmp_path: Path, small_chunks: int) -> None:
    path = big_upload.write(tmp_path / "big.tar", 300 * KiB)
    data = path.read_bytes()

    def pieces() -> Iterator[bytes]:  # odd sizes, not aligned to the chunks
        for start in range(0, len(data), 10_007):
            yield data[start : start + 10_007]

    first, created = importer.store_bundle(pieces(), name="stream.tar", source=Bundle.Source.API)
    assert created and first.sha256 == hashlib.sha256(data).hexdigest()
    with path.open("rb") as upload:
        again, created_again = importer.store_bundle(upload, name="file.tar", source=Bundle.Source.UPLOAD)
    bytes_again, created_bytes = importer.store_bundle(data, name="bytes.tar", source=Bundle.Source.COMMAND)
    stream_again, created_stream = importer.store_bundle(pieces(), name="stream2.tar", source=Bundle.Source.API)
    assert (again.pk, bytes_again.pk, stream_again.pk) == (first.pk,) * 3
    assert not (created_again or created_bytes or created_stream)
    assert Bundle.objects.count() == 1 and b"".join(_stored(first)) == data


def test_a_store_that_fails_half_way_leaves_no_bundle_and_no_chunk(small_chunks: int) -> None:
    def broken() -> Iterator[bytes]:
        for _ in range(5):
            yield b"x" * small_chunks
        raise ConnectionResetError("the client went away mid-upload")

    with pytest.raises(ConnectionResetError):
        importer.store_bundle(broken(), name="broken.tar", source=Bundle.Source.API)
    assert not Bundle.objects.exists() and not BundleChunk.objects.exists()


@override_settings(BUNDLE_MAX_BYTES=256 * KiB)
def test_a_stream_past_the_limit_is_refused_when_it_passes_it_and_nothing_is_kept(small_chunks: int) -> None:
    read = []

    def endless() -> Iterator[bytes]:
        while True:
            read.append(small_chunks)
            yield b"y" * small_chunks

    with pytest.raises(importer.ImportFailed, match="over the bundle limit of 262,144"):
        importer.store_bundle(endless(), name="endless.tar", source=Bundle.Source.API)
    assert sum(read) == 256 * KiB + small_chunks  # it stopped at the first chunk past the limit
    assert not Bundle.objects.exists() and not BundleChunk.objects.exists()
    with pytest.raises(importer.ImportFailed, match="over the bundle limit"):
        importer.store_bundle(io.BytesIO(b"z" * (300 * KiB)), name="file.tar", source=Bundle.Source.UPLOAD)
    assert not Bundle.objects.exists()


def test_a_failed_bundle_stored_again_is_queued_again_without_new_chunks(small_chunks: int) -> None:
    data = hostile.tgz_of_files({"notes.txt": b"no runs here\n"})
    bundle, _ = importer.store_bundle(data, name="a.tgz", source=Bundle.Source.UPLOAD)
    Bundle.objects.filter(pk=bundle.pk).update(status=Bundle.Status.FAILED, error="bad")
    again, created = importer.store_bundle(io.BytesIO(data), name="a.tgz", source=Bundle.Source.UPLOAD)
    assert not created and again.pk == bundle.pk and again.status == Bundle.Status.QUEUED and again.error == ""
    assert BundleChunk.objects.count() == 1


def test_a_bundle_stored_whole_before_chunks_existed_is_still_imported(corpus: Path) -> None:
    data = (corpus / "sysbench-pg-tarballs" / "x.pg1122_o2nofp.x10a_wm1_c32r128.pk1.tar.gz").read_bytes()
    bundle = Bundle.objects.create(
        sha256=hashlib.sha256(data).hexdigest(), original_name="old.tar.gz", size=len(data), source="upload"
    )
    BundleData.objects.create(bundle=bundle, content=data)
    report = importer.import_bundle(bundle.pk)
    # 39 tests and the load step.
    assert [run.results for run in report.runs] == [40]
    assert Run.objects.get().bundle == bundle and Result.objects.count() == 40
    assert archive_store.archive_bytes(bundle) == data


def test_a_big_upload_imports_from_its_chunks(tmp_path: Path, small_chunks: int) -> None:
    path = big_upload.write(tmp_path / "big.tar", 2048 * KiB)
    with path.open("rb") as upload:
        submission = submit.submit_bundle(upload, name="big.tar", source=Bundle.Source.UPLOAD)
    bundle = Bundle.objects.get(pk=submission.bundle.pk)
    assert bundle.status == Bundle.Status.IMPORTED, bundle.error  # eager without a broker; a worker otherwise
    assert BundleChunk.objects.filter(bundle=bundle).count() == -(-path.stat().st_size // small_chunks)
    assert Result.objects.filter(run__bundle=bundle).count() == 1
