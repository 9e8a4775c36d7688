"""The benches' own measuring: what they count must be what they say (bench/peers.py, bench/compare_bench.py)."""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path.insert(0, str(BENCH))

import compare_bench  # noqa: E402
import peers  # noqa: E402


def test_pages_per_second_alternate_the_peer_and_benchdash_so_a_changing_load_weighs_on_both() -> None:
    rounds: list[str] = []
    lock = threading.Lock()

    def fetcher(side: str, seconds: float) -> Any:
        def fetch() -> None:
            with lock:
                if not rounds or rounds[-1] != side:
                    rounds.append(side)
            time.sleep(seconds)

        return fetch

    (peer_rate, peer_errors), (our_rate, our_errors) = peers.throughputs(
        fetcher("peer", 0.02), fetcher("ours", 0.01), clients=2, pages=8
    )
    assert rounds == ["peer", "ours", "peer"]  # peer, then benchdash twice in a row, then the peer again
    assert (peer_errors, our_errors) == (0, 0)
    # 8 loads each, 2 at a time: 4 × 20 ms for the peer, 4 × 10 ms for benchdash (sleeps only ever run longer).
    assert 50 < peer_rate <= 100
    assert 100 < our_rate <= 200
    assert our_rate > 1.5 * peer_rate


@pytest.mark.django_db
def test_a_peer_is_loaded_with_the_bench_series_only_and_only_when_it_holds_every_version(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from runs.importer import submit_and_import
    from runs.models import Run

    versions = ("8.0.0", "8.0.1", "8.0.2")
    monkeypatch.setattr(peers, "SERIES", (("s3", versions, 1),))
    submit_and_import(peers.series_bundle("s3", versions, 1), name="s3.tar.gz", source="command")
    # An ingest figure's series, left in the database by an earlier run of a bench.
    submit_and_import(peers.ingest_bundle("ingest-1-1-0", ("9.5.0",)), name="ingest.tar.gz", source="command")

    found = list(peers.read_series())
    assert [series.name for series in found] == ["s3"]
    assert [version for _id, version, _values in found[0].runs] == list(versions)
    assert {len(values) for _id, _version, values in found[0].runs} == {42}

    Run.objects.filter(server__name="s3", build__version__text="8.0.1").delete()
    with pytest.raises(RuntimeError, match="does not hold the 3 versions"):
        list(peers.read_series())


@pytest.mark.django_db
def test_the_comparison_bench_asks_for_every_part_a_comparison_page_defers(client: Any) -> None:
    from runs import synthetic
    from runs.importer import submit_and_import
    from runs.models import Run

    spec = synthetic.SeriesSpec(versions=tuple(f"9.0.{n}" for n in range(6)), seed=2)
    submit_and_import(synthetic.bundle_bytes(spec), name="series.tar.gz", source="command")
    base = Run.objects.order_by("build__version__sort_key").first()
    assert base is not None
    page = client.get(f"/compare/?base={base.pk}").content.decode()

    parts = compare_bench.deferred_parts(page)
    assert parts  # the hardware-efficiency view and the heatmap at least
    for url in parts:
        assert "&amp;" not in url
        answer = client.get(url, HTTP_HX_REQUEST="true")
        assert answer.status_code == 200, url
        assert answer.content


def test_the_comparison_bench_refuses_a_deferred_part_it_cannot_ask_for() -> None:
    found = '<div hx-trigger="revealed" hx-swap="outerHTML" hx-get="/compare/table?base=1&amp;group=a"></div>'
    assert compare_bench.deferred_parts(found) == ["/compare/table?base=1&group=a"]
    with pytest.raises(RuntimeError, match="cannot ask for"):
        compare_bench.deferred_parts('<div hx-trigger="revealed" hx-post="/x"></div>')
    with pytest.raises(RuntimeError, match="does not find"):
        compare_bench.deferred_parts("<div hx-trigger='revealed' hx-get='/x'></div>")
