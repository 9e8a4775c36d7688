"""The README's ``make demo`` from a fresh machine's point of view, without the real corpus beside the project.

CI runs the same check (``.ci/demo_check.py``) on a fresh clone that has the corpus beside it; this test
covers the other first-contact path: no ``var/`` yet and no corpus, so the demo generates its archive.
The virtualenv is the one this test runs in (``make -o``: it is taken as up to date, never reinstalled).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _demo_check() -> ModuleType:
    spec = importlib.util.spec_from_file_location("demo_check", ROOT / ".ci" / "demo_check.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    # dataclasses look their module up in sys.modules while the class is built.
    sys.modules["demo_check"] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def demo_check() -> ModuleType:
    return _demo_check()


def test_make_demo_without_the_corpus_creates_its_var_folder_generates_data_and_prints_the_login_last(
    tmp_path: Path, demo_check: ModuleType
) -> None:
    var = tmp_path / "fresh" / "var"
    checked = demo_check.run(
        ROOT,
        ["-o", ".venv/.installed"],
        env={"BENCHDASH_VAR_DIR": str(var), "BENCHDASH_CORPUS_DIR": str(tmp_path / "no-corpus-here")},
        seconds=300,
    )
    assert checked[0] == "/" and checked[1].startswith("/compare/?base=") and checked[-1] == "/upload/"
    assert checked[2].startswith("/compare/writeup?base=") and checked[3] == "/static/vendor/plotly.min.js"
    assert checked[4].startswith("/microbenchmarks/")
    assert (var / "benchdash.sqlite3").stat().st_size > 0


def test_the_demo_check_fails_when_the_printed_login_is_buried(demo_check: ModuleType) -> None:
    demo = demo_check.Demo(process=None, port=0)
    demo.lines = [
        "migrating the database",
        "no corpus beside the project: generating a realistic demo archive",
        "demo login (created): user 'demo', password 'x' (admin role)",
        "Task reports.tasks.refresh_series_task[1] succeeded in 0.1s: None",
        "benchdash is serving on http://127.0.0.1:8000/ (Ctrl-C stops it)",
    ]
    with pytest.raises(demo_check.DemoFailed, match="is not the demo login"):
        demo_check.check_output(demo)
    demo.lines[2:4] = demo.lines[3:1:-1]
    with pytest.raises(demo_check.DemoFailed, match="task logs bury the login"):
        demo_check.check_output(demo)
    del demo.lines[2]
    assert demo_check.check_output(demo) == ("demo", "x", None)
