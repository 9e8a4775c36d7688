"""The comparison page writes its controls without Django's widget templates: the HTML must be Django's own."""

from __future__ import annotations

import pytest
from django.http import QueryDict

from reports.forms import CompareForm
from reports.rendering import form_controls
from reports.views import COMPARE_CONTROLS

QUERIES = (
    "base=3",
    "base=3&dop=4&red=0.9&log=on&view=bars&y_max=&releases=all&group_set=x&scan_formula=spec",
    # Invalid values are shown back with the field marked invalid; unknown choices select nothing.
    "base=3&red=abc&dop=-1&log=false&include_warmups=true&view=zzz&y_min=1e3&green=<b>",
    "base=3&group_set=auto&group_set=x&releases=long-term&include_warmups=on&y_max=2.5",
)


@pytest.mark.parametrize("query", QUERIES)
def test_controls_are_what_django_renders(query: str) -> None:
    form = CompareForm(QueryDict(query))
    form.fields["group_set"].widget.choices = [("auto", "auto"), ("x", "x <y> 'z' & \"w\"")]
    ours = form_controls(form, COMPARE_CONTROLS)
    for name in COMPARE_CONTROLS:
        assert ours[name] == str(form[name]), name


def test_a_widget_it_cannot_write_is_refused() -> None:
    form = CompareForm(QueryDict("base=3"))
    with pytest.raises(TypeError):
        form_controls(form, ["runs"])


@pytest.mark.django_db
def test_the_pickers_runs_and_the_group_sets_read_by_prepared_sql_are_the_querysets() -> None:
    from reports import views
    from reports.models import GroupSetDefinition
    from runs import synthetic
    from runs.importer import submit_and_import
    from runs.models import Run

    for versions, seed in ((("8.0.2", "8.0.1", "8.0.4"), 3), (("8.0.3",), 4)):
        spec = synthetic.SeriesSpec(versions=versions, seed=seed)
        submit_and_import(synthetic.bundle_bytes(spec), name=f"s{seed}.tgz", source="command")
    for name in ("zeta", "alpha", "mid"):
        GroupSetDefinition.objects.create(name=name, rules=[["g", "re:.*"]])
    base = Run.objects.order_by("pk").first()
    assert base is not None
    expected = list(
        Run.objects.filter(server_id=base.server_id, workload_id=base.workload_id)
        .order_by("build__version__dbms__name", "build__version__sort_key", "name", "pk")
        .values_list("pk", "name", "build__version__dbms__name", "build__version__text")
    )
    assert len(expected) == 4
    assert [tuple(run) for run in views._series_runs(base)] == expected
    assert views._group_set_names() == ["alpha", "mid", "zeta"]
