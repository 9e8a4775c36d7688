"""Saved comparisons ("reports") and user-defined group sets."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models
from django.urls import reverse


class GroupSetDefinition(models.Model):
    """A user-defined group set: ``{group: "re:<pattern>" | [test or label, …]}`` in display order."""

    name = models.CharField(max_length=100, unique=True)
    # A list of [group, rule] pairs keeps the display order on PostgreSQL too (jsonb reorders object keys);
    # a {group: rule} object is accepted as well.
    rules = models.JSONField(
        help_text='[["group", "re:pattern"], ["group", ["test", "test_range=100", …]], …] in display order'
    )
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def ordered_rules(self) -> dict[str, Any]:
        if isinstance(self.rules, list):
            return {str(group): rule for group, rule in self.rules}
        return dict(self.rules)


# How a comparison reads scan's QPS (sysbench), as the comparison page offers it and a saved report keeps it.
SCAN_FORMULAS = [("era", "as each run's scripts computed it"), ("spec", "the spec's formula for every run")]


class Report(models.Model):
    """A saved comparison with a permalink; recomputed (through the cache key) when new runs arrive."""

    name = models.CharField(max_length=200)
    slug = models.SlugField(max_length=200, unique=True)
    base_run = models.ForeignKey("runs.Run", on_delete=models.CASCADE, related_name="+")
    runs = models.ManyToManyField("runs.Run", blank=True, related_name="reports", help_text="empty: the whole series")
    group_set = models.CharField(max_length=100, default="auto")
    dop = models.PositiveIntegerField(null=True, blank=True)
    red = models.FloatField(default=0.95)
    green = models.FloatField(default=1.05)
    include_warmups = models.BooleanField(default=False)
    # The release view it was saved with: "" (charts long-term, tables every release), "long-term" or "all".
    releases = models.CharField(
        max_length=16, blank=True, default="", choices=[("", "default"), ("long-term", "long-term"), ("all", "all")]
    )
    # How scan's QPS is read (sysbench): "era", as each run's scripts computed it, or "spec", the spec's formula
    # for every run. Reports saved before it was kept opened with the page's default, "era".
    scan_formula = models.CharField(
        max_length=8,
        default="era",
        choices=SCAN_FORMULAS,
    )
    # The charts' scale and kind as saved: the y-axis range (None: automatic), log scale, lines or bars ("": the
    # page's default), and each group chart's own top, {"y_max_<group slug>": top}.
    y_min = models.FloatField(null=True, blank=True)
    y_max = models.FloatField(null=True, blank=True)
    log = models.BooleanField(default=False)
    view = models.CharField(
        max_length=8,
        blank=True,
        default="",
        choices=[("", "default"), ("lines", "lines"), ("bars", "bars"), ("absolute", "absolute QPS")],
    )
    group_y_max = models.JSONField(default=dict, blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        return reverse("reports:report", args=[self.slug])


class SeriesSummary(models.Model):
    """What the home page shows of a series (server + workload + DBMS): its default base, newest run, red flags.

    Written by ``reports.tasks.refresh_series_task`` when runs arrive, so the home
    page reads one row per series instead of computing comparisons.
    """

    server = models.ForeignKey("runs.Server", on_delete=models.CASCADE, related_name="+")
    workload = models.ForeignKey("runs.Workload", on_delete=models.CASCADE, related_name="+")
    dbms = models.ForeignKey("runs.Dbms", on_delete=models.CASCADE, related_name="+")
    base_run = models.ForeignKey("runs.Run", on_delete=models.CASCADE, related_name="+")
    latest_run = models.ForeignKey("runs.Run", on_delete=models.CASCADE, related_name="+")
    runs = models.PositiveIntegerField(default=0)
    # The newest version's red flags against the base: [[label, relative QPS], …], worst first.
    red_flags = models.JSONField(default=list, blank=True)
    # The microbenchmarks the server + workload has results of, so the search links a microbenchmark to its
    # series without reading the results.
    microbenchmark_ids = models.JSONField(default=list, blank=True)
    computed_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["server__name", "workload__name", "dbms__name"]
        constraints = [
            models.UniqueConstraint(fields=["server", "workload", "dbms"], name="series_summary_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.server} {self.workload} {self.dbms}"


class SeriesMatrix(models.Model):
    """Every result of a series (server + workload) that a comparison reads, as compact arrays, written when the
    series is refreshed so that a comparison reads one row instead of thousands (``reports.matrix``).

    ``runs`` and ``last_run_id`` are the series' stamp when it was written (``reports.compare.series_stamp``:
    the number of runs and the newest run's id): the row is read only in the query that finds the series still
    at that stamp, so it is never read stale. ``arrays`` is written by the worker, never from a request.
    """

    server = models.ForeignKey("runs.Server", on_delete=models.CASCADE, related_name="+")
    workload = models.ForeignKey("runs.Workload", on_delete=models.CASCADE, related_name="+")
    runs = models.PositiveIntegerField()
    last_run_id = models.BigIntegerField(null=True)
    # reports.matrix.FORMAT when written: a row of another layout is never read.
    format = models.PositiveSmallIntegerField()
    # [[id, test, range_size, suite, is_warmup], …]: the microbenchmarks the arrays' indexes point into.
    microbenchmarks = models.JSONField(default=list)
    arrays = models.BinaryField()
    computed_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["server", "workload"], name="series_matrix_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.server_id}/{self.workload_id} at {self.runs}:{self.last_run_id}"
