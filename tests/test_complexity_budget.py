"""The complexity budget of `make lint` (.ci/complexity.py): no new function over 15, listed ones only shrink."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def budget() -> ModuleType:
    spec = importlib.util.spec_from_file_location("complexity", ROOT / ".ci" / "complexity.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _branchy(name: str, branches: int) -> str:
    body = "".join(f"    if x == {i}:\n        return {i}\n" for i in range(branches))
    return f"def {name}(x: int) -> int:\n{body}    return -1\n"


def test_the_project_is_within_its_budget(budget: ModuleType) -> None:
    assert budget.problems(budget.found(), budget.read_baseline()) == []


def test_a_new_function_over_15_fails_and_one_at_15_passes(budget: ModuleType, tmp_path: Path) -> None:
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    (tmp_path / "mod.py").write_text(_branchy("small", 14) + "\n\n" + _branchy("large", 17))
    now = budget.found(tmp_path)
    assert set(now) == {("mod.py", "large", "C901"), ("mod.py", "large", "PLR0912")}
    assert now[("mod.py", "large", "C901")] == 18
    assert [line.split(":")[0] for line in budget.problems(now, {})] == ["mod.py", "mod.py"]


def test_a_listed_function_may_shrink_but_not_grow(budget: ModuleType) -> None:
    listed = {("a.py", "f", "C901"): 20, ("a.py", "gone", "C901"): 18}
    assert budget.problems({("a.py", "f", "C901"): 19}, listed) == []
    assert budget.problems({("a.py", "f", "C901"): 21}, listed) == ["a.py: f grew (C901 20 → 21); it may only shrink"]
    # --update only removes what is within the budget now and lowers figures; it never adds.
    assert budget.shrunk({("a.py", "f", "C901"): 19, ("b.py", "new", "C901"): 30}, listed) == {
        ("a.py", "f", "C901"): 19
    }


def test_the_baseline_round_trips_through_its_file(budget: ModuleType, tmp_path: Path) -> None:
    listed = {("a.py", "C.m", "PLR0912"): 16, ("b.py", "f", "C901"): 22}
    budget.write_baseline(listed, tmp_path / "baseline.txt")
    assert budget.read_baseline(tmp_path / "baseline.txt") == listed
