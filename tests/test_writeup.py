"""The comparison as a blog post: the Markdown write-up on the real MySQL series, its .zip with the charts,
and the Markdown export with rows = versions and the bug keys."""

from __future__ import annotations

import io
import re
import zipfile
from pathlib import Path
from xml.etree import ElementTree

import pytest
from django.conf import settings
from django.test import Client, override_settings

from regressions.models import Regression
from regressions.triage import link_bug
from reports.compare import Comparison, ComparisonSpec, get_comparison
from reports.reference import md_number
from runs.models import Run

# Links back to benchdash are absolute under the site's address (the demo's without BENCHDASH_BASE_URL).
SITE = settings.BENCHDASH_BASE_URL

pytestmark = pytest.mark.django_db


@pytest.fixture
def base(small_base_detected: Run) -> Run:
    return small_base_detected


@pytest.fixture
def comparison(base: Run) -> Comparison:
    return get_comparison(ComparisonSpec(base_run_id=base.pk))


def _writeup(client: Client, base: Run, **extra: str) -> str:
    response = client.get("/compare/writeup", {"base": base.pk, **extra})
    assert response.status_code == 200, response.content
    assert response["Content-Type"].startswith("text/markdown")
    assert response["Content-Disposition"].endswith('.md"')
    return response.content.decode()


def _section(text: str, heading: str) -> str:
    """The text under ``heading`` up to the next heading of the same or a higher level."""
    level = heading.split(" ")[0]
    start = text.index(heading + "\n")
    rest = text[start + len(heading) + 1 :]
    ends = [m.start() for m in re.finditer(rf"^#{{1,{len(level)}}} ", rest, re.M)]
    return rest[: ends[0]] if ends else rest


def _table_rows(section: str) -> list[list[str]]:
    """The body rows of the first table in ``section``: its header and rule left out."""
    rows = [line for line in section.splitlines() if line.startswith("|") and not re.fullmatch(r"[|\s:-]+", line)]
    return [[cell.strip() for cell in row.strip().strip("|").split(" | ")] for row in rows[1:]]


def test_the_title_names_the_series_and_the_builds_section_every_run(
    base: Run, comparison: Comparison, client: Client
) -> None:
    text = _writeup(client, base)
    first = text.splitlines()[0]
    assert (
        first == f"# MySQL 5.6.51 → 9.5.0 on {comparison.server}: {comparison.workload}, concurrency {comparison.dop}"
    )
    builds = _section(text, "## Builds, configuration, hardware")
    assert f"The server is {comparison.server}" in builds
    rows = _table_rows(builds)
    runs = Run.objects.filter(pk__in=[pk for c in comparison.columns for pk in c.run_ids]).select_related("config")
    assert len(rows) == runs.count() == 9
    for run in runs:
        row = next(r for r in rows if f"[{run.name}]({SITE}/runs/{run.pk}/)" == r[1])
        assert row[4] == run.config.name
        assert row[6].startswith(f"file time {run.started_at:%Y-%m-%d %H:%M} UTC (the oldest result file")


def test_runs_dated_only_by_file_times_a_moment_apart_are_not_said_to_have_run_then(base: Run, client: Client) -> None:
    # The corpus's files were written together, as any unpacked or copied archive's are: their times are
    # milliseconds apart and say nothing of when the runs ran.
    builds = _section(_writeup(client, base), "## Builds, configuration, hardware")
    assert "ran at" not in builds and "| date |" in builds
    assert "not when the runs ran. The tables follow version order." in builds


def test_file_times_hours_apart_are_shown_without_the_note(base: Run, client: Client) -> None:
    from datetime import timedelta

    for hours, run in enumerate(Run.objects.filter(server=base.server, workload=base.workload).order_by("pk")):
        Run.objects.filter(pk=run.pk).update(started_at=run.started_at + timedelta(hours=3 * hours))
    builds = _section(_writeup(client, base), "## Builds, configuration, hardware")
    assert "file time" in builds and "not when the runs ran" not in builds


def test_every_group_table_has_a_row_per_version_with_the_comparisons_numbers(
    base: Run, comparison: Comparison, client: Client
) -> None:
    text = _writeup(client, base)
    groups = [g for g in comparison.groups if any(comparison.group_of.get(x) == g for x in comparison.labels)]
    assert groups
    for group in groups:
        rows = _table_rows(_section(text, f"### {group} (relative to MySQL 5.6.51)"))
        assert [r[0] for r in rows] == [comparison.version_label(c.key) for c in comparison.others]
        for row, column in zip(rows, comparison.others, strict=True):
            s = comparison.summaries[group][column.key]
            assert row[1:6] == [md_number(s.min), md_number(s.max), md_number(s.avg), md_number(s.median), s.count_text]
            assert row[6:8] == [f"`{s.min_label}`", f"`{s.max_label}`"]


def test_the_microbenchmark_table_carries_every_relative_qps_of_the_comparison(
    base: Run, comparison: Comparison, client: Client
) -> None:
    rows = _table_rows(_section(_writeup(client, base), "## Relative QPS per microbenchmark"))
    assert [r[1] for r in rows] == [f"`{label}`" for label in comparison.labels]
    for row, label in zip(rows, comparison.labels, strict=True):
        assert row[2] == f"{comparison.qps[comparison.base][label]:.0f}"
        expected = [
            "missing" if (v := comparison.relative[c.key][label]) is None else f"{v:.2f}" for c in comparison.others
        ]
        assert row[3:] == expected
    # 5.7.44 on read-only-distinct, as the author's qps.rel.all.tsv prints it.
    distinct = next(r for r in rows if r[1] == "`read-only-distinct_range=1000`")
    assert distinct[3] == "1.44"


def test_the_hw_tables_give_the_median_ratio_per_group_and_every_microbenchmarks_ratio(
    base: Run, comparison: Comparison, client: Client
) -> None:
    text = _writeup(client, base)
    hw = _section(text, "## HW efficiency")
    assert "### cpu/o per microbenchmark" in hw
    per_label = _table_rows(hw.split("### cpu/o per microbenchmark")[1].split("###")[0])
    label = comparison.labels[0]
    row = next(r for r in per_label if r[1] == f"`{label}`")
    ratios = [comparison.metric_ratios[c.key][label]["cpu_o"] for c in comparison.others]
    assert row[2:] == ["missing" if v is None else md_number(v) for v in ratios]


def test_open_regression_stories_are_listed_with_their_bug_keys(base: Run, client: Client) -> None:
    story = Regression.objects.get(group="point queries", arrived_in__text="5.7.44", microbenchmark=None)
    link_bug(story, "MySQL bug 102037")
    fixed = Regression.objects.filter(kind="regression", fixed_in__isnull=False).first()
    text = _writeup(client, base)
    stories = _section(text, "## Open regression stories")
    row = next(r for r in _table_rows(stories) if r[0] == f"[group point queries]({SITE}{story.get_absolute_url()})")
    assert row[1].startswith("5.7.44")
    assert row[4] == "[MySQL bug #102037](https://bugs.mysql.com/bug.php?id=102037)"
    if fixed is not None:
        assert fixed.get_absolute_url() + ")" not in stories
    # The group's table names the bug under it too.
    group = _section(text, "### point queries (relative to MySQL 5.6.51)")
    assert "[MySQL bug #102037](https://bugs.mysql.com/bug.php?id=102037): regression of the group point" in group


def test_links_back_are_absolute_under_the_sites_base_url(base: Run, client: Client) -> None:
    demo = _writeup(client, base)
    assert f"[the comparison]({SITE}/compare/?base={base.pk})" in demo
    assert "](/" not in demo
    with override_settings(BENCHDASH_BASE_URL="https://bench.example.com/"):
        absolute = _writeup(client, base)
    assert f"[the comparison](https://bench.example.com/compare/?base={base.pk})" in absolute
    assert f"(https://bench.example.com/runs/{base.pk}/)" in absolute
    assert "](/" not in absolute


def test_the_zip_holds_the_markdown_and_every_group_chart_as_svg(
    base: Run, comparison: Comparison, client: Client
) -> None:
    response = client.get("/compare/writeup", {"base": base.pk, "format": "zip"})
    assert response.status_code == 200
    assert response["Content-Type"] == "application/zip"
    assert response["Content-Disposition"].endswith('.zip"')
    archive = zipfile.ZipFile(io.BytesIO(response.content))
    assert archive.testzip() is None
    names = archive.namelist()
    groups = [g for g in comparison.groups if any(comparison.group_of.get(x) == g for x in comparison.labels)]
    charts = sorted(n for n in names if n.startswith("charts/"))
    assert names[0] == "writeup.md"
    assert len(charts) == len(groups) and all(n.endswith(".svg") for n in charts)
    text = archive.read("writeup.md").decode()
    for name in charts:
        svg = archive.read(name).decode()
        assert svg.startswith("<svg") and svg.rstrip().endswith("</svg>")
        assert '<rect width="100%" height="100%" fill="#fff"/>' in svg.split("<title", 1)[0]
        assert ElementTree.fromstring(svg).tag == "{http://www.w3.org/2000/svg}svg"  # well-formed on its own
        assert f"]({name})" in text  # each chart is shown in the post, above its group's table
    # Without the zip the post shows no images it cannot carry.
    assert "![" not in _writeup(client, base)


def test_a_bad_write_up_request_is_refused_plainly(base: Run, client: Client) -> None:
    assert client.get("/compare/writeup", {"base": base.pk, "format": "pdf"}).status_code == 400
    assert client.get("/compare/writeup", {"base": "x"}).status_code == 400
    assert client.get("/compare/writeup").status_code == 400


def test_the_comparison_page_offers_the_write_up(base: Run, client: Client) -> None:
    html = client.get("/compare/", {"base": base.pk}).content.decode()
    # Like every export link, it carries the concurrency the comparison was made at.
    assert f'href="/compare/writeup?base={base.pk}&amp;dop=1&amp;format=zip"' in html
    assert f'href="/compare/writeup?base={base.pk}&amp;dop=1&amp;format=markdown"' in html


def test_the_markdown_export_has_rows_of_versions_per_group_and_the_bug_keys(
    base: Run, comparison: Comparison, client: Client
) -> None:
    story = Regression.objects.get(group="point queries", arrived_in__text="5.7.44", microbenchmark=None)
    link_bug(story, "MDEV-33894")
    text = client.get("/compare/export", {"base": base.pk, "format": "markdown"}).content.decode()
    section = _section(text, "### point queries (relative to MySQL 5.6.51)")
    rows = _table_rows(section)
    assert [r[0] for r in rows] == [comparison.version_label(c.key) for c in comparison.others]
    assert "| version | min | max | avg | median | n | min at | max at |" in section
    assert (
        "- [MDEV-33894](https://jira.mariadb.org/browse/MDEV-33894): regression of the group point queries" in section
    )


def test_the_api_answers_the_same_write_up_as_the_page_and_the_zip_on_request(
    base: Run, comparison: Comparison, client: Client
) -> None:
    page = _writeup(client, base)
    api = client.get("/api/compare/writeup", {"base": base.name})
    assert api.status_code == 200 and api["Content-Type"].startswith("text/markdown")
    assert api.content.decode() == page
    archive = zipfile.ZipFile(
        io.BytesIO(client.get("/api/compare/writeup", {"base": base.pk, "format": "zip"}).content)
    )
    assert archive.namelist()[0] == "writeup.md" and any(n.startswith("charts/") for n in archive.namelist())
    unknown = client.get("/api/compare/writeup", {"base": "x.nope.z.pk1"})
    assert unknown.status_code == 400 and "no run named" in unknown.json()["detail"]
    assert client.get("/api/compare/writeup", {"base": base.pk, "format": "pdf"}).status_code == 422


def test_an_insert_benchmark_write_up_says_no_base_where_only_the_base_lacks_a_step(
    corpus: Path, client: Client
) -> None:
    from runs.importer import archive_directory, submit_and_import
    from runs.models import Bundle

    submit_and_import(archive_directory(corpus / "ibench-2021"), name="ibench.tgz", source=Bundle.Source.COMMAND)
    base = Run.objects.get(name="100m.my5649.cx6d")
    text = _writeup(client, base)
    assert text.startswith("# MySQL 5.6.49 → 8.0.22 on ")
    rows = {r[1]: r for r in _table_rows(_section(text, "## Relative QPS per microbenchmark"))}
    # my8022 ran q200.1; neither the 5.6 base nor 5.7 did.
    assert rows["`q200.1`"][2] == "missing"
    assert rows["`q200.1`"][3:] == ["missing", "no base"]
