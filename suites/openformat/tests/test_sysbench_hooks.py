"""sysbench's JSON and CSV report-hook outputs → the open result format.

Real files: the stock corpus (stock sysbench 1.0.20, one array per report, no summary), and outputs made here by
running sysbench 1.0.20 against the local MariaDB with the report hooks at 1, 2 and 4 threads
(tests/data/sysbench-hooks: one array of reports, then the usual summary).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema_rs
import pytest

from suites.openformat.document import json_schema
from suites.openformat.sysbench_hooks import HookReportError, parse_hook_output, to_document
from suites.sysbench.parse import parse_output

PRODUCED = Path(__file__).resolve().parents[3] / "tests" / "data" / "sysbench-hooks"
TESTS = {"oltp_point_select": ("point-query", 100), "oltp_read_only": ("read-only", 100)}


def produced(kind: str) -> list[tuple[str, int, Path]]:
    found = []
    for path in sorted(PRODUCED.glob(f"*.{kind}.dop*.txt")):
        script, _kind, dop, _txt = path.name.split(".")
        found.append((script, int(dop.removeprefix("dop")), path))
    return found


@pytest.mark.parametrize(("name", "kind"), [("report_json_hook", "json"), ("report_csv_hook", "csv")])
def test_the_stock_outputs_without_a_summary_average_their_intervals(corpus: Path, name: str, kind: str) -> None:
    text = (corpus / "sysbench-stock" / f"point_select.{name}.txt").read_text()

    report = parse_hook_output(text)

    assert report.kind == kind and report.summary is None and report.concurrency == 1
    rows = (
        [(15240.33, 0.09), (15166.94, 0.09)] if kind == "json" else [(14801.73, 0.09), (14573.70, 0.09)]
    )  # as printed in the files
    assert [(i.qps, i.latency_ms) for i in report.intervals] == rows
    result = report.result("point-query", 100)
    assert result["throughput"] == pytest.approx(sum(q for q, _ in rows) / 2)
    assert result["metrics"]["lat_pct_ms"] == pytest.approx(0.09) and result["metrics"]["lat_pct"] == 95


@pytest.mark.parametrize("kind", ["json", "csv"])
def test_outputs_made_here_take_the_summarys_qps_exactly_as_an_sb_o_file_gives_it(kind: str) -> None:
    for script, dop, path in produced(kind):
        text = path.read_text()
        report = parse_hook_output(text, file_name=path.name)

        assert report.kind == kind and report.concurrency == dop
        assert len(report.intervals) >= 2 and all(i.threads <= dop for i in report.intervals)
        expected = parse_output(text)
        result = report.result(*TESTS[script])
        assert result["throughput"] == expected.qps
        assert result["metrics"]["lat_avg_ms"] == expected.lat_avg_ms
        assert result["metrics"]["lat_pct_ms"] == expected.lat_pct_ms


@pytest.mark.parametrize("kind", ["json", "csv"])
def test_a_runs_outputs_become_one_valid_document_with_every_microbenchmark_and_concurrency(kind: str) -> None:
    outputs = [(*TESTS[script], parse_hook_output(path.read_text())) for script, _dop, path in produced(kind)]

    document = to_document(
        outputs,
        dbms="MariaDB",
        version="10.11.19",
        config="default",
        server={"name": "c2r8", "cpus": 2},
        workload={"name": "sysbench 1 table × 10k rows", "parameters": {"tables": 1, "table_size": 10000}},
        groups={"point": ["point-query"], "range": ["read-only_range=100"]},
    )

    assert sorted((r.label, r.concurrency) for r in document.results) == [
        (label, dop) for label in ("point-query_range=100", "read-only_range=100") for dop in (1, 2, 4)
    ]
    assert document.workload.suite == "sysbench"
    jsonschema_rs.validator_for(json_schema()).validate(json.loads(document.model_dump_json(exclude_none=True)))


def test_output_without_reports_says_how_to_get_them(corpus: Path) -> None:
    text = (corpus / "sysbench-stock" / "sb.o.point-query.range100.pk1.dop1").read_text()

    with pytest.raises(
        HookReportError, match=re.escape("sb.o: no JSON or CSV intermediate reports (run sysbench with")
    ):
        parse_hook_output(text, file_name="sb.o")


def test_a_damaged_or_non_finite_json_report_is_refused(corpus: Path) -> None:
    text = (corpus / "sysbench-stock" / "point_select.report_json_hook.txt").read_text()

    with pytest.raises(HookReportError, match="a JSON report does not parse"):
        parse_hook_output(text.replace('"tps": 15240.33,', '"tps": 15240.33', 1))
    with pytest.raises(HookReportError, match="NaN in a JSON report is no measurement"):
        parse_hook_output(text.replace("15240.33", "NaN", 1))
    with pytest.raises(HookReportError, match=r"JSON report 1: not a sysbench report \(missing or bad 'qps'\)"):
        parse_hook_output(text.replace('"qps"', '"q"', 1))
