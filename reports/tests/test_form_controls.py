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
