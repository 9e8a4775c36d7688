from __future__ import annotations

from django import forms

from reports.exports import FORMATS
from reports.models import SCAN_FORMULAS


class CompareForm(forms.Form):
    base = forms.IntegerField(label="Base run", widget=forms.Select)
    runs = forms.TypedMultipleChoiceField(label="Runs", required=False, coerce=int, choices=())
    group_set = forms.CharField(label="Group set", required=False, initial="auto", widget=forms.Select)
    dop = forms.IntegerField(
        label="Concurrency",
        required=False,
        min_value=1,
        widget=forms.NumberInput(attrs={"placeholder": "auto"}),
    )
    red = forms.FloatField(label="Red at or below", required=False, initial=0.95, min_value=0)
    green = forms.FloatField(label="Green at or above", required=False, initial=1.05, min_value=0)
    include_warmups = forms.BooleanField(label="Include warm-up tests", required=False)
    scan_formula = forms.ChoiceField(
        label="Scan QPS",
        required=False,
        choices=SCAN_FORMULAS,
        initial="era",
    )
    y_min = forms.FloatField(label="Chart y-axis from", required=False, min_value=0)
    y_max = forms.FloatField(label="Chart y-axis to", required=False, min_value=0)
    log = forms.BooleanField(label="Log scale", required=False)
    releases = forms.ChoiceField(
        label="Releases",
        required=False,
        choices=[
            ("", "long-term in charts, all in tables"),
            ("long-term", "long-term releases and the newest"),
            ("all", "every release"),
        ],
    )
    view = forms.ChoiceField(
        label="Charts",
        required=False,
        choices=[
            ("lines", "lines across versions"),
            ("bars", "bars, newest versions"),
            ("absolute", "absolute QPS across versions"),
        ],
        initial="lines",
    )


class ExportForm(CompareForm):
    format = forms.ChoiceField(choices=[(f, f) for f in FORMATS], initial="csv")
    absolute = forms.BooleanField(required=False)
    metrics = forms.BooleanField(required=False)


class SaveReportForm(forms.Form):
    name = forms.CharField(max_length=200, label="Report name")
