"""Saved comparisons ("reports") and user-defined group sets."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models
from django.urls import reverse
from django.utils import timezone

from reports import bugs as bugrefs


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
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        return reverse("reports:report", args=[self.slug])


# --------------------------------------------------------------------------- regressions and bugs (SPEC §6)


class Bug(models.Model):
    """A bug report in some tracker; ``reports.bugs.parse`` turns what engineers type into tracker, key and url."""

    tracker = models.CharField(max_length=32, choices=list(bugrefs.TRACKERS.items()))
    # The tracker's key (MDEV-33894, PS-8822, 102037, 12038) or, for a free link, the URL itself.
    key = models.CharField(max_length=bugrefs.MAX_URL_LENGTH)
    title = models.CharField(max_length=300, blank=True)
    url = models.URLField(max_length=bugrefs.MAX_URL_LENGTH)
    status = models.CharField(max_length=64, blank=True, help_text="As the tracker says: open, verified, closed, …")
    fixed_in = models.CharField(max_length=200, blank=True, help_text="Versions the tracker says carry the fix")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["tracker", "key"]
        constraints = [models.UniqueConstraint(fields=["tracker", "key"], name="bug_unique_per_tracker")]

    def __str__(self) -> str:
        return self.label

    @property
    def label(self) -> str:
        return bugrefs.label(self.tracker, self.key)


class Regression(models.Model):
    """A step in relative QPS found by ``reports.regressions.detect_regressions`` (or entered by hand), and its triage.

    The subject is one microbenchmark, or a whole group (``microbenchmark`` empty)
    when most of the group's members stepped at the same version. Its natural key
    (server, workload, microbenchmark or group, kind, arrived_in) is unique in the
    database, so detecting again updates the record instead of adding one; the
    base is not part of it because a step's size, level over level, does not
    depend on which run is the base.
    """

    class Kind(models.TextChoices):
        REGRESSION = "regression"
        IMPROVEMENT = "improvement"

    class State(models.TextChoices):
        NEW = "new"
        ACKNOWLEDGED = "acknowledged"
        BUG_FILED = "bug_filed", "bug filed"
        FIXED = "fixed"
        EXPECTED = "expected"
        NOISE = "noise"

    # Triage states that close a record: the list's "open" filter leaves them out.
    CLOSED_STATES = (State.FIXED, State.EXPECTED, State.NOISE)

    server = models.ForeignKey("runs.Server", on_delete=models.PROTECT, related_name="regressions")
    workload = models.ForeignKey("runs.Workload", on_delete=models.PROTECT, related_name="regressions")
    microbenchmark = models.ForeignKey(
        "runs.Microbenchmark", null=True, blank=True, on_delete=models.PROTECT, related_name="regressions"
    )
    # For a group record the subject; for a microbenchmark record the group it was in, for filtering.
    group = models.CharField(max_length=100, blank=True)
    group_set = models.CharField(max_length=100, blank=True)
    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.REGRESSION)
    arrived_in = models.ForeignKey("runs.Version", on_delete=models.PROTECT, related_name="regressions_arrived")
    arrived_in_build = models.ForeignKey(
        "runs.Build", null=True, blank=True, on_delete=models.SET_NULL, related_name="regressions_arrived"
    )
    previous_version = models.ForeignKey(
        "runs.Version",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        help_text="The last version at the old level: it arrived between this one and arrived_in",
    )
    fixed_in = models.ForeignKey(
        "runs.Version", null=True, blank=True, on_delete=models.PROTECT, related_name="regressions_fixed"
    )
    persists_until = models.ForeignKey(
        "runs.Version",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        help_text="The newest version that still shows it",
    )
    level_before = models.FloatField(null=True, blank=True, help_text="Relative QPS before the step (vs the base)")
    level_after = models.FloatField(null=True, blank=True, help_text="Relative QPS after the step (vs the base)")
    change = models.FloatField(null=True, blank=True, help_text="level_after / level_before − 1")
    threshold = models.FloatField(null=True, blank=True, help_text="The gate |change| had to pass (noise, min change)")
    base_run = models.ForeignKey("runs.Run", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    # Values per version (relative QPS, cv, which build was a point) that the detection saw.
    evidence = models.JSONField(default=dict, blank=True)
    state = models.CharField(max_length=16, choices=State.choices, default=State.NEW, db_index=True)
    bugs = models.ManyToManyField(Bug, blank=True, related_name="regressions")
    detected_at = models.DateTimeField(null=True, blank=True, help_text="Last time detection found it")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["server__name", "workload__name", "arrived_in__sort_key", "group", "pk"]
        constraints = [
            # Two partial indexes rather than one: NULLs are distinct in a unique index, so group records
            # (no microbenchmark) need their own key to be unique too, on SQLite and PostgreSQL alike.
            models.UniqueConstraint(
                fields=["server", "workload", "microbenchmark", "kind", "arrived_in"],
                condition=models.Q(microbenchmark__isnull=False),
                name="regression_unique_microbenchmark",
            ),
            models.UniqueConstraint(
                fields=["server", "workload", "group", "kind", "arrived_in"],
                condition=models.Q(microbenchmark__isnull=True),
                name="regression_unique_group",
            ),
            models.CheckConstraint(
                condition=models.Q(microbenchmark__isnull=False) | ~models.Q(group=""),
                name="regression_has_subject",
            ),
        ]
        indexes = [models.Index(fields=["server", "workload"], name="regression_series")]

    def __str__(self) -> str:
        return f"{self.kind} of {self.subject} in {self.arrived_in}"

    def get_absolute_url(self) -> str:
        return reverse("reports:regression", args=[self.pk])

    @property
    def subject(self) -> str:
        return self.microbenchmark.label if self.microbenchmark_id else self.group  # type: ignore[union-attr]

    @property
    def is_group(self) -> bool:
        return self.microbenchmark_id is None

    @property
    def is_open(self) -> bool:
        return self.state not in self.CLOSED_STATES

    @property
    def change_text(self) -> str:
        """The step as the write-ups say it: ``−12.1%``, ``+44.0%``."""
        if self.change is None:
            return "–"
        return f"{self.change:+.1%}".replace("-", "−")


class TriageEvent(models.Model):
    """The audit log of a regression's triage: who moved it from which state to which, and why."""

    regression = models.ForeignKey(Regression, on_delete=models.CASCADE, related_name="events")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    at = models.DateTimeField(default=timezone.now, db_index=True)
    from_state = models.CharField(max_length=16, choices=Regression.State.choices)
    to_state = models.CharField(max_length=16, choices=Regression.State.choices)
    note = models.TextField(blank=True)

    class Meta:
        ordering = ["at", "pk"]

    def __str__(self) -> str:
        return f"{self.regression_id}: {self.from_state} → {self.to_state}"


class SeriesSummary(models.Model):
    """What the home page shows of a series (server + workload + DBMS): its default base, newest run, red flags.

    Written by ``runs.tasks.refresh_series_task`` when runs arrive, so the home
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
    computed_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["server__name", "workload__name", "dbms__name"]
        constraints = [
            models.UniqueConstraint(fields=["server", "workload", "dbms"], name="series_summary_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.server} {self.workload} {self.dbms}"
