"""The complexity budget: no function over 15 (ruff's C901, mccabe, and PLR0912, branches), except the ones listed
in ``.ci/complexity-baseline.txt``, which may only shrink.

``make lint`` runs it. It fails on a function over the budget that the baseline does not list, and on a listed one
that grew. ``--update`` rewrites the baseline from what is found now, but only ever removes a function or lowers
its figure: a new exception is never written by it (split the function instead).

The thresholds are pyproject's (``[tool.ruff.lint.mccabe]``, ``[tool.ruff.lint.pylint]``); the two rules are not
in ruff's ``select`` because the functions in the baseline would fail it.
"""

from __future__ import annotations

import argparse
import ast
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BASELINE = ROOT / ".ci" / "complexity-baseline.txt"
RULES = ("C901", "PLR0912")
HEADER = (
    "# Functions over the complexity budget (15) when it was set, with their figure: this list may only shrink.\n"
    "# <path>::<function> <rule> <figure>; maintained by `.ci/complexity.py --update` (which only removes or lowers).\n"
)

Key = tuple[str, str, str]  # (path, qualified function name, rule)


def _qualnames(path: Path) -> dict[int, str]:
    """The line of each function's ``def`` → its qualified name (``Class.method``, ``outer.inner``)."""
    names: dict[int, str] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef):
                    names[child.lineno] = name
                visit(child, f"{name}.")
            else:
                visit(child, prefix)

    visit(ast.parse(path.read_text(), str(path)), "")
    return names


def _figure(message: str) -> int:
    """The measured figure of a ruff message: "`f` is too complex (16 > 15)", "Too many branches (16 > 15)"."""
    return int(message.rsplit("(", 1)[1].split(" ", 1)[0])


def found(root: Path = ROOT) -> dict[Key, int]:
    """Every function over the budget now under ``root`` (its pyproject's thresholds), with its figure per rule."""
    command = [sys.executable, "-m", "ruff", "check", "--select", ",".join(RULES), "--output-format", "json", "."]
    done = subprocess.run(command, cwd=root, capture_output=True, text=True, check=False)
    if done.returncode not in (0, 1):
        raise SystemExit(f"ruff failed: {done.stderr.strip()}")
    over: dict[Key, int] = {}
    qualnames: dict[Path, dict[int, str]] = {}
    for item in json.loads(done.stdout or "[]"):
        path = Path(item["filename"])
        names = qualnames.setdefault(path, _qualnames(path))
        row = item["location"]["row"]
        key = (path.relative_to(root).as_posix(), names.get(row, f"<line {row}>"), item["code"])
        over[key] = _figure(item["message"])
    return over


def read_baseline(path: Path = BASELINE) -> dict[Key, int]:
    listed: dict[Key, int] = {}
    for line in path.read_text().splitlines() if path.exists() else []:
        if not line.strip() or line.startswith("#"):
            continue
        where, rule, figure = line.split()
        file, _, function = where.partition("::")
        listed[(file, function, rule)] = int(figure)
    return listed


def write_baseline(listed: dict[Key, int], path: Path = BASELINE) -> None:
    lines = [f"{file}::{function} {rule} {figure}" for (file, function, rule), figure in sorted(listed.items())]
    path.write_text(HEADER + "".join(line + "\n" for line in lines))


def problems(now: dict[Key, int], listed: dict[Key, int]) -> list[str]:
    """What breaks the budget: a function over it that the baseline does not list, or one that grew."""
    found_problems = []
    for key, figure in sorted(now.items()):
        file, function, rule = key
        allowed = listed.get(key)
        if allowed is None:
            found_problems.append(f"{file}: {function} is over the budget ({rule} {figure} > 15): split it")
        elif figure > allowed:
            found_problems.append(f"{file}: {function} grew ({rule} {allowed} → {figure}); it may only shrink")
    return found_problems


def shrunk(now: dict[Key, int], listed: dict[Key, int]) -> dict[Key, int]:
    """The baseline with what no longer exceeds the budget removed and each figure lowered to today's."""
    return {key: min(figure, now[key]) for key, figure in listed.items() if key in now}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--update", action="store_true", help="remove or lower baseline entries (never add)")
    args = parser.parse_args(argv)
    now, listed = found(), read_baseline()
    if args.update:
        kept = shrunk(now, listed)
        write_baseline(kept)
        print(f"complexity baseline: {len(listed) - len(kept)} entries removed, {len(kept)} left")
    broken = problems(now, read_baseline())
    for line in broken:
        print(line, file=sys.stderr)
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
