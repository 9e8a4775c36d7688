"""Open-format documents and sysbench report-hook outputs import through the one import path, by every door.

Real files: sysbench 1.0.20's JSON and CSV report-hook outputs made here against MariaDB 10.11.19
(tests/data/sysbench-hooks) and the stock ones of the corpus. The custom suite's documents are those same real
measurements under a team's own microbenchmark names and groups, made with the converter users are pointed to.
"""

from __future__ import annotations

import io
import json
import tarfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.test import Client

from accounts.permissions import create_token
from reports.compare import ComparisonSpec, get_comparison
from reports.series import refresh_series
from runs.importer import ImportFailed, submit_and_import
from runs.models import Bundle, Microbenchmark, Result, Run, Workload
from runs.parse import parse_bundle
from suites.openformat.sysbench_hooks import parse_hook_output, to_document

HOOKS = Path(__file__).resolve().parents[2] / "tests" / "data" / "sysbench-hooks"
DOCS = Path(__file__).resolve().parents[2] / "docs" / "result-format.md"
# The team's own names for the two sysbench scripts they ran, and their groups.
ENGINE_NAMES = {"oltp_point_select": "READ_PK_POINT", "oltp_read_only": "READ_RANGE_TXN"}
ENGINE_GROUPS = {"point lookups": ["READ_PK_POINT"], "range transactions": ["READ_RANGE_TXN"]}
MANIFEST = b'config = "c2r8"\nworkload = "sysbench 1 table x 10k rows, 3 s"\n'


def _tgz(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for path, data in files.items():
            info = tarfile.TarInfo(path)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def hook_outputs(kind: str) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(HOOKS.glob(f"*.{kind}.dop*.txt"))}


def engine_document(kind: str, build: str, version: str) -> bytes:
    """A custom suite's document of the real outputs of one kind, as a team's converter would write it."""
    reports = [
        (ENGINE_NAMES[name.split(".")[0]], None, parse_hook_output(data.decode(), file_name=name))
        for name, data in hook_outputs(kind).items()
    ]
    document = to_document(
        reports,
        dbms="MariaDB",
        version=version,
        build=build,
        config="c2r8",
        server={"name": "lab-c2r8", "cpus": 2},
        workload={"name": "engine tests, 10k rows", "suite": "engine-tests"},
        groups=ENGINE_GROUPS,
    )
    return document.model_dump_json(exclude_none=True).encode()


def engine_bundle() -> bytes:
    return _tgz(
        {
            "engine/ma101119_rel.json": engine_document("json", "ma101119_rel", "10.11.19"),
            "engine/ma101119_rel_csv.json": engine_document("csv", "ma101119_rel_csv", "10.11.20"),
        }
    )


def hooks_bundle() -> bytes:
    files = {f"c2r8/ma101119_rel/{name}": data for name, data in hook_outputs("json").items()}
    files |= {f"c2r8/ma101119_rel2/{name}": data for name, data in hook_outputs("csv").items()}
    files["c2r8/benchdash.toml"] = MANIFEST + b'server = "c2r8"\n'
    return _tgz(files)


@pytest.mark.django_db
def test_the_command_imports_report_hook_outputs_as_sysbench_runs_with_their_named_metrics(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    archive = tmp_path / "hooks.tgz"
    archive.write_bytes(hooks_bundle())
    call_command("import_bundle", str(archive))
    assert "ma101119_rel: MariaDB 10.11.19 on c2r8, 2 tests, 6 results" in capsys.readouterr().out
    runs = {run.name: run for run in Run.objects.select_related("workload", "config", "build__version")}
    assert sorted(runs) == ["ma101119_rel", "ma101119_rel2"]
    run = runs["ma101119_rel"]
    assert (run.workload.suite, run.workload.name, run.config.name) == (
        "sysbench",
        "sysbench 1 table x 10k rows, 3 s",
        "c2r8",
    )
    # The throughput is the summary's queries/s, exactly; the latencies fill benchdash's own columns.
    report = parse_hook_output((HOOKS / "oltp_point_select.json.dop2.txt").read_text())
    assert report.summary is not None
    stored = Result.objects.get(run=run, microbenchmark__test="oltp_point_select", dop=2)
    assert stored.qps == report.summary.qps and stored.lat_avg_ms == report.summary.lat_avg_ms
    assert stored.lat_pct_ms == report.summary.lat_pct_ms and stored.tps == report.summary.tps
    assert stored.extra == {"report_intervals": float(len(report.intervals))}


def test_a_stock_output_without_a_summary_is_one_result_of_its_folder(corpus: Path) -> None:
    stock = corpus / "sysbench-stock"
    files = {f"box/ma101119_rel/{name}": (stock / name).read_bytes() for name in ("point_select.report_json_hook.txt",)}
    parsed = parse_bundle(_tgz(files), name="stock.tgz")
    (run,) = parsed.runs
    report = parse_hook_output((stock / "point_select.report_json_hook.txt").read_text())
    assert run.suite == "sysbench" and run.server == "box"
    assert run.results[0]["test"] == "point_select" and run.results[0]["dop"] == report.concurrency
    assert run.results[0]["qps"] == pytest.approx(sum(i.qps for i in report.intervals) / len(report.intervals))
    # Without a manifest the workload is named for what it is, and the import says so.
    assert any("do not say the workload" in w for w in parsed.warnings)


@pytest.mark.django_db
def test_a_custom_suites_documents_are_compared_in_their_own_groups() -> None:
    submit_and_import(engine_bundle(), name="engine.tgz", source=Bundle.Source.COMMAND)
    workload = Workload.objects.get()
    assert (workload.suite, workload.name) == ("custom", "engine tests, 10k rows")
    assert workload.params["result_format"]["suite"] == "engine-tests"
    assert set(Microbenchmark.objects.values_list("suite", "test")) == {
        ("custom", "READ_PK_POINT"),
        ("custom", "READ_RANGE_TXN"),
    }
    base = Run.objects.get(build__version__text="10.11.19")
    comparison = get_comparison(ComparisonSpec(base_run_id=base.pk, dop=2))
    assert comparison.suite == "custom" and comparison.group_set == "engine-tests groups"
    assert comparison.group_of == {"READ_PK_POINT": "point lookups", "READ_RANGE_TXN": "range transactions"}
    other = next(c.key for c in comparison.columns if c.key != comparison.base)
    base_qps = {r.microbenchmark.test: r.qps for r in Result.objects.filter(run=base, dop=2).select_related()}
    other_qps = {r.microbenchmark.test: r.qps for r in Result.objects.filter(dop=2).exclude(run=base).select_related()}
    assert comparison.relative[other] == {name: pytest.approx(other_qps[name] / base_qps[name]) for name in base_qps}


@pytest.mark.django_db
def test_the_comparison_page_shows_the_documents_groups(client: Client) -> None:
    submit_and_import(engine_bundle(), name="engine.tgz", source=Bundle.Source.COMMAND)
    base = Run.objects.get(build__version__text="10.11.19")
    page = client.get(f"/compare/?base={base.pk}&dop=2")
    assert page.status_code == 200
    html = page.content.decode()
    assert "point lookups" in html and "range transactions" in html and "READ_RANGE_TXN" in html


@pytest.fixture
def uploader(client: Client, user_with_role: Callable[..., Any]) -> Client:
    client.force_login(user_with_role("uploader"))
    return client


@pytest.mark.django_db
def test_the_upload_page_imports_a_bundle_of_documents(
    uploader: Client, django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        response = uploader.post("/upload/", {"bundle": SimpleUploadedFile("engine.tgz", engine_bundle())})
    bundle = Bundle.objects.get()
    assert response.status_code == 302 and bundle.status == "imported"
    assert Run.objects.filter(bundle=bundle).count() == 2
    assert Result.objects.count() == 12  # two scripts at three thread counts, per run


@pytest.fixture
def api_client(user_with_role: Callable[..., Any]) -> Client:
    return Client(headers={"Authorization": f"Bearer {create_token(user_with_role('uploader'), 'openformat')[1]}"})


@pytest.mark.django_db(transaction=True)
def test_the_api_imports_documents_and_hook_outputs_in_one_bundle(api_client: Client) -> None:
    files = {f"c2r8/ma101119_rel/{name}": data for name, data in hook_outputs("json").items()}
    files["c2r8/benchdash.toml"] = MANIFEST
    files["engine/ma101119_rel_csv.json"] = engine_document("csv", "ma101119_rel_csv", "10.11.20")
    response = api_client.post("/api/bundles/", {"file": SimpleUploadedFile("mixed.tgz", _tgz(files))})
    assert response.status_code == 201, response.content
    runs = {run["name"]: run for run in response.json()["runs"]}
    assert runs["ma101119_rel"]["results"] == 6 and runs["ma101119_rel"]["server"] == "c2r8"
    assert runs["ma101119_rel_csv.c2r8.lab-c2r8"]["results"] == 6
    assert set(Workload.objects.values_list("suite", flat=True)) == {"sysbench", "custom"}


@pytest.mark.django_db(transaction=True)
def test_the_api_refuses_a_bad_document_with_422_naming_the_file_and_the_field(api_client: Client) -> None:
    good = json.loads(engine_document("json", "ma101119_rel", "10.11.19"))
    bad = json.loads(engine_document("csv", "ma101119_rel_csv", "10.11.20"))
    bad["results"][1]["concurrency"] = 0
    files = {"engine/good.json": json.dumps(good).encode(), "engine/bad.json": json.dumps(bad).encode()}
    response = api_client.post("/api/bundles/", {"file": SimpleUploadedFile("bad.tgz", _tgz(files))})
    assert response.status_code == 422, response.content
    error = response.json()["error"]
    assert "bad.tgz:engine/bad.json: results[1].concurrency: Input should be greater than or equal to 1" in error
    assert not Run.objects.exists() and not Result.objects.exists() and not Workload.objects.exists()


@pytest.mark.django_db
def test_a_csv_document_and_the_documented_example_import_and_an_unrelated_json_is_left_unread() -> None:
    example = DOCS.read_text().split("```csv\n")[1].split("```")[0].encode()
    files = {"runs/mariadb.result.csv": example, "runs/settings.json": b'{"theme": "dark"}'}
    report = submit_and_import(_tgz(files), name="csv.tgz", source=Bundle.Source.COMMAND)
    (run,) = report.runs
    assert run.line() == "ma101119_rel.c2r8.c2r8: MariaDB 10.11.19 on c2r8, 1 tests, 2 results"
    assert report.ignored_files == 1
    stored = Result.objects.get(dop=1)
    assert (stored.qps, stored.cpu_o, stored.lat_pct) == (5086.99, 0.019724, 95)
    assert Workload.objects.get().suite == "sysbench"


@pytest.mark.django_db
def test_a_bad_csv_document_fails_the_import_naming_row_and_column_and_stores_nothing() -> None:
    example = DOCS.read_text().split("```csv\n")[1].split("```")[0]
    broken = example.replace(",12660.25,", ",lots,", 1).encode()
    with pytest.raises(ImportFailed, match=r"runs/mariadb\.result\.csv: row 3, column throughput: 'lots'"):
        submit_and_import(_tgz({"runs/mariadb.result.csv": broken}), name="bad.tgz", source=Bundle.Source.COMMAND)
    assert not Bundle.objects.exists() and not Run.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_the_api_takes_a_bare_document_and_refuses_a_bad_one_naming_the_field(api_client: Client) -> None:
    document = engine_document("json", "ma101119_rel", "10.11.19")
    response = api_client.post("/api/bundles/", {"file": SimpleUploadedFile("ma101119_rel.json", document)})
    assert response.status_code == 201, response.content
    (run,) = response.json()["runs"]
    assert (run["dbms"], run["version"], run["server"], run["results"]) == ("MariaDB", "10.11.19", "lab-c2r8", 6)

    bad = json.loads(engine_document("csv", "ma101119_rel_csv", "10.11.20"))
    del bad["server"]["name"]
    refused = api_client.post("/api/bundles/", {"file": SimpleUploadedFile("next.json", json.dumps(bad).encode())})
    assert refused.status_code == 422, refused.content
    assert refused.json()["error"].startswith("next.json: server.name: Field required")
    assert Run.objects.count() == 1


@pytest.mark.django_db
def test_the_command_imports_a_bare_csv_document_and_says_what_else_it_would_take(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    example = DOCS.read_text().split("```csv\n")[1].split("```")[0]
    (tmp_path / "mariadb.result.csv").write_text(example)
    call_command("import_bundle", str(tmp_path / "mariadb.result.csv"))
    assert "MariaDB 10.11.19 on c2r8, 1 tests, 2 results" in capsys.readouterr().out
    (tmp_path / "mariadb.csv").write_text(example + "\n")  # other bytes: the same ones would be "imported before"
    with pytest.raises(CommandError, match="1 of 1 bundles failed"):
        call_command("import_bundle", str(tmp_path / "mariadb.csv"))
    assert "nor a .json or .result.csv result document" in capsys.readouterr().err
    assert Run.objects.count() == 1


@pytest.mark.django_db
def test_the_upload_page_shows_a_bad_documents_file_and_field_and_stores_no_run(
    uploader: Client, django_capture_on_commit_callbacks: Any
) -> None:
    bad = json.loads(engine_document("json", "ma101119_rel", "10.11.19"))
    bad["results"][0]["throughput"] = -1
    with django_capture_on_commit_callbacks(execute=True):
        response = uploader.post("/upload/", {"bundle": SimpleUploadedFile("run.json", json.dumps(bad).encode())})
    bundle = Bundle.objects.get()
    assert bundle.status == "failed" and not Run.objects.exists() and not Result.objects.exists()
    page = uploader.get(response["Location"]).content.decode()
    assert "run.json: results[0].throughput: Input should be greater than or equal to 0" in page


@pytest.mark.django_db
def test_groups_brought_by_a_later_document_become_the_series_groups() -> None:
    plain = json.loads(engine_document("json", "ma101119_rel", "10.11.19"))
    del plain["groups"]
    submit_and_import(json.dumps(plain).encode(), name="first.json", source=Bundle.Source.COMMAND)
    base = Run.objects.get()
    first = get_comparison(ComparisonSpec(base_run_id=base.pk, dop=2))
    assert first.group_set == "ungrouped" and set(first.group_of.values()) == {None}

    later = engine_document("csv", "ma101119_rel_csv", "10.11.20")
    submit_and_import(later, name="later.json", source=Bundle.Source.COMMAND)
    assert Workload.objects.get().params["result_format"]["groups"] == [[g, m] for g, m in ENGINE_GROUPS.items()]
    comparison = get_comparison(ComparisonSpec(base_run_id=base.pk, dop=2))
    assert comparison.group_set == "engine-tests groups"
    assert comparison.group_of == {"READ_PK_POINT": "point lookups", "READ_RANGE_TXN": "range transactions"}


@pytest.mark.django_db
def test_a_documents_configuration_text_and_cpus_are_stored_with_its_run() -> None:
    example = json.loads(DOCS.read_text().split("```json\n")[1].split("```")[0])
    example["config_text"] = "[mysqld]\ninnodb_buffer_pool_size=1G\n"
    submit_and_import(json.dumps(example).encode(), name="ma.json", source=Bundle.Source.COMMAND)
    run = Run.objects.select_related("config", "server").get()
    assert run.config.text == example["config_text"].strip() and run.config.name == "c2r8"
    assert run.cpus == 2 and run.server.cpus == 2
    assert run.workload.params["table_size"] == 10000


@pytest.mark.django_db
def test_a_custom_suites_runs_are_on_every_page_that_lists_or_explains_them(client: Client) -> None:
    submit_and_import(engine_bundle(), name="engine.tgz", source=Bundle.Source.COMMAND)
    base = Run.objects.get(build__version__text="10.11.19")
    # What the worker does after every import: the series is summarised for the home page.
    refresh_series(base.server_id, base.workload_id)
    other = Run.objects.exclude(pk=base.pk).get()
    point = Microbenchmark.objects.get(test="READ_PK_POINT")
    pages = [
        "/",
        f"/runs/{base.pk}/",
        f"/microbenchmarks/{point.pk}/?base={base.pk}",
        f"/microbenchmarks/{point.pk}/timeline?base={base.pk}",
        f"/compare/heatmap?base={base.pk}",
        f"/compare/scaleup?base={base.pk}",
        f"/compare/export?base={base.pk}&format=csv",
        f"/diff/?a={base.pk}&b={other.pk}",
        "/search/?q=READ_PK_POINT",
    ]
    for url in pages:
        response = client.get(url)
        assert response.status_code == 200, (url, response.status_code)
    assert "engine tests, 10k rows" in client.get("/").content.decode()


@pytest.mark.django_db
def test_a_documents_server_details_and_notes_are_stored_and_shown_on_the_run_page(client: Client) -> None:
    example = json.loads(DOCS.read_text().split("```json\n")[1].split("```")[0])
    example["server"] |= {"ram_gb": 16, "storage": "NVMe SSD, ext4", "os": "Debian 12, Linux 6.1"}
    example["notes"] = "second try after the\nfirmware update"
    submit_and_import(json.dumps(example).encode(), name="ma.json", source=Bundle.Source.COMMAND)
    run = Run.objects.select_related("server").get()
    assert (run.server.ram_gb, run.server.storage, run.server.os) == (16, "NVMe SSD, ext4", "Debian 12, Linux 6.1")
    assert run.notes == "second try after the\nfirmware update"
    page = client.get(f"/runs/{run.pk}/").content.decode()
    assert "16 GB RAM, NVMe SSD, ext4, Debian 12, Linux 6.1" in page
    assert '<dd id="run-notes">second try after the<br>firmware update</dd>' in page
