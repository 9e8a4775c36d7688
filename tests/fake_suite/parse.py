"""The fake suite's result files: ``<server>/fakedb-<version>/results.fake`` holding ``<test> <ops/s>`` lines."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from suites.base import ResultFile, SuiteParse, SuiteRun

FILE_NAME = "results.fake"


class ParseError(ValueError):
    pass


def is_warmup(test: str) -> bool:
    return test.endswith(".warm")


def recognise(parts: Sequence[str]) -> bool:
    return len(parts) >= 2 and parts[-1] == FILE_NAME and parts[-2].startswith("fakedb-")


def parse_files(files: Sequence[ResultFile], *, bundle: str, required: bool) -> SuiteParse:
    runs = []
    for file in files:
        folders = file.path.split("/")
        build = folders[-2]
        results = []
        for number, line in enumerate(file.decode("utf-8").splitlines(), start=1):
            if not line.strip():
                continue
            try:
                test, ops = line.split()
                qps = float(ops)
            except ValueError:
                raise ParseError(f"{bundle}:{file.path}: line {number} is not '<test> <ops/s>'") from None
            results.append({"test": test, "range_size": None, "dop": 1, "qps": qps})
        runs.append(
            SuiteRun(
                name=build,
                source=file.path,
                content_sha256=hashlib.sha256(file.read()).hexdigest(),
                dbms="FakeDB",
                version=build.removeprefix("fakedb-"),
                build=build,
                flavour="",
                config="default",
                workload="fake 1 client",
                workload_params={"clients": 1},
                results=results,
                server=folders[-3] if len(folders) >= 3 else None,
            )
        )
    if required and not runs:
        raise ParseError(f"{bundle}: no fake results")
    return SuiteParse(runs=runs, warnings=[], not_read=[])
