"""The comparison's numbers against another checkout's: every attribute of every comparison the same, to the bit.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/<db> .venv/bin/python bench/compare_identical.py \\
        --before <dir> [--database NAME] [--bases 6]

``--before`` is another checkout of the project (``git archive <commit> | tar -x -C <dir>``, with a ``.venv``
link to this one's). Into a fresh database (``--database``, created and dropped) this imports the real corpus
(the project's ``shared/corpus``: sysbench, the summary tables at several concurrencies, PostgreSQL tarballs, the
Insert Benchmark, db_bench) and synthetic series (repeats, several concurrencies, warm-ups, 200 versions),
refreshes every series (its matrix), then computes with each checkout, in a process of its own, the comparisons
of every series: ``--bases`` bases spread over it, each with the defaults, warm-ups included, each scan formula,
every concurrency of the series, both built-in group sets and a subset of its runs, and the comparison of each
microbenchmark of the first base; each from the series' matrix and from the results table. Every attribute, view
and summary of each (floats by ``repr``: -0.0, inf and nan are told apart) must be equal, and the error of a
comparison that cannot be made the same. Prints what differs, if anything, and exits 1 then.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import os
import pickle
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from import_bench import bench_database, configure_environment

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO.parent / "shared" / "corpus"
# Each imported as a bundle of its own (a directory of tarballs: each of them).
CORPUS_SERIES = (
    "sysbench-mysql-small",
    "sysbench-summary-dops",
    "sysbench-pg-tarballs",
    "ibench-2021",
    "dbbench/arc/dec25.dbb.clang/8core",
)


def build(work: Path) -> list[str]:
    """The corpus and the synthetic series imported and refreshed; what was imported."""
    from reports.series import refresh_series
    from runs import synthetic
    from runs.importer import archive_directory, submit_and_import
    from runs.models import Run

    imported = []
    for relative in CORPUS_SERIES:
        path = CORPUS / relative
        if not path.exists():
            continue
        if (
            path.is_dir()
            and any(p.suffix == ".gz" for p in path.iterdir())
            and not any(p.is_dir() for p in path.iterdir())
        ):
            for bundle in sorted(path.iterdir()):
                if bundle.name.endswith((".tar.gz", ".tgz")):
                    _submit(submit_and_import, bundle.read_bytes(), bundle.name)
        else:
            data = archive_directory(path) if path.is_dir() else path.read_bytes()
            _submit(submit_and_import, data, f"{path.name}.tar.gz")
        imported.append(relative)
    synthetic_series = (
        ("synthetic repeats and concurrencies", synthetic.SeriesSpec(repeats=3, dops=(1, 4, 16), seed=5)),
        (
            "synthetic 200 versions",
            synthetic.SeriesSpec(versions=tuple(f"9.{i // 100}.{i % 100}" for i in range(200)), seed=2),
        ),
        (
            "synthetic noise",
            synthetic.SeriesSpec(
                versions=("8.0.1", "8.0.2", "8.0.3"), noise=0.2, repeats=2, seed=11, config="z12a_c8r32"
            ),
        ),
    )
    for name, spec in synthetic_series:
        manifest = {"benchdash.toml": f'server = "{name}"\n'.encode()}
        _submit(submit_and_import, synthetic.bundle_bytes(spec, extra_files=manifest), f"{name}.tgz")
        imported.append(name)
    for server_id, workload_id in Run.objects.values_list("server_id", "workload_id").distinct():
        refresh_series(server_id, workload_id)
    return imported


def _submit(submit_and_import: Any, data: bytes, name: str) -> None:
    try:
        submit_and_import(data, name=name, source="command")
    except Exception as exc:  # a bundle this version cannot import is left out, and said
        print(f"  not imported: {name}: {exc}", file=sys.stderr)


@contextmanager
def _database(name: str, reuse: bool) -> Iterator[str]:
    """A fresh database (dropped at the end), or with ``reuse`` the one an earlier run left (and kept)."""
    if not reuse:
        with bench_database("env", name) as where:
            yield where
        return
    from django.conf import settings
    from django.db import connection

    settings.DATABASES["default"]["NAME"] = name
    connection.settings_dict["NAME"] = name
    connection.close()
    yield f"database {name}, as an earlier run left it"


def specs(bases: int) -> list[dict[str, Any]]:
    """The comparisons checked, as ComparisonSpec fields (and a microbenchmark id for the one-microbenchmark ones)."""
    from runs.models import Result, Run

    asked: list[dict[str, Any]] = []
    for server_id, workload_id in sorted(set(Run.objects.values_list("server_id", "workload_id"))):
        runs = list(
            Run.objects.filter(server_id=server_id, workload_id=workload_id)
            .order_by("build__version__sort_key", "pk")
            .values_list("pk", flat=True)
        )
        step = max(1, len(runs) // bases)
        chosen = runs[::step][:bases]
        dops = sorted(set(Result.objects.filter(run_id__in=runs).values_list("dop", flat=True)))
        for i, base in enumerate(chosen):
            asked.append({"base_run_id": base})
            asked.append({"base_run_id": base, "include_warmups": True})
            asked.append({"base_run_id": base, "scan_formula": "era"})
            asked.append({"base_run_id": base, "red": 0.99, "green": 1.01, "noise_k": 0.5})
            if i == 0:
                asked.extend({"base_run_id": base, "dop": dop} for dop in dops)
                asked.extend({"base_run_id": base, "group_set": name} for name in ("classic-42", "current-32"))
                asked.append({"base_run_id": base, "run_ids": runs[-3:]})
                for microbenchmark in sorted(
                    set(Result.objects.filter(run_id=base).values_list("microbenchmark_id", flat=True))
                ):
                    asked.append({"base_run_id": base, "microbenchmark": microbenchmark})
                    asked.append({"base_run_id": base, "microbenchmark": microbenchmark, "scan_formula": "era"})
    return asked


def text(value: Any) -> Any:
    """A value in plain, comparable form: floats by repr, dataclasses and tuples as lists, dicts in their order."""
    if isinstance(value, float):
        return repr(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return [type(value).__name__, [(f.name, text(getattr(value, f.name))) for f in dataclasses.fields(value)]]
    if isinstance(value, dict) or hasattr(value, "items"):
        return [[text(k), text(v)] for k, v in value.items()]
    if isinstance(value, (list, tuple)):
        return [text(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted(map(repr, value))
    return repr(value)


def described(comparison: Any) -> dict[str, str]:
    """Every attribute of a comparison, its views and its JSON form, each by the digest of its plain form."""
    return {name: hashlib.sha256(repr(value).encode()).hexdigest() for name, value in _described(comparison).items()}


def _described(comparison: Any) -> dict[str, Any]:
    from reports.compare import Comparison

    found: dict[str, Any] = {}
    for f in dataclasses.fields(Comparison):
        if f.name in ("cells",):
            found["cells"] = text(list(comparison.cells.items()))
            found["cells by key"] = text([comparison.cells.get(key) for key in list(comparison.cells)[::7]])
            continue
        found[f.name] = text(getattr(comparison, f.name))
    for view in ("qps", "cv", "metrics", "relative", "flags", "noisy", "metric_ratios"):
        found[view] = text(getattr(comparison, view))
    found["rows"] = text([comparison.row(label) for label in comparison.labels])
    found["json"] = text(comparison.as_json())
    again = pickle.loads(pickle.dumps(comparison, pickle.HIGHEST_PROTOCOL))
    found["pickled"] = [text(list(again.cells.items())) == found["cells"]] + [
        text(getattr(again, name)) == found[name] for name in ("result", "summaries", "relative", "flags", "qps")
    ]
    return found


def _all_true() -> str:
    """The digest of a comparison that reads back from its pickle as it was."""
    return hashlib.sha256(repr([True] * 6).encode()).hexdigest()


def dump(asked_path: Path, out_path: Path) -> None:
    """In this checkout: every comparison asked, from the matrix and from the results table."""
    import django

    django.setup()
    from reports import matrix
    from reports.compare import ComparisonError, ComparisonSpec, build_comparison, compute_comparison, load_series

    asked = json.loads(asked_path.read_text())
    real = matrix.results
    out = []
    for fields in asked:
        fields = dict(fields)
        microbenchmark = fields.pop("microbenchmark", None)
        if "run_ids" in fields:
            fields["run_ids"] = tuple(fields["run_ids"])
        spec = ComparisonSpec(**fields)
        for source in ("matrix", "results"):
            matrix.results = real if source == "matrix" else (lambda *args, **kwargs: None)
            try:
                if microbenchmark is None:
                    found = described(compute_comparison(spec))
                else:
                    found = described(build_comparison(load_series(spec, microbenchmark_id=microbenchmark)))
            except ComparisonError as exc:
                found = {"error": str(exc)}
            out.append(found)
    matrix.results = real
    out_path.write_bytes(pickle.dumps(out))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", type=Path)
    parser.add_argument("--database", default="benchdash_identical")
    parser.add_argument("--bases", type=int, default=6)
    parser.add_argument("--reuse", action="store_true", help="check the database as an earlier run left it")
    parser.add_argument("--dump", nargs=2, type=Path, help=argparse.SUPPRESS)  # in a checkout: asked, out
    args = parser.parse_args()
    if args.dump:
        dump(*args.dump)
        return 0
    if args.before is None:
        sys.exit("--before <checkout> is needed")
    with tempfile.TemporaryDirectory(prefix="benchdash-identical-") as work:
        configure_environment("env", Path(work))
        import django

        django.setup()
        with _database(args.database, args.reuse) as where:
            imported = build(Path(work)) if not args.reuse else ["(as an earlier run left it)"]
            asked = specs(args.bases)
            asked_path = Path(work) / "asked.json"
            asked_path.write_text(json.dumps(asked))
            url = os.environ["DATABASE_URL"].rsplit("/", 1)[0] + f"/{args.database}"
            results = {}
            for side, tree in (("before", args.before.resolve()), ("after", REPO)):
                out = Path(work) / f"{side}.pickle"
                env = {
                    **os.environ,
                    "DATABASE_URL": url,
                    "PYTHONPATH": str(tree),
                    "DJANGO_SETTINGS_MODULE": "benchdash.settings",
                }
                subprocess.run(
                    [
                        str(tree / ".venv" / "bin" / "python"),
                        str(Path(__file__).resolve()),
                        "--dump",
                        str(asked_path),
                        str(out),
                    ],
                    cwd=tree,
                    env=env,
                    check=True,
                )
                results[side] = pickle.loads(out.read_bytes())
    print(f"Comparisons checked: {where}; imported: {', '.join(imported)}")
    before, after = results["before"], results["after"]
    differ = 0
    for i, (b, a) in enumerate(zip(before, after, strict=True)):
        spec = asked[i // 2]
        source = ("matrix", "results")[i % 2]
        if b != a:
            differ += 1
            keys = [k for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]
            if differ <= 10:
                print(f"DIFFERS {spec} from the {source}: {keys}")
        elif a.get("pickled") != b.get("pickled") or ("error" not in a and a["pickled"] != _all_true()):
            differ += 1
            print(f"DIFFERS once pickled: {spec}")
    errors = sum("error" in a for a in after)
    print(
        f"{len(after)} comparisons ({len(asked)} specs × matrix and results table), {errors} refused alike: "
        f"{'all identical' if not differ else f'{differ} DIFFER'}"
    )
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
