"""One settings file, driven by environment variables.

With nothing set, benchdash runs in demo mode: SQLite in ``var/``, Celery
tasks executed eagerly in the web process, a development secret key. Setting
``DATABASE_URL`` switches to PostgreSQL (or any database django-environ
understands) and ``REDIS_URL`` to a real Celery broker. ``BENCHDASH_MODE=production``
turns the safety checks on: no DEBUG, a real SECRET_KEY and ALLOWED_HOSTS.
"""

from __future__ import annotations

import ipaddress
import re
import sys
from datetime import timedelta
from pathlib import Path

import environ
from django.core.exceptions import ImproperlyConfigured

from benchdash.deployment import DEMO_SECRET_KEY, Deployment, banner, deployment_warnings, refusals
from benchdash.logs import logging_config

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env()

MODE = env.str("BENCHDASH_MODE", default="demo")
if MODE not in {"demo", "production"}:
    raise ImproperlyConfigured(f"BENCHDASH_MODE must be 'demo' or 'production', not {MODE!r}")
PRODUCTION = MODE == "production"

DEBUG = env.bool("DEBUG", default=not PRODUCTION)
SECRET_KEY = env.str("SECRET_KEY", default="")
ALLOWED_HOSTS = env.list(
    "ALLOWED_HOSTS", default=[] if PRODUCTION else ["127.0.0.1", "localhost", "[::1]", "testserver"]
)

# Production refuses to start without a real key and hosts, or with DEBUG on (benchdash/deployment.py).
if _refused := refusals(production=PRODUCTION, debug=DEBUG, secret_key=SECRET_KEY, allowed_hosts=tuple(ALLOWED_HOSTS)):
    raise ImproperlyConfigured(_refused[0])
if not PRODUCTION and not SECRET_KEY:
    # Demo mode only: a fixed key is fine on a laptop, never in production (benchdash/deployment.py refuses it).
    SECRET_KEY = DEMO_SECRET_KEY

# Key for secrets stored in the database (target passwords); SECRET_KEY when unset. BENCHDASH_ENCRYPTION_KEYS
# (comma-separated) rotates them: the first encrypts, every one decrypts (runner.fields, reencrypt_secrets).
BENCHDASH_ENCRYPTION_KEY = env.str("BENCHDASH_ENCRYPTION_KEY", default="")
BENCHDASH_ENCRYPTION_KEYS = env.list("BENCHDASH_ENCRYPTION_KEYS", default=[])

# Networks benchmark targets may be in (comma-separated CIDRs); link-local and metadata addresses never are.
BENCHDASH_TARGET_NETWORKS = env.list("BENCHDASH_TARGET_NETWORKS", default=["127.0.0.0/8", "::1/128"])

# Where the demo database, uploaded bundles and other local state live.
VAR_DIR = Path(env.str("BENCHDASH_VAR_DIR", default=str(BASE_DIR / "var")))

INSTALLED_APPS = [
    # Django's admin, its ModelAdmins imported with the URL configuration, not at every start (benchdash.adminsite).
    "benchdash.adminsite.AdminConfig",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "django_htmx",
    "template_partials",
    "django_celery_beat",
    # django-ninja's static files and templates (the API docs page loads Swagger UI from us, not from a CDN),
    # without importing ninja when Django starts (benchdash.apidocs).
    "benchdash.apidocs.NinjaFilesConfig",
    "axes",
    "accounts",
    "runs",
    "reports",
    "regressions",
    "runner",
]

# django_celery_beat (beat's schedules in the database, with their admin) is left out of the project's commands
# that never read or write them: its models import Celery's app and build every time zone, most of a short
# command's start (issue 34). Every other process has it: the web, the worker, beat, migrations, the shell, the
# tests. A schedule finds its beat entry by name, so no model of ours links to its tables (runner.models). None of
# these may load the migrations (our runner's first one depends on beat's): create_admin, a createsuperuser, checks
# them before it runs, so it keeps the app.
COMMANDS_WITHOUT_BEAT = frozenset(
    {
        "compare",
        "create_token",
        "detect_regressions",
        "fill_scan_formula",
        "import_bundle",
        "rebuild_series_summaries",
        "reencrypt_secrets",
        "register_host",
    }
)
_COMMAND = sys.argv[1] if len(sys.argv) > 1 and Path(sys.argv[0]).name in {"manage.py", "django-admin"} else ""
if _COMMAND in COMMANDS_WITHOUT_BEAT:
    INSTALLED_APPS.remove("django_celery_beat")

MIDDLEWARE = [
    "benchdash.logs.RequestIdMiddleware",  # first: every later log line of the request carries its id
    "benchdash.metrics.MetricsMiddleware",  # counts and times every answer, refusals included (/metrics)
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "benchdash.middleware.RejectNulMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # Knows the user, and runs before any middleware's process_view reads the body (CSRF's reads POST).
    "runs.uploadlimit.UploadLimitMiddleware",
    "benchdash.middleware.PrivateUnlessPublicMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "benchdash.middleware.ContentSecurityPolicyMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # Last, as django-axes asks: turns a locked-out login attempt into the lockout page.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "benchdash.urls"
WSGI_APPLICATION = "benchdash.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "accounts.permissions.abilities",
            ],
            "builtins": ["template_partials.templatetags.partials"],
            "libraries": {"paths": "benchdash.pathtags"},
        },
    }
]

DATABASES = {
    "default": env.db("DATABASE_URL", default=f"sqlite:///{VAR_DIR / 'benchdash.sqlite3'}"),
}
DATABASES["default"].setdefault("ATOMIC_REQUESTS", False)
# The password may come on its own, so a password with URL-special characters (/, @, :) need not be quoted in
# DATABASE_URL; docker-compose.yml passes POSTGRES_PASSWORD this way.
if env.str("DATABASE_PASSWORD", default=""):
    DATABASES["default"]["PASSWORD"] = env.str("DATABASE_PASSWORD")
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # Reuse connections between requests; health checks drop ones the server closed.
    DATABASES["default"]["CONN_MAX_AGE"] = env.int("CONN_MAX_AGE", default=60)
    DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
    # A server that does not answer the connection handshake fails it instead of holding a request.
    DATABASES["default"].setdefault("OPTIONS", {}).setdefault(
        "connect_timeout", env.int("BENCHDASH_DB_CONNECT_TIMEOUT", default=5)
    )
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
# collectstatic's output (the image builds it in /app/staticfiles); a test builds into a folder of its own.
STATIC_ROOT = Path(env.str("BENCHDASH_STATIC_ROOT", default=str(BASE_DIR / "staticfiles")))
STATICFILES_DIRS = [BASE_DIR / "static"]
STATICFILES_FINDERS = [
    "django.contrib.staticfiles.finders.FileSystemFinder",
    "django.contrib.staticfiles.finders.AppDirectoriesFinder",
    # plotly.min.js comes from the plotly package itself, never from a CDN.
    "reports.staticfiles.PlotlyFinder",
]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"
        if PRODUCTION
        else "django.contrib.staticfiles.storage.StaticFilesStorage"
    },
}

# Outside production whitenoise serves straight from the finders (plotly.js included), so the
# demo and the tests need no collectstatic step.
WHITENOISE_USE_FINDERS = not PRODUCTION
WHITENOISE_AUTOREFRESH = not PRODUCTION

LOGIN_URL = "account:login"
LOGIN_REDIRECT_URL = "reports:home"
LOGOUT_REDIRECT_URL = "reports:home"

# Login throttling (django-axes): after AXES_FAILURE_LIMIT wrong passwords for one username from one
# address, that pair is refused for AXES_COOLOFF_TIME, even with the right password; other users and
# addresses are unaffected. Failures are kept in the database (unlock early in the admin's "Access
# attempts"). API tokens never pass through here: a 256-bit token cannot be guessed.
AUTHENTICATION_BACKENDS = ["accounts.permissions.LoginThrottleBackend", "django.contrib.auth.backends.ModelBackend"]
AXES_FAILURE_LIMIT = env.int("BENCHDASH_LOGIN_FAILURE_LIMIT", default=5)
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_COOLOFF_TIME = timedelta(minutes=15)
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_CALLABLE = "accounts.views.locked_out"
# How many reverse proxies stand in front of the site (0: clients connect directly). benchdash.clientip
# reads the client's address from X-Forwarded-For only that many hops deep, so nobody can forge it.
BENCHDASH_TRUSTED_PROXIES = env.int("BENCHDASH_TRUSTED_PROXIES", default=0)
AXES_CLIENT_IP_CALLABLE = "benchdash.clientip.client_address"
# Anyone may read the dashboards (the demo, a team's internal site); off, every page needs a login.
# Changing data always needs a role (accounts.permissions). Private unless said otherwise in production.
BENCHDASH_PUBLIC_BROWSING = env.bool("BENCHDASH_PUBLIC_BROWSING", default=not PRODUCTION)

# Uploads: bundles are read in memory, never extracted; these bound what one bundle may cost.
DATA_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024 * 1024
FILE_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024 * 1024
# Bigger uploads go to a temporary file with no name, which a killed web process cannot leave behind.
FILE_UPLOAD_HANDLERS = [
    "django.core.files.uploadhandler.MemoryFileUploadHandler",
    "benchdash.uploads.UnnamedTemporaryFileUploadHandler",
]
FILE_UPLOAD_TEMP_DIR = env.str("BENCHDASH_UPLOAD_TEMP_DIR", default="") or None
BUNDLE_MAX_BYTES = env.int("BUNDLE_MAX_BYTES", default=512 * 1024 * 1024)
BUNDLE_MAX_MEMBERS = env.int("BUNDLE_MAX_MEMBERS", default=100_000)
BUNDLE_MAX_UNPACKED_BYTES = env.int("BUNDLE_MAX_UNPACKED_BYTES", default=4 * 1024 * 1024 * 1024)
BUNDLE_MAX_MEMBER_BYTES = env.int("BUNDLE_MAX_MEMBER_BYTES", default=64 * 1024 * 1024)
# An import whose worker has not beaten its heartbeat for this long is taken as dead, and may be taken over.
BUNDLE_CLAIM_STALE_SECONDS = env.float("BUNDLE_CLAIM_STALE_SECONDS", default=60.0)

# Celery. Without REDIS_URL tasks run eagerly in the calling process (demo and tests).
REDIS_URL = env.str("REDIS_URL", default="")
# A host name, though the in-process transport ignores it: without one kombu warns on every process's first task.
CELERY_BROKER_URL = REDIS_URL or "memory://localhost/"
CELERY_TASK_ALWAYS_EAGER = env.bool("CELERY_TASK_ALWAYS_EAGER", default=not REDIS_URL)
# An eager task re-raises, so a failure in tests and the demo is seen, not swallowed.
CELERY_TASK_EAGER_PROPAGATES = True
# Results are recorded on our own rows (bundle status, run status), not in a result backend.
CELERY_TASK_IGNORE_RESULT = True
# Acknowledge after the task ran, so a worker killed mid-import gets the task redelivered;
# tasks are idempotent, so a redelivery does no work twice.
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
# Imports and benchmark runs are long: take one at a time so others stay free for the rest.
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# Python rarely gives freed memory back to the OS, so a worker child that once imported a big bundle would keep
# its peak for good. The prefork pool replaces a child whose RSS is over this (KiB) once its task is done: the
# memory returns with no change to how tasks run, and a child that stays small is kept (no fork per task).
CELERY_WORKER_MAX_MEMORY_PER_CHILD = env.int("CELERY_WORKER_MAX_MEMORY_PER_CHILD", default=300 * 1024)
# A stuck task is interrupted (soft) and then killed (hard) instead of holding a worker forever.
CELERY_TASK_SOFT_TIME_LIMIT = env.int("CELERY_TASK_SOFT_TIME_LIMIT", default=15 * 60)
CELERY_TASK_TIME_LIMIT = env.int("CELERY_TASK_TIME_LIMIT", default=20 * 60)
# Redis redelivers an unacknowledged task after this long; it must exceed the hard limit.
_VISIBILITY_TIMEOUT = env.int("CELERY_VISIBILITY_TIMEOUT", default=CELERY_TASK_TIME_LIMIT + 5 * 60)
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": _VISIBILITY_TIMEOUT,
    # A worker looks for tasks overdue for redelivery (their worker died) every tenth of the timeout, 1 s to
    # 100 s apart, with one scan each time. kombu's default looks every 10 s and scans on every tenth look:
    # 100 s whatever the timeout, so a short timeout was not honoured.
    "unacked_restore_interval": min(max(_VISIBILITY_TIMEOUT // 10, 1), 100),
    "unacked_restore_throttle": 1,
}
# Put before every key the broker keeps in Redis (queues, bindings, unacknowledged tasks), for deployments that
# share one Redis database: a worker's sweep hands back overdue tasks of every queue under its prefix, its own
# deployment's only. The test processes of a parallel run each have one (conftest.py).
BROKER_KEY_PREFIX = env.str("BENCHDASH_BROKER_PREFIX", default="")
if BROKER_KEY_PREFIX:
    CELERY_BROKER_TRANSPORT_OPTIONS["global_keyprefix"] = BROKER_KEY_PREFIX
CELERY_TASK_DEFAULT_QUEUE = env.str("CELERY_QUEUE", default="celery")
CELERY_BEAT_SCHEDULER = "django_celery_beat.schedulers:DatabaseScheduler"
CELERY_BEAT_SCHEDULE = {
    # Uploads whose task was lost (broker down at upload time) are imported once it is back.
    "requeue-queued-bundles": {"task": "runs.tasks.requeue_bundles", "schedule": 60.0},
    # Series whose after-import refresh was lost (broker down when the import committed) are recomputed.
    "refresh-lost-series": {"task": "reports.tasks.refresh_lost_series", "schedule": 60.0},
    # Regression alerts whose announcement or retry was lost the same way are sent.
    "resend-lost-alerts": {"task": "regressions.tasks.resend_lost_alerts", "schedule": 60.0},
    # Stories' shared points that no story names any more (stories deleted outside detection) are deleted.
    "sweep-unused-points": {"task": "regressions.tasks.sweep_unused_points", "schedule": 3600.0},
    # The running run of a benchmark host gone silent is failed and queued again, once.
    "check-benchmark-hosts": {"task": "runner.tasks.check_hosts", "schedule": 60.0},
}
CELERY_TIMEZONE = TIME_ZONE
# Benchmark hosts (runner.hosts): how often a host's worker says it is alive, and how long a silence lasts before
# its running run is failed and queued again.
BENCHDASH_HOST_HEARTBEAT_SECONDS = env.float("BENCHDASH_HOST_HEARTBEAT_SECONDS", default=15.0)
BENCHDASH_HOST_SILENT_SECONDS = env.float("BENCHDASH_HOST_SILENT_SECONDS", default=120.0)
# How many times a host measures a story's microbenchmarks again before the story is told (runner.confirm).
BENCHDASH_CONFIRMATION_REPEATS = env.int("BENCHDASH_CONFIRMATION_REPEATS", default=3)
# The branches whose runs make a series' main line (runs.branches), as a regular expression a whole branch name
# matches: a run of another branch, or of a pull request, is judged against them and never joins their series.
BENCHDASH_BASE_BRANCHES = env.str("BENCHDASH_BASE_BRANCHES", default=r"main|master|trunk|[0-9]+(\.[0-9]+)*")
try:
    re.compile(BENCHDASH_BASE_BRANCHES)
except re.error as exc:
    raise ImproperlyConfigured(f"BENCHDASH_BASE_BRANCHES is no regular expression: {exc}") from None


# The worker outlives its broker: it retries the connection forever, at start-up too, and leaves only when
# told to (SIGTERM), so a Redis restart never needs someone to restart the worker.
CELERY_BROKER_CONNECTION_RETRY = True
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BROKER_CONNECTION_MAX_RETRIES = None
CELERY_BROKER_CONNECTION_TIMEOUT = 5
# A task running when the connection drops finishes; its late acknowledgement is lost, so the message is
# delivered again and the (idempotent) task finds its work done.
CELERY_WORKER_CANCEL_LONG_RUNNING_TASKS_ON_CONNECTION_LOSS = False
# kombu's Redis transport, made to survive a broker connection lost with a task in flight (see the class).
CELERY_BROKER_TRANSPORT = "benchdash.celery:RedisBrokerTransport" if REDIS_URL else None

# The cache: pages, never needed for correctness (everything in it can be recomputed).
# REDIS_CACHE_URL puts it on a Redis of its own (one with an eviction policy); without it, the cache shares
# the broker's database. Either way every key carries CACHE_KEY_PREFIX, and clearing the cache deletes only
# those keys: the broker's queues are never flushed, and no other database is ever touched.
REDIS_CACHE_URL = env.str("REDIS_CACHE_URL", default="") or REDIS_URL
CACHE_KEY_PREFIX = env.str("BENCHDASH_CACHE_PREFIX", default="benchdash-cache")
if REDIS_CACHE_URL:
    CACHES = {
        "default": {
            "BACKEND": "benchdash.cache.PrefixedRedisCache",
            "LOCATION": REDIS_CACHE_URL,
            "KEY_PREFIX": CACHE_KEY_PREFIX,
            # A cache that is down or unreachable costs a request a second at most, not a hang.
            "OPTIONS": {"socket_connect_timeout": 1, "socket_timeout": 1},
        }
    }
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "KEY_PREFIX": CACHE_KEY_PREFIX}}

# The corpus of real results used by the demo, when the project sits beside it.
DEMO_CORPUS_DIR = Path(env.str("BENCHDASH_CORPUS_DIR", default=str(BASE_DIR.parent / "shared" / "corpus")))

# Release lines moved between long-term and short-term, per DBMS or per "<DBMS> @ <server>" series, over the
# vendors' table in runs/releases.py: {"MariaDB": {"short_term": ["12.3"]}}. Checked when detection runs.
BENCHDASH_RELEASE_LINES: dict = env.json("BENCHDASH_RELEASE_LINES", default={})

# Where people open benchdash: alerts and write-ups link back to its pages under it, since both are read
# outside the site (a mail, a chat, a blog post). In production it defaults to https on the first allowed host.
# (docker compose passes an unset variable as empty: empty means the default here.)
BENCHDASH_BASE_URL = (
    env.str("BENCHDASH_BASE_URL", default="")
    or (f"https://{ALLOWED_HOSTS[0]}" if PRODUCTION else "http://127.0.0.1:8000")
).rstrip("/")
# A failed delivery is retried after 1×, 2×, 4×, … the delay (capped), then given up and shown as failed.
BENCHDASH_ALERT_MAX_ATTEMPTS = env.int("BENCHDASH_ALERT_MAX_ATTEMPTS", default=6)
BENCHDASH_ALERT_RETRY_DELAY = env.float("BENCHDASH_ALERT_RETRY_DELAY", default=30.0)
BENCHDASH_ALERT_RETRY_MAX_DELAY = env.float("BENCHDASH_ALERT_RETRY_MAX_DELAY", default=3600.0)
# Seconds a webhook may take to answer: a receiver that hangs must not hold a worker.
BENCHDASH_WEBHOOK_TIMEOUT = env.float("BENCHDASH_WEBHOOK_TIMEOUT", default=10.0)
# Mail goes through Django's SMTP backend from EMAIL_URL (smtp://user:pass@host:25, smtp+tls://…:587 for
# STARTTLS, smtp+ssl://…:465); the demo prints it on the console instead. Special characters in a
# password are URL-quoted.
EMAIL_URL = env.str("EMAIL_URL", default="") or ("smtp://localhost:25" if PRODUCTION else "consolemail://")
# Unset parts (no user, no password) keep Django's defaults.
vars().update({name: value for name, value in env.email_url_config(EMAIL_URL).items() if value is not None})
EMAIL_TIMEOUT = env.int("EMAIL_TIMEOUT", default=10)
DEFAULT_FROM_EMAIL = env.str("DEFAULT_FROM_EMAIL", default="") or "benchdash <benchdash@localhost>"
SERVER_EMAIL = DEFAULT_FROM_EMAIL

SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
# Links to bug trackers must not carry our URLs (server names, run ids) in their Referer.
SECURE_REFERRER_POLICY = "same-origin"
SECURE_CROSS_ORIGIN_OPENER_POLICY = "same-origin"
# Scripts only from our own static files (htmx, plotly.js, ours); data goes in <script type="application/json">
# blocks, which are never executed. Styles allow 'unsafe-inline': plotly.js writes style attributes while it
# draws and htmx injects its indicator styles, and both break without it (checked in Chromium,
# tests/browser/test_csp.py); inline styles cannot run code.
BENCHDASH_CSP = env.str(
    "BENCHDASH_CSP",
    default=(
        "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; "
        "font-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; "
        "frame-ancestors 'none'"
    ),
)
# Session and CSRF cookies only over https (SECURE_COOKIES, default on in production, docker-compose.yml alike).
# A site served over plain http must set SECURE_COOKIES=false, or browsers never send the cookies back and
# every login fails its CSRF check (the 403 page then says so: benchdash.errors.csrf_failure).
CSRF_FAILURE_VIEW = "benchdash.errors.csrf_failure"
if PRODUCTION:
    SESSION_COOKIE_SECURE = env.bool("SECURE_COOKIES", default=True)
    CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
    # Browsers only honour HSTS from an https response, and SecurityMiddleware only sends it on one.
    SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=365 * 24 * 3600)
    CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

# Security and reliability limits (outbound requests, database hangs, proxies, render budgets): one block.
# Where alert webhooks (and any other request benchdash makes) may go: comma-separated networks
# (10.20.0.0/16,192.0.2.7). Unset: public addresses only. Link-local and metadata addresses never
# (benchdash.outbound checks the resolved address at send time and connects to that address).
BENCHDASH_ALERT_NETWORKS = env.list("BENCHDASH_ALERT_NETWORKS", default=[])
for _network in BENCHDASH_ALERT_NETWORKS:
    try:
        ipaddress.ip_network(_network.strip(), strict=False)
    except ValueError as _exc:
        raise ImproperlyConfigured(f"BENCHDASH_ALERT_NETWORKS: {_network!r} is no address or network") from _exc

# Page renders an anonymous visitor's address may cause per minute (cache hits are free; 0: unbounded): made-up
# query values cannot make the server render and keep page after page (benchdash.pagecache). Without
# REDIS_CACHE_URL the cache shares the broker's Redis, whose noeviction policy (a dropped key would be a lost
# task) lets pages fill its memory: give the cache a Redis of its own with maxmemory and allkeys-lru.
BENCHDASH_ANONYMOUS_RENDERS_PER_MINUTE = env.int("BENCHDASH_ANONYMOUS_RENDERS_PER_MINUTE", default=600)

# X-Forwarded-Proto is believed only from a proxy the site trusts (BENCHDASH_TRUSTED_PROXIES > 0): with none,
# any client could claim https itself and get HSTS and https-only cookies' behaviour over plain HTTP.
if PRODUCTION and BENCHDASH_TRUSTED_PROXIES > 0:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

# Database waits, bounded for web and worker: a server that hangs (accepts, never answers) must not hold
# threads for the whole outage. statement_timeout ends a slow query server-side; keepalives and
# tcp_user_timeout notice a peer that went away; connect_timeout bounds connecting (above); and the backend
# (benchdash.postgresql) cuts a connection whose wait passes the statement timeout plus a grace, which the
# site answers with a 503. The web process (benchdash.wsgi says it is one) has a short limit, a Celery worker
# (imports, detection: long statements, lock waits) a long one; commands (migrate, imports) and the test
# processes none, as a migration of a big table may rightly take long.
_CELERY_WORKER = "worker" in sys.argv[1:] and "celery" in sys.argv[0]  # `celery … worker`, `python -m celery … worker`
if _CELERY_WORKER:
    BENCHDASH_DB_STATEMENT_TIMEOUT = env.float(
        "BENCHDASH_DB_WORKER_STATEMENT_TIMEOUT", default=float(CELERY_TASK_TIME_LIMIT)
    )
elif env.bool("BENCHDASH_WEB_PROCESS", default=False):
    BENCHDASH_DB_STATEMENT_TIMEOUT = env.float("BENCHDASH_DB_STATEMENT_TIMEOUT", default=10.0)
else:
    BENCHDASH_DB_STATEMENT_TIMEOUT = 0.0
BENCHDASH_DB_HANG_GRACE = env.float("BENCHDASH_DB_HANG_GRACE", default=2.0)
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    DATABASES["default"]["ENGINE"] = "benchdash.postgresql"
    _options = DATABASES["default"].setdefault("OPTIONS", {})
    if BENCHDASH_DB_STATEMENT_TIMEOUT > 0:
        _options["options"] = (
            f"{_options.get('options', '')} -c statement_timeout={int(BENCHDASH_DB_STATEMENT_TIMEOUT * 1000)}"
        ).strip()
    for _name, _value in (
        ("keepalives", 1),
        ("keepalives_idle", 30),
        ("keepalives_interval", 10),
        ("keepalives_count", 3),
        ("tcp_user_timeout", 30_000),  # ms: sent data unacknowledged this long ends the connection
    ):
        _options.setdefault(_name, _value)

# Logs (benchdash/logs.py): time, level, logger and request id on every line; LOG_FORMAT=json for one JSON object
# per line. django-axes's start-up banner is left out (it printed once per process: web, worker, every command).
LOGGING = logging_config(env.str("LOG_LEVEL", default="INFO"), env.str("LOG_FORMAT", default="text"))
AXES_VERBOSE = False

# Start-up warnings (benchdash/deployment.py): either mode warns loudly, on stderr in every process, when its
# settings look like the other mode's (a deployment left in demo mode, a production site on SQLite).
_DEPLOYMENT = Deployment(
    production=PRODUCTION,
    allowed_hosts=tuple(ALLOWED_HOSTS),
    database_engine=DATABASES["default"]["ENGINE"],
    broker=bool(REDIS_URL),
    public_browsing=BENCHDASH_PUBLIC_BROWSING,
    secure_cookies=bool(globals().get("SESSION_COOKIE_SECURE", False)),
    database_password=str(DATABASES["default"].get("PASSWORD") or ""),
)
if _doubts := deployment_warnings(_DEPLOYMENT):
    sys.stderr.write(banner(_doubts))
