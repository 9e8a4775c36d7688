"""Regression records, the bugs linked to them and their triage log.

The tables keep the names they had when these models lived in ``reports``.
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.urls import reverse
from django.utils import timezone

from regressions import alert_message
from regressions import bugs as bugrefs

# The stories' evidence and figures (with the change-point code they read) are imported when a record's are read,
# not when the models are declared: every process declares them, few read a story.
if TYPE_CHECKING:
    from regressions.evidence import Evidence
    from regressions.figures import Figures


class Bug(models.Model):
    """A bug report in some tracker; ``regressions.bugs.parse`` turns what engineers type into tracker, key and url."""

    tracker = models.CharField(max_length=32, choices=list(bugrefs.TRACKERS.items()))
    # The tracker's key (MDEV-33894, PS-8822, 102037, 12038) or, for a free link, the URL itself.
    key = models.CharField(max_length=bugrefs.MAX_URL_LENGTH)
    title = models.CharField(max_length=300, blank=True)
    url = models.URLField(max_length=bugrefs.MAX_URL_LENGTH)
    status = models.CharField(max_length=64, blank=True, help_text="As the tracker says: open, verified, closed, …")
    fixed_in = models.CharField(max_length=200, blank=True, help_text="Versions the tracker says carry the fix")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "reports_bug"
        ordering = ["tracker", "key"]
        constraints = [models.UniqueConstraint(fields=["tracker", "key"], name="bug_unique_per_tracker")]

    def __str__(self) -> str:
        return self.label

    @property
    def label(self) -> str:
        return bugrefs.label(self.tracker, self.key)


def points_digest(points: Any) -> str:
    """The ``SharedPoints.digest`` of a points list: of its canonical JSON, so the points read back from the
    database (whose JSON may order keys otherwise) have the digest of those detection made."""
    return hashlib.sha256(json.dumps(points, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


class SharedPoints(models.Model):
    """The points (version, build, column, used or why not, long-term, repeats) of one series as one release view
    read them, which the evidence of every story detection told from that view shows.

    Kept once per series and view, not copied into each story's evidence (they were two thirds of what a refresh
    wrote): a story stores ``None`` in its evidence's ``points`` and names the row, and ``Regression.evidence``
    puts them back. Rows are found again by ``digest`` (of the points' JSON); detection deletes those of its
    series that no story names any more, and beat's hourly ``sweep_unused_points`` those left by stories
    deleted another way.
    """

    server = models.ForeignKey("runs.Server", on_delete=models.CASCADE, related_name="+")
    workload = models.ForeignKey("runs.Workload", on_delete=models.CASCADE, related_name="+")
    digest = models.CharField(max_length=64, help_text="SHA-256 of the points' JSON")
    points = models.JSONField(default=list)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["server", "workload", "digest"], name="shared_points_unique_per_series")
        ]

    def __str__(self) -> str:
        return f"{len(self.points)} points of series {self.server_id}/{self.workload_id}"


class Regression(models.Model):
    """A step in relative QPS, or in a HW metric per operation, found by ``detection.detect_regressions`` (or
    entered by hand), and its triage.

    Each record is one story (``regressions.stories``) of one microbenchmark, or of
    a whole group (``microbenchmark`` empty; its members' stories are kept,
    ``folded_into`` it). Its natural key (server, workload, microbenchmark or
    group, kind, arrived_in, release view, metric) is unique in the database, so detecting
    again updates the record instead of adding one; the base is not part of it
    because a step's size, level over level, does not depend on which run is the
    base.
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
    level_before = models.FloatField(
        null=True,
        blank=True,
        help_text="Relative QPS (vs the base) before the step; a metric story's measured level per operation",
    )
    level_after = models.FloatField(
        null=True, blank=True, help_text="Relative QPS (vs the base) now; a metric story's measured level per operation"
    )
    change = models.FloatField(null=True, blank=True, help_text="level_after / level_before − 1")
    threshold = models.FloatField(null=True, blank=True, help_text="The gate |change| had to pass (noise, min change)")
    base_run = models.ForeignKey("runs.Run", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    # Values per version (relative QPS, cv, which build was a point) that the detection saw; read it as
    # ``evidence``, which puts back the series' points when they are kept apart (``shared_points``).
    stored_evidence = models.JSONField(default=dict, blank=True, db_column="evidence")
    shared_points = models.ForeignKey(
        SharedPoints, null=True, blank=True, on_delete=models.PROTECT, related_name="regressions"
    )

    # The story (``regressions.stories``) the record tells: every change is measured against the level
    # before the arrival (``level_before``, last seen at ``previous_version``), never against the base.
    metric = models.CharField(max_length=16, default="qps", help_text="The metric the story is told in")
    outlier = models.BooleanField(
        default=False, help_text="A single-version excursion that returned within noise at the next version"
    )
    current_change = models.FloatField(null=True, blank=True, help_text="The latest level against level_before")
    worst_change = models.FloatField(null=True, blank=True, help_text="The furthest level against level_before")
    # [{kind, version, previous_version, level, change, change_vs_before, provisional}]: arrival, further,
    # partial recovery, fixed, given back, returned.
    story_events = models.JSONField(default=list, blank=True)
    outliers = models.JSONField(default=list, blank=True, help_text="Versions set aside as one-version outliers")
    noise = models.FloatField(null=True, blank=True, help_text="σ of one point, relative")
    noise_source = models.CharField(max_length=16, blank=True, help_text="repeats, MAD, default or given")
    noise_rule = models.TextField(blank=True, help_text="The noise rule as applied to this story")
    builds = models.JSONField(default=list, blank=True, help_text="The builds the story's levels rest on")
    releases = models.CharField(
        max_length=16, default="long-term", help_text="The release view it was detected over: long-term or all"
    )
    same_over_every_release = models.BooleanField(
        default=False,
        help_text="A long-term record of a series with no short-term release beside its long-term ones: "
        "the every-release view reads the same points, so it lists this record too",
    )
    # [{metric, version, previous_version, level_before, level_after, ratio, worse, explains, at, text}]
    metric_steps = models.JSONField(default=list, blank=True)
    summary = models.TextField(blank=True, help_text="The story in one line")
    qps_change = models.FloatField(
        null=True,
        blank=True,
        help_text="A metric story: its subject's QPS change over the same versions (a cost per operation that "
        "rose while QPS held is no QPS regression)",
    )
    folded_into = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="folded_members",
        help_text="The group story that stands for this member story in lists",
    )
    no_longer_detected = models.BooleanField(
        default=False, help_text="Detection no longer finds it; kept because people triaged it or were told of it"
    )
    superseded_by = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="supersedes",
        help_text="The story detection tells now in its place: its page is where this one's links lead",
    )
    news = models.BooleanField(
        default=False,
        help_text="Told to subscribers: a new open story that involves a version of the import that found it",
    )
    state = models.CharField(max_length=16, choices=State.choices, default=State.NEW, db_index=True)
    bugs = models.ManyToManyField(Bug, blank=True, related_name="regressions", db_table="reports_regression_bugs")
    detected_at = models.DateTimeField(null=True, blank=True, help_text="Last time detection found it")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "reports_regression"
        ordering = ["server__name", "workload__name", "arrived_in__sort_key", "group", "pk"]
        constraints = [
            # Two partial indexes rather than one: NULLs are distinct in a unique index, so group records
            # (no microbenchmark) need their own key to be unique too, on SQLite and PostgreSQL alike.
            models.UniqueConstraint(
                fields=["server", "workload", "microbenchmark", "kind", "arrived_in", "releases", "metric"],
                condition=models.Q(microbenchmark__isnull=False),
                name="regression_unique_microbenchmark",
            ),
            models.UniqueConstraint(
                fields=["server", "workload", "group", "kind", "arrived_in", "releases", "metric"],
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
        return reverse("regressions:regression", args=[self.pk])

    @property
    def evidence(self) -> Any:
        """The evidence as detection made it: the stored dict, with the series' points in their place (the stored
        ``points`` key holds ``None`` when they are kept in ``shared_points``). One query the first time a record
        with shared points is asked for it; lists that show no points read ``stored_evidence``."""
        stored = self.stored_evidence
        if self.shared_points_id is None or not isinstance(stored, dict) or "points" not in stored:
            return stored
        return {**stored, "points": self.shared_points.points}  # type: ignore[union-attr]

    @evidence.setter
    def evidence(self, value: Any) -> None:
        self.stored_evidence = value
        self.shared_points = None

    @property
    def provisional_release(self) -> str | None:
        """The newest release the default view read only because it is the newest (a short-term one), as
        detection recorded it: what the story says of it is provisional until a newer release arrives."""
        stored = self.stored_evidence
        found = stored.get("provisional_release") if isinstance(stored, dict) else None
        return found if isinstance(found, str) else None

    @property
    def until_provisional(self) -> bool:
        """The story lasts until the provisional newest release (not fixed): "until 9.5.0 (provisional)"."""
        newest = self.provisional_release
        return (
            newest is not None
            and self.fixed_in_id is None
            and self.persists_until is not None
            and (self.persists_until.text == newest)
        )

    @property
    def evidence_record(self) -> Evidence:
        """The evidence as a typed value (``regressions.evidence``): what the story page and the API read."""
        from regressions.evidence import Evidence

        evidence = self.evidence
        return Evidence.from_json(evidence if isinstance(evidence, dict) else None)

    @property
    def figures(self) -> Figures:
        """The story's labelled figures (step at arrival, now, base), as every page, the JSON and alerts print
        them (``regressions.figures``). Lists read it with the base run selected (one query each otherwise)."""
        from regressions.figures import story_figures

        base_run = self.base_run if self.base_run_id else None
        return story_figures(
            metric=self.metric,
            change=self.change,
            current_change=self.current_change,
            level_before=self.level_before,
            level_after=self.level_after,
            arrived_in=self.arrived_in.text,
            previous_version=self.previous_version.text if self.previous_version_id else None,  # type: ignore[union-attr]
            # The newest version of the view while the story is open; a fixed story's "now" is after its fix.
            latest_version=self.persists_until.text if self.persists_until_id and not self.fixed_in_id else None,  # type: ignore[union-attr]
            events=self.story_events,
            base=base_run.name if base_run is not None else "",
        )

    @property
    def backport_gap(self) -> str:
        """ "fixed in 11.4.8, still open in 10.11.14", or "" (from the stored evidence: no points read)."""
        from regressions.evidence import Evidence

        stored = self.stored_evidence if isinstance(self.stored_evidence, dict) else None
        return Evidence.from_json(stored).backport_gap if stored and stored.get("lines") else ""

    @property
    def folded_count(self) -> tuple[int, int] | None:
        """A group story's folded members and its members in all, from the stored evidence (no points read)."""
        from regressions.evidence import Evidence

        stored = Evidence.from_json(self.stored_evidence if isinstance(self.stored_evidence, dict) else None)
        if not stored.members:
            return None
        return len(stored.members), stored.members_total or 0

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
    def is_open_story(self) -> bool:
        """A QPS regression not yet fixed, no outlier, not folded into its group's story, still detected: what
        the list's open tab shows and alerts announce (a HW metric's own story waits on its tab)."""
        return (
            self.metric == "qps"
            and self.kind == self.Kind.REGRESSION
            and self.fixed_in_id is None
            and not self.outlier
            and self.folded_into_id is None
            and not self.no_longer_detected
        )

    @property
    def current_change_text(self) -> str:
        return _pct(self.current_change)

    @property
    def worst_change_text(self) -> str:
        return _pct(self.worst_change)

    @property
    def qps_change_text(self) -> str:
        return _pct(self.qps_change)

    @property
    def change_text(self) -> str:
        """The step as the write-ups say it: ``−12.1%``, ``+44.0%``; a metric's step from about zero as its two
        levels (``regressions.figures``)."""
        from regressions.figures import level_text

        figures = self.figures
        if figures.near_zero and figures.level_before is not None and figures.level_at_arrival is not None:
            return (
                f"{level_text(figures.level_before, self.metric)} → {level_text(figures.level_at_arrival, self.metric)}"
            )
        if self.change is None:
            return "–"
        return f"{self.change:+.1%}".replace("-", "−")


def story_identity(story: Regression) -> str:
    """A story's identity for alerts: its series, subject, metric, direction and arrival. Re-detection that tells
    the same story again (updated in place or superseded by a record of the same identity) is no news."""
    subject = f"mb{story.microbenchmark_id}" if story.microbenchmark_id is not None else f"group:{story.group}"
    return f"{story.server_id}/{story.workload_id}/{subject}/{story.metric}/{story.kind}/{story.arrived_in_id}"


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{value:+.1%}".replace("-", "−")


class TriageEvent(models.Model):
    """The audit log of a regression's triage: who moved it from which state to which, and why."""

    regression = models.ForeignKey(Regression, on_delete=models.CASCADE, related_name="events")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    at = models.DateTimeField(default=timezone.now, db_index=True)
    from_state = models.CharField(max_length=16, choices=Regression.State.choices)
    to_state = models.CharField(max_length=16, choices=Regression.State.choices)
    note = models.TextField(blank=True)

    class Meta:
        db_table = "reports_triageevent"
        ordering = ["at", "pk"]

    def __str__(self) -> str:
        return f"{self.regression_id}: {self.from_state} → {self.to_state}"


def _validate_webhook_url(value: str) -> None:
    problem = alert_message.webhook_url_problem(value)
    if problem:
        raise ValidationError(problem)


def _validate_addresses(value: str) -> None:
    bad = alert_message.bad_addresses(alert_message.split_addresses(value))
    if bad:
        raise ValidationError(f"not an e-mail address: {', '.join(bad)}")


class Subscription(models.Model):
    """Who is told about new open regression stories, where, and of which series.

    A blank DBMS, server or workload means any; a story is sent to every active subscription whose
    filters it matches, once (``Delivery``).
    """

    class Format(models.TextChoices):
        JSON = alert_message.JSON, alert_message.FORMATS[alert_message.JSON]
        SLACK = alert_message.SLACK, alert_message.FORMATS[alert_message.SLACK]

    name = models.CharField(max_length=100, help_text="Who is told, for the list: 'InnoDB team', '#perf channel'")
    webhook_url = models.CharField(
        max_length=500,
        blank=True,
        validators=[_validate_webhook_url],
        help_text="POSTed a JSON body per new story (http or https)",
    )
    webhook_format = models.CharField(max_length=8, choices=Format.choices, default=Format.JSON)
    emails = models.TextField(
        blank=True, validators=[_validate_addresses], help_text="E-mail addresses, separated by commas or lines"
    )
    dbms = models.ForeignKey(
        "runs.Dbms", null=True, blank=True, on_delete=models.CASCADE, related_name="+", help_text="Blank: any"
    )
    server = models.ForeignKey(
        "runs.Server", null=True, blank=True, on_delete=models.CASCADE, related_name="+", help_text="Blank: any"
    )
    workload = models.ForeignKey(
        "runs.Workload", null=True, blank=True, on_delete=models.CASCADE, related_name="+", help_text="Blank: any"
    )
    active = models.BooleanField(default=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name", "pk"]
        constraints = [
            models.CheckConstraint(
                condition=~models.Q(webhook_url="") | ~models.Q(emails=""), name="subscription_has_destination"
            )
        ]

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        if not self.webhook_url.strip() and not self.emails.strip():
            raise ValidationError("give a webhook URL, e-mail addresses, or both")

    @property
    def addresses(self) -> list[str]:
        return alert_message.split_addresses(self.emails)

    @property
    def webhook_shown(self) -> str:
        """The webhook as lists show it: scheme, host and the path's end; the path often holds a secret token."""
        return alert_message.masked_url(self.webhook_url)

    @property
    def series_text(self) -> str:
        parts = [
            f"{label} {value}"
            for label, value in (("DBMS", self.dbms), ("server", self.server), ("workload", self.workload))
            if value is not None
        ]
        return ", ".join(parts) or "every series"


class Delivery(models.Model):
    """One story told to one subscription: at most once, which the unique key and the claim guarantee.

    A sender claims the row by one conditional update (pending or retrying → sending); a row left
    ``sending`` by a worker that died is taken over only once its claim is older than the task's hard time
    limit, so two senders never hold it at once. Each channel (webhook, e-mail) is marked when it went
    out, so a retry after a failure on one never repeats the other.
    """

    class State(models.TextChoices):
        PENDING = "pending", "pending"
        SENDING = "sending", "sending"
        RETRYING = "retrying", "retrying"
        SENT = "sent", "sent"
        FAILED = "failed", "failed (gave up)"

    # Never cascades: what a subscriber was told stays on record whatever happens to the story (detection keeps
    # a story anyone was told of, superseded when it tells it otherwise; an admin's deletion leaves the row).
    story = models.ForeignKey(Regression, null=True, on_delete=models.SET_NULL, related_name="deliveries")
    # The story's identity when it was told (``story_identity``): one alert per identity and subscription.
    identity = models.CharField(max_length=200, default="", blank=True)
    subscription = models.ForeignKey(Subscription, on_delete=models.CASCADE, related_name="deliveries")
    state = models.CharField(max_length=16, choices=State.choices, default=State.PENDING, db_index=True)
    attempts = models.PositiveIntegerField(default=0)
    last_error = models.TextField(blank=True)
    claimed_at = models.DateTimeField(null=True, blank=True)
    # A retry waits for this; a redelivered announcement finding the row earlier leaves it alone.
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    webhook_sent_at = models.DateTimeField(null=True, blank=True)
    email_sent_at = models.DateTimeField(null=True, blank=True)
    sent_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        verbose_name_plural = "deliveries"
        constraints = [
            models.UniqueConstraint(fields=["story", "subscription"], name="delivery_once_per_story_and_subscription"),
            models.UniqueConstraint(
                fields=["identity", "subscription"],
                condition=~models.Q(identity=""),
                name="delivery_once_per_story_identity_and_subscription",
            ),
        ]

    def __str__(self) -> str:
        return f"story {self.story_id} → {self.subscription_id}: {self.state}"
