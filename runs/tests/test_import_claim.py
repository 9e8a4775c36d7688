"""One import per bundle at a time, claimed by a conditional update; bad uploads refused before they are queued."""

from __future__ import annotations

import tarfile
import time
from datetime import timedelta
from typing import Any

import pytest
from django.core.management import call_command
from django.utils import timezone

from runs import importer, submit
from runs.bundle import BundleError
from runs.importer import BundleBusy, ImportFailed, claim_bundle, import_bundle, store_bundle
from runs.models import Bundle, Result, Run
from runs.parse import check_bundle
from runs.tasks import requeue_bundles
from runs.tests.hostile import RUN, good_run, member, sb_met, sb_o, tgz, tgz_of_files

pytestmark = pytest.mark.django_db


def _stored(data: bytes, name: str = "a.tgz") -> Bundle:
    bundle, _ = store_bundle(data, name=name, source=Bundle.Source.UPLOAD)
    return bundle


def _run_files(run: str = RUN, qps: str = "14178.15") -> dict[str, bytes]:
    return {
        f"{run}/sb.o.point-query.range100.pk1.dop1": sb_o(qps=qps),
        f"{run}/sb.met.point-query.range100.pk1.dop1": sb_met(),
    }


# --------------------------------------------------------------------------- the claim


def test_only_one_claim_of_a_queued_bundle_succeeds() -> None:
    bundle = _stored(tgz_of_files(_run_files()))
    first = claim_bundle(bundle.pk)
    assert first is not None and claim_bundle(bundle.pk) is None
    bundle.refresh_from_db()
    assert (bundle.status, bundle.claim) == (Bundle.Status.IMPORTING, first) and bundle.heartbeat_at is not None


def test_a_second_delivery_is_told_at_once_that_a_live_worker_imports_the_bundle() -> None:
    bundle = _stored(tgz_of_files(_run_files()))
    assert claim_bundle(bundle.pk) is not None
    started = time.monotonic()
    with pytest.raises(BundleBusy) as busy:
        import_bundle(bundle.pk)
    # No lock to wait on: the answer is immediate, with when to look again (once the claim would be stale).
    assert time.monotonic() - started < 1
    assert 1 <= busy.value.retry_in <= importer.claim_stale_after().total_seconds() + 1
    assert Run.objects.count() == 0 and Bundle.objects.get().status == Bundle.Status.IMPORTING


def test_an_import_whose_worker_died_is_taken_over_once_its_heartbeat_is_stale() -> None:
    bundle = _stored(tgz_of_files(_run_files()))
    dead = claim_bundle(bundle.pk)
    long_ago = timezone.now() - importer.claim_stale_after() - timedelta(seconds=1)
    Bundle.objects.filter(pk=bundle.pk).update(heartbeat_at=long_ago)
    report = import_bundle(bundle.pk)
    bundle.refresh_from_db()
    assert bundle.status == Bundle.Status.IMPORTED and bundle.claim == "" and bundle.claim != dead
    assert [r.name for r in report.runs] == [RUN] and Result.objects.count() == 1
    # What the import did, kept on the bundle: the page and the API show it.
    assert bundle.progress == {"phase": "storing", "files_read": 2, "runs_found": 1, "runs_new": 1, "runs_stored": 1}


def test_an_imported_bundle_is_reported_without_a_claim_and_a_failed_one_keeps_its_error() -> None:
    good = _stored(tgz_of_files(_run_files()))
    import_bundle(good.pk)
    assert import_bundle(good.pk).already_imported and claim_bundle(good.pk) is None

    bad = _stored(tgz_of_files({f"{RUN}/sb.o.point-query.range100.pk1.dop1": b"sysbench 1.1\nKilled\n"}), "b.tgz")
    with pytest.raises(ImportFailed):
        import_bundle(bad.pk)
    bad.refresh_from_db()
    assert bad.status == Bundle.Status.FAILED and bad.claim == "" and bad.heartbeat_at is None
    with pytest.raises(ImportFailed, match=r"sb\.o\.point-query"):
        import_bundle(bad.pk)  # not claimed again: the same error, read from the bundle


def test_requeue_bundles_resends_only_bundles_no_worker_holds() -> None:
    now = timezone.now()
    old = now - timedelta(minutes=10)
    stale = now - importer.claim_stale_after() - timedelta(seconds=5)
    # Bytes that are not archives: a bundle sent fails at once (Celery is eager here); one not sent keeps its state.
    rows = {
        "lost message": ("queued", old, None),
        "just uploaded": ("queued", now, None),
        "held by a live worker": ("importing", old, now),
        "held by a dead worker": ("importing", old, stale),
        "done": ("imported", old, None),
    }
    ids = {}
    for name, (status, uploaded_at, heartbeat_at) in rows.items():
        bundle = _stored(name.encode() * 40, name)
        Bundle.objects.filter(pk=bundle.pk).update(status=status, uploaded_at=uploaded_at, heartbeat_at=heartbeat_at)
        ids[name] = bundle.pk
    assert requeue_bundles() == 2
    statuses = dict(Bundle.objects.values_list("original_name", "status"))
    assert statuses == {
        "lost message": "failed",
        "just uploaded": "queued",
        "held by a live worker": "importing",
        "held by a dead worker": "failed",
        "done": "imported",
    }


# --------------------------------------------------------------------------- the check before queueing


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"my notes, not results\n" * 20, "not a tar"),
        (tgz_of_files({"notes/readme.txt": b"hello"}), "no run directories"),
        (tgz([member(f"{RUN}/link", kind=tarfile.SYMTYPE, target="/etc/passwd"), *good_run()]), "symbolic link"),
        (tgz([member("../escape.txt"), *good_run()]), "path traversal"),
        (tgz_of_files({f"{RUN}/my.cnf": b"[mysqld]\n"}), "no result files"),
    ],
    ids=["text", "no-run-dir", "symlink", "traversal", "run-without-results"],
)
def test_a_bad_upload_is_refused_before_it_is_queued_and_kept_only_as_a_failed_bundle(
    data: bytes, message: str, django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks() as queued:
        submission = submit.submit_bundle(data, name="bad.tgz", source=Bundle.Source.API)
    assert queued == []  # nothing for a worker to do
    bundle = submission.bundle
    assert bundle.status == Bundle.Status.FAILED and message in bundle.error and not submission.already_imported
    assert Bundle.objects.count() == 1 and Run.objects.count() == 0


def test_the_check_leaves_the_result_files_to_the_import() -> None:
    # A result file that does not parse is the import's to find: the check stops at the first result file.
    broken = tgz_of_files({f"{RUN}/sb.o.point-query.range100.pk1.dop1": b"sysbench 1.1\nKilled\n"})
    check_bundle(broken, name="broken.tgz")
    with pytest.raises(BundleError, match="not a tar"):
        check_bundle(b"hello world\n" * 60, name="hello.tgz")


def test_a_failed_bundle_uploaded_again_is_checked_again_and_queued_when_it_passes(
    django_capture_on_commit_callbacks: Any,
) -> None:
    data = tgz_of_files(_run_files())
    bundle = _stored(data)
    Bundle.objects.filter(pk=bundle.pk).update(status="failed", error="an older parser refused it")
    with django_capture_on_commit_callbacks(execute=True):
        submission = submit.submit_bundle(data, name="again.tgz", source=Bundle.Source.UPLOAD)
    assert submission.bundle.pk == bundle.pk and not submission.already_imported
    assert Bundle.objects.get().status == Bundle.Status.IMPORTED and Run.objects.count() == 1


# --------------------------------------------------------------------------- the command says what it did


def test_the_command_says_when_bytes_were_imported_and_links_runs_imported_before(
    tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    first = tmp_path / "first.tgz"
    first.write_bytes(tgz_of_files(_run_files()))
    call_command("import_bundle", str(first))
    capsys.readouterr()
    bundle = Bundle.objects.get()
    run = Run.objects.get()

    call_command("import_bundle", str(first))
    out = capsys.readouterr().out
    when = f"{bundle.imported_at:%Y-%m-%d %H:%M}"
    assert out == f"first.tgz: already imported on {when} UTC as bundle {bundle.pk}, nothing new\n"

    repacked = tmp_path / "repacked.tgz"
    repacked.write_bytes(tgz_of_files({**_run_files(), "NOTES.txt": b"packed again\n"}))
    call_command("import_bundle", str(repacked))
    out = capsys.readouterr().out
    second = Bundle.objects.latest("pk")
    lines = out.splitlines()
    assert lines[:2] == [
        f"repacked.tgz: bundle {second.pk}: all 1 runs were imported before, from other bundles; nothing new",
        f"  {RUN}: already imported as run {run.pk} (bundle {bundle.pk}), skipped",
    ]
    # What the parse noticed is said even when nothing is new (here: no server named).
    assert all(line.startswith("  warning: ") for line in lines[2:]), lines


@pytest.mark.django_db(transaction=True)
def test_an_import_stopped_by_a_database_error_gives_its_claim_back_and_stores_nothing() -> None:
    import psycopg
    from django.db import DataError, connection

    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL triggers (set DATABASE_URL)")
    # Every value a bundle can carry is checked before the store now, so the database is made to refuse the
    # results itself (a data error, as a value out of range would be), half-way through the store: the run rows
    # are in by then.
    bundle = _stored(tgz_of_files(_run_files()))
    with connection.cursor() as cursor:
        cursor.execute(
            "CREATE FUNCTION benchdash_test_refuse() RETURNS trigger LANGUAGE plpgsql AS "
            "$$ BEGIN RAISE EXCEPTION 'refused by the test' USING ERRCODE = '22003'; END $$"
        )
        cursor.execute(
            "CREATE TRIGGER benchdash_test_refuse BEFORE INSERT ON runs_result "
            "FOR EACH ROW EXECUTE FUNCTION benchdash_test_refuse()"
        )
    try:
        # Results go in by COPY on PostgreSQL, whose errors come as psycopg's own classes, not Django's.
        with pytest.raises((DataError, psycopg.DataError)):
            import_bundle(bundle.pk)  # outside any transaction, as in a worker: the heartbeat thread runs too
    finally:
        with connection.cursor() as cursor:
            cursor.execute("DROP TRIGGER benchdash_test_refuse ON runs_result")
            cursor.execute("DROP FUNCTION benchdash_test_refuse()")
    bundle.refresh_from_db()
    # Queued again at once (a retry need not wait for the claim to go stale), with nothing of it stored.
    assert (bundle.status, bundle.claim, bundle.heartbeat_at) == (Bundle.Status.QUEUED, "", None)
    assert Run.objects.count() == 0 and Result.objects.count() == 0
