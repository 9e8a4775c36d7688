"""The apps' import graph, read the way pyproject's import-linter contracts state it: no app imports a higher
layer and a self-contained package imports no app (as lint-imports checks), and beyond the contracts no cycle
between apps or between modules, and every module imports. The layers, the self-contained packages and the
wiring that may import any app are read from those contracts (one source for the layer order); the graph is
read from the source with ``ast``, imports inside functions included. A layer's package that does not exist
(yet) is skipped.
"""

from __future__ import annotations

import ast
import importlib
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _contracts() -> list[dict[str, Any]]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]


def _layers() -> tuple[tuple[str, ...], ...]:
    """The layers contract's layers, lowest first (its own list is highest first; ``|`` and ``:`` join siblings)."""
    contract = next(c for c in _contracts() if c["type"] == "layers")
    return tuple(tuple(part.strip() for part in re.split(r"[|:]", layer)) for layer in reversed(contract["layers"]))


LAYERS = _layers()
# Packages that import no app whatever their layer: the forbidden contract's sources.
SELF_CONTAINED = tuple(module for c in _contracts() if c["type"] == "forbidden" for module in c["source_modules"])
# The project's wiring sits on top of everything: the modules the layers contract lets import any app.
WIRING = {
    rule.split("->")[0].strip()
    for c in _contracts()
    if c["type"] == "layers"
    for rule in c.get("ignore_imports", ())
    if "*" not in rule.split("->")[0]
}


def _present_apps() -> dict[str, int]:
    return {app: level for level, apps in enumerate(LAYERS) for app in apps if (ROOT / app / "__init__.py").exists()}


def _modules(app: str) -> list[tuple[str, Path]]:
    found = []
    for path in sorted((ROOT / app).rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if "tests" in parts:
            continue
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found.append((name, path))
    return found


def _imported(name: str, path: Path) -> set[str]:
    """Every module named by an import statement anywhere in the file (functions included) that runs."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    names: set[str] = set()
    tree = ast.parse(path.read_text(), str(path))
    # Imports under ``if TYPE_CHECKING:`` exist for the type checker only: nothing is imported at run time.
    for node in ast.walk(tree):
        test = node.test if isinstance(node, ast.If) else None
        if isinstance(test, ast.Name) and test.id == "TYPE_CHECKING":
            node.body = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            names.add(module)
            names.update(f"{module}.{alias.name}" for alias in node.names)
    return names


def _app_edges() -> dict[tuple[str, str], list[str]]:
    """(importing app, imported app) → the modules responsible, for apps that exist."""
    apps = _present_apps()
    edges: dict[tuple[str, str], list[str]] = {}
    for app in apps:
        for name, path in _modules(app):
            if name in WIRING:
                continue
            for target in {imported.split(".")[0] for imported in _imported(name, path)}:
                if target in apps and target != app:
                    edges.setdefault((app, target), []).append(name)
    return edges


def test_no_app_imports_an_app_of_a_higher_layer():
    apps = _present_apps()
    upward = {
        f"{low} imports {high} ({', '.join(sorted(set(where)))})"
        for (low, high), where in _app_edges().items()
        if apps[high] > apps[low]
    }
    assert not upward, sorted(upward)


def test_self_contained_packages_import_no_app():
    offending = {f"{app} imports {target}" for (app, target) in _app_edges() if app in SELF_CONTAINED}
    assert not offending, sorted(offending)


def test_the_apps_import_graph_has_no_cycle():
    graph: dict[str, set[str]] = {}
    for low, high in _app_edges():
        graph.setdefault(low, set()).add(high)
    visiting: list[str] = []
    done: set[str] = set()

    def visit(app: str) -> None:
        if app in done:
            return
        if app in visiting:
            pytest.fail("import cycle: " + " → ".join([*visiting[visiting.index(app) :], app]))
        visiting.append(app)
        for target in sorted(graph.get(app, ())):
            visit(target)
        visiting.pop()
        done.add(app)

    for app in sorted(graph):
        visit(app)


# Module cycles still to break; a new one fails the test.
KNOWN_MODULE_CYCLES: tuple[set[str], ...] = ()


def _module_cycles() -> list[set[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm over the import graph)."""
    paths = {name: path for app in _present_apps() for name, path in _modules(app)}
    graph = {
        name: {m for m in _imported(name, path) if m in paths and m != name}
        for name, path in paths.items()
        if name not in WIRING
    }
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[set[str]] = []

    def connect(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for target in sorted(graph.get(module, ())):
            if target not in index:
                connect(target)
                low[module] = min(low[module], low[target])
            elif target in stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            group = set()
            while True:
                member = stack.pop()
                group.add(member)
                if member == module:
                    break
            if len(group) > 1:
                cycles.append(group)

    for module in sorted(graph):
        if module not in index:
            connect(module)
    return cycles


def test_no_new_import_cycle_between_modules():
    new = [sorted(cycle) for cycle in _module_cycles() if cycle not in KNOWN_MODULE_CYCLES]
    assert not new, new


def test_every_module_of_the_apps_imports():
    failed = []
    for app in _present_apps():
        for name, _ in _modules(app):
            try:
                importlib.import_module(name)
            except Exception as exc:
                failed.append(f"{name}: {type(exc).__name__}: {exc}")
    assert not failed, failed


def test_the_graph_reader_sees_imports_inside_functions_and_relative_ones(tmp_path):
    module = tmp_path / "mod.py"
    module.write_text("def f():\n    from reports.compare import Comparison\n\nfrom . import sibling\n")
    assert {"reports.compare", "runs.sibling"} <= _imported("runs.mod", module)
