"""Every file of a bundle is either used or listed with why it was not: stored on the bundle (bounded), shown
on its page, printed by import_bundle and given by the API."""

from __future__ import annotations

import tarfile
from pathlib import Path

import pytest
from django.core.management import call_command
from django.test import Client

from runs.importer import submit_and_import
from runs.models import Bundle, Result
from runs.parse import IGNORED_SHOWN
from runs.tests.hostile import tgz_of_files
from suites.sysbench.rundir import NO_PREPARE_O, NO_SB_O, RAW_SAMPLES, SCRIPT_OUTPUT, SECOND_COPY

pytestmark = pytest.mark.django_db

RUN = "x.my8044_rel_o2nofp.z12a_c8r32.pk1"
PG174 = "x.pg174_o2nofp.x10a_wm1_c32r128.pk1"


def _mysql_files(corpus: Path, names: list[str]) -> dict[str, bytes]:
    return {f"{RUN}/{name}": (corpus / "sysbench-mysql-small" / RUN / name).read_bytes() for name in names}


def _reasons(bundle: Bundle) -> dict[str, str]:
    return {item["path"]: item["reason"] for item in bundle.stats["ignored"]}


def test_an_sb_met_without_its_sb_o_is_listed_and_counted(corpus: Path) -> None:
    files = _mysql_files(
        corpus,
        [
            "sb.o.point-query.range100.pk1.dop1",
            "sb.met.point-query.range100.pk1.dop1",
            "sb.met.insert.range100.pk1.dop1",  # its sb.o is left out
        ],
    )
    # The author's tables beside the run directory, and a stray result file outside it.
    files["o.met.all"] = (corpus / "sysbench-mysql-small" / "o.met.all").read_bytes()
    files["sb.o.insert.range100.pk1.dop1"] = (
        corpus / "sysbench-mysql-small" / RUN / "sb.o.insert.range100.pk1.dop1"
    ).read_bytes()
    report = submit_and_import(tgz_of_files(files), name="partial.tar.gz", source=Bundle.Source.COMMAND)
    bundle = Bundle.objects.get(pk=report.bundle_id)
    assert _reasons(bundle) == {
        f"{RUN}/sb.met.insert.range100.pk1.dop1": NO_SB_O,
        # HW metrics summary tables without the QPS tables they go with.
        "o.met.all": "HW metrics without a qps.abs table beside them (the runs' QPS)",
        "sb.o.insert.range100.pk1.dop1": "outside a run directory (x.<build>.<config>.pk<N>)",
    }
    assert bundle.stats["ignored_files"] == 3
    # Nothing of the lone sb.met was stored: insert has no result.
    assert list(Result.objects.values_list("microbenchmark__test", flat=True)) == ["point-query"]


def test_a_load_metrics_file_without_the_load_output_is_listed(corpus: Path) -> None:
    with tarfile.open(corpus / "sysbench-pg-tarballs" / f"{PG174}.tar.gz") as tar:
        files = {}
        for name in ("sb.o.point-query.range100.pk1.dop40", "sb.prepare.met.point-query.warm.range100.pk1"):
            fh = tar.extractfile(f"{PG174}/{name}")
            assert fh is not None
            files[f"{PG174}/{name}"] = fh.read()
    report = submit_and_import(tgz_of_files(files), name="no-load.tar.gz", source=Bundle.Source.COMMAND)
    bundle = Bundle.objects.get(pk=report.bundle_id)
    assert _reasons(bundle) == {f"{PG174}/sb.prepare.met.point-query.warm.range100.pk1": NO_PREPARE_O}
    assert not Result.objects.filter(microbenchmark__test="load").exists()


# A bound below the real tarball's 1,229 files not read (every one is listed under IGNORED_SHOWN), to see how a
# bundle with more than the bound lists the first and counts the rest.
SHOWN = 200


def test_a_real_tarball_lists_its_unread_files_with_reasons_bounded(
    corpus: Path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert IGNORED_SHOWN > 1229
    monkeypatch.setattr("runs.parse.IGNORED_SHOWN", SHOWN)
    tarball = corpus / "sysbench-pg-tarballs" / f"{PG174}.tar.gz"
    with tarfile.open(tarball) as tar:
        members = [m.name for m in tar if m.isfile()]
    call_command("import_bundle", str(tarball), "--server", "pg-48", verbosity=2)
    out = capsys.readouterr().out
    bundle = Bundle.objects.get()
    listed = bundle.stats["ignored"]
    total = bundle.stats["ignored_files"]
    assert len(listed) == SHOWN < total < len(members)
    assert {item["path"].split("/", 1)[0] for item in listed} == {PG174}
    assert all(item["path"] in members for item in listed)
    reasons = {item["reason"] for item in listed}
    assert RAW_SAMPLES in reasons and SCRIPT_OUTPUT in reasons and SECOND_COPY in reasons
    by_path = {item["path"]: item["reason"] for item in listed}
    iostat = next(path for path in by_path if "/sb.io." in path)
    assert by_path[iostat] == RAW_SAMPLES

    # The command prints the list, each file with its reason, and how many more there are.
    assert f"  {total} files not read:\n" in out
    first = listed[0]
    assert f"    {first['path']}: {first['reason']}\n" in out
    assert f"    … and {total - SHOWN} more\n" in out

    # The bundle page has them in a collapsed list, and says how many are not listed.
    page = Client().get(bundle.get_absolute_url()).content.decode()
    assert '<details class="ignored-files">' in page
    assert f"<code>{first['path']}</code>" in page
    assert f"… and {total - SHOWN} more, not listed." in page

    # The API's bundle resource gives the same list and count.
    resource = Client().get(f"/api/bundles/{bundle.pk}").json()
    assert resource["ignored_files"] == total
    assert resource["ignored"] == listed


def test_the_command_counts_a_long_list_by_reason_and_lists_each_file_only_when_asked(
    corpus: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tarball = corpus / "sysbench-pg-tarballs" / f"{PG174}.tar.gz"
    call_command("import_bundle", str(tarball), "--server", "pg-48")
    out = capsys.readouterr().out
    bundle = Bundle.objects.get()
    read, listed, total = bundle.stats["read"], bundle.stats["ignored"], bundle.stats["ignored_files"]
    assert len(read) + len(listed) > 1000  # a run-directory archive: every file is on the bundle's page

    # On the terminal: how many were read, and the files not read counted by reason, every count adding up.
    assert f"  {len(read)} files read (--verbosity 2 lists each with what it became)\n" in out
    assert f"  {total} files not read, by reason (--verbosity 2 lists each):\n" in out
    by_reason: dict[str, int] = {}
    for item in listed:
        by_reason[item["reason"]] = by_reason.get(item["reason"], 0) + 1
    for reason, count in by_reason.items():
        assert f"    {count} × {reason}\n" in out
    assert sum(by_reason.values()) == total
    assert read[0]["path"] not in out and listed[0]["path"] not in out
    assert len(out.splitlines()) < 60


def test_files_that_look_like_results_but_were_not_used_are_listed_first(
    corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("runs.parse.IGNORED_SHOWN", SHOWN)
    # The real tarball without one test's sb.o: its sb.met is one of 1200 files not read, and listed first.
    with tarfile.open(corpus / "sysbench-pg-tarballs" / f"{PG174}.tar.gz") as tar:
        files = {}
        for m in tar:
            fh = tar.extractfile(m) if m.isfile() else None
            if fh is not None and not m.name.endswith("/sb.o.insert.range100.pk1.dop40"):
                files[m.name] = fh.read()
    report = submit_and_import(tgz_of_files(files), name="no-insert.tar.gz", source=Bundle.Source.COMMAND)
    bundle = Bundle.objects.get(pk=report.bundle_id)
    assert bundle.stats["ignored_files"] > SHOWN
    assert bundle.stats["ignored"][0] == {"path": f"{PG174}/sb.met.insert.range100.pk1.dop40", "reason": NO_SB_O}
    assert report.runs[0].tests == 38
