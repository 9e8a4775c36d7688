"""The page of one run's CI verdict (``/runs/<id>/verdict/``): "this run vs the base branch", every
microbenchmark and group, what moved beyond noise, and the stories the run's upload opened."""

from __future__ import annotations

from django import forms
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_GET

from regressions import verdict_text
from regressions.verdict import Rule
from regressions.verdict_load import RUN_RELATED, run_verdict
from runs.models import Run

MOVEMENT_ORDER = ("regression", "improvement", "within noise", "missing", "unchanged")


class BaseBranchForm(forms.Form):
    base_branch = forms.CharField(label="Base branch", required=False, max_length=200, initial="main")


@require_GET
def run_verdict_page(request: HttpRequest, pk: int) -> HttpResponse:
    run = get_object_or_404(Run.objects.select_related(*RUN_RELATED), pk=pk)
    form = BaseBranchForm(request.GET or None)
    base_branch = form.cleaned_data["base_branch"].strip() if form.is_valid() else "main"
    if not request.GET:
        form = BaseBranchForm(initial={"base_branch": base_branch})
    rule = Rule()
    verdict = run_verdict(run, run.bundle, base_branch=base_branch, absolute=request.build_absolute_uri, rule=rule)
    context = {
        "run": run,
        "verdict": verdict,
        "form": form,
        "base_branch": base_branch,
        "rule": rule,
        # What moved first, then the rest in label order: the row a reader came for is on top.
        "rows": [
            {"cell": c, "anchor": verdict_text.cell_anchor(c), "change": verdict_text.pct(c.change)}
            for c in sorted(verdict.cells, key=lambda c: (MOVEMENT_ORDER.index(c.movement), c.label, c.dop))
        ],
        "groups": [{"group": g, "change": verdict_text.pct(g.change)} for g in verdict.groups],
        "moved": len(verdict.moved("regression", "improvement")),
        "stories": [{"story": s, "change": verdict_text.pct(s.change)} for s in verdict.stories],
    }
    return render(request, "regressions/run_verdict.html", context)
