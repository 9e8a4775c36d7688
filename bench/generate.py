"""Deterministic synthetic archives at a chosen scale, in the real bundle format.

    .venv/bin/python bench/generate.py --scale S|M|L --out DIR

Writes one ``.tar.gz`` bundle per series (one server × workload × DBMS, up to 60
versions of the classic 42-microbenchmark list, one client), each made by
``runs.synthetic`` with its own seed: realistic run-to-run noise and planted step
regressions, result directories with ``sb.o`` and ``sb.met`` files exactly as the
benchmark scripts write them. A ``benchdash.toml`` manifest in each bundle names
the server, so every bundle imports through the normal path
(``manage.py import_bundle DIR/*.tar.gz``).

Scales (runs): S = 100, M = 2,000, L = 25,000 (about 10^6 results).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from runs import synthetic  # noqa: E402

SCALES = {"S": 100, "M": 2_000, "L": 25_000}
VERSIONS_PER_SERIES = 60
# Version i of a series of each DBMS. The run-directory names have no separator inside a version, so a MySQL or
# MyRocks minor version is one digit (my81000 reads as 8.1.0, never 8.10.0): these stay unambiguous to 1,000
# versions (runs.synthetic.build_token refuses one that is not).
DBMS = (
    ("my", "rel_o2nofp", "z12a_c8r32", lambda i: f"8.{i // 100}.{i % 100}"),
    ("ma", "rel_withdbg", "cz11b_c8r32", lambda i: f"10.{4 + i // 100}.{i % 100}"),
    ("pg", "o2nofp", "x10a_c8r32", lambda i: f"{12 + i // 100}.{i % 100}"),
    ("fbmy", "rel", "cza1_c8r32", lambda i: f"5.{6 + i // 100}.{i % 100}"),
)


@dataclass(frozen=True)
class Series:
    index: int
    server: str
    dbms: int
    versions: int
    table_size: int

    @property
    def name(self) -> str:
        return f"series-{self.index:05d}"


def plan(runs: int) -> Iterator[Series]:
    """Series of up to VERSIONS_PER_SERIES runs until ``runs`` runs are planned."""
    index = 0
    left = runs
    while left > 0:
        size = min(VERSIONS_PER_SERIES, left)
        yield Series(
            index=index,
            server=f"server-{index // 8:04d}",
            dbms=index % len(DBMS),
            versions=size,
            # Two workloads per server: every other group of four series uses a bigger table.
            table_size=10_000_000 if (index // 4) % 2 == 0 else 50_000_000,
        )
        index += 1
        left -= size


def series_bundle(series: Series) -> bytes:
    code, flavour, config, version = DBMS[series.dbms]
    spec = synthetic.SeriesSpec(
        dbms_code=code,
        versions=tuple(version(i) for i in range(series.versions)),
        flavour=flavour,
        config=config,
        table_size=series.table_size,
        seed=1000 + series.index,
        steps=(
            synthetic.Step(series.versions // 3, "", 0.9),
            synthetic.Step(series.versions // 2, "update-index", 0.8),
            synthetic.Step(2 * series.versions // 3, "point", 0.94),
        ),
    )
    manifest = f'server = "{series.server}"\n'.encode()
    return synthetic.bundle_bytes(spec, extra_files={"benchdash.toml": manifest})


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", choices=sorted(SCALES), default="S")
    parser.add_argument("--runs", type=int, help="a custom number of runs instead of a scale")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    runs = args.runs or SCALES[args.scale]
    args.out.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    total = 0
    count = 0
    for series in plan(runs):
        path = args.out / f"{series.name}.tar.gz"
        if not path.exists():  # deterministic: an existing file has the same bytes
            path.write_bytes(series_bundle(series))
        total += path.stat().st_size
        count += 1
    seconds = time.perf_counter() - start
    print(f"{count} bundles, {runs} runs, {total / 1e6:.1f} MB in {args.out} ({seconds:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
