"""Insert Benchmark comparisons: the author's rel.<step> tables, groups, the background-insert SLA, the page, the API.

The real data is the corpus's 2021 summaries and merged tables. Runs that miss
the SLA are built by hand as result directories (o.res / o.ib files written the
way np.sh and iibench.py write them), since no published run misses it.
"""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from reports import ibench as ibench_reports
from reports.compare import ComparisonSpec, get_comparison
from reports.stats import metric_ratio
from runs.importer import archive_directory, submit_and_import
from runs.models import Bundle, Run
from runs.tests.hostile import tgz_of_files
from suites.ibench.groups import IBENCH, IBENCH_LOAD, IBENCH_QUERIES, IBENCH_WRITES

pytestmark = pytest.mark.django_db

RES_IN = "ibench-2021/100m/res.in"
# The steps of the merged tables; my8022's summary has ten more, which the older runs lack (shown as missing).
STEPS = ["l.i0", "l.x", "l.i1", "q100.1", "q100.2"]
ALL_STEPS = [*STEPS, *(f"q{r}.{n}" for r in (200, 400, 600, 800, 1000) for n in (1, 2))]


def _tar_gz(files: dict[str, str]) -> bytes:
    return tgz_of_files({name: text.encode() for name, text in files.items()})


def _compare(*args: str) -> str:
    out = io.StringIO()
    call_command("compare", "--suite", "ibench", *args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def _table(text: str) -> dict[tuple[str, str], str]:
    """(tag, column) → cell of a rel/mrg table."""
    lines = text.splitlines()
    header = lines[0].split("\t")
    cells = {}
    for line in lines[1:]:
        fields = line.split("\t")
        cells.update({(fields[-1], column): value for column, value in zip(header[:-1], fields[:-1], strict=True)})
    return cells


@pytest.fixture
def ibench2021(corpus: Path) -> Path:
    submit_and_import(archive_directory(corpus / "ibench-2021"), name="ibench.tgz", source=Bundle.Source.COMMAND)
    return corpus / RES_IN


def _comparison(base: str = "100m.my5649.cx6d", *others: str):  # type: ignore[no-untyped-def]
    base_run = Run.objects.get(name=base)
    run_ids = tuple(Run.objects.get(name=name).pk for name in others)
    return get_comparison(ComparisonSpec(base_run_id=base_run.pk, run_ids=run_ids))


# --------------------------------------------------------------------------- the author's tables


@pytest.mark.parametrize("step", ["l.i1", "q100.2"])
def test_the_rel_tables_are_reproduced_byte_for_byte(ibench2021: Path, step: str) -> None:
    text = _compare("--base", "my5649.cx6d", "--runs", "my5731.cx6d", "my8022.cx6d", "--step", step)

    assert text == (ibench2021 / f"rel.{step}").read_text()


@pytest.mark.parametrize("step", STEPS)
def test_the_merged_tables_are_reproduced_byte_for_byte_from_summaries_and_merged_rows(
    ibench2021: Path, step: str
) -> None:
    # my8022's rows come from its o.sum.t summary (rps 1045.2), printed as the merge script prints them (1045).
    text = _compare("--base", "100m.my5649.cx6d", "--runs", "my5731", "8.0.22", "--step", step, "--absolute")

    assert text == (ibench2021 / f"mrg.{step}").read_text()


@pytest.mark.parametrize("step", ["l.i1", "q100.2"])
def test_every_cell_of_the_rel_tables_is_the_ratio_of_the_stored_values(ibench2021: Path, step: str) -> None:
    # Independent of the formatter: each cell against the ratio of the stored values, to its 2 decimals. The author
    # divided the merged tables, which print ips, qps and rps as integers (my8022's rps 51.2 is 51 there).
    comparison = _comparison("100m.my5649.cx6d", "100m.my5731.cx6d", "100m.my8022.cx6d")
    metrics = ibench_reports.step_metrics(comparison, [step])
    tags = {"my5731.cx6d": "100m.my5731.cx6d", "my8022.cx6d": "100m.my8022.cx6d"}
    cells = _table((ibench2021 / f"rel.{step}").read_text())

    def value(key: str, column: str) -> float | None:
        found = metrics.values[(key, step)][column]
        return float(round(found)) if found is not None and column in ("ips", "qps", "rps") else found

    assert len(cells) == 2 * 20
    for (tag, column), cell in cells.items():
        ratio = metric_ratio(value(tags[tag], column), value("100m.my5649.cx6d", column))
        if cell == "NA":
            assert ratio is None, (tag, column)
        elif cell == "1":
            assert ratio == 1.0, (tag, column)  # both 0: the script prints 1, not 1.00
        else:
            assert ratio is not None and abs(ratio - float(cell)) <= 0.005 + 1e-9, (tag, column, ratio, cell)
    # The comparison's own ratios (exact values) agree wherever the integer printing does not matter.
    exact = ibench_reports.metric_ratios(comparison, metrics)
    assert f"{exact['100m.my8022.cx6d'][step]['ips']:.2f}" == cells[("my8022.cx6d", "ips")]


def test_without_a_step_every_step_is_printed_after_its_name(ibench2021: Path) -> None:
    text = _compare("--base", "my5649.cx6d", "--runs", "my5731.cx6d", "my8022.cx6d")

    blocks = text.split("\n\n")
    assert [block.splitlines()[0] for block in blocks] == ALL_STEPS
    assert blocks[STEPS.index("l.i1")].split("\n", 1)[1] + "\n" == (ibench2021 / "rel.l.i1").read_text()
    # A step the base did not run: every cell missing, never 0 or dropped.
    assert blocks[ALL_STEPS.index("q200.1")].splitlines()[3] == "\t".join(["NA"] * 20 + ["my8022.cx6d"])


def test_a_step_the_comparison_lacks_is_an_error(ibench2021: Path) -> None:
    with pytest.raises(CommandError, match=r"no step 'qr100'.*steps: l\.i0, l\.x, l\.i1, q100\.1, q100\.2"):
        _compare("--base", "my5649.cx6d", "--step", "qr100")


def test_an_ambiguous_or_unknown_run_name_says_what_there_is(ibench2021: Path) -> None:
    with pytest.raises(CommandError, match=r"no Insert Benchmark run named 'my9999'; runs: 100m\.my5649\.cx6d"):
        _compare("--base", "my9999")


# --------------------------------------------------------------------------- groups, QPS, SLA on real data


def test_the_ibench_group_set_is_chosen_and_the_qps_is_each_steps_throughput(ibench2021: Path) -> None:
    comparison = _comparison("100m.my5649.cx6d")

    assert comparison.group_set == IBENCH.name == "ibench"
    assert comparison.labels == ALL_STEPS  # the order the steps run in
    assert {g: [s for s in comparison.labels if comparison.group_of[s] == g] for g in comparison.groups} == {
        IBENCH_LOAD: ["l.i0", "l.x"],
        IBENCH_WRITES: ["l.i1"],
        IBENCH_QUERIES: ALL_STEPS[3:],
    }
    assert comparison.relative["100m.my8022.cx6d"]["q200.1"] is None  # the base has no q200.1
    # The default series is the base's DBMS and workload: MySQL 5.6, 5.7 and 8.0 (Postgres is picked explicitly).
    assert [c.key for c in comparison.columns] == ["100m.my5649.cx6d", "100m.my5731.cx6d", "100m.my8022.cx6d"]
    assert comparison.qps["100m.my8022.cx6d"]["l.x"] == 108686  # indexed rows/s
    assert comparison.relative["100m.my8022.cx6d"]["l.i1"] == pytest.approx(12970 / 23148)
    assert comparison.flags["100m.my8022.cx6d"]["l.i1"] == "red"
    assert comparison.flags["100m.my5731.cx6d"]["l.x"] == "green"


def test_every_query_step_of_the_2021_runs_met_the_sla(ibench2021: Path) -> None:
    comparison = _comparison("100m.my8022.cx6d", "100m.pg131.cx5")
    table = ibench_reports.sla_table(comparison)

    assert [row.step for row in table] == [f"q{r}.{n}" for r in (100, 200, 400, 600, 800, 1000) for n in (1, 2)]
    q1000 = table[-1]
    assert (q1000.rate, q1000.target_ips, q1000.threshold) == (1000, 1000, 950.0)
    assert [(c.column, c.ips, c.met, c.clients_estimated) for c in q1000.cells] == [
        ("100m.my8022.cx6d", 998.0, True, True),
        ("100m.pg131.cx5", 998.0, True, True),
    ]
    assert comparison.sla_missed == set()
    assert ibench_reports.sla_missed_cells({r.pk: r.name for r in Run.objects.all()}, 1) == set()


# --------------------------------------------------------------------------- SLA on hand-built data

HEADER = "i_sec\tt_sec\ti_ips\tt_ips\ti_qps\tt_qps\tmax_i\tmax_q\tt_ins\tt_query\tretry_i\tretry_q"


def _res(clients: int, ips: float, qps: float) -> str:
    """o.res.dop<D>'s first line as np.sh writes it (the rest of the file is optional for the rates)."""
    return (
        f"{clients} processes, 90000 rows-per-process, 900 seconds, {ips:.1f} rows-per-second, "
        f"{ips / clients:.1f} rows-per-second-per-user, {qps * 900:.0f} queries, {qps:.1f} queries-per-second\n"
    )


def _client(n: int, rate: int, ips: int, qps: int) -> str:
    """o.ib.dop<D>.<n>: the command line, iibench.py's header and a few one-second reports."""
    lines = [
        f"python3 iibench.py --dbms=mysql --table_name=pi{n} --inserts_per_second={rate} --query_threads=1",
        HEADER,
    ]
    lines += [f"1.0\t{s}.0\t{ips}\t{ips}\t{qps}\t{qps}\t900\t700\t{ips * s}\t{qps * s}\t0\t0" for s in range(1, 4)]
    # iibench.py's histogram lines (the bucket-name lines are optional for the reader).
    lines.append("Insert rt:" + "".join(f"{c:10d}" for c in (0, 10, 20, 0, 0, 0, 0, 0, 0, 0)) + "    0.010000")
    lines.append(" Query rt:" + "".join(f"{c:10d}" for c in (50, 40, 0, 0, 0, 0, 0, 0, 0, 0)) + "    0.002000")
    return "\n".join(lines) + "\n"


def _run(
    build: str, *, qr100_ips: float, qr100_qps: float, load_ips: float = 50000, clients: int = 2
) -> dict[str, str]:
    """A result directory: l.i0 and qr100 (2 clients at 100 inserts/s each: SLA at 190), hand-built per np.sh."""
    root = f"{clients}u.1tno/20m.{build}.cx6d"
    files = {
        f"{root}/l.i0/o.res.dop{clients}": _res(clients, load_ips, 0),
        f"{root}/qr100.L1/o.res.dop{clients}": _res(clients, qr100_ips, qr100_qps),
    }
    for n in range(1, clients + 1):
        files[f"{root}/qr100.L1/o.ib.dop{clients}.{n}"] = _client(
            n, 100, round(qr100_ips / clients), round(qr100_qps / clients)
        )
    return files


def _import_runs(*runs: dict[str, str], server: str = "lab1") -> None:
    files = {f"{server}/{path}": text for run in runs for path, text in run.items()}
    submit_and_import(_tar_gz(files), name=f"{server}.tgz", source=Bundle.Source.COMMAND)


def test_a_query_step_that_missed_the_sla_is_never_a_red_flag_and_the_table_says_so() -> None:
    _import_runs(
        _run("my8032", qr100_ips=199, qr100_qps=6000),
        _run("my8036", qr100_ips=150, qr100_qps=3000, load_ips=40000),  # half the QPS, but 150 < 190 inserts/s
    )
    comparison = _comparison("20m.my8032.cx6d")
    other = "20m.my8036.cx6d"

    assert comparison.relative[other]["qr100"] == pytest.approx(0.5)
    assert comparison.flags[other]["qr100"] == "grey" and comparison.sla_missed == {(other, "qr100")}
    assert comparison.flags[other]["l.i0"] == "red"  # a load step has no SLA: its flag stands
    (row,) = ibench_reports.sla_table(comparison)
    assert (row.step, row.rate, row.target_ips, row.threshold) == ("qr100", 100, 200, 190.0)
    assert [(c.version_label, c.ips, c.met) for c in row.cells] == [
        ("MySQL 8.0.32", 199.0, True),
        ("MySQL 8.0.36", 150.0, False),
    ]
    assert comparison.as_json()["sla_missed"] == [[other, "qr100"]]


def test_a_base_that_missed_the_sla_makes_that_step_no_signal_for_every_version() -> None:
    _import_runs(
        _run("my8032", qr100_ips=120, qr100_qps=6000),
        _run("my8036", qr100_ips=200, qr100_qps=9000),
    )
    comparison = _comparison("20m.my8032.cx6d")

    assert comparison.relative["20m.my8036.cx6d"]["qr100"] == pytest.approx(1.5)
    assert comparison.flags["20m.my8036.cx6d"]["qr100"] == "grey"
    assert comparison.sla_missed == {("20m.my8032.cx6d", "qr100")}


# --------------------------------------------------------------------------- the page and the API


def test_the_page_shows_each_step_absolute_and_relative_with_flags(ibench2021: Path, client: Client) -> None:
    base = Run.objects.get(name="100m.my5649.cx6d")
    response = client.get(reverse("reports:ibench"), {"base": base.pk})

    assert response.status_code == 200
    html = response.content.decode()
    row = html.split('data-step="l.i1"', 1)[1].split("</tr>", 1)[0]
    assert "23,148" in row and "20,790" in row and "12,970" in row
    assert 'class="num red"' in row and "0.56" in row and "0.90" in row
    assert 'id="ibench-sla"' in html and "met" in html.split('id="ibench-sla"', 1)[1]
    # A chart per step two versions or more ran; the steps only 8.0.22 ran are named instead (next test).
    assert html.count('data-figure="ibench-step-') == len(STEPS)
    # The step in detail: every metric column relative (rel.l.i0's numbers for l.i0, the first step).
    metrics = html.split('id="ibench-metrics"', 1)[1]
    assert 'data-metric="wkbpi"' in metrics and "No raw client output" in html


def test_the_comparison_page_of_an_insert_benchmark_series_links_its_step_view(
    ibench2021: Path, client: Client
) -> None:
    base = Run.objects.get(name="100m.my5649.cx6d")
    for headers in ({}, {"HX-Request": "true"}):  # the whole page and the fragment htmx swaps in
        html = client.get(reverse("reports:compare"), {"base": base.pk}, headers=headers).content.decode()
        # The link carries the comparison's concurrency, as every link out of the page does.
        link = f'href="{reverse("reports:ibench")}?base={base.pk}&amp;dop=1"'
        assert link in html and "Insert Benchmark view" in html


def test_the_page_greys_and_marks_sla_misses_and_draws_the_per_second_rates(client: Client) -> None:
    _import_runs(
        _run("my8032", qr100_ips=199, qr100_qps=6000),
        _run("my8036", qr100_ips=150, qr100_qps=3000),
    )
    base = Run.objects.get(name="20m.my8032.cx6d")
    response = client.get(reverse("reports:ibench"), {"base": base.pk, "step": "qr100"})

    html = response.content.decode()
    row = html.split('data-step="qr100"', 1)[1].split("</tr>", 1)[0]
    assert "grey noisy" in row and "SLA ✕" in row and "0.50" in row and 'class="num red"' not in row
    sla = html.split('id="ibench-sla"', 1)[1].split("</table>", 1)[0]
    assert "200" in sla and "missed" in sla and "met" in sla
    assert 'data-figure="ibench-detail-ips"' in html and 'data-figure="ibench-detail-rt-query"' in html
    # htmx asks for another step: only the fragment comes back.
    fragment = client.get(reverse("reports:ibench"), {"base": base.pk, "step": "l.i0"}, headers={"HX-Request": "true"})
    text = fragment.content.decode()
    assert text.lstrip().startswith('<section id="step-detail"') and "<html" not in text


def test_the_page_needs_an_ibench_base(client: Client) -> None:
    assert client.get(reverse("reports:ibench"), {"base": "999999"}).status_code == 404


@pytest.mark.parametrize("runs", [2, 6])
def test_the_pages_query_count_does_not_grow_with_the_number_of_runs(client: Client, runs: int) -> None:
    builds = [f"my80{30 + i}" for i in range(runs)]
    _import_runs(*(_run(build, qr100_ips=190 + i, qr100_qps=6000 - 100 * i) for i, build in enumerate(builds)))
    base = Run.objects.get(name=f"20m.{builds[0]}.cx6d")
    url = reverse("reports:ibench")
    client.get(url, {"base": base.pk, "step": "qr100"})  # warms the comparison cache, as a second visit would

    with CaptureQueriesContext(connection) as queries:
        response = client.get(url, {"base": base.pk, "step": "qr100"})

    assert response.status_code == 200 and response.content.decode().count('data-step="qr100"') == 2
    assert len(queries) == QUERIES_PER_PAGE, [q["sql"][:120] for q in queries.captured_queries]


# With the comparison cached: the base, its series, the comparison's two cache lookups (the base's series, the
# stamp), then one query each for the step's per-second series, its histograms, its metric columns and the SLA.
QUERIES_PER_PAGE = 8


def test_the_api_resolves_ibench_runs_by_name_and_returns_the_tables(ibench2021: Path, client: Client) -> None:
    response = client.get("/api/compare", {"base": "100m.my5649.cx6d", "format": "tsv"})
    assert response.status_code == 200
    assert response.content.decode().split("\n\n")[2].split("\n", 1)[1] + "\n" == (ibench2021 / "rel.l.i1").read_text()

    data = client.get("/api/compare", {"base": "100m.my5649.cx6d"}).json()
    assert data["group_set"] == "ibench" and data["sla_missed"] == []
    assert data["qps"]["100m.my8022.cx6d"]["q100.2"] == 6087


def test_steps_only_one_version_ran_are_named_not_drawn_as_charts_of_one_bar(ibench2021: Path, client: Client) -> None:
    base = Run.objects.get(name="100m.my5649.cx6d")
    html = client.get(reverse("reports:ibench"), {"base": base.pk}).content.decode()
    figures = [
        json.loads(m)
        for m in re.findall(r'<script id="ibench-step-\d+" type="application/json">(.*?)</script>', html, re.S)
    ]
    # Every chart drawn compares: at least two bars with a value.
    assert figures and all(sum(v is not None for v in f["data"][0]["y"]) >= 2 for f in figures)
    assert "no base value" not in json.dumps(figures)
    alone = html.split('id="steps-alone"', 1)[1].split("</p>", 1)[0]
    only_new = [step for step in ALL_STEPS if step not in STEPS]
    assert f"{', '.join(only_new)} (MySQL 8.0.22 alone)" in alone


def test_a_step_the_base_did_not_run_says_no_base_where_the_version_has_a_value(
    ibench2021: Path, client: Client
) -> None:
    # my8022 ran q200.1 … q1000.2; the 5.6 base did not: nothing is missing in 8.0.22's cells, the base is.
    base = Run.objects.get(name="100m.my5649.cx6d")
    html = client.get(reverse("reports:ibench"), {"base": base.pk}).content.decode()
    row = html.split('data-step="q200.1"', 1)[1].split("</tr>", 1)[0]
    cells = re.findall(r"<td class=\"num[^\"]*\"[^>]*>(.*?)</td>", row, re.S)
    assert "missing" in cells[0]  # the base's own cell
    with_values = [c for c in cells[1:] if "missing" not in c]
    assert with_values and all('<span class="rel">no base</span>' in c for c in with_values)
    assert all('<span class="rel">missing</span>' not in c for c in cells)
