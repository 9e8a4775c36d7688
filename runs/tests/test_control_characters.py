"""A control character in any imported name (run, build, version, server, microbenchmark) is refused with a clear
422 naming the file and the field, whether the name came from a result file, a manifest or the upload form; nothing
is stored. Such a name would rewrite what a terminal or a spreadsheet shows of it."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from runs.importer import ImportFailed, archive_directory, submit_and_import
from runs.models import Bundle, Run

BASE = "x.my5651_rel_o2nofp.z11a_c32r128.pk1"
DBB = "dbbench/arc/may25.db_bench/ser7/byrx/sum.byrx.lru.txt"


def _folder(corpus: Path, tmp_path: Path, *, replace: tuple[str, str] | None = None) -> Path:
    folder = tmp_path / "dop8"
    folder.mkdir()
    text = (corpus / "sysbench-summary-dops" / "dop8" / "qps.abs.in.tsv").read_text()
    if replace:
        text = text.replace(*replace)
    (folder / "qps.abs.in.tsv").write_text(text)
    return folder


@pytest.mark.django_db(transaction=True)
def test_an_escape_in_a_run_name_of_a_table_is_a_422_naming_the_file_line_and_field(
    corpus: Path, tmp_path: Path, client: Client, user_with_role: Callable[..., Any]
) -> None:
    client.force_login(user_with_role("uploader"))
    folder = _folder(corpus, tmp_path, replace=(f"col-1 : {BASE}", f"col-1 : {BASE}\x1b[2J"))
    response = client.post("/api/bundles/", {"file": SimpleUploadedFile("esc.tar.gz", archive_directory(folder))})
    assert response.status_code == 422, response.content
    error = response.json()["error"]
    assert "dop8/qps.abs.in.tsv: line 1: the run name" in error and "control character U+001B" in error
    assert not Run.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_a_control_character_in_the_upload_forms_server_is_a_422_naming_the_field(
    corpus: Path, tmp_path: Path, client: Client, user_with_role: Callable[..., Any]
) -> None:
    client.force_login(user_with_role("uploader"))
    data = archive_directory(_folder(corpus, tmp_path))
    response = client.post("/api/bundles/", {"file": SimpleUploadedFile("bell.tar.gz", data), "server": "c48\x07"})
    assert response.status_code == 422, response.content
    error = response.json()["error"]
    assert "dop8/qps.abs.in.tsv: the server 'c48\\x07' holds the control character U+0007" in error
    assert not Run.objects.exists()


@pytest.mark.django_db
def test_a_control_character_in_a_db_bench_version_is_refused_naming_the_file_and_field(
    corpus: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "byrx"
    folder.mkdir()
    text = (corpus / DBB).read_text().replace("\t10.2.1\t", "\t10.2.1\x1b\t")
    (folder / "sum.byrx.lru.txt").write_text(text)
    with pytest.raises(ImportFailed, match=r"byrx/sum\.byrx\.lru\.txt: the (run name|build|version) .* U\+001B"):
        submit_and_import(archive_directory(folder), name="dbb.tar.gz", source=Bundle.Source.COMMAND)
    assert not Run.objects.exists()


@pytest.mark.django_db
def test_printable_names_import_as_before(corpus: Path, tmp_path: Path) -> None:
    folder = tmp_path / "byrx"
    folder.mkdir()
    shutil.copyfile(corpus / DBB, folder / "sum.byrx.lru.txt")
    submit_and_import(archive_directory(folder), name="dbb.tar.gz", source=Bundle.Source.COMMAND)
    assert Run.objects.filter(build__name="10.2.1.lru").exists()
