"""A bundle's open-format documents and sysbench report-hook outputs → runs, as plain values.

Two kinds of file are read, wherever they sit outside a sysbench run directory:

- a document (``*.json``, or its CSV form ``*.result.csv``): one run, described
  in ``docs/result-format.md``. A JSON file that does not say ``"format"`` at
  all is someone's other file (a tool's settings): counted as not read. CSV
  documents carry ``.result`` in their name because bundles hold many other
  CSV tables (the author's ``qps.rel.all.csv``, db_bench's summaries). Anything that claims to be a
  document is validated strictly, and a bad one fails the bundle, naming the
  file and the field.
- sysbench's own output with JSON or CSV intermediate reports
  (``<script>.json.dop4.txt``, ``<script>.report_csv_hook.txt``): every such
  file in one folder is one run of the sysbench suite, one result per file.
  The folder is read as the build's name (``ma101119_rel``: MariaDB 10.11.19),
  and a ``benchdash.toml`` beside them says what the files cannot (config,
  server, workload).

A document's own microbenchmark names and groups travel with its run: the
groups are kept in the workload's parameters (``DOCUMENT_KEY``), so the series
carries its group set (``carried_group_set``).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from suites.base import ResultFile, SuiteParse, SuiteRun
from suites.groups import GroupSet, user_group_set
from suites.naming import parse_build
from suites.openformat.limits import KNOWN_METRICS, MAX_TEST, OpenFormatError
from suites.openformat.sysbench_hooks import HookReport, parse_hook_output

# The document's schema (pydantic) is imported when a document is read: the suites' registry, which every
# process loads with the models, needs only this module's names.
if TYPE_CHECKING:
    from suites.openformat.document import Document

SUITE_NAME = "custom"
# The suite a document may name that benchdash stores as its own (its labels and group sets apply).
SYSBENCH = "sysbench"
# Where a document's own suite name and groups are kept in the workload's parameters.
DOCUMENT_KEY = "result_format"
WARMUP_SUFFIX = ".warm"
HOOK_WORKLOAD = "sysbench report hooks"

_HOOK_RE = re.compile(
    r"^(?P<script>[A-Za-z0-9_+-]+(?:\.[A-Za-z0-9_+-]+)*?)\.(?:report_)?(?:json|csv)(?:_hook)?(?:\.dop\d+)?\.txt$"
)


class ParseError(OpenFormatError):
    """A bundle's documents or report-hook outputs cannot be imported; the message names the file."""


def is_warmup(test: str) -> bool:
    return test.endswith(WARMUP_SUFFIX)


CSV_SUFFIX = ".result.csv"
# Why a .json file of a bundle was not read, as the bundle page and the import output say it.
NOT_A_DOCUMENT = 'JSON without a "format" key: some other tool\'s file, not a result document'


def is_document(name: str) -> bool:
    return name.endswith((".json", CSV_SUFFIX))


def hook_script(name: str) -> str | None:
    """The sysbench script a report-hook output's file name says it ran, or None when it is no such name."""
    match = _HOOK_RE.match(name)
    return match["script"] if match else None


def recognise(parts: Sequence[str]) -> bool:
    return bool(parts) and (is_document(parts[-1]) or hook_script(parts[-1]) is not None)


def parse_files(files: Sequence[ResultFile], *, bundle: str, required: bool) -> SuiteParse:
    runs: list[SuiteRun] = []
    not_read: list[tuple[str, str]] = []
    hooks: dict[str, list[ResultFile]] = {}
    for file in files:
        name = file.path.rpartition("/")[2]
        if hook_script(name) is not None:
            hooks.setdefault(file.path.rpartition("/")[0], []).append(file)
            continue
        # A document uploaded as it is is its own bundle: named once.
        where = file.path if file.path == bundle else f"{bundle}:{file.path}"
        document = _document(file, where=where)
        if document is None:
            not_read.append((file.path, NOT_A_DOCUMENT))
        else:
            runs.append(document_run(document, source=file.path, where=where))
    for folder, outputs in hooks.items():
        runs.append(_hook_run(folder, outputs, bundle=bundle))
    if required and not runs:
        raise ParseError(
            f'{bundle}: no result document in its .json files (a document says "format": "benchdash-result")'
        )
    return SuiteParse(runs=runs, warnings=[], not_read=not_read)


def _document(file: ResultFile, *, where: str) -> Document | None:
    from suites.openformat.document import parse_csv_document, parse_document

    try:
        text = file.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ParseError(f"{where}: not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    if file.path.endswith(CSV_SUFFIX):
        return _validated(parse_csv_document, text, where)
    try:
        raw = json.loads(text)
    except (ValueError, RecursionError):
        raw = None
    if isinstance(raw, dict) and "format" not in raw:
        return None  # some other JSON (a tool's settings): a document always says its format
    return _validated(parse_document, text, where)


def _validated(parse: Any, text: str, where: str) -> Document:
    try:
        document: Document = parse(text, where=where)
    except OpenFormatError as exc:
        raise ParseError(str(exc)) from None
    return document


def document_run(document: Document, *, source: str, where: str) -> SuiteRun:
    """One validated document → its run, under the sysbench suite when it says so, else the custom suite."""
    build = document.build or document.version
    results = [_result_row(result, where=f"{where}: results[{at}]") for at, result in enumerate(document.results)]
    suite = document.workload.suite
    params: dict[str, Any] = dict(document.workload.parameters)
    carried: dict[str, Any] = {}
    if suite != SYSBENCH:
        carried["suite"] = suite
    if document.groups:
        # Pairs, not an object: PostgreSQL's jsonb would reorder the groups.
        carried["groups"] = [[group, list(members)] for group, members in document.groups.items()]
    if carried:
        params[DOCUMENT_KEY] = carried
    canonical = document.model_dump_json(exclude={"notes"})
    return SuiteRun(
        name=document.run or f"{build}.{document.config}.{document.server.name}",
        source=source,
        content_sha256=hashlib.sha256(canonical.encode()).hexdigest(),
        dbms=document.dbms,
        version=document.version,
        build=build,
        flavour="",
        config=document.config,
        workload=document.workload.name,
        workload_params=params,
        results=results,
        started_at=document.started_at,
        server=document.server.name,
        suite=SYSBENCH if suite == SYSBENCH else None,
        config_text=document.config_text or "",
        cpus=document.server.cpus,
        server_details={
            key: value
            for key, value in (
                ("ram_gb", document.server.ram_gb),
                ("storage", document.server.storage),
                ("os", document.server.os),
            )
            if value is not None
        },
        notes=document.notes or "",
    )


def _result_row(result: Any, *, where: str) -> dict[str, Any]:
    test = result.microbenchmark
    if result.warmup and not is_warmup(test):
        test += WARMUP_SUFFIX
        if len(test) > MAX_TEST:
            raise ParseError(f"{where}.microbenchmark: a warm-up's name with {WARMUP_SUFFIX!r} is over {MAX_TEST}")
    row: dict[str, Any] = {
        "test": test,
        "range_size": result.range,
        "dop": result.concurrency,
        "qps": result.throughput,
    }
    # The metrics benchdash has columns for fill them; any other name is kept with the result as given.
    row.update({name: value for name, value in result.metrics.items() if name in KNOWN_METRICS})
    extra = {name: value for name, value in result.metrics.items() if name not in KNOWN_METRICS}
    if result.unit != "queries/s":
        extra["unit"] = result.unit
    if extra:
        row["extra"] = extra
    return row


def _hook_run(folder: str, outputs: Sequence[ResultFile], *, bundle: str) -> SuiteRun:
    build = folder.rpartition("/")[2] or bundle
    dbms, version, flavour, warnings = parse_build(build)
    reports: list[tuple[str, HookReport]] = []
    seen: dict[tuple[str, int], str] = {}
    for output in outputs:
        where = f"{bundle}:{output.path}"
        script = hook_script(output.path.rpartition("/")[2])
        assert script is not None  # parse_files sorted it here by its name
        try:
            report = parse_hook_output(output.decode("utf-8", errors="replace"), file_name=where)
        except ValueError as exc:
            raise ParseError(str(exc)) from None
        key = (script, report.concurrency)
        if key in seen:
            raise ParseError(
                f"{where}: {script} at {report.concurrency} threads again (also in {seen[key]}); "
                "give each script and thread count once per folder"
            )
        seen[key] = output.path
        reports.append((script, report))
    results = []
    for script, report in sorted(reports, key=lambda item: (item[0], item[1].concurrency)):
        result = report.result(script)
        row = {"test": script, "range_size": None, "dop": result["concurrency"], "qps": result["throughput"]}
        row.update({k: v for k, v in result["metrics"].items() if k in KNOWN_METRICS})
        row["extra"] = {k: v for k, v in result["metrics"].items() if k not in KNOWN_METRICS}
        results.append(row)
    digest = hashlib.sha256()
    for output in sorted(outputs, key=lambda f: f.path):
        digest.update(hashlib.sha256(output.read()).digest())
    parent = folder.rpartition("/")[0].rpartition("/")[2]
    return SuiteRun(
        name=build,
        source=sorted(o.path for o in outputs)[0],
        content_sha256=digest.hexdigest(),
        dbms=dbms,
        version=version,
        build=build,
        flavour=flavour,
        config="default",
        workload=HOOK_WORKLOAD,
        workload_params={},
        results=results,
        started_at=None,
        server=parent or None,
        suite=SYSBENCH,
        name_warnings=[f"{bundle}:{folder}: {w}" for w in warnings],
        workload_warnings=[
            f"{bundle}:{folder}: sysbench's report hooks do not say the workload; imported as {HOOK_WORKLOAD!r} "
            "(name it in a benchdash.toml beside them)"
        ],
    )


def carried_group_set(workload: str, params: Mapping[str, Any]) -> GroupSet | None:
    """The group set the documents of a series brought (None: they brought none)."""
    carried = params.get(DOCUMENT_KEY)
    if not isinstance(carried, Mapping) or not carried.get("groups"):
        return None
    groups = carried["groups"]
    # Named for the suite the documents said (a sysbench document's groups: for its workload).
    owner = carried.get("suite") or workload
    return user_group_set(f"{owner} groups", {str(group): list(members) for group, members in groups})
