"""Pages: what changed between two runs (``/diff/?a=&b=``), and a server's record (``/servers/<id>/``).

Both read a fixed number of queries whatever the number of settings or runs:
the two runs and their stored files come in two queries, and the server page
aggregates in the database and lists a bounded page of runs.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import messages
from django.db.models import Count
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods

from accounts.permissions import EDIT_SERVER, permission_required
from benchdash.http import ROW_ID_LIMIT, HtmxHttpRequest, row_id
from reports import rendering
from reports.diff import diff_runs
from reports.run_settings import load_run_settings
from runs import configs, experiments
from runs.experiments import RunPair, SettingsSplit
from runs.models import Result, Run, RunFile, Server
from suites.naming import RunName

# Runs offered as the other side of a diff, and runs listed on a server page.
CANDIDATES = 100
SERVER_RUNS = 50


# --------------------------------------------------------------------------- /diff/


class DiffForm(forms.Form):
    a = forms.IntegerField(label="Run A", min_value=1, max_value=ROW_ID_LIMIT - 1)
    b = forms.IntegerField(label="Run B", min_value=1, max_value=ROW_ID_LIMIT - 1, required=False)


def picker_runs() -> list[Run]:
    """Every run, in series order (server · workload · DBMS, oldest version first), for ``rendering.run_options``."""
    return list(
        Run.objects.select_related("server", "workload", "build__version__dbms")
        .only(
            "pk",
            "name",
            "server__name",
            "workload__name",
            "build__version__text",
            "build__version__sort_key",
            "build__version__dbms__name",
        )
        .order_by("server__name", "workload__name", "build__version__dbms__name", "build__version__sort_key", "pk")
    )


@require_GET
def run_diff(request: HtmxHttpRequest) -> HttpResponse:
    form = DiffForm(request.GET or None)
    context: dict[str, Any] = {"form": form}
    if form.is_valid():
        a_id, b_id = form.cleaned_data["a"], form.cleaned_data["b"]
        loaded = load_run_settings([a_id] + ([b_id] if b_id else []))
        if a_id not in loaded or (b_id and b_id not in loaded):
            raise Http404("no such run")
        run_a, settings_a = loaded[a_id]
        context["run_a"] = run_a
        if b_id:
            run_b, settings_b = loaded[b_id]
            context.update(run_b=run_b, diff=diff_runs(settings_a, settings_b), settings_split=_split(a_id, b_id))
        else:
            # Only A given: offer the runs of its series, the usual other side.
            context["candidates"] = (
                Run.objects.filter(server_id=run_a.server_id, workload_id=run_a.workload_id)
                .exclude(pk=a_id)
                .select_related("build__version__dbms")
                .order_by("build__version__sort_key", "name", "pk")[:CANDIDATES]
            )
    if not request.htmx:
        chosen = {name: form.data.get(name, "") for name in ("a", "b")}
        runs = picker_runs()
        context["options_a"] = rendering.run_options(runs, row_id(chosen["a"]))
        context["options_b"] = rendering.run_options(runs, row_id(chosen["b"]), blank="(none: list A's series)")
    template = "reports/diff/run_diff.html#diff" if request.htmx else "reports/diff/run_diff.html"
    return render(request, template, context, status=400 if form.is_bound and not form.is_valid() else 200)


def _split(a_id: int, b_id: int) -> SettingsSplit | None:
    """ "Settings or code?" for A as the old run and B as the new one, over B's microbenchmarks."""
    labels = sorted(
        {
            f"{test}_range={range_size}" if range_size is not None else test
            for test, range_size in Result.objects.filter(run_id=b_id)
            .values_list("microbenchmark__test", "microbenchmark__range_size")
            .distinct()
        }
    )
    return experiments.split_for(RunPair(a_id, b_id, tuple(labels)))


# --------------------------------------------------------------------------- /servers/<id>/


class ServerForm(forms.ModelForm):
    class Meta:
        model = Server
        fields = ["cpus", "ram_gb", "storage", "os", "governor", "notes"]
        labels = {"cpus": "Cores (CPUs)", "ram_gb": "RAM (GB)", "os": "OS", "governor": "CPU governor"}
        widgets = {"notes": forms.Textarea(attrs={"rows": 4, "cols": 60})}


def bundle_facts(server: Server) -> dict[str, Any]:
    """What the imported bundles tell about a server: CPUs reported, hugepages, host names, config sizing."""
    runs = Run.objects.filter(server=server)
    cpus = list(runs.exclude(cpus=None).values("cpus").annotate(n=Count("id")).order_by("-n", "cpus"))
    hp_file = (
        RunFile.objects.filter(run__server=server, kind=RunFile.Kind.HUGEPAGES)
        .order_by("-run__created_at", "-run_id")
        .values_list("text", "run__name")
        .first()
    )
    hp = configs.hugepages(configs.parse_meminfo(hp_file[0])) if hp_file else None
    variables = (
        RunFile.objects.filter(run__server=server, kind=RunFile.Kind.VARIABLES)
        .order_by("-run__created_at", "-run_id")
        .values_list("text", flat=True)
        .first()
    )
    hostname = configs.parse_show_variables(variables).get("hostname") if variables else None
    sizing = []
    for config in runs.order_by("config__name").values_list("config__name", flat=True).distinct():
        # Config names end in _c<cores>r<GB> (z12a_c8r32): what the config was sized for, a hint, not the server.
        hint = RunName(name="", build="", dbms="", version="", flavour="", config=config, pk=1)
        if hint.config_cores:
            sizing.append({"config": config, "cores": hint.config_cores, "ram_gb": hint.config_ram_gb})
    return {
        "cpus_reported": cpus,
        "hugepages": hp,
        "hugepages_run": hp_file[1] if hp_file else None,
        "hostname": hostname,
        "config_sizing": sizing,
    }


def _suggestions(server: Server, facts: dict[str, Any]) -> dict[str, Any]:
    """Initial values for blank fields only: a value someone entered is never replaced by a guess."""
    initial: dict[str, Any] = {}
    if server.cpus is None and facts["cpus_reported"]:
        initial["cpus"] = facts["cpus_reported"][0]["cpus"]
    hp = facts["hugepages"]
    if server.ram_gb is None and hp is not None and hp.mem_total_kb:
        initial["ram_gb"] = round(hp.mem_total_kb / 1024 / 1024)
    return initial


@permission_required(EDIT_SERVER, reads_open=True)
@require_http_methods(["GET", "POST"])
def server_detail(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    server = get_object_or_404(Server, pk=pk)
    facts = bundle_facts(server)
    suggested: dict[str, Any] = {}  # only a fresh form offers guesses; a posted one shows what was sent
    if request.method == "POST":
        form = ServerForm(request.POST, instance=server)
        if form.is_valid():
            form.save()
            messages.success(request, f"{server.name} saved")
            if not request.htmx:
                return redirect(reverse("reports:server", args=[server.pk]))
            form = ServerForm(instance=server)
    else:
        suggested = _suggestions(server, facts)
        form = ServerForm(instance=server, initial=suggested)
    runs = Run.objects.filter(server=server)
    context = {
        "server": server,
        "form": form,
        "facts": facts,
        "suggested": suggested,
        "run_count": runs.count(),
        "runs": runs.select_related("build__version__dbms", "workload").order_by("-created_at", "-pk")[:SERVER_RUNS],
    }
    template = "reports/diff/server_detail.html#record" if request.htmx else "reports/diff/server_detail.html"
    return render(request, template, context)
