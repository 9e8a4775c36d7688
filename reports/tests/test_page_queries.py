"""Comparison-based pages rendered from scratch make a fixed, small number of queries: the base run and the
series' stamp are read once per request, whichever helpers ask for them."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.cache import cache
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from runs.models import Microbenchmark, Run

pytestmark = pytest.mark.django_db

# Rendered from scratch (cache cleared), an anonymous visitor. What each reads:
# drill-down: the cache key's stamps (the series' runs and regression records), the base run, the series' runs,
#   its concurrencies, the results (and latencies) of the microbenchmark and of the base;
# what the drill-down loads after it (its details): the same comparison's reads, then the explained run's settings
#   (its files, and the two runs' values), and the microbenchmark's stories with their bugs (its "Stories and
#   bugs" table: one query whatever the number of runs or stories);
# comparison: the stamps, the base, the series' runs for the form, the group sets for its selector, the series'
#   runs and results for the comparison, and the regression records for its markers; the results from the series'
#   matrix (reports.matrix) when the series is at its refresh's stamp (7), else the matrix looked up in vain and
#   the results table read (8: these series were never refreshed);
# heatmap and table of every microbenchmark: as the comparison without the form's two (6 here, 5 refreshed).
BUDGETS = {"drill-down": 5, "drill-down details": 8, "comparison": 8, "heatmap": 6, "table": 6}


def _pages(base: Run) -> dict[str, str]:
    mb = Microbenchmark.objects.get(test="point-query", range_size=100)
    return {
        "drill-down": f"/microbenchmarks/{mb.pk}/?base={base.pk}",
        "drill-down details": f"/microbenchmarks/{mb.pk}/details?base={base.pk}",
        "comparison": f"/compare/?base={base.pk}",
        "heatmap": f"/compare/heatmap?base={base.pk}",
        "table": f"/compare/table?base={base.pk}",
    }


def test_comparison_based_pages_from_scratch_stay_within_their_query_budgets(small_base: Run) -> None:
    counts = {}
    for name, url in _pages(small_base).items():
        Client().get(url)  # what is read once per process (content types, templates)
        cache.clear()
        with CaptureQueriesContext(connection) as queries:
            response = Client().get(url)
        assert response.status_code == 200, url
        counts[name] = (len(queries), [q["sql"][:120] for q in queries])
    over = {name: found for name, found in counts.items() if found[0] > BUDGETS[name]}
    assert not over, over


def test_a_drill_down_for_a_microbenchmark_the_comparison_lacks_is_not_found(small_base: Run) -> None:
    missing = (Microbenchmark.objects.order_by("-pk").values_list("pk", flat=True).first() or 0) + 1
    assert Client().get(f"/microbenchmarks/{missing}/?base={small_base.pk}").status_code == 404
    assert Client().get(f"/microbenchmarks/{missing}/").status_code == 404


def test_comparison_based_pages_pause_the_cycle_collector_only_while_they_render(
    small_base: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    import gc

    from reports import views

    seen: list[bool] = []
    real = views.comparison_context

    def spying(*args: Any, **kwargs: Any) -> dict[str, Any]:
        seen.append(gc.isenabled())
        return real(*args, **kwargs)

    monkeypatch.setattr(views, "comparison_context", spying)
    cache.clear()
    assert Client().get(f"/compare/?base={small_base.pk}").status_code == 200
    assert seen and not any(seen)  # paused while the page was computed
    assert gc.isenabled()
    # A page that fails (a microbenchmark the comparison lacks: 404) resumes it too.
    missing = (Microbenchmark.objects.order_by("-pk").values_list("pk", flat=True).first() or 0) + 1
    assert Client().get(f"/microbenchmarks/{missing}/?base={small_base.pk}").status_code == 404
    assert gc.isenabled()
