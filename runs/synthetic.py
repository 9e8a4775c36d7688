"""A deterministic generator of realistic sysbench result bundles.

It writes the same files a real run leaves (``sb.o`` with the command line and
CPU count, ``sb.met``, ``sb.r.qps``), for a version series with run-to-run noise
and a few planted step regressions, so the demo works without the real corpus
and the benchmarks can build archives of any size. Everything it makes goes
through the normal import path.
"""

from __future__ import annotations

import gzip
import io
import random
import tarfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from suites.naming import parse_run_dir

# The classic microbenchmark list, with a typical QPS on a small server at 1 client.
TESTS: tuple[tuple[str, int, float], ...] = (
    ("point-query.pre", 100, 24000),
    ("points-covered-pk.pre", 100, 2700),
    ("points-covered-si.pre", 100, 2800),
    ("points-notcovered-pk.pre", 100, 2600),
    ("points-notcovered-si.pre", 100, 1600),
    ("random-points.pre", 10, 12500),
    ("random-points.pre", 100, 2600),
    ("random-points.pre", 1000, 260),
    ("range-covered-pk.pre", 100, 13000),
    ("range-covered-si.pre", 100, 13800),
    ("range-notcovered-pk.pre", 100, 11800),
    ("range-notcovered-si.pre", 100, 3000),
    ("read-only.pre", 10, 22000),
    ("read-only.pre", 100, 16600),
    ("read-only.pre", 10000, 470),
    ("update-inlist", 100, 6000),
    ("update-index", 100, 3800),
    ("update-nonindex", 100, 12900),
    ("update-one", 100, 13200),
    ("update-zipf", 100, 12800),
    ("write-only", 10000, 17200),
    ("read-write", 10, 19800),
    ("read-write", 100, 15800),
    ("read-only", 10, 22400),
    ("read-only", 100, 16600),
    ("read-only", 10000, 470),
    ("point-query", 100, 24500),
    ("points-covered-pk", 100, 2740),
    ("points-covered-si", 100, 2780),
    ("points-notcovered-pk", 100, 2600),
    ("points-notcovered-si", 100, 1580),
    ("random-points", 10, 12600),
    ("random-points", 100, 2620),
    ("random-points", 1000, 261),
    ("hot-points", 100, 4500),
    ("range-covered-pk", 100, 12950),
    ("range-covered-si", 100, 13830),
    ("range-notcovered-pk", 100, 11870),
    ("range-notcovered-si", 100, 3010),
    ("scan", 100, 6550),
    ("delete", 100, 14170),
    ("insert", 100, 15010),
)

_LUA = {
    "point-query": "oltp_point_select.lua",
    "read-only": "oltp_read_only.lua",
    "read-write": "oltp_read_write.lua",
    "write-only": "oltp_write_only.lua",
    "insert": "oltp_insert.lua",
    "delete": "oltp_delete.lua",
    "scan": "oltp_scan.lua",
}


@dataclass(frozen=True)
class Step:
    """A planted change: from ``version_index`` on, tests whose name contains ``match`` move by ``factor``."""

    version_index: int
    match: str
    factor: float


@dataclass
class SeriesSpec:
    dbms_code: str = "my"
    versions: Sequence[str] = ("5.6.51", "5.7.44", "8.0.28", "8.0.30", "8.0.36", "8.4.3", "9.1.0")
    flavour: str = "rel_o2nofp"
    config: str = "z11a_c8r32"
    cpus: int = 8
    table_size: int = 10_000_000
    tables: int = 1
    dops: Sequence[int] = (1,)
    noise: float = 0.012  # coefficient of variation of one measurement
    repeats: int = 1
    steps: Sequence[Step] = field(
        default_factory=lambda: (
            Step(1, "", 0.88),  # every test loses ~12% in the second version
            Step(3, "update-index", 0.80),  # update-index regresses in the fourth version
            Step(3, "point", 0.95),
            Step(5, "scan", 1.15),  # scan improves
        )
    )
    seed: int = 42
    tests: Sequence[tuple[str, int, float]] = TESTS


def build_token(code: str, version: str, flavour: str) -> str:
    parts = version.split(".")
    if code == "ma" and int(parts[0]) >= 10:
        digits = "".join(f"{int(p):02d}" for p in parts)
    elif code == "pg" and int(parts[0]) >= 10:
        digits = parts[0] + "".join(parts[1:])
    else:
        digits = parts[0] + parts[1] + "".join(f"{int(p):02d}" for p in parts[2:])
    token = f"{code}{digits}_{flavour}" if flavour else f"{code}{digits}"
    # The directory-name scheme has no separators inside a version (my81000 is 8.1.000, not 8.10.0): a version the
    # token cannot name is refused rather than written as another one, which would merge two runs into one version.
    read_back = parse_run_dir(f"x.{token}.c.pk1").version
    if read_back != version:
        raise ValueError(
            f"version {version!r} cannot be named in a {code!r} run directory: {token} reads as {read_back}"
        )
    return token


def _sb_o(test: str, range_size: int, dop: int, qps: float, spec: SeriesSpec, secs: int, rng: random.Random) -> str:
    base = test.split(".", 1)[0]
    lua = _LUA.get(base, f"oltp_{base.replace('-', '_')}.lua")
    driver = {"pg": "pgsql"}.get(spec.dbms_code, "mysql")
    command = (
        f"sysbench --db-driver={driver} --range-size={range_size} --table-size={spec.table_size} "
        f"--tables={spec.tables} --threads={dop} --events=0 --warmup-time=5 --time={secs} {lua} run "
        f"--{driver}-user=root --{driver}-password=pw --{driver}-host=127.0.0.1 --{driver}-db=test --rand-type=uniform"
    )
    if base == "scan":
        # Scan's QPS is thousands of rows/s: derive the latency that gives it.
        avg_ms = spec.table_size / qps
        events_per_s = dop * 1000.0 / avg_ms
    else:
        avg_ms = dop * 1000.0 / qps
        events_per_s = qps
    events = max(1, int(events_per_s * secs))
    queries_per_s = events / secs
    lat = {
        "min": avg_ms * 0.7,
        "avg": avg_ms,
        "max": avg_ms * (3 + rng.random() * 20),
        "p95": avg_ms * 1.3,
    }
    return f"""{command}
{spec.cpus} CPUs
sysbench 1.1.0 (using bundled LuaJIT 2.1.0-beta3)

Running the test with following options:
Number of threads: {dop}
Warmup time: 5s
Initializing random number generator from current time


Initializing worker threads...

Threads started!

Warming up for 5 seconds...

SQL statistics:
    queries performed:
        read:                            {events}
        write:                           0
        other:                           0
        total:                           {events}
    transactions:                        {events} ({queries_per_s:.2f} per sec.)
    queries:                             {events} ({queries_per_s:.2f} per sec.)
    ignored errors:                      0      (0.00 per sec.)
    reconnects:                          0      (0.00 per sec.)

Throughput:
    events/s (eps):                      {queries_per_s:.4f}
    time elapsed:                        {secs + 0.0003:.4f}s
    total number of events:              {events}

Latency (ms):
         min:                                    {lat["min"]:.2f}
         avg:                                    {lat["avg"]:.2f}
         max:                                    {lat["max"]:.2f}
         95th percentile:                        {lat["p95"]:.2f}
         sum:                               {lat["avg"] * events:.2f}

Threads fairness:
    events (avg/stddev):           {events / dop:.4f}/0.00
    execution time (avg/stddev):   {secs:.4f}/0.00

"""


def _sb_met(qps: float, cpu_per_op: float, rng: random.Random, is_write: bool, secs: int) -> str:
    cs_o = 3.8 * (1 + rng.gauss(0, 0.01))
    wkb = (2.5 + rng.random()) if is_write else 0.0
    w_s = qps * wkb / 16 if is_write else 0.1
    return (
        "iostat, vmstat normalized by operation rate\n"
        "samp\tr/s\trMB/s\tw/s\twMB/s\tr/o\trKB/o\twKB/o\to/s\n"
        f"{secs}\t0.0\t0.0\t{w_s:.1f}\t{qps * wkb / 1024:.1f}\t0.000\t0.000\t{wkb:.3f}\t{qps:.2f}\n"
        "\n"
        "samp\tcs/s\tcpu/s\tcs/o\tcpu/o\n"
        f"{secs + 30}\t{qps * cs_o:.0f}\t{qps * cpu_per_op * 1e6 / 1e6:.1f}\t{cs_o:.3f}\t{cpu_per_op:.6f}\n"
    )


def iter_run_files(spec: SeriesSpec) -> Iterator[tuple[str, dict[str, str]]]:
    """(run directory path, {file name: text}) for every version (and repeat) of the series."""
    rng = random.Random(spec.seed)
    for index, version in enumerate(spec.versions):
        factor_by_test: dict[tuple[str, int], float] = {}
        for test, range_size, _ in spec.tests:
            factor = 1.0
            for step in spec.steps:
                if index >= step.version_index and step.match in test:
                    factor *= step.factor
            factor_by_test[(test, range_size)] = factor
        for repeat in range(spec.repeats):
            token = build_token(spec.dbms_code, version, spec.flavour)
            # Repeats are the same build again: the same directory name under another folder.
            name = f"x.{token}.{spec.config}.pk1"
            if spec.repeats > 1:
                name = f"repeat{repeat + 1}/{name}"
            files: dict[str, str] = {}
            for test, range_size, base_qps in spec.tests:
                for dop in spec.dops:
                    scale = min(dop, spec.cpus) ** 0.9
                    qps = base_qps * scale * factor_by_test[(test, range_size)] * (1 + rng.gauss(0, spec.noise))
                    is_write = any(w in test for w in ("delete", "insert", "update", "write"))
                    secs = 600 if is_write else 300
                    key = f"{test}.range{range_size}.pk1.dop{dop}"
                    files[f"sb.o.{key}"] = _sb_o(test, range_size, dop, qps, spec, secs, rng)
                    cpu_per_op = spec.cpus * 0.9 / max(qps, 1) * min(dop, spec.cpus) / spec.cpus
                    files[f"sb.met.{key}"] = _sb_met(qps, cpu_per_op, rng, is_write, secs)
            yield name, files


def bundle_bytes(
    spec: SeriesSpec, *, prefix: str = "", mtime: float | None = None, extra_files: dict[str, bytes] | None = None
) -> bytes:
    """The whole series as one .tar.gz bundle, byte-identical for the same spec.

    ``extra_files`` are added at the bundle's root (a ``benchdash.toml`` manifest, say).
    """
    stamp = int(mtime if mtime is not None else time.mktime((2025, 9, 1, 0, 0, 0, 0, 0, 0)))
    buffer = io.BytesIO()
    with (
        gzip.GzipFile(fileobj=buffer, mode="wb", compresslevel=6, mtime=0) as gz,
        tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar,
    ):
        for file_name, data in (extra_files or {}).items():
            info = tarfile.TarInfo(f"{prefix}{file_name}")
            info.size = len(data)
            info.mtime = stamp
            tar.addfile(info, io.BytesIO(data))
        for n, (name, files) in enumerate(iter_run_files(spec)):
            for file_name, text in files.items():
                data = text.encode()
                info = tarfile.TarInfo(f"{prefix}{name}/{file_name}")
                info.size = len(data)
                info.mtime = stamp + n * 3600
                tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()
