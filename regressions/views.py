"""Regression pages: the list with filters and bulk triage, and one regression with its evidence, bugs and history."""

from __future__ import annotations

import statistics
from typing import Any

from django import forms
from django.contrib import messages
from django.core.paginator import Paginator
from django.db.models import Count, Max, QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme, urlencode
from django.views.decorators.http import require_POST

from accounts.permissions import TRIAGE, permission_required
from benchdash import pagecache
from benchdash.http import HtmxHttpRequest
from regressions import stories
from regressions.bugs import ACCEPTED
from regressions.evidence import Evidence, EvidencePoint, Rule
from regressions.filters import ANY, OPEN, RELEASE_VIEWS, TABS, RegressionFilters
from regressions.models import Bug, Regression, TriageEvent
from regressions.settings_split import story_split
from regressions.stories import METRICS, QPS
from regressions.triage import LinkResult, link_bug_to_many, triage
from regressions.viewnote import view_note
from reports import charts, stats
from runs.models import Dbms, Run, Server
from runs.signals import runs_stamp

State = Regression.State
PAGE_SIZE = 100
LINK = "link"


class RegressionFilterForm(forms.Form):
    tab = forms.ChoiceField(choices=list(TABS.items()), required=False)
    releases = forms.ChoiceField(choices=list(RELEASE_VIEWS.items()), required=False)
    state = forms.ChoiceField(
        choices=[
            ("", "as the tab has it"),
            (OPEN, "open (not fixed, expected or noise)"),
            (ANY, "any"),
            *State.choices,
        ],
        required=False,
    )
    kind = forms.ChoiceField(choices=[("", "any"), *Regression.Kind.choices], required=False)
    metric = forms.ChoiceField(
        choices=[("", "as the tab has it"), (QPS, "QPS"), *((name, name) for name in METRICS)], required=False
    )
    dbms = forms.CharField(required=False)
    server = forms.CharField(required=False)
    workload = forms.CharField(required=False)
    group = forms.CharField(required=False)
    microbenchmark = forms.CharField(required=False, help_text="a label (point-query_range=100) or a test")
    q = forms.CharField(required=False, label="Microbenchmark or group")


class BulkForm(forms.Form):
    """One form for every change: the list's bulk actions and the detail page's triage and bug forms."""

    ids = forms.ModelMultipleChoiceField(
        queryset=Regression.objects.only("pk"), error_messages={"required": "tick at least one regression"}
    )
    action = forms.ChoiceField(choices=[*((s, f"mark {label}") for s, label in State.choices), (LINK, "link bug")])
    bug = forms.CharField(required=False, max_length=500, help_text=ACCEPTED)
    title = forms.CharField(required=False, max_length=300)
    carry = forms.BooleanField(required=False, label="also link the same regression on other servers")
    note = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))
    next = forms.CharField(required=False)

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if data.get("action") == LINK and not data.get("bug"):
            self.add_error("bug", f"a bug to link: {ACCEPTED}")
        return data


def filtered_regressions(form: RegressionFilterForm) -> QuerySet[Regression]:
    regressions = Regression.objects.select_related(
        "server",
        "workload",
        "microbenchmark",
        "arrived_in__dbms",
        "previous_version",
        "fixed_in",
        "persists_until",
        # Each row's figures name the base run (Regression.figures): one query per row otherwise.
        "base_run",
    ).prefetch_related("bugs")
    data = form.cleaned_data if form.is_valid() else {}
    return RegressionFilters.from_mapping(data).apply(regressions)


def _tab_links(request: HttpRequest, form: RegressionFilterForm) -> list[dict[str, Any]]:
    """The tabs and the release-view switch as links that keep the other filters."""
    data = form.cleaned_data if form.is_valid() else {}
    current = {"tab": data.get("tab") or OPEN, "releases": data.get("releases") or "long-term"}
    params: dict[str, str] = {k: str(v) for k, v in request.GET.items() if k != "page" and v}
    links = []
    for name, choices in (("tab", TABS), ("releases", RELEASE_VIEWS)):
        for value, label in choices.items():
            query: dict[str, str] = {**params, name: value}
            links.append(
                {
                    "name": name,
                    "value": value,
                    "label": label,
                    "current": current[name] == value,
                    "href": reverse("regressions:regression_list") + "?" + urlencode(query),
                }
            )
    return links


# The query parameters the list reads: the page cache keeps one entry per canonical set of them.
LIST_PARAMS = (*RegressionFilterForm.base_fields, "page")


def regressions_stamp() -> str:
    """Changes whenever the list could: detection adding, changing or dropping stories, triage, bug links and
    bugs, and new runs (the filters' servers and DBMSs). Maxima and counts of small tables, never the results."""
    records = Regression.objects.aggregate(
        n=Count("id"), last=Max("id"), updated=Max("updated_at"), detected=Max("detected_at")
    )
    events = TriageEvent.objects.aggregate(last=Max("id"))
    links = Regression.bugs.through.objects.aggregate(n=Count("id"), last=Max("id"))
    bugs = Bug.objects.aggregate(n=Count("id"), last=Max("id"))
    parts = [*records.values(), events["last"], *links.values(), *bugs.values(), runs_stamp()]
    return "|".join(str(part) for part in parts)


def regression_list(request: HtmxHttpRequest) -> HttpResponse:
    # Signed in or not changes the hint under the bulk form, beyond what the visitor's roles change.
    key = f"regressions|{regressions_stamp()}|{request.user.is_authenticated}"
    return pagecache.page(request, key, lambda shared: _regression_list_page(request, shared), params=LIST_PARAMS)


def _regression_list_page(request: HtmxHttpRequest, shared: dict[str, Any]) -> str:
    form = RegressionFilterForm(request.GET or None)
    page = Paginator(filtered_regressions(form), PAGE_SIZE).get_page(request.GET.get("page"))
    links = _tab_links(request, form)
    data = form.cleaned_data if form.is_valid() else {}
    tab = next(link for link in links if link["name"] == "tab" and link["current"])
    context = {
        "form": form,
        # The QPS tabs hold QPS stories only: a metric column there would say "QPS" on every row (on "all" the
        # kind names a metric story's metric).
        "show_metric": tab["value"] == "metrics" or bool(data.get("metric")),
        "tabs": [link for link in links if link["name"] == "tab"],
        "views": [link for link in links if link["name"] == "releases"],
        "tab": tab,
        "view": next(link for link in links if link["name"] == "releases" and link["current"]),
        "view_note": view_note(
            data.get("releases") or "long-term", dbms=data.get("dbms") or "", server=data.get("server") or ""
        ),
        "page": page,
        "states": State.choices,
        "dbms_names": Dbms.objects.values_list("name", flat=True),
        "server_names": Server.objects.filter(regressions__isnull=False).values_list("name", flat=True).distinct(),
        "group_names": Regression.objects.exclude(group="")
        .values_list("group", flat=True)
        .distinct()
        .order_by("group"),
        "accepted": ACCEPTED,
        # From the canonical query the page is kept under, never the visitor's own spelling of it.
        "next": f"{request.path}?{request.GET.urlencode()}" if request.GET else request.path,
        **shared,
    }
    template = "regressions/list.html#results" if request.htmx else "regressions/list.html"
    return render_to_string(template, context, request)


def regression_detail(request: HttpRequest, pk: int) -> HttpResponse:
    regression = get_object_or_404(
        Regression.objects.select_related(
            "server",
            "workload",
            "microbenchmark",
            "arrived_in__dbms",
            "arrived_in_build",
            "previous_version",
            "fixed_in",
            "persists_until",
            "base_run",
            "folded_into",
            "superseded_by",
        ),
        pk=pk,
    )
    if regression.superseded_by_id is not None and not request.GET.get("as_was"):
        # An old link (an alert's, a bookmark) leads to the story detection tells now in its place.
        return redirect(f"{reverse('regressions:regression', args=[regression.superseded_by_id])}?superseded={pk}")
    evidence = evidence_table(regression)
    context = {
        "r": regression,
        "supersedes": list(regression.supersedes.select_related("arrived_in").order_by("pk")),
        "members": regression.folded_members.select_related("microbenchmark", "arrived_in", "fixed_in").order_by(
            "microbenchmark__test", "microbenchmark__range_size"
        ),
        "story_events": [
            {
                **e,
                "text": _EVENT_TEXT.get((regression.kind, e.get("kind")), e.get("kind")),
                "change_text": _signed(e.get("change")),
                "change_vs_before_text": _signed(e.get("change_vs_before")),
                "against": e.get("against") or "",
            }
            for e in regression.story_events or []
        ],
        "bugs": list(regression.bugs.all()),
        "events": TriageEvent.objects.filter(regression=regression).select_related("user"),
        "evidence": evidence,
        "chart": story_figure(regression, evidence),
        "chart_config": charts.plot_config(f"story-{regression.pk}"),
        "states": State.choices,
        "accepted": ACCEPTED,
        "rule": stories.__doc__,
        "next": request.get_full_path(),
        "explanation": _explanation(regression),
        "figures": regression.figures,
        "within": _within(regression),
        "settings_split": story_split(regression),
    }
    return render(request, "regressions/detail.html", context)


def story_figure(regression: Regression, evidence: dict[str, Any]) -> dict[str, Any] | None:
    """The story's series as a chart: the points detection used, the subject's values (a group's: its members'
    median), the story's level, and its arrival, later events, fix and outliers marked (as the evidence table's
    phases name them)."""
    points = []
    seen: set[str] = set()
    for row in evidence["rows"]:
        if not row["used"]:
            continue
        values = [cell["value"] for cell in row["cells"] if cell["value"] is not None]
        value = statistics.median(values) if values else None
        phase = row["phase"]
        if regression.outlier and phase == "arrived":
            phase = "outlier"  # an outlier's story is its one version, set aside
        mark = "" if phase in ("before", "after") or phase in seen else phase
        if phase in ("fixed", "ended"):
            seen.add(phase)  # every point after the fix reads "fixed": the line goes at the first
        points.append(charts.StoryPoint(version=row["point"].version, value=value, level=row["level"], mark=mark))
    if len(points) < 2:
        return None
    subject = f"{regression.subject} (median of its members)" if regression.is_group else regression.subject
    y_title = regression.metric + " per operation" if regression.metric != QPS else "relative QPS"
    return charts.story_chart(points, title=subject, y_title=y_title, kind=regression.kind)


def _within(regression: Regression) -> Regression | None:
    """The story a step given back within it sits in (``stories.given_back_stories``): same series, view, subject
    and metric, of the kind and arrival its arrival event names."""
    within = (regression.story_events or [{}])[0].get("within") or ""
    kind, _, version = within.partition(" ")
    if not version:
        return None
    return (
        Regression.objects.filter(
            server_id=regression.server_id,
            workload_id=regression.workload_id,
            releases=regression.releases,
            metric=regression.metric,
            microbenchmark__isnull=regression.microbenchmark_id is None,
            group=regression.group,
            kind=kind,
            arrived_in__text=version,
            arrived_in__dbms_id=regression.arrived_in.dbms_id,
        )
        .filter(**({"microbenchmark_id": regression.microbenchmark_id} if regression.microbenchmark_id else {}))
        .order_by("pk")
        .first()
    )


def _explanation(regression: Regression) -> dict[str, Any] | None:
    """Why a microbenchmark's story arrived: HW metrics and config differences of the arrival's build against
    the version before the arrival (``previous_version``), not against the base."""
    from reports.compare import ComparisonError, ComparisonSpec, get_comparison
    from reports.explain import explain

    if regression.microbenchmark is None or regression.previous_version_id is None:
        return None
    runs = Run.objects.filter(
        server_id=regression.server_id, workload_id=regression.workload_id, build__version=regression.previous_version
    ).order_by("pk")
    before = runs.filter(build__name__in=regression.builds or []).first() or runs.first()
    if before is None:
        return None
    try:
        comparison = get_comparison(ComparisonSpec(base_run_id=before.pk))
    except ComparisonError:
        return None
    arrived_build = regression.arrived_in_build.name if regression.arrived_in_build else None
    candidates = [c for c in comparison.others if c.version == regression.arrived_in.text]
    column = next((c.key for c in candidates if c.build == arrived_build), None) or next(
        (c.key for c in candidates), None
    )
    label = regression.microbenchmark.label
    if column is None or label not in comparison.labels:
        return None
    return explain(comparison, column, label)


@permission_required(TRIAGE)
@require_POST
def regression_bulk(request: HttpRequest) -> HttpResponse:
    form = BulkForm(request.POST)
    target = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        target = reverse("regressions:regression_list")
    if not form.is_valid():
        for field, errors in form.errors.items():
            text = " ".join(str(e) for e in errors)
            messages.error(request, f"{field}: {text}" if field != "__all__" else text)
        return redirect(target)
    ids = [r.pk for r in form.cleaned_data["ids"]]
    action, note = form.cleaned_data["action"], form.cleaned_data["note"]
    if action == LINK:
        try:
            result = link_bug_to_many(
                ids,
                form.cleaned_data["bug"],
                user=request.user,
                title=form.cleaned_data["title"],
                carry=form.cleaned_data["carry"],
            )
        except ValueError as exc:
            messages.error(request, str(exc))
            return redirect(target)
        level, text = link_message(result, ids)
    else:
        changed = triage(ids, action, request.user, note)
        level, text = triage_message(changed, len(ids), str(State(action).label), bool(note))
    messages.add_message(request, level, text)
    return redirect(target)


def _regressions(n: int) -> str:
    return f"{n} regression" + ("" if n == 1 else "s")


def link_message(result: LinkResult, asked: list[int]) -> tuple[int, str]:
    """What linking a bug did, said whole: to how many of the regressions asked (and elsewhere), and which moved
    to "bug filed" by it (the state follows a link, so the user is told it did)."""
    mine = [pk for pk in result.linked if pk in asked]
    if not mine and not result.carried:
        return (
            messages.INFO,
            f"{result.bug.label} was already linked to {'it' if len(asked) == 1 else 'them'}: nothing changed.",
        )
    text = f"Linked {result.bug.label} to {_regressions(len(mine))}"
    if result.carried:
        text += f" and to the same regression on {len(result.carried)} other server" + (
            "s" * (len(result.carried) != 1)
        )
    moved = [pk for pk in result.filed if pk in asked]
    if moved:
        which = "it" if len(mine) == 1 else f"{len(moved)} of them"
        text += f"; {which} moved to “bug filed”, as a linked bug means one is filed"
    return messages.SUCCESS, text + "."


def triage_message(changed: int, asked: int, state: str, noted: bool) -> tuple[int, str]:
    """What a triage step did: the regressions it moved to ``state``, those already there, and the note, which
    is saved in every one's history even where the state did not change."""
    if changed == asked:
        return messages.SUCCESS, f"{_regressions(asked)} marked “{state}”." + (" Note saved." if noted else "")
    rest = asked - changed
    already = (
        "It was"
        if asked == 1
        else "All were"
        if not changed
        else "The other was"
        if rest == 1
        else f"The other {rest} were"
    )
    text = (
        f"{changed} of {_regressions(asked)} marked “{state}”. " if changed else ""
    ) + f"{already} “{state}” already"
    if noted:
        return messages.SUCCESS, f"Note saved. {text}."
    return messages.INFO, f"{text}: nothing else changed." if changed else f"{text}: nothing changed."


def _level(value: float | None) -> str:
    return "missing" if value is None else f"{value:.4g}"


def evidence_table(regression: Regression) -> dict[str, Any]:
    """Rows of the evidence table (one per build the detection saw), so the template only prints."""
    evidence = regression.evidence_record
    rule = evidence.rule
    return {
        "labels": evidence.labels,
        "rows": [_evidence_row(regression, evidence, i, point) for i, point in enumerate(evidence.points)],
        "is_group": regression.is_group,
        "base": evidence.context.base,
        "dop": evidence.context.dop,
        "members_total": evidence.members_total,
        "lines": evidence.lines,
        "gate": f"{regression.threshold:.1%}" if regression.threshold is not None else "",
        "rule_text": _rule_text(rule),
        "noise": rule.noise,
        "noise_source": ("median over the members; " if regression.is_group else "")
        + _NOISE_SOURCES.get(rule.noise_source, "unknown"),
        "builds": list(evidence.builds),
        "releases": {"long-term": "long-term releases and the newest", "all": "every release"}.get(
            evidence.context.releases, "every release"
        ),
    }


def _evidence_row(regression: Regression, evidence: Evidence, i: int, point: EvidencePoint) -> dict[str, Any]:
    per_operation = regression.metric != QPS
    cells = []
    for label in evidence.labels:
        number = evidence.value(label, i)
        if per_operation:
            # A metric's own level per operation: no ratio to the base, so no better/worse colour either.
            cells.append({"value": number, "flag": "", "shown": _level(number)})
        else:
            cells.append({"value": number, "flag": stats.flag(number), "shown": ""})
    level = evidence.level(i)
    return {
        "point": point,
        "phase": _phase(regression, evidence, i, point),
        "used": point.used,
        "cells": cells,
        "level": level,
        "level_shown": _level(level) if per_operation else "",
        "cv": evidence.cv_at(i),
    }


def _phase(regression: Regression, evidence: Evidence, i: int, point: EvidencePoint) -> str:
    """Where a point stands in the story: before, arrived, after, fixed, a later event's name, or no point."""
    if not point.used:
        return f"not a point: {point.unused_because or 'another build of this version'}"
    incomplete = evidence.incomplete(i)
    if incomplete is not None:
        return f"incomplete: {incomplete[0]} of {incomplete[1]} members, no point of the group"
    moved = {
        e.get("version"): _EVENT_TEXT.get((regression.kind, e.get("kind")), e.get("kind"))
        for e in regression.story_events or []
        if e.get("kind") != "arrival"
    }
    if point.version in moved:
        return str(moved[point.version])
    if point.version in (regression.outliers or []):
        return "outlier"
    arrived, fixed = evidence.arrived_point, evidence.fixed_point
    # A release line's own fix (stories rule 9): the line's newest point back where the story started, while the
    # story reads on in version order (a fix backported to 8.0.44 alone).
    line_fix = next((x.line for x in evidence.lines if x.fixed and x.version == point.version), None)
    if line_fix is not None and (fixed is None or i < fixed):
        return f"fixed in the {line_fix} line"
    if arrived is None or i < arrived:
        return "before"
    if fixed is not None and i >= fixed:
        return "fixed" if regression.kind == Regression.Kind.REGRESSION else "ended"
    return "arrived" if i == arrived else "after"


_EVENT_TEXT = {
    ("regression", "arrival"): "arrived",
    ("improvement", "arrival"): "arrived",
    ("regression", "further"): "worse",
    ("improvement", "further"): "better again",
    ("regression", "partial recovery"): "partly back",
    ("improvement", "partial recovery"): "partly given back",
    ("regression", "fixed"): "fixed",
    ("improvement", "given back"): "given back",
    ("regression", "returned"): "back again",
    ("improvement", "returned"): "gained again",
}


def _signed(value: Any) -> str:
    return f"{value:+.1%}".replace("-", "−") if isinstance(value, int | float) else "–"


_NOISE_SOURCES = {
    "MAD": "from this microbenchmark's own series: neighbouring differences, then the residuals within its levels "
    "(median absolute deviation, floored)",
    "given": "estimated from first differences, pooled over every microbenchmark of the series",
    "repeats": "median cv of repeated runs",
    "series": "from this microbenchmark's own version-to-version differences (median, floored at 1%)",
    "default": "the default for a series of 4 versions or fewer without repeated runs",
    "unknown": "unknown (too few versions): only the magnitude gate applies",
}


def _rule_text(rule: Rule) -> str:
    if rule == Rule():
        return ""
    noise_text = f"{rule.noise:.1%}" if isinstance(rule.noise, int | float) else "–"
    return (
        f"Noise σ per point {noise_text} ({_NOISE_SOURCES.get(rule.noise_source, 'unknown')}). "
        f"A step counts when its change exceeds {rule.min_change or 0:.0%} and {rule.k}·σ·√(1/n₁+1/n₂)."
    )
