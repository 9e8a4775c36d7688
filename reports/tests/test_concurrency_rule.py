"""One concurrency rule for every output: the page, /api/compare, every export, the command, heatmap and drill-down.

The series is ours (tests/data/sysbench-scaleup.tar.gz: sysbench at 1, 2, 4 and 8 clients), with each run's
point-query output at 2 clients also filed as the warm-up ``point-query.warm``, as the field's scripts run one:
counted with warm-ups, 2 clients would have the most results; the reference exports keep warm-ups, so a rule that
counted them would compare the download at another concurrency than the page.
"""

from __future__ import annotations

import io
import re
import tarfile
from html import unescape
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.test import Client

from reports.compare import ComparisonSpec, compute_comparison, main_concurrency
from runs.importer import submit_and_import
from runs.models import Bundle, Microbenchmark, Run

FIXTURE = Path(__file__).resolve().parents[2] / "tests" / "data" / "sysbench-scaleup.tar.gz"
BASE, OTHER = "x.ma101119_rel.c2r8.pk1", "x.ma101119_rel2.c2r8.pk1"
LABEL = "point-query_range=100"
PG_RUNS = ("x.pg1023_o2nofp.x10a_wm1_c32r128.pk1", "x.pg174_o2nofp.x10a_wm1_c32r128.pk1")


def with_warmups_at_two_clients() -> bytes:
    """The fixture with every run's point-query output at 2 clients also present as its warm-up."""
    out = io.BytesIO()
    with tarfile.open(FIXTURE) as source, tarfile.open(fileobj=out, mode="w:gz") as target:
        for member in source:
            data = source.extractfile(member).read() if member.isfile() else None  # type: ignore[union-attr]
            target.addfile(member, io.BytesIO(data) if data is not None else None)
            if member.name.endswith("/sb.o.point-query.range100.pk1.dop2"):
                copy = tarfile.TarInfo(member.name.replace("point-query.range100", "point-query.warm.range100"))
                copy.size, copy.mtime = member.size, member.mtime
                target.addfile(copy, io.BytesIO(data or b""))
    return out.getvalue()


@pytest.fixture
def series(db: None) -> dict[str, Run]:
    submit_and_import(
        with_warmups_at_two_clients(),
        name="scaleup-warm.tar.gz",
        source=Bundle.Source.COMMAND,
        overrides={"server": "c2r8"},
    )
    return {run.name: run for run in Run.objects.all()}


def page_cell(html: str, label: str) -> list[str]:
    """The relative-QPS cells of one microbenchmark's row in the per-microbenchmark table."""
    table = re.search(r'<table[^>]*id="relative-table".*?</table>', html, re.S)
    assert table is not None
    row = re.search(rf'<tr data-label="{re.escape(label)}">(.*?)</tr>', table.group(0), re.S)
    assert row is not None, label
    cells = re.findall(r"<td[^>]*>(.*?)</td>", row.group(1), re.S)
    return [unescape(re.sub(r"<[^>]+>", "", c)).strip() for c in cells[2:]]


def page_dop(html: str) -> int:
    found = re.search(r'id="concurrency">Concurrency <strong data-dop="(\d+)"', html)
    assert found is not None
    return int(found[1])


def tsv_row(text: str, label: str) -> list[str]:
    """A reference-layout TSV row's cells (the label is the last field)."""
    for line in text.splitlines():
        fields = line.split("\t")
        if fields[-1] == label:
            return fields[:-1]
    raise AssertionError(f"{label} not in the TSV")


def links(html: str, name: str) -> list[str]:
    return [unescape(h) for h in re.findall(rf'href="(/{name}[^"]*)"', html)]


# --------------------------------------------------------------------------- the rule itself


def test_the_rule_counts_the_bases_microbenchmarks_and_never_its_warm_ups() -> None:
    assert main_concurrency({1: {"a", "b"}, 2: {"a", "b", "c"}}, {1, 2}) == 2
    # A tie goes to the fewest clients.
    assert main_concurrency({8: {"a"}, 1: {"b"}, 4: {"c"}}, {1, 4, 8}) == 1
    # Nothing but warm-ups (none counted): the fewest clients of the series.
    assert main_concurrency({}, {16, 4}) == 4


def test_the_chosen_concurrency_does_not_move_with_the_warm_up_switch(series: dict[str, Run]) -> None:
    base = series[BASE].pk
    without = compute_comparison(ComparisonSpec(base_run_id=base))
    with_warmups = compute_comparison(ComparisonSpec(base_run_id=base, include_warmups=True))

    assert without.dop == with_warmups.dop == 1
    assert without.dops == with_warmups.dops == [1, 2, 4, 8]
    # The warm-up is there to be counted, at 2 clients, when the switch is on.
    at_two = compute_comparison(ComparisonSpec(base_run_id=base, include_warmups=True, dop=2))
    assert "point-query.warm_range=100" in at_two.labels


# --------------------------------------------------------------------------- every output at that concurrency


def test_the_page_its_json_and_its_tsv_download_show_the_same_cell(series: dict[str, Run], client: Client) -> None:
    base = series[BASE].pk
    html = client.get(f"/compare/?base={base}").content.decode()
    assert page_dop(html) == 1
    assert "warm-ups not counted" in html  # the rule is stated where the concurrency is

    api = client.get(f"/api/compare?base={base}").json()
    assert api["dop"] == 1
    relative = api["relative_qps"][OTHER][LABEL]
    assert page_cell(html, LABEL) == [f"{relative:.2f}"]

    # The page's own download link, as the page wrote it.
    (tsv_link,) = [
        h for h in links(html, "compare/export") if "format=tsv" in h and "absolute" not in h and "metrics" not in h
    ]
    assert "dop=1" in tsv_link
    tsv = client.get(tsv_link)
    assert 'filename="qps.rel.c2r8.dop1.tsv"' in tsv["Content-Disposition"]
    assert float(tsv_row(tsv.content.decode(), LABEL)[0]) == pytest.approx(relative, abs=0.01)

    # And without the page's help: a download that names no concurrency follows the same rule.
    absolute = client.get(f"/compare/export?base={base}&format=tsv&absolute=on").content.decode()
    assert [int(v) for v in tsv_row(absolute, LABEL)] == [
        int(f"{api['qps'][BASE][LABEL]:.0f}"),
        int(f"{api['qps'][OTHER][LABEL]:.0f}"),
    ]
    # The API's own TSV too.
    api_tsv = client.get(f"/api/compare?base={base}&format=tsv").content.decode()
    assert tsv_row(api_tsv, LABEL) == tsv_row(tsv.content.decode(), LABEL)


def test_every_link_out_of_the_page_carries_the_effective_concurrency(series: dict[str, Run], client: Client) -> None:
    html = client.get(f"/compare/?base={series[BASE].pk}").content.decode()

    outgoing = [
        *links(html, "compare/export"),
        *links(html, "compare/heatmap"),
        *links(html, "compare/hw"),
        *links(html, "compare/scaleup"),
        *links(html, "microbenchmarks/[0-9]+/"),
        *links(html, "api/compare"),
    ]
    assert len(outgoing) > 10
    assert all("dop=1" in link for link in outgoing), [link for link in outgoing if "dop=1" not in link]
    # The control: every other concurrency one click away, the current one not a link.
    assert re.search(r'<strong aria-current="true">1</strong>', html)
    for dop in (2, 4, 8):
        assert re.search(rf'href="/compare/\?[^"]*dop={dop}[^"]*" data-dop="{dop}"', html)


def test_a_chosen_concurrency_is_honoured_by_every_output(series: dict[str, Run], client: Client) -> None:
    base = series[BASE].pk
    html = client.get(f"/compare/?base={base}&dop=4").content.decode()
    assert page_dop(html) == 4
    assert 'id="dop-rule"' in html  # and the way back to the rule

    api = client.get(f"/api/compare?base={base}&dop=4").json()
    relative = api["relative_qps"][OTHER][LABEL]
    assert api["dop"] == 4
    assert page_cell(html, LABEL) == [f"{relative:.2f}"]
    at_one = client.get(f"/api/compare?base={base}").json()["qps"][BASE][LABEL]
    assert api["qps"][BASE][LABEL] > 1.5 * at_one  # really another concurrency, not the rule's

    for fmt in ("tsv", "csv"):
        export = client.get(f"/compare/export?base={base}&dop=4&format={fmt}")
        assert f"dop4.{fmt}" in export["Content-Disposition"]
    tsv = client.get(f"/compare/export?base={base}&dop=4&format=tsv").content.decode()
    assert float(tsv_row(tsv, LABEL)[0]) == pytest.approx(relative, abs=0.01)
    metrics = client.get(f"/compare/export?base={base}&dop=4&format=tsv&metrics=on").content.decode()
    assert "sb.met.point-query.range100.pk1.dop4" in metrics and ".dop1" not in metrics
    assert client.get(f"/api/compare?base={base}&dop=4&format=markdown").status_code == 200

    point = Microbenchmark.objects.get(test="point-query", range_size=100)
    drill = client.get(f"/microbenchmarks/{point.pk}/?base={base}&dop=4").content.decode()
    assert "concurrency 4 of 1, 2, 4, 8" in drill
    heatmap = client.get(f"/compare/heatmap?base={base}&dop=4").content.decode()
    back = links(heatmap, r"compare/\?base=")
    assert back and all("dop=4" in link for link in back)
    cell_url = re.search(r'data-cell-url="([^"]*)"', heatmap)
    assert cell_url is not None and "dop=4" in unescape(cell_url[1])


def test_the_command_uses_the_same_rule_and_honours_dop(series: dict[str, Run], capsys: Any) -> None:
    base = series[BASE].pk
    call_command("compare", "--base", str(base), "--format", "tsv", "--absolute")
    by_rule = tsv_row(capsys.readouterr().out, LABEL)
    api = compute_comparison(ComparisonSpec(base_run_id=base))
    assert [int(v) for v in by_rule] == [round(api.qps[BASE][LABEL] or 0), round(api.qps[OTHER][LABEL] or 0)]

    call_command("compare", "--base", str(base), "--format", "tsv", "--absolute", "--dop", "4")
    at_four = compute_comparison(ComparisonSpec(base_run_id=base, dop=4))
    assert [int(v) for v in tsv_row(capsys.readouterr().out, LABEL)] == [
        round(at_four.qps[BASE][LABEL] or 0),
        round(at_four.qps[OTHER][LABEL] or 0),
    ]


def test_an_unmeasured_concurrency_is_a_clear_error_everywhere(series: dict[str, Run], client: Client) -> None:
    base = series[BASE].pk
    api = client.get(f"/api/compare?base={base}&dop=3")
    assert api.status_code == 400 and "this series has [1, 2, 4, 8]" in api.json()["detail"]
    assert client.get(f"/compare/export?base={base}&dop=3&format=tsv").status_code == 400
    assert "no results at concurrency 3" in client.get(f"/compare/?base={base}&dop=3").content.decode()


# --------------------------------------------------------------------------- the real corpus


def test_on_the_real_postgres_series_a_warm_up_at_another_concurrency_changes_nothing(
    db: None, corpus: Path, client: Client
) -> None:
    # These runs measured 38 microbenchmarks at 40 clients and their point-query warm-up at 8.
    for name in PG_RUNS:
        data = (corpus / "sysbench-pg-tarballs" / f"{name}.tar.gz").read_bytes()
        submit_and_import(data, name=f"{name}.tar.gz", source=Bundle.Source.COMMAND, overrides={"server": "pg-c32"})
    base = Run.objects.get(name=PG_RUNS[0]).pk
    html = client.get(f"/compare/?base={base}").content.decode()
    warm_html = client.get(f"/compare/?base={base}&include_warmups=on").content.decode()
    api = client.get(f"/api/compare?base={base}").json()
    tsv = client.get(f"/compare/export?base={base}&format=tsv").content.decode()

    assert page_dop(html) == page_dop(warm_html) == api["dop"] == 40
    assert api["dops"] == [40]  # 8 clients measured only a warm-up: no comparison point
    label = "point-query_range=100"
    relative = api["relative_qps"][PG_RUNS[1]][label]
    assert page_cell(html, label) == [f"{relative:.2f}"]
    assert float(tsv_row(tsv, label)[0]) == pytest.approx(relative, abs=0.01)
