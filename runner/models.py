"""Benchmark runs that benchdash itself starts: where (targets), what (run parameters), when (schedules).

A triggered run ends as an ordinary imported bundle (``Bundle.Source.TRIGGERED``),
so everything downstream (runs, comparisons, exports) treats it like an upload.
State changes are conditional updates on the row (``filter(state=…).update(…)``),
so a duplicate task delivery or a late cancel can never run or import twice.
"""

from __future__ import annotations

import json
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator, RegexValidator
from django.db import models, transaction
from django.urls import reverse

from runner.fields import EncryptedTextField

# The runner itself (sysbench's command lines, the allowed networks) is imported where a run or a connection is
# made: the models are declared when Django starts, which every process does.
if TYPE_CHECKING:
    from django_celery_beat.models import PeriodicTask

    from runner import sysbench_runner

# Run-directory tokens: no dots (they separate build from config) and nothing a path could abuse.
TOKEN = RegexValidator(
    r"^[A-Za-z0-9_-]+$", "Letters, digits, _ and - only (it becomes part of the run directory name)."
)


class Target(models.Model):
    """A database server benchmarks run against, and how its runs are named."""

    class Kind(models.TextChoices):
        MYSQL = "mysql", "MySQL"
        MARIADB = "mariadb", "MariaDB"
        POSTGRES = "postgres", "PostgreSQL"

    name = models.CharField(max_length=100, unique=True)
    kind = models.CharField("DBMS", max_length=16, choices=Kind.choices)
    host = models.CharField(max_length=255)
    port = models.PositiveIntegerField(validators=[MinValueValidator(1), MaxValueValidator(65535)])
    user = models.CharField(max_length=128)
    # Write-only: forms never render it back, the admin hides it, tasks get only the target's id.
    # Encrypted at rest (runner.fields) with BENCHDASH_ENCRYPTION_KEY, or SECRET_KEY when that is unset.
    password = EncryptedTextField(blank=True, help_text="Stored encrypted; never shown back")
    # The host, port, user and database the password was entered for: it is never sent anywhere else,
    # so changing any of them (by form, admin, shell or a bulk update) leaves it unusable until entered again.
    password_bound_to = models.CharField(max_length=1000, blank=True, editable=False)
    database = models.CharField(max_length=128, help_text="An existing database; sysbench creates its tables there.")
    build_label = models.CharField(
        max_length=100,
        validators=[TOKEN],
        help_text="The run directory's build token, e.g. ma101119_rel for MariaDB 10.11.19.",
    )
    config_label = models.CharField(
        max_length=100, validators=[TOKEN], help_text="The run directory's config token, e.g. z12a_c8r32."
    )
    server_name = models.CharField(max_length=200, help_text="The server the results are filed under.")
    sample_host_metrics = models.BooleanField(
        default=True,
        help_text="Record vmstat/iostat on the worker's host: meaningful when the worker runs on the database server.",
    )
    storage_devices = models.CharField(
        max_length=200, blank=True, help_text="Devices iostat sums, comma separated (blank: every physical disk)."
    )
    # What a settings experiment (runner.experiments) may change on the server: a MySQL or MariaDB target's
    # dynamic global variables, set for the length of the run and restored after it. Off: the target takes none.
    settings_experiments = models.BooleanField(
        "allow settings experiments",
        default=False,
        help_text=(
            "MySQL/MariaDB: a settings experiment may SET GLOBAL the server's dynamic variables for the length of "
            "its run (restored afterwards); the user needs the privilege to. PostgreSQL targets take none."
        ),
    )
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def save(self, *args: Any, **kwargs: Any) -> None:
        if not self.password:
            self.password_bound_to = ""
        elif self.pk is None or getattr(self, "_password_entered", False):
            self.password_bound_to = endpoint_key(self.host, self.port, self.user, self.database)
        update_fields = kwargs.get("update_fields")
        if update_fields is not None and "password" in update_fields:
            kwargs["update_fields"] = {*update_fields, "password_bound_to"}
        super().save(*args, **kwargs)
        self._password_entered = False

    @property
    def run_dir_name(self) -> str:
        return f"x.{self.build_label}.{self.config_label}.pk1"

    @property
    def devices(self) -> tuple[str, ...]:
        return tuple(d.strip() for d in self.storage_devices.split(",") if d.strip())

    def set_password(self, password: str) -> None:
        """A password entered for the target as it is now: saving binds it to this host, port, user and database."""
        self.password = password
        self._password_entered = True

    def stored_password_for(self, host: str, port: int, user: str, database: str) -> str | None:
        """The stored password when it may be sent to this endpoint ("" when none is stored), else None."""
        if not self.password:
            return ""
        wanted = endpoint_key(host, port, user, database)
        current = endpoint_key(self.host, self.port, self.user, self.database)
        return self.password if self.password_bound_to == wanted == current else None

    def connection(self) -> sysbench_runner.Connection:
        """How to reach the target: its host checked against the allowed networks, its password only where it
        was entered for."""
        from runner import network, sysbench_runner

        password = self.stored_password_for(self.host, self.port, self.user, self.database)
        if password is None:
            raise sysbench_runner.RunnerError(
                "the target's host, port, user or database changed after its password was entered: "
                "edit the target and enter the password again"
            )
        return network.checked_connection(
            kind=self.kind,
            host=self.host,
            port=self.port,
            user=self.user,
            database=self.database,
            password=password,
        )


def endpoint_key(host: str, port: int | str, user: str, database: str) -> str:
    # Host names are case-insensitive; users and databases may not be.
    return json.dumps([host.strip().lower().rstrip("."), int(port), user, database])


HOST_QUEUE_PREFIX = "bench-host-"


class BenchmarkHost(models.Model):
    """A machine kept for benchmarks: its worker consumes only the host's own queue, one run at a time, so no
    import, refresh or second benchmark ever shares the machine with a measurement.

    Started there with ``celery -A benchdash worker -Q <queue> --concurrency 1`` (``worker_command``); the
    worker says it is alive by ``last_heartbeat_at`` (runner.hosts), and a host silent for longer than
    ``BENCHDASH_HOST_SILENT_SECONDS`` has its running run failed and queued again, once.
    """

    name = models.CharField(max_length=100, unique=True, validators=[TOKEN], help_text="Letters, digits, _ and -")
    cpus = models.PositiveIntegerField(null=True, blank=True)
    ram_gb = models.PositiveIntegerField(null=True, blank=True)
    storage = models.CharField(max_length=200, blank=True)
    os = models.CharField(max_length=200, blank=True)
    cpu_model = models.CharField("CPU model", max_length=200, blank=True)
    kernel = models.CharField(max_length=200, blank=True)
    notes = models.TextField(blank=True, help_text="Anything else about the hardware: governor, BIOS settings, …")
    # Set by ``manage.py register_host``, run on the machine: the facts above were read from it then.
    registered_at = models.DateTimeField(null=True, blank=True, help_text="When the host last registered itself")
    targets = models.ManyToManyField(Target, blank=True, related_name="hosts", help_text="The targets it can reach")
    last_heartbeat_at = models.DateTimeField(null=True, blank=True)
    worker = models.CharField(max_length=255, blank=True, help_text="The worker that sent the last heartbeat")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        return reverse("runner:host", args=[self.pk])

    @property
    def queue(self) -> str:
        return f"{HOST_QUEUE_PREFIX}{self.name}"

    @property
    def worker_command(self) -> str:
        return f"celery -A benchdash worker -Q {self.queue} --concurrency 1 -n {self.name}@%h"


class RunParameters(models.Model):
    """What a run measures; shared by one-off runs and schedules."""

    microbenchmarks = models.JSONField(default=list, help_text="Labels such as point-query_range=100, in any order")
    tables = models.PositiveIntegerField(default=1, validators=[MinValueValidator(1), MaxValueValidator(1000)])
    table_size = models.PositiveBigIntegerField("rows per table", default=1_000_000, validators=[MinValueValidator(1)])
    threads = models.JSONField(default=list, help_text="Concurrencies, each test runs at each: [1, 4, 8]")
    seconds = models.PositiveIntegerField("seconds per test", default=60, validators=[MinValueValidator(1)])
    warmup_seconds = models.PositiveIntegerField(default=0)

    class Meta:
        abstract = True

    def parameters(self) -> sysbench_runner.Parameters:
        from runner import sysbench_runner

        return sysbench_runner.Parameters(
            microbenchmarks=tuple(self.microbenchmarks),
            tables=self.tables,
            table_size=self.table_size,
            threads=tuple(int(t) for t in self.threads),
            seconds=self.seconds,
            warmup_seconds=self.warmup_seconds,
        )

    def parameter_fields(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in PARAMETER_FIELDS}


PARAMETER_FIELDS = ("microbenchmarks", "tables", "table_size", "threads", "seconds", "warmup_seconds")


class BenchmarkRun(RunParameters):
    class State(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        CANCELLING = "cancelling"
        CANCELLED = "cancelled"
        FAILED = "failed"
        # A host's run: its results are stored and their import queued for the general workers.
        IMPORTING = "importing"
        IMPORTED = "imported"

    ACTIVE = (State.QUEUED, State.RUNNING, State.CANCELLING)

    target = models.ForeignKey(Target, on_delete=models.PROTECT, related_name="benchmark_runs")
    host = models.ForeignKey(
        BenchmarkHost,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="benchmark_runs",
        help_text="The benchmark host whose worker runs it; none: any general worker",
    )
    worker = models.CharField(max_length=255, blank=True, help_text="The worker that ran it")
    # One of the repeats a benchmark host runs to confirm a story before anyone is told (runner.confirm).
    confirmation = models.ForeignKey(
        "Confirmation", null=True, blank=True, on_delete=models.SET_NULL, related_name="repeats"
    )
    # A re-run of a new version with an old version's settings (runner.experiments): off the main line.
    settings_experiment = models.ForeignKey(
        "SettingsExperiment", null=True, blank=True, on_delete=models.SET_NULL, related_name="runs"
    )
    # A run whose host went silent is failed and queued again once, as this run.
    requeued_as = models.OneToOneField(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="requeued_from"
    )
    schedule = models.ForeignKey(
        "Schedule", null=True, blank=True, on_delete=models.SET_NULL, related_name="benchmark_runs"
    )
    # The day a schedule fired, so a redelivered nightly task finds its run instead of starting another.
    schedule_slot = models.DateField(null=True, blank=True)
    state = models.CharField(max_length=16, choices=State.choices, default=State.QUEUED, db_index=True)
    progress = models.JSONField(default=dict, blank=True)
    base_run = models.ForeignKey(
        "runs.Run",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="Compare the imported run against this one and record its red flags.",
    )
    bundle = models.ForeignKey("runs.Bundle", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    red_flags = models.JSONField(default=list, blank=True)
    comparison_note = models.TextField(blank=True)
    error = models.TextField(blank=True)
    celery_task_id = models.CharField(max_length=255, blank=True)
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["schedule", "schedule_slot"], name="benchmark_run_once_per_schedule_slot"),
        ]

    def __str__(self) -> str:
        return f"{self.target} #{self.pk}"

    def get_absolute_url(self) -> str:
        return reverse("runner:benchmark", args=[self.pk])

    @property
    def active(self) -> bool:
        return self.state in self.ACTIVE

    def time_limits(self) -> tuple[int, int]:
        """(soft, hard) seconds for the task: twice the estimate, and at least the project's defaults."""
        from runner import sysbench_runner

        estimate = sysbench_runner.estimate_seconds(self.parameters())
        soft = max(settings.CELERY_TASK_SOFT_TIME_LIMIT, 2 * estimate)
        return soft, soft + 300

    def lost_after(self) -> timedelta:
        """A run still 'running' this long after it started has no live worker any more."""
        return timedelta(seconds=self.time_limits()[1] + 600)


class Confirmation(models.Model):
    """A story opened by a host's run, measured again there before anyone is told (runner.confirm): its
    microbenchmarks run ``repeats`` times; each repeat is judged against the previous version's stored QPS
    with the story's own gate. The repeats are imported as ordinary runs, so they feed the noise model."""

    class State(models.TextChoices):
        PENDING = "pending"
        CONFIRMED = "confirmed"
        DISMISSED = "dismissed", "dismissed as noise"

    story_id = models.PositiveIntegerField(unique=True, help_text="The regression story it confirms")
    host = models.ForeignKey(BenchmarkHost, on_delete=models.PROTECT, related_name="confirmations")
    target = models.ForeignKey(Target, on_delete=models.PROTECT, related_name="+")
    # The previous version's target on the same host, when it has one: its repeats alternate with the new
    # version's, and each new repeat is judged against the one run just before it.
    previous_target = models.ForeignKey(Target, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    kind = models.CharField(max_length=16, default="regression")
    labels = models.JSONField(default=list)
    server_id = models.PositiveIntegerField()
    workload_id = models.PositiveIntegerField()
    previous_version_id = models.PositiveIntegerField(null=True, blank=True)
    threshold = models.FloatField()
    noise = models.FloatField(null=True, blank=True)
    state = models.CharField(max_length=16, choices=State.choices, default=State.PENDING)
    below = models.PositiveIntegerField(default=0, help_text="Repeats beyond the gate in the story's direction")
    text = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"confirmation of story {self.story_id}: {self.state}"


class SettingsExperiment(models.Model):
    """ "Settings or code?": the new version of a story (or of a run diff) measured again on the same host with the
    old version's server settings applied, splitting the change into what the changed defaults did and what the
    code did (runner.experiments). Its run is stored off the main line (``runs.branches``): no point of the
    series, no new version, no story of its own."""

    story_id = models.PositiveIntegerField(null=True, blank=True, help_text="The regression story it splits")
    old_run = models.ForeignKey("runs.Run", on_delete=models.CASCADE, related_name="+")
    new_run = models.ForeignKey("runs.Run", on_delete=models.CASCADE, related_name="+")
    target = models.ForeignKey(Target, on_delete=models.PROTECT, related_name="+")
    host = models.ForeignKey(BenchmarkHost, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    labels = models.JSONField(default=list)
    # [{name, old, new}]: the old version's values to apply, as the run diff found them.
    wanted = models.JSONField(default=list)
    # [{name, old, new, reason}]: differences no target can take (known before the run).
    refused = models.JSONField(default=list)
    # [{name, value, was, now}] / [{name, value, reason}]: what the run set (read back), and what the server refused.
    applied = models.JSONField(default=list)
    not_applied = models.JSONField(default=list)
    restore_error = models.TextField(blank=True)
    # Whether the values from before were put back: a run whose worker died did not, and the run queued again in
    # its place must put back those values, not the experiment's it finds on the server.
    restored = models.BooleanField(default=False)
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"settings experiment {self.pk}"


class BenchmarkOutput(models.Model):
    """What a cancelled or failed run wrote (a .tar.gz), kept apart so listing runs never loads it.

    A complete run's files live in its bundle instead.
    """

    benchmark_run = models.OneToOneField(
        BenchmarkRun, on_delete=models.CASCADE, primary_key=True, related_name="partial_output"
    )
    name = models.CharField(max_length=255)
    content = models.BinaryField()

    def __str__(self) -> str:
        return self.name


class Schedule(RunParameters):
    """A nightly run of a target, compared against a base run every time."""

    name = models.CharField(max_length=100, unique=True)
    target = models.ForeignKey(Target, on_delete=models.PROTECT, related_name="schedules")
    hour = models.PositiveSmallIntegerField(default=2, validators=[MaxValueValidator(23)], help_text="UTC")
    minute = models.PositiveSmallIntegerField(default=0, validators=[MaxValueValidator(59)])
    enabled = models.BooleanField(default=True)
    base_run = models.ForeignKey(
        "runs.Run",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="Each night's run is compared against this run; its red flags are recorded.",
    )
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    # The schedule's beat entry is found by its name, not by a link to django_celery_beat's table: a model linking
    # to that app would need it in every process, and its models bring Celery's app and every time zone with them
    # (django_celery_beat is left out of the commands that never read beat's schedules: benchdash.settings).
    @property
    def periodic_task_name(self) -> str:
        return periodic_task_name(self.pk)

    @property
    def periodic_task(self) -> PeriodicTask | None:
        """The beat entry that fires this schedule's runs (None until ``sync_periodic_task``)."""
        from django_celery_beat.models import PeriodicTask

        found: PeriodicTask | None = PeriodicTask.objects.filter(name=self.periodic_task_name).first()
        return found

    def sync_periodic_task(self) -> None:
        """Create or update the beat entry that fires ``run_schedule`` for this schedule."""
        from django_celery_beat.models import CrontabSchedule, PeriodicTask

        with transaction.atomic():
            crontab, _ = CrontabSchedule.objects.get_or_create(
                minute=str(self.minute),
                hour=str(self.hour),
                day_of_week="*",
                day_of_month="*",
                month_of_year="*",
                timezone=settings.CELERY_TIMEZONE,
            )
            PeriodicTask.objects.update_or_create(
                name=self.periodic_task_name,
                defaults={
                    "task": "runner.tasks.run_schedule",
                    "crontab": crontab,
                    "args": json.dumps([self.pk]),
                    "enabled": self.enabled,
                    "description": f"Nightly benchmark run of {self.target} ({self.name})",
                },
            )

    def delete(self, *args: Any, **kwargs: Any) -> tuple[int, dict[str, int]]:
        with transaction.atomic():
            from django_celery_beat.models import PeriodicTask

            PeriodicTask.objects.filter(name=self.periodic_task_name).delete()
            return super().delete(*args, **kwargs)


def periodic_task_name(schedule_id: int | None) -> str:
    """The name of a schedule's beat entry (django_celery_beat's ``PeriodicTask``, whose names are unique)."""
    return f"benchdash schedule {schedule_id}"
