"""Every bundle of the hostile corpus (runs/tests/hostile.py) through the real upload API and the import command.

Each must get a clear error naming what is wrong, store no run and no result
(a failed upload keeps its bundle row with the error, so the user can read it),
use memory bounded by the limits rather than by what the archive expands to,
and touch no file: nothing is extracted, so the working directory, the temporary
directory and the places the hostile names point at stay as they were.
"""

from __future__ import annotations

import os
import re
import sqlite3
import subprocess
import sys
import tempfile
import threading
import tracemalloc
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.test import Client

from accounts.permissions import UPLOADER, create_token
from runs.models import Bundle, Result, Run, RunFile
from runs.tests import hostile

ROOT = Path(__file__).resolve().parents[2]
CASES = hostile.every_case()
# Python-level allocation peak of one upload or import, request body included. The limits allow one wanted
# file of 64 MiB to be read (and joined from its chunks); the bombs expand to 1-5 GiB, so a bound near the
# per-file limit shows memory follows the limits, not the archive.
PEAK_BOUND = 200 * hostile.MiB
# Peak resident size of a whole `manage.py import_bundle` process (Django, the libraries and the work).
# The import reads a bundle whole into memory (at most BUNDLE_MAX_BYTES) and keeps wanted members up to
# BUNDLE_MAX_MEMBER_BYTES. Alone the command peaks near 280 MiB on this corpus; inside the full CI run it has
# measured 526 MiB (not yet explained, see the issue note). A 5 GiB bomb or an unbounded read would pass
# far beyond this bound, which is what the test is for.
RSS_BOUND = 768 * hostile.MiB


@dataclass
class Workspace:
    """A private working directory and temporary directory; the test fails if anything appears in either."""

    root: Path
    cwd: Path
    tmp: Path
    inputs: Path

    def snapshot(self) -> dict[str, tuple[int, int]]:
        return {
            str(path.relative_to(self.root)): (path.stat().st_size, path.stat().st_mtime_ns)
            for path in self.root.rglob("*")
        }

    def hostile_targets(self) -> list[Path]:
        """Where the traversal and absolute names of the corpus would have written, had anything been extracted."""
        places = [self.cwd, *self.cwd.parents[:4], Path("/tmp"), Path(tempfile.gettempdir())]
        return [place / hostile.MARKER for place in places if (place / hostile.MARKER).exists()]


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Workspace]:
    space = Workspace(root=tmp_path, cwd=tmp_path / "cwd", tmp=tmp_path / "tmp", inputs=tmp_path / "in")
    for folder in (space.cwd, space.tmp, space.inputs):
        folder.mkdir()
    monkeypatch.chdir(space.cwd)
    # Anything that asks the standard library for a temporary file now gets one in here, where we look.
    monkeypatch.setattr(tempfile, "tempdir", str(space.tmp))
    yield space
    assert space.hostile_targets() == []


@pytest.fixture(scope="module")
def built() -> dict[str, bytes]:
    """Every case's bytes, built once for the module (the biggest is ~5 MiB)."""
    return {case.id: case.build() for case in CASES}


def _counts() -> tuple[int, int, int]:
    return Run.objects.count(), Result.objects.count(), RunFile.objects.count()


def _figure(request: pytest.FixtureRequest, name: str, size: int) -> None:
    """Keep a measured size with the test: ``--junitxml … -o junit_family=legacy`` writes it to the report."""
    request.node.user_properties.append((name, round(size / hostile.MiB, 1)))


def _traced(action: Callable[[], Any]) -> tuple[Any, int]:
    tracemalloc.start()
    try:
        result = action()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


# --------------------------------------------------------------------------- the upload API


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_the_upload_api_refuses_each_hostile_bundle_with_a_clear_error_and_stores_no_run(
    case: hostile.Hostile,
    built: dict[str, bytes],
    workspace: Workspace,
    user_with_role: Callable[..., Any],
    settings: Any,
    request: pytest.FixtureRequest,
) -> None:
    for name, value in case.settings.items():
        setattr(settings, name, value)
    _row, token = create_token(user_with_role(UPLOADER), "hostile corpus")
    data = built[case.id]
    before = workspace.snapshot()

    response, peak = _traced(
        lambda: Client().post(
            "/api/bundles/",
            {"file": SimpleUploadedFile(case.filename, data)},
            headers={"Authorization": f"Bearer {token}"},
        )
    )

    _figure(request, "peak_mib", peak)
    assert response.status_code == 422, response.content[:500]
    body = response.json()
    assert re.search(case.error, body["error"]), body["error"]
    assert body["status"] == "failed" and body["runs"] == []
    bundle = Bundle.objects.get()
    assert (bundle.status, bundle.error) == (Bundle.Status.FAILED, body["error"])
    assert _counts() == (0, 0, 0)
    assert peak < PEAK_BOUND, f"{case.id}: peak {peak / hostile.MiB:.0f} MiB"
    assert workspace.snapshot() == before


# --------------------------------------------------------------------------- the import command


@pytest.mark.django_db
@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_the_import_command_refuses_each_hostile_bundle_with_a_clear_error_and_writes_nothing(
    case: hostile.Hostile,
    built: dict[str, bytes],
    workspace: Workspace,
    settings: Any,
    request: pytest.FixtureRequest,
) -> None:
    for name, value in case.settings.items():
        setattr(settings, name, value)
    path = workspace.inputs / case.filename
    path.write_bytes(built[case.id])
    before = workspace.snapshot()
    stderr = _Capture()

    def run() -> None:
        with pytest.raises(CommandError, match="1 of 1 bundles failed; nothing was written for them"):
            call_command("import_bundle", str(path), stdout=_Capture(), stderr=stderr)

    _none, peak = _traced(run)
    _figure(request, "peak_mib", peak)

    assert stderr.text.startswith("error: ") and re.search(case.error, stderr.text), stderr.text
    assert Bundle.objects.count() == 0 and _counts() == (0, 0, 0)
    assert peak < PEAK_BOUND, f"{case.id}: peak {peak / hostile.MiB:.0f} MiB"
    assert workspace.snapshot() == before


class _Capture:
    def __init__(self) -> None:
        self.parts: list[str] = []

    def write(self, text: str) -> None:
        self.parts.append(text)

    def flush(self) -> None:
        pass

    @property
    def text(self) -> str:
        return "".join(self.parts)


# --------------------------------------------------------------------------- a real process, its real memory


@pytest.fixture(scope="module")
def migrated_sqlite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A database file of its own for the command's process: pytest's test database is not visible to it."""
    folder = tmp_path_factory.mktemp("command-db")
    done = subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput", "-v0"],
        cwd=ROOT,
        env=_command_env(folder, folder),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return folder / "benchdash.sqlite3"


def _command_env(var_dir: Path, tmp: Path, **settings: int) -> dict[str, str]:
    keep = ("PATH", "HOME", "LANG")
    return {
        **{key: os.environ[key] for key in keep if key in os.environ},
        "DJANGO_SETTINGS_MODULE": "benchdash.settings",
        "BENCHDASH_VAR_DIR": str(var_dir),
        "TMPDIR": str(tmp),
        **{name: str(value) for name, value in settings.items()},
    }


def test_the_import_command_process_refuses_the_whole_corpus_in_bounded_memory_and_touches_no_file(
    migrated_sqlite: Path, built: dict[str, bytes], tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    groups: dict[tuple[tuple[str, int], ...], list[hostile.Hostile]] = {}
    for case in CASES:
        groups.setdefault(tuple(sorted(case.settings.items())), []).append(case)
    cwd, tmp = tmp_path / "cwd", tmp_path / "tmp"
    cwd.mkdir()
    tmp.mkdir()
    peaks: list[int] = []
    for settings, cases in groups.items():
        inputs = tmp_path / f"in-{len(peaks)}"
        inputs.mkdir()
        paths = []
        for n, case in enumerate(cases):
            path = inputs / f"{n:02d}-{case.filename}"
            path.write_bytes(built[case.id])
            paths.append(path)
        out, err = inputs / "stdout", inputs / "stderr"
        with out.open("w") as stdout_file, err.open("w") as stderr_file:
            process = subprocess.Popen(
                [sys.executable, str(ROOT / "manage.py"), "import_bundle", *map(str, paths)],
                cwd=cwd,
                env=_command_env(migrated_sqlite.parent, tmp, **dict(settings)),
                stdout=stdout_file,
                stderr=stderr_file,
            )
            # A stuck import must not hang the suite: the process is killed after five minutes.
            watchdog = threading.Timer(300, process.kill)
            watchdog.start()
            try:
                # wait4, not wait: it reports this process's own peak resident size.
                _pid, status, usage = os.wait4(process.pid, 0)
            finally:
                watchdog.cancel()
            process.returncode = os.waitstatus_to_exitcode(status)
        peaks.append(usage.ru_maxrss * 1024)
        stdout, stderr = out.read_text(), err.read_text()
        assert process.returncode == 1, stdout + stderr
        errors = [line for line in stderr.splitlines() if line.startswith("error: ")]
        assert len(errors) == len(cases), stderr[-2000:]
        for case, error in zip(cases, errors, strict=True):
            assert re.search(case.error, error), (case.id, error)
        assert f"{len(cases)} of {len(cases)} bundles failed; nothing was written for them" in stderr
    with sqlite3.connect(migrated_sqlite) as db:
        assert db.execute("SELECT COUNT(*) FROM runs_bundle").fetchone() == (0,)
        assert db.execute("SELECT COUNT(*) FROM runs_run").fetchone() == (0,)
    assert list(cwd.iterdir()) == [] and list(tmp.iterdir()) == []
    assert not (cwd.parent / hostile.MARKER).exists() and not (Path("/tmp") / hostile.MARKER).exists()
    _figure(request, "peak_rss_mib", max(peaks))
    assert max(peaks) < RSS_BOUND, f"peak RSS {max(peaks) / hostile.MiB:.0f} MiB"


# --------------------------------------------------------------------------- directories on disk


@pytest.mark.django_db
def test_a_result_directory_with_links_out_and_a_fifo_is_refused_without_following_them(
    workspace: Workspace, tmp_path: Path
) -> None:
    secret = tmp_path / "outside" / "sb.o.point-query.range100.pk1.dop1"
    secret.parent.mkdir()
    secret.write_bytes(hostile.sb_o())
    run = workspace.inputs / "results" / hostile.RUN
    run.mkdir(parents=True)
    (run / "sb.o.point-query.range100.pk1.dop1").symlink_to(secret)
    with pytest.raises(CommandError):
        call_command("import_bundle", str(run.parent), stdout=_Capture(), stderr=(err := _Capture()))
    assert "is a symbolic link" in err.text and Bundle.objects.count() == 0

    (run / "sb.o.point-query.range100.pk1.dop1").unlink()
    os.mkfifo(run / "sb.o.point-query.range100.pk1.dop1")  # opening it would block forever: it must not be opened
    with pytest.raises(CommandError):
        call_command("import_bundle", str(run.parent), stdout=_Capture(), stderr=(err := _Capture()))
    assert "is a FIFO" in err.text and Run.objects.count() == 0


# --------------------------------------------------------------------------- valid but awkward numbers


def _series_with_zero_base() -> bytes:
    """Two versions; the base did 0 QPS on point-query and on update-index, the newer one did 0 on update-index."""
    old, new = "x.my8043_rel_o2nofp.z12a_c8r32.pk1", "x.my8044_rel_o2nofp.z12a_c8r32.pk1"
    files = {
        f"{old}/sb.o.point-query.range100.pk1.dop1": hostile.sb_o(qps="0.00", tps="0.00"),
        f"{old}/sb.o.update-index.range100.pk1.dop1": hostile.sb_o(qps="0.00", tps="0.00"),
        f"{old}/sb.o.insert.range100.pk1.dop1": hostile.sb_o(qps="5000.00"),
        f"{new}/sb.o.point-query.range100.pk1.dop1": hostile.sb_o(qps="15000.00"),
        f"{new}/sb.o.update-index.range100.pk1.dop1": hostile.sb_o(qps="0.00", tps="0.00"),
        f"{new}/sb.o.insert.range100.pk1.dop1": hostile.sb_o(qps="5100.00"),
    }
    return hostile.tgz(hostile.member(name, data) for name, data in files.items())


@pytest.mark.django_db
def test_a_base_run_with_zero_qps_compares_as_infinite_or_unchanged_and_never_crashes(client: Client) -> None:
    from runs.importer import submit_and_import

    submit_and_import(_series_with_zero_base(), name="zero.tgz", source=Bundle.Source.COMMAND)
    base = Run.objects.get(name__startswith="x.my8043")
    page = client.get(f"/compare/?base={base.pk}")
    assert page.status_code == 200 and "∞" in page.content.decode()  # point-query: 15000 over a base of 0

    api = client.get(f"/api/compare?base={base.pk}")
    assert api.status_code == 200
    body = api.json()
    newer = next(c["key"] for c in body["columns"] if c["version"] == "8.0.44")
    relative = body["relative_qps"][newer]
    assert relative["point-query_range=100"] == "inf"  # JSON has no infinity: the documented string
    assert relative["update-index_range=100"] == 1.0  # 0 over 0: both did nothing, nothing changed
    assert relative["insert_range=100"] == pytest.approx(5100 / 5000)
    for fmt in ("tsv", "csv", "json", "markdown"):
        export = client.get(f"/compare/export?base={base.pk}&format={fmt}")
        assert export.status_code == 200, (fmt, export.content[:200])
        assert "nan" not in export.content.decode().lower(), fmt


@pytest.mark.django_db(transaction=True)
def test_a_nul_byte_in_a_config_file_is_refused_with_the_file_and_run_named(user_with_role: Callable[..., Any]) -> None:
    """PostgreSQL refuses NUL in text and SQLite keeps it: the importer refuses it first, the same on both."""
    _row, token = create_token(user_with_role(UPLOADER), "nul")
    data = hostile.tgz(hostile.good_run({"my.cnf": b"[mysqld]\x00\ninnodb_buffer_pool_size=1G\n"}))
    response = Client().post(
        "/api/bundles/", {"file": SimpleUploadedFile("nul.tgz", data)}, headers={"Authorization": f"Bearer {token}"}
    )
    bundle = Bundle.objects.get()
    assert response.status_code == 422 and bundle.status == Bundle.Status.FAILED
    assert f"NUL byte in my.cnf of run {hostile.RUN}" in response.json()["error"]
    assert "unexpected" not in bundle.error
    assert _counts() == (0, 0, 0)
