"""A loss given back within an improvement (a gain within a regression) is a record of its own (rule 5b)."""

from __future__ import annotations

import pytest
from django.test import Client

from regressions import stories as st
from regressions.detection import detect_regressions
from regressions.models import Regression
from runs.models import Run

VERSIONS = ("5.6.51", "5.7.44", "8.0.43", "8.0.44", "8.4.6", "8.4.7")


def test_a_loss_inside_an_improvement_is_a_regression_story_naming_it() -> None:
    series = st.Series("t", tuple(map(st.Point, VERSIONS, (1.0, 1.4, 1.4, 1.12, 1.12, 1.12))))
    improvement, loss = st.build_stories(series)
    assert improvement.kind == "improvement" and [e.kind for e in improvement.events] == [
        "arrival",
        "partial recovery",
    ]
    assert (loss.kind, loss.arrived_in, loss.previous_version) == ("regression", "8.0.44", "8.0.43")
    assert loss.change == pytest.approx(1.12 / 1.4 - 1) and loss.is_open
    assert loss.events[0].within == "improvement 5.7.44"
    assert "given back within the improvement story of 5.7.44" in loss.summary
    # Smaller than the minimum change: part of the improvement's story only.
    small = st.Series("t", tuple(map(st.Point, VERSIONS, (1.0, 1.4, 1.4, 1.35, 1.35, 1.35))))
    assert [s.kind for s in st.build_stories(small)] == ["improvement"]


@pytest.mark.django_db
def test_on_the_mysql_series_the_8_0_loss_of_a_5_7_gain_is_an_open_regression_record(small_base: Run) -> None:
    summary = detect_regressions(small_base.server_id, small_base.workload_id)
    loss = Regression.objects.get(
        microbenchmark__test="read-only-distinct", kind="regression", metric="qps", releases="long-term"
    )
    assert (loss.arrived_in.text, loss.previous_version.text) == ("8.0.43", "5.7.44")  # type: ignore[union-attr]
    assert loss.change is not None and loss.change <= -0.05 and loss.fixed_in is None
    # Open: on the list of its own, or in its group's story, which moves further at the same version.
    assert loss.is_open_story or (loss.folded_into is not None and loss.folded_into.is_open_story)
    assert loss.story_events[0]["within"] == "improvement 5.7.44"
    gain = Regression.objects.get(microbenchmark__test="read-only-distinct", kind="improvement", metric="qps")
    body = Client().get(loss.get_absolute_url()).content.decode()
    assert f'href="{gain.get_absolute_url()}"' in body and "Given back within the" in body
    assert loss.pk in summary.opened or loss.folded_into_id is not None
