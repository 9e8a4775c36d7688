"""Release lines on the comparison: charts read the long-term lines by default, tables and exports every version.

A synthetic MariaDB series mixes long-term releases (10.6, 10.11, 11.4) with short-term ones (11.0, 11.2) that
are slower: drawn in semantic order the charts would zigzag through lines that never carried each other's fixes.
"""

from __future__ import annotations

import json
import re
from html import unescape
from typing import Any

import pytest
from django.core.management import call_command
from django.test import Client

from reports import releaseview
from reports.compare import ComparisonSpec, compute_comparison
from runs import synthetic
from runs.importer import submit_and_import
from runs.models import Bundle, Microbenchmark, Run

VERSIONS = ("10.6.21", "10.11.14", "11.0.6", "11.2.6", "11.4.8")
SHORT_TERM = ("11.0.6", "11.2.6")
TESTS = tuple(t for t in synthetic.TESTS if t[0] in ("point-query", "range-covered-pk", "update-index", "insert"))


@pytest.fixture
def base(db: None) -> Run:
    spec = synthetic.SeriesSpec(
        dbms_code="ma",
        versions=VERSIONS,
        tests=TESTS,
        # The short-term releases are 20% slower; 11.4 is back where 10.11 was.
        steps=(synthetic.Step(2, "", 0.8), synthetic.Step(4, "", 1 / 0.8)),
    )
    submit_and_import(synthetic.bundle_bytes(spec), name="maria.tgz", source=Bundle.Source.COMMAND)
    return Run.objects.get(build__version__text="10.6.21")


def run_name(version: str) -> str:
    return Run.objects.get(build__version__text=version).name


def figures(html: str) -> dict[str, str]:
    """Every chart figure on a page (not the charts' configs), by its json_script id, as JSON text."""
    pattern = r'<script id="((?:chart|drill)-[\w-]+|heatmap-figure)" type="application/json">(.*?)</script>'
    return {name: figure for name, figure in re.findall(pattern, html, re.S) if figure.startswith('{"data"')}


def table(html: str, table_id: str) -> str:
    found = re.search(rf'<table[^>]*id="{table_id}".*?</table>', html, re.S)
    assert found is not None, table_id
    return found.group(0)


def links(html: str, path: str) -> list[str]:
    return [unescape(h) for h in re.findall(rf'href="({re.escape(path)}\?[^"]*)"', html)]


def test_the_long_term_view_keeps_the_long_term_lines_and_the_base(base: Run) -> None:
    comparison = compute_comparison(ComparisonSpec(base_run_id=base.pk))

    kept = releaseview.kept_columns(comparison, "long-term")
    assert [comparison.column(k).version for k in kept] == ["10.6.21", "10.11.14", "11.4.8"]
    assert releaseview.kept_columns(comparison, "all") == [c.key for c in comparison.columns]
    cut = releaseview.in_view(comparison, "long-term")
    assert [comparison.column(k).version for k in cut.left_out] == list(SHORT_TERM)
    # The cut comparison's numbers are the full one's, not recomputed.
    newest = run_name("11.4.8")
    assert cut.comparison.relative[newest] == comparison.relative[newest]
    assert cut.comparison.summaries == {
        g: {k: s for k, s in by.items() if k in kept} for g, by in comparison.summaries.items()
    }
    assert cut.comparison.cache_key == "" and cut.comparison.others == [comparison.column(k) for k in kept[1:]]
    # Overrides move lines, as for detection; a malformed one is an error, not silently nothing.
    moved = releaseview.in_view(comparison, "long-term", {"MariaDB": {"long_term": ["11.0", "11.2"]}})
    assert moved.left_out == () and moved.comparison is comparison
    with pytest.raises(ValueError, match="only 'long_term' and 'short_term'"):
        releaseview.in_view(comparison, "long-term", {"MariaDB": {"lts": ["11.0"]}})


def test_charts_default_to_long_term_releases_while_tables_and_exports_keep_every_version(
    base: Run, client: Client
) -> None:
    html = client.get(f"/compare/?base={base.pk}").content.decode()

    charts = figures(html)
    assert charts and all("11.4.8" in f and "11.0.6" not in f and "11.2.6" not in f for f in charts.values())
    relative = table(html, "relative-table")
    assert all(v in relative for v in ("10.11.14", *SHORT_TERM, "11.4.8"))
    note = re.search(r'<div class="card note" role="status" id="release-note".*?</div>', html, re.S)
    assert note is not None and "MariaDB 11.0.6, MariaDB 11.2.6 are short-term releases" in note.group(0)
    (every,) = links(note.group(0), "/compare/")[:1]
    assert "releases=all" in every

    # The reference export from the page keeps every version, so it still matches the author's layout.
    (tsv_link,) = [h for h in links(html, "/compare/export") if h.endswith("format=tsv")]
    assert "releases" not in tsv_link
    tsv = client.get(tsv_link).content.decode()
    assert all(run_name(v) in tsv for v in SHORT_TERM)

    # One click: every release in the charts too, and the note says how to go back.
    html = client.get(every).content.decode()
    assert all(all(v in f for v in SHORT_TERM) for f in figures(html).values())
    assert 'data-releases="all"' in html and 'id="releases-long-term"' in html


def test_long_term_only_applies_to_tables_exports_heatmap_drilldown_and_the_api(base: Run, client: Client) -> None:
    html = client.get(f"/compare/?base={base.pk}&releases=long-term").content.decode()
    assert all(v not in table(html, "relative-table") for v in SHORT_TERM)
    assert 'data-releases="long-term"' in html

    (tsv_link,) = [h for h in links(html, "/compare/export") if h.endswith("format=tsv")]
    assert "releases=long-term" in tsv_link
    tsv = client.get(tsv_link).content.decode()
    assert run_name("11.4.8") in tsv and all(run_name(v) not in tsv for v in SHORT_TERM)

    hw = client.get(f"/compare/hw?base={base.pk}&releases=long-term").content.decode()
    assert "11.4.8" in hw and all(v not in hw for v in SHORT_TERM)
    assert all(v in client.get(f"/compare/hw?base={base.pk}").content.decode() for v in SHORT_TERM)

    api = client.get(f"/api/compare?base={base.pk}&releases=long-term").json()
    assert [c["version"] for c in api["columns"]] == ["10.6.21", "10.11.14", "11.4.8"]
    every = client.get(f"/api/compare?base={base.pk}").json()
    assert [c["version"] for c in every["columns"]] == list(VERSIONS)
    assert api["relative_qps"][run_name("11.4.8")] == every["relative_qps"][run_name("11.4.8")]


def test_the_heatmap_and_drilldown_chart_long_term_releases_and_list_every_one(base: Run, client: Client) -> None:
    heatmap = client.get(f"/compare/heatmap?base={base.pk}").content.decode()
    figure = figures(heatmap)["heatmap-figure"]
    assert "11.4.8" in figure and all(v not in figure for v in SHORT_TERM)
    assert all(v in table(heatmap, "heatmap-table") for v in SHORT_TERM)
    assert 'id="release-note"' in heatmap
    every = figures(client.get(f"/compare/heatmap?base={base.pk}&releases=all").content.decode())["heatmap-figure"]
    assert all(v in every for v in SHORT_TERM)

    point = Microbenchmark.objects.get(test="point-query", range_size=100)
    drill = client.get(f"/microbenchmarks/{point.pk}/?base={base.pk}").content.decode()
    drawn = figures(drill)
    assert drawn and all(all(v not in f for v in SHORT_TERM) for f in drawn.values())
    assert all(f"MariaDB {v}" in drill for v in SHORT_TERM)  # still in its table of versions
    assert 'id="release-note"' in drill


def test_the_choice_is_part_of_the_page_cache_key_and_a_bad_one_is_refused(base: Run, client: Client) -> None:
    default = client.get(f"/compare/?base={base.pk}").content.decode()
    every = client.get(f"/compare/?base={base.pk}&releases=all").content.decode()
    again = client.get(f"/compare/?base={base.pk}").content.decode()
    assert 'data-releases="default"' in default and 'data-releases="all"' in every
    assert 'data-releases="default"' in again

    bad = client.get(f"/compare/?base={base.pk}&releases=lts").content.decode()
    assert "releases: Select a valid choice" in bad
    assert client.get(f"/compare/export?base={base.pk}&releases=lts&format=tsv").status_code == 400
    assert client.get(f"/api/compare?base={base.pk}&releases=lts").status_code == 422


def test_a_series_of_long_term_releases_only_says_nothing(db: None, client: Client) -> None:
    spec = synthetic.SeriesSpec(dbms_code="ma", versions=("10.6.21", "10.11.14", "11.4.8"), tests=TESTS)
    submit_and_import(synthetic.bundle_bytes(spec), name="lts.tgz", source=Bundle.Source.COMMAND)
    html = client.get(f"/compare/?base={Run.objects.get(build__version__text='10.6.21').pk}").content.decode()
    assert 'id="release-note"' not in html and all("11.4.8" in f for f in figures(html).values())


def test_a_setting_moves_release_lines_on_the_page(base: Run, client: Client, settings: Any) -> None:
    settings.BENCHDASH_RELEASE_LINES = {"MariaDB": {"long_term": ["11.0", "11.2"]}}
    html = client.get(f"/compare/?base={base.pk}").content.decode()
    assert 'id="release-note"' not in html
    assert all(all(v in f for v in SHORT_TERM) for f in figures(html).values())


def test_the_command_keeps_every_version_unless_asked(base: Run, capsys: Any) -> None:
    call_command("compare", "--base", str(base.pk), "--format", "json")
    every = json.loads(capsys.readouterr().out)
    call_command("compare", "--base", str(base.pk), "--format", "json", "--releases", "long-term")
    long_term = json.loads(capsys.readouterr().out)
    assert [c["version"] for c in every["columns"]] == list(VERSIONS)
    assert [c["version"] for c in long_term["columns"]] == ["10.6.21", "10.11.14", "11.4.8"]


def test_a_saved_report_keeps_its_release_view(base: Run, client: Client, user_with_role: Any) -> None:
    client.force_login(user_with_role("uploader"))
    saved = client.post("/reports/save", {"base": base.pk, "releases": "long-term", "name": "MariaDB lines"})
    assert saved.status_code == 302
    opened = client.get(saved["Location"])
    assert opened.status_code == 302 and "releases=long-term" in opened["Location"]
    html = client.get(opened["Location"]).content.decode()
    assert 'data-releases="long-term"' in html
