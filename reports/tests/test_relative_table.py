"""A long comparison's page loads its table of every microbenchmark when scrolled to; the table is the same."""

from __future__ import annotations

import re

import pytest
from django.core.cache import cache
from django.test import Client

from reports import views
from runs import synthetic
from runs.importer import submit_and_import
from runs.models import Run

pytestmark = pytest.mark.django_db


@pytest.fixture
def base() -> Run:
    spec = synthetic.SeriesSpec(versions=("8.0.1", "8.0.2", "8.0.3", "8.0.4"), seed=5)
    submit_and_import(synthetic.bundle_bytes(spec), name="s.tgz", source="command")
    found = Run.objects.order_by("build__version__sort_key", "pk").first()
    assert found is not None
    return found


def _table(html: str) -> str:
    found = re.search(
        r'  <div class="table-wrap"><table class="relative sticky-first" id="relative-table">.*?</table></div>\n',
        html,
        re.S,
    )
    assert found is not None, "the page has the table of every microbenchmark"
    return found.group(0)


def test_a_short_comparison_shows_the_table_and_a_long_one_loads_the_same_table_when_scrolled_to(
    base: Run, client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"/compare/?base={base.pk}"
    inline = client.get(url).content.decode()
    assert 'id="relative"' not in inline
    table = _table(inline)
    assert table.count("<tr data-label=") == 42 and table.count('title="QPS ') == 42 * 3

    monkeypatch.setattr(views, "RELATIVE_TABLE_INLINE_CELLS", 3 * 42 - 1)
    cache.clear()
    page = client.get(url).content.decode()
    assert 'id="relative-table"' not in page
    link = re.search(r'<div id="relative" hx-get="(/compare/table\?[^"]+)" hx-trigger="revealed"', page)
    assert link is not None and f'<a href="{link.group(1)}">Open the table of every microbenchmark</a>' in page
    assert "42 microbenchmarks × 3 versions" in page

    path = link.group(1).replace("&amp;", "&")
    assert client.get(path, headers={"HX-Request": "true"}).content.decode() == table
    alone = client.get(path).content.decode()
    assert _table(alone) == table and "← back to the comparison" in alone


def _summaries(html: str) -> dict[str, str]:
    """Each group's summary table on a page, by group."""
    pattern = r'<div class="table-wrap"><table class="summary" data-group="([^"]+)">.*?</table></div>'
    return {found.group(1): found.group(0) for found in re.finditer(pattern, html, re.S)}


def test_a_long_comparison_loads_each_group_summary_when_scrolled_to_and_it_is_the_same_summary(
    base: Run, client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"/compare/?base={base.pk}"
    inline = _summaries(client.get(url).content.decode())
    assert len(inline) >= 4 and all(table.count("<tr data-column=") == 3 for table in inline.values())

    monkeypatch.setattr(views, "RELATIVE_TABLE_INLINE_CELLS", 3 * 42 - 1)
    cache.clear()
    page = client.get(url).content.decode()
    assert '<table class="summary"' not in page
    links = re.findall(
        r'<div class="table-wrap summary-deferred" hx-get="(/compare/table\?[^"]+)" hx-trigger="revealed"', page
    )
    assert len(links) == len(inline)
    for link in links:
        path = link.replace("&amp;", "&")
        fragment = client.get(path, headers={"HX-Request": "true"}).content.decode()
        found = _summaries(fragment)
        assert len(found) == 1
        ((group, table),) = found.items()
        assert table == inline[group], group
        assert f'<a href="{link}">Open the summary of {group}</a>' in page
        # Opened alone: the same summary, on a page of its own.
        alone = client.get(path).content.decode()
        assert _summaries(alone) == found and "← back to the comparison" in alone
    unknown = links[0].replace("&amp;", "&").split("&group=")[0] + "&group=no-such-group"
    assert client.get(unknown).status_code == 404
