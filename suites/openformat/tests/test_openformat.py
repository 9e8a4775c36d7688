"""The open result format: the documented examples validate, the committed JSON Schema is the model's, and every
kind of bad document is refused with its problem named by place."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import jsonschema_rs
import pytest

from suites.openformat.document import Document, OpenFormatError, json_schema, parse_csv_document, parse_document

DOCS = Path(__file__).resolve().parents[3] / "docs"


def documented_examples() -> list[dict[str, Any]]:
    text = (DOCS / "result-format.md").read_text()
    return [json.loads(block) for block in re.findall(r"```json\n(.*?)```", text, re.S)]


def valid() -> dict[str, Any]:
    return copy.deepcopy(documented_examples()[0])


def test_the_committed_schema_is_the_models_own() -> None:
    committed = json.loads((DOCS / "result-format.schema.json").read_text())

    assert committed == json_schema(), (
        "regenerate docs/result-format.schema.json from suites.openformat.document.json_schema()"
    )


@pytest.mark.parametrize("at", [0, 1])
def test_the_documented_examples_are_valid_for_the_model_and_the_schema(at: int) -> None:
    example = documented_examples()[at]

    document = parse_document(json.dumps(example))
    jsonschema_rs.validator_for(json_schema()).validate(example)
    assert isinstance(document, Document) and document.results


def test_a_sysbench_result_keeps_its_label_and_metrics() -> None:
    document = parse_document(json.dumps(valid()).encode())

    first = document.results[0]
    assert first.label == "point-query_range=100" and first.concurrency == 1
    assert first.metrics["cpu_o"] == 0.019724 and first.unit == "queries/s" and not first.warmup
    assert document.server.cpus == 2 and document.workload.suite == "sysbench"


def test_a_custom_suite_brings_its_own_names_and_groups() -> None:
    document = parse_document(json.dumps(documented_examples()[1]))

    assert document.groups == {"point": ["READ_PK_POINT"], "range": ["READ_KEY_RANGE", "FULL_SCAN"]}
    assert [r.label for r in document.results][:2] == ["READ_PK_POINT", "READ_PK_POINT"]


def with_change(path: str, value: Any) -> dict[str, Any]:
    document = valid()
    *parents, last = [int(p) if p.isdigit() else p for p in path.split(".")]
    target: Any = document
    for part in parents:
        target = target[part]
    if value is DELETE:
        del target[last]
    else:
        target[last] = value
    return document


DELETE = object()


@pytest.mark.parametrize(
    ("path", "value", "problem"),
    [
        ("dbms", DELETE, "dbms: Field required"),
        ("server.name", DELETE, "server.name: Field required"),
        ("verison", "1.0", "verison: Extra inputs are not permitted"),
        ("results.0.concurency", 2, "results[0].concurency: Extra inputs are not permitted"),
        ("results.1.concurrency", 0, "results[1].concurrency: Input should be greater than or equal to 1"),
        ("results.0.throughput", -1, "results[0].throughput: Input should be greater than or equal to 0"),
        ("results.0.throughput", "fast", "results[0].throughput: Input should be a valid number"),
        ("results", [], "results: List should have at least 1 item"),
        ("version", "x" * 65, "version: String should have at most 64 characters"),
        ("format_version", 2, "format_version: Input should be 1"),
        ("started_at", "2025-04-01T10:00:00", "started_at needs a time zone"),
        ("groups", {"point": ["no-such-test"]}, "group 'point' names 'no-such-test', which no result has"),
    ],
)
def test_a_bad_document_is_refused_naming_the_place(path: str, value: Any, problem: str) -> None:
    with pytest.raises(OpenFormatError, match=re.escape(problem)) as refused:
        parse_document(json.dumps(with_change(path, value)), where="run.json")

    assert str(refused.value).startswith("run.json: ")


def test_every_problem_is_listed_at_once() -> None:
    document = with_change("results.1.concurrency", 0)
    del document["config"]

    with pytest.raises(OpenFormatError, match=r"config: Field required; .*results\[1\]\.concurrency"):
        parse_document(json.dumps(document))


def test_the_same_microbenchmark_and_concurrency_twice_is_refused() -> None:
    document = valid()
    document["results"].append(dict(document["results"][0], throughput=1.0))

    with pytest.raises(
        OpenFormatError, match=r"results\[2\] repeats results\[0\] \(point-query_range=100 at concurrency 1"
    ):
        parse_document(json.dumps(document))


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity"])
def test_non_finite_numbers_are_refused_though_python_json_reads_them(number: str) -> None:
    text = json.dumps(valid()).replace('"cpu_o": 0.019724', f'"cpu_o": {number}', 1)

    with pytest.raises(OpenFormatError, match=rf"not valid JSON: {number} is not a JSON number"):
        parse_document(text)


def test_an_infinite_number_given_as_a_python_value_is_refused_too() -> None:
    with pytest.raises(Exception, match=r"finite number"):
        Document.model_validate(with_change("results.0.throughput", float("inf")))


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (b"{not json", "not valid JSON: Expecting property name enclosed in double quotes (line 1, column 2)"),
        (b'{"dbms": "\xff"}', "not UTF-8 text (invalid start byte at byte 10)"),
        (b"[1, 2]", "must be a JSON object, not list"),
        (b'{"dbms": "MySQL"}', 'not a benchdash result document (it needs "format": "benchdash-result")'),
        (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
    ],
)
def test_what_is_not_a_document_is_said_plainly(data: bytes, problem: str) -> None:
    with pytest.raises(OpenFormatError, match=re.escape(problem)):
        parse_document(data)


# --------------------------------------------------------------------------- the CSV form


def documented_csv() -> str:
    text = (DOCS / "result-format.md").read_text()
    [block] = re.findall(r"```csv\n(.*?)```", text, re.S)
    return block


def test_the_documented_csv_is_the_same_run_as_the_documented_json_less_its_workload_parameters() -> None:
    from_json = parse_document(json.dumps(valid()))
    from_csv = parse_csv_document(documented_csv().encode())

    assert from_csv.model_dump(exclude={"workload"}) == from_json.model_dump(exclude={"workload"})
    assert from_csv.workload.name == from_json.workload.name and from_csv.workload.suite == "sysbench"


def test_a_csv_document_brings_its_groups_warmups_and_own_metric_names() -> None:
    text = (
        "dbms,version,config,server,workload,suite,microbenchmark,concurrency,throughput,unit,warmup,group,rows_per_s\n"
        "MySQL,5.1.14,default,lab,engine tests,engine-tests,READ_PK_POINT,1,10532,,,point,\n"
        "MySQL,5.1.14,default,lab,engine tests,engine-tests,FULL_SCAN,1,3.1,scans/s,no,range,412000\n"
        "MySQL,5.1.14,default,lab,engine tests,engine-tests,WARM,1,1,,yes,,\n"
    )

    document = parse_csv_document(text)

    assert document.groups == {"point": ["READ_PK_POINT"], "range": ["FULL_SCAN"]}
    assert [r.warmup for r in document.results] == [False, False, True]
    assert document.results[1].metrics == {"rows_per_s": 412000.0} and document.results[1].unit == "scans/s"
    assert document.results[0].metrics == {}


def on_row(text: str, number: int, change: Any) -> str:
    """The CSV text with row ``number`` (the header is row 1) changed."""
    lines = text.split("\n")
    lines[number - 1] = change(lines[number - 1])
    return "\n".join(lines)


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (
            lambda t: on_row(t, 3, lambda row: row.replace("10.11.19", "10.11.20", 1)),
            "row 3: version is '10.11.20' but row 2 says '10.11.19' (one CSV document is one run",
        ),
        (
            lambda t: t.replace(",point-query,100,8,", ",point-query,100,eight,", 1),
            "row 3, column concurrency: 'eight' is not a whole number",
        ),
        (lambda t: t.replace(",0.007899", ",fast", 1), "row 3, column cpu_o: 'fast' is not a number"),
        (
            lambda t: t.replace(",point-query,100,8,", ",point-query,100,0,", 1),
            "row 3, column concurrency: Input should be greater than or equal to 1",
        ),
        (lambda t: t.replace(",0.007899", ",nan", 1), "row 3, column metrics.cpu_o: Input should be a finite number"),
        (lambda t: t.replace("throughput,", "speed,", 1), "the header lacks throughput"),
        (lambda t: t.replace(",0.007899", ",0.007899,extra", 1), "row 3: 22 cells, but the header has 21"),
        (
            lambda t: on_row(t, 3, lambda row: row.replace(",Debian 12,", ",Debian 13,", 1)),
            "row 3: os is 'Debian 13' but row 2 says 'Debian 12'",
        ),
    ],
)
def test_a_bad_csv_document_is_refused_naming_row_and_column(change: Any, problem: str) -> None:
    text = change(documented_csv())

    with pytest.raises(OpenFormatError, match=re.escape(problem)):
        parse_csv_document(text, where="run.csv")
