"""sysbench's own machine-readable reports, converted to the open result format (``suites.openformat.document``).

Stock sysbench (1.0) writes its intermediate reports as JSON or CSV when a test
script sets ``sysbench.hooks.report_intermediate = sysbench.report_json`` (or
``report_csv``) and runs with ``--report-interval``. Each report is one
interval: elapsed time, threads running, transactions/s, queries/s (total,
reads, writes, other), the latency percentile in ms, errors/s and
reconnects/s. The JSON comes as one array of objects, or as one array per
report; the usual human-readable summary may follow ("SQL statistics: …").

One output is one result: its throughput is the summary's queries/s when the
summary is there (exactly what an ``sb.o`` file gives), else the mean of the
intervals' queries/s (equal intervals, so the mean is the rate over the run).
Concurrency is the "Number of threads" sysbench printed.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from suites.openformat.limits import FORMAT, FORMAT_VERSION
from suites.sysbench.parse import ParseError, SysbenchOutput, parse_output

if TYPE_CHECKING:
    from suites.openformat.document import Document  # the schema (pydantic): imported when a document is made

CSV_COLUMNS = ("time", "threads", "tps", "qps", "reads", "writes", "other", "latency_ms", "errors", "reconnects")
_THREADS_RE = re.compile(r"^Number of threads: (\d+)\s*$", re.M)
_PERCENTILE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)th percentile:", re.M)
_CSV_LINE_RE = re.compile(r"^\d+,\d+(?:,-?[\d.]+(?:e[+-]?\d+)?|,nan|,-?inf){8}\s*$", re.M | re.I)


class HookReportError(ParseError):
    """Not a sysbench JSON or CSV report output; the message says why, naming the file."""


@dataclass(frozen=True)
class Interval:
    time: float
    threads: int
    tps: float
    qps: float
    reads: float
    writes: float
    other: float
    latency_ms: float  # the --percentile latency (95th unless the run said otherwise)
    errors_per_s: float
    reconnects_per_s: float


@dataclass(frozen=True)
class HookReport:
    kind: str  # json or csv
    threads: int | None
    intervals: tuple[Interval, ...]
    summary: SysbenchOutput | None
    percentile: float

    @property
    def concurrency(self) -> int:
        if self.threads:
            return self.threads
        if self.summary is not None and self.summary.threads:
            return self.summary.threads
        return max((i.threads for i in self.intervals), default=1) or 1

    def result(self, microbenchmark: str, range_size: int | None = None) -> dict[str, Any]:
        """This output as one result of an open-format document."""
        metrics: dict[str, float] = {"lat_pct": self.percentile}
        if self.summary is not None:
            s = self.summary
            throughput = s.qps
            named = {
                "tps": s.tps,
                "lat_min_ms": s.lat_min_ms,
                "lat_avg_ms": s.lat_avg_ms,
                "lat_max_ms": s.lat_max_ms,
                "lat_pct_ms": s.lat_pct_ms,
                "errors_per_s": s.errors_per_s,
                "reconnects_per_s": s.reconnects_per_s,
            }
            metrics.update({k: v for k, v in named.items() if v is not None})
            if s.lat_pct is not None:
                metrics["lat_pct"] = s.lat_pct
        else:
            n = len(self.intervals)
            throughput = sum(i.qps for i in self.intervals) / n
            metrics.update(
                tps=sum(i.tps for i in self.intervals) / n,
                lat_pct_ms=sum(i.latency_ms for i in self.intervals) / n,
                errors_per_s=sum(i.errors_per_s for i in self.intervals) / n,
                reconnects_per_s=sum(i.reconnects_per_s for i in self.intervals) / n,
            )
        metrics["report_intervals"] = float(len(self.intervals))
        result: dict[str, Any] = {
            "microbenchmark": microbenchmark,
            "concurrency": self.concurrency,
            "throughput": throughput,
            "metrics": metrics,
        }
        if range_size is not None:
            result["range"] = range_size
        return result


def parse_hook_output(text: str, *, file_name: str = "sysbench output") -> HookReport:
    """One sysbench run's output with JSON or CSV intermediate reports (which, is decided by the content)."""
    if "\0" in text:
        raise HookReportError(f"{file_name}: has a NUL byte; not sysbench output")
    intervals = _json_intervals(text, file_name)
    kind = "json"
    if not intervals:
        intervals, kind = _csv_intervals(text, file_name), "csv"
    if not intervals:
        raise HookReportError(
            f"{file_name}: no JSON or CSV intermediate reports (run sysbench with --report-interval and "
            "sysbench.hooks.report_intermediate = sysbench.report_json or sysbench.report_csv)"
        )
    summary = None
    if "SQL statistics:" in text:
        summary = parse_output(text, file_name=file_name)
    threads = _THREADS_RE.search(text)
    percentile = _PERCENTILE_RE.search(text)
    return HookReport(
        kind=kind,
        threads=int(threads[1]) if threads else None,
        intervals=tuple(intervals),
        summary=summary,
        percentile=float(percentile[1]) if percentile else 95.0,
    )


def _json_intervals(text: str, file_name: str) -> list[Interval]:
    decoder = json.JSONDecoder(parse_constant=_no_constant(file_name))
    found: list[Interval] = []
    for match in re.finditer(r"^\[\s*$", text, re.M):
        try:
            value, _end = decoder.raw_decode(text, match.start())
        except json.JSONDecodeError as exc:
            raise HookReportError(f"{file_name}: a JSON report does not parse ({exc.msg}, line {exc.lineno})") from exc
        if not isinstance(value, list):
            continue
        for at, item in enumerate(value):
            found.append(_json_interval(item, f"{file_name}: JSON report {len(found) + 1}", at))
    return found


def _json_interval(item: Any, where: str, at: int) -> Interval:
    try:
        qps = item["qps"]
        return Interval(
            time=_num(item["time"]),
            threads=int(item["threads"]),
            tps=_num(item["tps"]),
            qps=_num(qps["total"]),
            reads=_num(qps["reads"]),
            writes=_num(qps["writes"]),
            other=_num(qps["other"]),
            latency_ms=_num(item["latency"]),
            errors_per_s=_num(item["errors"]),
            reconnects_per_s=_num(item["reconnects"]),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise HookReportError(f"{where}: not a sysbench report (missing or bad {exc})") from exc


def _csv_intervals(text: str, file_name: str) -> list[Interval]:
    lines = [m.group(0) for m in _CSV_LINE_RE.finditer(text)]
    found = []
    for n, row in enumerate(csv.reader(io.StringIO("\n".join(lines))), 1):
        values = dict(zip(CSV_COLUMNS, row, strict=True))
        try:
            found.append(
                Interval(
                    time=_num(values["time"]),
                    threads=int(values["threads"]),
                    tps=_num(values["tps"]),
                    qps=_num(values["qps"]),
                    reads=_num(values["reads"]),
                    writes=_num(values["writes"]),
                    other=_num(values["other"]),
                    latency_ms=_num(values["latency_ms"]),
                    errors_per_s=_num(values["errors"]),
                    reconnects_per_s=_num(values["reconnects"]),
                )
            )
        except ValueError as exc:
            raise HookReportError(f"{file_name}: CSV report {n}: {exc}") from exc
    return found


def _num(value: Any) -> float:
    number = float(value)
    if number != number or number in (float("inf"), float("-inf")):
        raise ValueError(f"{value!r} is not a finite number")
    return number


def _no_constant(file_name: str) -> Any:
    def refuse(name: str) -> Any:
        raise HookReportError(f"{file_name}: {name} in a JSON report is no measurement")

    return refuse


def to_document(
    results: Iterable[tuple[str, int | None, HookReport]],
    *,
    dbms: str,
    version: str,
    config: str,
    server: Mapping[str, Any],
    workload: Mapping[str, Any],
    build: str | None = None,
    groups: Mapping[str, list[str]] | None = None,
) -> Document:
    """Outputs of one run (microbenchmark name, range or None, report) → a validated open-format document."""
    from suites.openformat.document import parse_document

    document: dict[str, Any] = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "dbms": dbms,
        "version": version,
        "config": config,
        "server": dict(server),
        "workload": {"suite": "sysbench", **workload},
        "results": [report.result(name, range_size) for name, range_size, report in results],
    }
    if build:
        document["build"] = build
    if groups:
        document["groups"] = dict(groups)
    return parse_document(json.dumps(document), where=f"{dbms} {version}")
