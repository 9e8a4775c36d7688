"""Runs and their results: the benchmark vocabulary as tables.

Uniqueness lives in the database. A bundle is its content hash, a run the hash
of its result files, a result (run, microbenchmark, concurrency): a retried or
doubled upload cannot store anything twice.
"""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.urls import reverse

import suites
from runs.commits import CommitLinks
from runs.versions import sort_key
from suites import names as suite_names
from suites.names import STARTED_CONTENT, STARTED_FILE_TIME


# Which suite names a row may hold is the suites registry's business: a suite added as its own package needs no
# migration, and code that means one suite names it through the registry (``suites.SYSBENCH.name``). The models,
# declared in every process, name the built-ins by their stored names (``suites.names``) and load no suite.
def validate_suite(value: str) -> None:
    try:
        suites.get(value)
    except LookupError as exc:
        raise ValidationError(str(exc)) from None


def suite_label(name: str) -> str:
    """How people call a suite; a name no registered suite has (its package was removed) is shown as stored."""
    try:
        return suites.get(name).label
    except LookupError:
        return name


class Dbms(models.Model):
    name = models.CharField(max_length=64, unique=True)

    class Meta:
        ordering = ["name"]
        verbose_name = "DBMS"
        verbose_name_plural = "DBMSs"

    def __str__(self) -> str:
        return self.name


class Version(models.Model):
    dbms = models.ForeignKey(Dbms, on_delete=models.PROTECT, related_name="versions")
    text = models.CharField(max_length=64)
    # Fixed-width key so the database orders 8.0.9 < 8.0.10 < 18beta1 < 18.0 (runs.versions).
    sort_key = models.CharField(max_length=128, db_index=True, editable=False)

    class Meta:
        ordering = ["dbms__name", "sort_key"]
        constraints = [models.UniqueConstraint(fields=["dbms", "text"], name="version_unique_per_dbms")]

    def __str__(self) -> str:
        return f"{self.dbms} {self.text}"

    def save(self, *args: object, **kwargs: object) -> None:
        self.sort_key = sort_key(self.text)
        super().save(*args, **kwargs)  # type: ignore[arg-type]


class Build(models.Model):
    """One binary of a version: the build token of the run directory (``my8406v2_rel_o2nofp``)."""

    name = models.CharField(max_length=200, unique=True)
    version = models.ForeignKey(Version, on_delete=models.PROTECT, related_name="builds")
    flavour = models.CharField(max_length=200, blank=True, help_text="What follows the version: rel_o2nofp, v2, …")
    notes = models.TextField(blank=True, help_text="Compile flags, git hash, anything that tells builds apart.")

    class Meta:
        ordering = ["version__sort_key", "name"]

    def __str__(self) -> str:
        return self.name


class Config(models.Model):
    """A DBMS config variant; the same name with other text is another row."""

    name = models.CharField(max_length=200)
    text = models.TextField(blank=True, help_text="my.cnf / conf.diff as found in the bundle")
    text_sha256 = models.CharField(max_length=64, editable=False)

    class Meta:
        ordering = ["name"]
        constraints = [models.UniqueConstraint(fields=["name", "text_sha256"], name="config_unique_name_text")]

    def __str__(self) -> str:
        return self.name


class Server(models.Model):
    name = models.CharField(max_length=200, unique=True)
    cpus = models.PositiveIntegerField(null=True, blank=True, help_text="CPUs the run reported")
    ram_gb = models.PositiveIntegerField(null=True, blank=True)
    storage = models.CharField(max_length=200, blank=True)
    os = models.CharField(max_length=200, blank=True)
    governor = models.CharField(max_length=64, blank=True, help_text="CPU frequency governor")
    notes = models.TextField(blank=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Workload(models.Model):
    """Benchmark parameters that must match for relative QPS to mean anything."""

    suite = models.CharField(max_length=16, default=suite_names.SYSBENCH, validators=[validate_suite])
    name = models.CharField(max_length=200)
    params = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["suite", "name"]
        constraints = [models.UniqueConstraint(fields=["suite", "name"], name="workload_unique_per_suite")]

    def __str__(self) -> str:
        return self.name

    def get_suite_display(self) -> str:
        return suite_label(self.suite)


class Bundle(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued"
        IMPORTING = "importing"
        IMPORTED = "imported"
        FAILED = "failed"

    class Source(models.TextChoices):
        UPLOAD = "upload"
        API = "api"
        COMMAND = "command"
        TRIGGERED = "triggered"

    sha256 = models.CharField(max_length=64, unique=True)
    original_name = models.CharField(max_length=255)
    size = models.BigIntegerField()
    source = models.CharField(max_length=16, choices=Source.choices)
    uploaded_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    uploaded_at = models.DateTimeField(auto_now_add=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED, db_index=True)
    error = models.TextField(blank=True)
    imported_at = models.DateTimeField(null=True, blank=True)
    # What the import saw: files read and ignored, warnings (unknown DBMS, …).
    stats = models.JSONField(default=dict, blank=True)
    # Metadata the uploader set for every run (server, workload, …), applied over the manifest.
    overrides = models.JSONField(default=dict, blank=True)
    # The import's claim: a worker takes a queued bundle by a conditional update that sets ``claim`` and
    # keeps ``heartbeat_at`` fresh while it works; a claim whose heartbeat went stale (its worker died)
    # may be taken over. No row lock is held for the import, so a second delivery returns at once.
    claim = models.CharField(max_length=32, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    # What the import has done so far: phase, files_read, runs_found, runs_stored (see runs.importer.Progress).
    progress = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["-uploaded_at"]

    def __str__(self) -> str:
        return self.original_name

    def get_absolute_url(self) -> str:
        return reverse("runs:bundle", args=[self.pk])


class BundleData(models.Model):
    """The uploaded archive itself, kept apart so listing bundles never loads it.

    Raw vmstat/iostat samples (``sb.vm``/``sb.io``) are not exploded into rows:
    they stay here, compressed as uploaded, so metrics can be re-derived later.
    Keeping the bytes in the database lets any worker on any machine import it.
    """

    bundle = models.OneToOneField(Bundle, on_delete=models.CASCADE, primary_key=True, related_name="data")
    content = models.BinaryField()

    def __str__(self) -> str:
        return f"data of {self.bundle_id}"


class BundleChunk(models.Model):
    """One slice of an uploaded archive, in order (``seq`` from 0); a bundle's chunks put together are its bytes.

    Stored a slice at a time so neither the web process that receives an upload nor
    the worker that imports it ever holds the whole archive (runs.archive_store).
    Bundles stored before chunks existed keep their bytes in BundleData.
    """

    bundle = models.ForeignKey(Bundle, on_delete=models.CASCADE, related_name="chunks")
    seq = models.PositiveIntegerField()
    data = models.BinaryField()

    class Meta:
        ordering = ["bundle", "seq"]
        constraints = [models.UniqueConstraint(fields=["bundle", "seq"], name="bundlechunk_unique_seq")]

    def __str__(self) -> str:
        return f"chunk {self.seq} of {self.bundle_id}"


class Run(models.Model):
    class Status(models.TextChoices):
        COMPLETE = "complete"
        INCOMPLETE = "incomplete"

    name = models.CharField(max_length=255, db_index=True, help_text="Result directory name")
    bundle = models.ForeignKey(Bundle, on_delete=models.CASCADE, related_name="runs")
    path = models.CharField(max_length=1024, help_text="Directory inside the bundle")
    build = models.ForeignKey(Build, on_delete=models.PROTECT, related_name="runs")
    config = models.ForeignKey(Config, on_delete=models.PROTECT, related_name="runs")
    server = models.ForeignKey(Server, on_delete=models.PROTECT, related_name="runs")
    workload = models.ForeignKey(Workload, on_delete=models.PROTECT, related_name="runs")
    pk_mode = models.PositiveSmallIntegerField(default=1, help_text="pk0/pk1 of the run directory name")
    content_sha256 = models.CharField(max_length=64, unique=True, help_text="Hash of the result files")
    cpus = models.PositiveIntegerField(null=True, blank=True)

    class StartedFrom(models.TextChoices):
        CONTENT = STARTED_CONTENT, "a clock time the result files record"
        FILE_TIME = STARTED_FILE_TIME, "the oldest result file's time"

    started_at = models.DateTimeField(null=True, blank=True, help_text="When the run began, as well as is known")
    started_from = models.CharField(
        max_length=16, choices=StartedFrom.choices, blank=True, help_text="Where started_at came from"
    )
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.COMPLETE)
    load_seconds = models.FloatField(null=True, blank=True)
    load_inserts_per_s = models.FloatField(null=True, blank=True)
    # test label -> sysbench command line (passwords redacted); dop-independent parts only.
    commands = models.JSONField(default=dict, blank=True)
    sysbench_version = models.CharField(max_length=64, blank=True)
    # Which formula the run directory's own scan values (sb.r.qps.scan) used: "spec" or "tps×rows/1000" (the
    # scripts' formula of mid-March to mid-April 2025); blank when it reported none. Result.qps is always the spec's.
    scan_formula = models.CharField(max_length=16, blank=True)
    # Imported from the summary tables the scripts print (qps.abs, o.met), not from its result directory: QPS as
    # the tables rounded it, HW metrics if an o.met was beside them, and no latencies, command lines or settings.
    from_summary = models.BooleanField(default=False)
    # Of a run from a summary: where its concurrency, server and workload came from ("concurrency" → "the table's
    # file name (dop40)", …), since the tables themselves carry none of them.
    summary_sources = models.JSONField(default=dict, blank=True)
    # Of a run from a summary: which of its archive's tables it is a column of — what tells that table apart from
    # the others (its name's words, ``pgo.prep1``) and its concurrency (``in.dop8``, ``dop1``). The author reuses
    # run names in every table of an archive: two runs with one name in two tables are two experiments.
    summary_table = models.CharField(max_length=255, blank=True, db_index=True)
    # Of a run from a summary: how its table printed it — {"decimals": {test label: decimals printed, where not
    # 0}, "pre_rows": the table has the .pre tests' rows} — so exports print it as the author did.
    summary_layout = models.JSONField(default=dict, blank=True)
    warnings = models.JSONField(default=list, blank=True)
    notes = models.TextField(blank=True, help_text="What the result files say of the run in words")
    # The code the build was made from, as CI says (manifest, upload form or API): what the CI verdict compares
    # (this run against the newest run of the base branch) and what orders builds of one version (nightlies).
    commit = models.CharField(max_length=64, blank=True, help_text="git commit id the build was made from")
    branch = models.CharField(max_length=200, blank=True)
    pull_request = models.PositiveIntegerField(null=True, blank=True, help_text="Pull (merge) request number")
    repository = models.CharField(max_length=200, blank=True, help_text="owner/name or the repository's URL")
    commit_time = models.DateTimeField(null=True, blank=True, help_text="When the commit was made")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["build__version__sort_key", "name"]
        indexes = [
            models.Index(fields=["server", "workload"], name="run_server_workload"),
            # The CI verdict's look-up of a branch's newest run in a series.
            models.Index(fields=["server", "workload", "branch", "commit_time"], name="run_series_branch"),
        ]

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        return reverse("runs:run", args=[self.pk])

    @property
    def commit_links(self) -> CommitLinks:
        return CommitLinks(self.repository, self.commit, self.pull_request)

    @property
    def has_commit(self) -> bool:
        return bool(self.commit or self.branch or self.pull_request or self.repository)

    @property
    def summary_source_items(self) -> list[tuple[str, str, str]]:
        """(what, its value, where it came from) of a run from a summary, in the page's order."""
        values = {"concurrency": "", "server": self.server.name, "workload": self.workload.name}
        return [(what, values[what], self.summary_sources[what]) for what in values if what in self.summary_sources]

    @property
    def scan_formula_text(self) -> str:
        """What the run's page says of the formula its own scan values used (sysbench run directories)."""
        from suites.sysbench.parse import SCAN_SPEC, SCAN_TPS_ROWS, SCAN_UNKNOWN

        if self.scan_formula == SCAN_UNKNOWN:
            return (
                "unknown: imported before benchdash recorded it; manage.py fill_scan_formula decides it from the "
                "stored archive. Read as the spec's meanwhile"
            )
        if self.scan_formula == SCAN_TPS_ROWS:
            return "transactions/s × table size / 1000 (the scripts' formula of mid-March to mid-April 2025)"
        if self.scan_formula == SCAN_SPEC:
            return "the spec's, (table size / 1000) / average latency"
        return "none: the run directory reported no scan value of its own (its sb.o files give the spec's)"

    @property
    def start_recorded(self) -> bool:
        """Whether ``started_at`` is a start the results themselves record rather than the oldest result file's
        time, which stands in where the files carry no clock time."""
        return self.started_from == self.StartedFrom.CONTENT

    @property
    def start_label(self) -> str:
        return "Started" if self.start_recorded else "File time"

    @property
    def start_origin(self) -> str:
        """Where ``started_at`` came from, in words for a page or a write-up."""
        if self.start_recorded:
            if self.workload.suite == suite_names.DBBENCH:
                return "recorded in the results: the earliest date column of its db_bench tests"
            return "recorded by the run scripts' ps sampler when the load (or the first test) began"
        return "oldest result file; the run started about then if the files were not copied since"


class Microbenchmark(models.Model):
    suite = models.CharField(max_length=16, default=suite_names.SYSBENCH, validators=[validate_suite])
    test = models.CharField(max_length=200, help_text="point-query, point-query.pre, scan.warm, …")
    range_size = models.PositiveIntegerField(null=True, blank=True)
    is_warmup = models.BooleanField(default=False)

    class Meta:
        ordering = ["suite", "test", "range_size"]
        constraints = [
            models.UniqueConstraint(fields=["suite", "test", "range_size"], name="microbenchmark_unique"),
            # NULLs never collide in a unique index: tests without a range (db_bench) need their own.
            models.UniqueConstraint(
                fields=["suite", "test"],
                condition=models.Q(range_size__isnull=True),
                name="microbenchmark_unique_no_range",
            ),
        ]

    def __str__(self) -> str:
        return self.label

    def get_suite_display(self) -> str:
        return suite_label(self.suite)

    @property
    def label(self) -> str:
        """The reference tables' label: ``point-query_range=100``."""
        return f"{self.test}_range={self.range_size}" if self.range_size is not None else self.test


class Result(models.Model):
    """One microbenchmark in one run at one concurrency."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="results")
    microbenchmark = models.ForeignKey(Microbenchmark, on_delete=models.PROTECT, related_name="results")
    dop = models.PositiveIntegerField(help_text="Concurrency (client threads)")
    qps = models.FloatField(help_text="Queries/s; for scan, thousands of rows scanned/s")
    tps = models.FloatField(null=True, blank=True)
    queries = models.BigIntegerField(null=True, blank=True)
    transactions = models.BigIntegerField(null=True, blank=True)
    errors_per_s = models.FloatField(null=True, blank=True)
    reconnects_per_s = models.FloatField(null=True, blank=True)
    elapsed_s = models.FloatField(null=True, blank=True)
    events = models.BigIntegerField(null=True, blank=True)
    threads = models.PositiveIntegerField(null=True, blank=True)
    lat_min_ms = models.FloatField(null=True, blank=True)
    lat_avg_ms = models.FloatField(null=True, blank=True)
    lat_max_ms = models.FloatField(null=True, blank=True)
    lat_pct = models.FloatField(null=True, blank=True, help_text="Which percentile lat_pct_ms is (95, 99, …)")
    lat_pct_ms = models.FloatField(null=True, blank=True)
    # HW efficiency from sb.met (iostat and vmstat normalised by the operation rate).
    rps = models.FloatField(null=True, blank=True)
    rmbps = models.FloatField(null=True, blank=True)
    wps = models.FloatField(null=True, blank=True)
    wmbps = models.FloatField(null=True, blank=True)
    r_o = models.FloatField(null=True, blank=True)
    rkb_o = models.FloatField(null=True, blank=True)
    wkb_o = models.FloatField(null=True, blank=True)
    o_s = models.FloatField(null=True, blank=True)
    cs_s = models.FloatField(null=True, blank=True)
    cpu_s = models.FloatField(null=True, blank=True)
    cs_o = models.FloatField(null=True, blank=True)
    cpu_o = models.FloatField(null=True, blank=True)
    # Suite-specific numbers beyond the common ones (Insert Benchmark and db_bench columns, by name).
    extra = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["run", "microbenchmark", "dop"]
        constraints = [
            models.UniqueConstraint(fields=["run", "microbenchmark", "dop"], name="result_unique_per_run"),
        ]

    def __str__(self) -> str:
        return f"{self.run} {self.microbenchmark} dop={self.dop}"


class RunFile(models.Model):
    """Configuration and environment files of a run, as text (my.cnf, conf.diff, variables, …)."""

    class Kind(models.TextChoices):
        CONFIG = "config"
        VARIABLES = "variables"
        PG_SETTINGS = "pg_settings"
        HUGEPAGES = "hugepages"
        OTHER = "other"

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="files")
    name = models.CharField(max_length=255)
    kind = models.CharField(max_length=16, choices=Kind.choices)
    text = models.TextField()

    class Meta:
        ordering = ["run", "name"]
        constraints = [models.UniqueConstraint(fields=["run", "name"], name="runfile_unique_per_run")]

    def __str__(self) -> str:
        return f"{self.run} {self.name}"


class SeriesDerived(models.Model):
    """How far the apps built on runs have brought one series' derived data (comparisons, summaries, regression
    stories) up to date: ``data_as_of`` is when the last complete refresh began, so every bundle imported before
    then is in it. The CI verdict waits for this to pass a bundle's import before it speaks of new stories."""

    server = models.ForeignKey(Server, on_delete=models.CASCADE, related_name="+")
    workload = models.ForeignKey(Workload, on_delete=models.CASCADE, related_name="+")
    data_as_of = models.DateTimeField()
    finished_at = models.DateTimeField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["server", "workload"], name="series_derived_unique")]

    def __str__(self) -> str:
        return f"series {self.server_id}/{self.workload_id} as of {self.data_as_of:%Y-%m-%d %H:%M:%S}"
