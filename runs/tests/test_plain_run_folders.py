"""Run directories published under plain folder names (``fbmy56/``): the error says how to name them, and a
manifest's ``[run_dirs]`` table does."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest

from runs.bundle import BundleError, read_bundle
from runs.importer import parse_bundle
from runs.manifest import ManifestError, parse_manifest

RUN = "x.my8406_rel_o2nofp.z12a_c8r32.pk1"


def tar_of(files: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def published_as(corpus: Path, folder: str) -> dict[str, bytes]:
    """A real MySQL run directory under a plain folder name, as older archives publish them."""
    run = corpus / "sysbench-mysql-small" / RUN
    return {f"{folder}/{path.name}": path.read_bytes() for path in sorted(run.iterdir())}


def test_a_plain_folder_of_results_is_refused_with_how_to_name_it(corpus: Path) -> None:
    with pytest.raises(BundleError) as refused:
        read_bundle(tar_of(published_as(corpus, "my84")), name="old.tar")

    message = str(refused.value)
    assert message.startswith("old.tar: no run directories (x.<build>.<config>.pk<0|1>) found: 'my84' holds ")
    assert "Rename each such folder" in message
    assert 'benchdash.toml at the bundle\'s root, one line per folder: [run_dirs] "my84" = "x.<build>.' in message


def test_several_plain_folders_are_all_named_in_the_error(corpus: Path) -> None:
    files = {**published_as(corpus, "archive/fbmy56"), **published_as(corpus, "archive/fbmy80")}

    with pytest.raises(BundleError, match=r"'archive/fbmy56', 'archive/fbmy80' hold sysbench result files"):
        read_bundle(tar_of(files))


def test_a_manifest_after_the_folder_names_it_and_the_run_imports_with_all_its_results(corpus: Path) -> None:
    plain = published_as(corpus, "my84")
    manifest = b'server = "c8r32"\n[run_dirs]\nmy84 = "x.my8406_rel_o2nofp.z12a_c8r32.pk1"\n'
    named = {**plain, "benchdash.toml": manifest}  # in a tar the manifest may come last
    reference = {f"{RUN}/{name.split('/', 1)[1]}": data for name, data in plain.items()}

    parsed = parse_bundle(tar_of(named), name="old.tar")
    expected = parse_bundle(tar_of(reference), name="new.tar")

    [run] = parsed.runs
    assert (run.name, run.path, run.dbms, run.version, run.config) == (RUN, "my84", "MySQL", "8.4.6", "z12a_c8r32")
    assert run.server == "c8r32"
    assert run.results == expected.runs[0].results
    assert len(run.results) == 38  # 37 microbenchmarks and the warm-up


def test_a_manifest_in_a_parent_folder_names_plain_folders_below_it(corpus: Path) -> None:
    files = {
        **published_as(corpus, "set/my84"),
        "set/benchdash.toml": b'[run_dirs]\nmy84 = "x.my8406_rel.cfg.pk1"\n',
    }

    bundle = read_bundle(tar_of(files))

    assert [(r.path, r.name) for r in bundle.runs] == [("set/my84", "x.my8406_rel.cfg.pk1")]


def test_a_plain_folder_the_manifest_does_not_name_is_listed_as_not_read(corpus: Path) -> None:
    files = {
        **published_as(corpus, "my84"),
        **published_as(corpus, "other"),
        "benchdash.toml": b'[run_dirs]\nmy84 = "x.my8406_rel.cfg.pk1"\n',
    }

    bundle = read_bundle(tar_of(files))

    assert [r.name for r in bundle.runs] == ["x.my8406_rel.cfg.pk1"]
    assert "other/sb.o.point-query.range100.pk1.dop1" in bundle.ignored


@pytest.mark.parametrize(
    ("table", "problem"),
    [
        ('fbmy56 = "fbmy5635"', "a run directory name is x.<build>.<config>.pk<0|1>"),
        ('"a/fbmy56" = "x.fbmy5635.c.pk1"', "give the folder's own name, not a path"),
    ],
)
def test_a_run_dirs_entry_that_cannot_name_a_run_is_a_manifest_error(table: str, problem: str) -> None:
    with pytest.raises(ManifestError, match=problem):
        parse_manifest(f"[run_dirs]\n{table}\n".encode())
