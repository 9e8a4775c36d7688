"""Shared test fixtures: where the real corpus lives, and Celery's mode per test."""

from __future__ import annotations

import functools
import importlib
import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from django.contrib.auth.hashers import PBKDF2PasswordHasher

CORPUS = Path(__file__).resolve().parent.parent / "shared" / "corpus"


class FewRoundsPBKDF2PasswordHasher(PBKDF2PasswordHasher):
    """Production's PBKDF2-SHA256 with a thousand rounds instead of a million: the same algorithm name and hash
    format, so a server process the tests start (which keeps Django's hashers) checks these hashes too, reading
    the rounds from each, and raises them to its own on a successful login. The suite hashes and checks some
    hundreds of passwords (logins, lockouts, the users of the browser tests): at production's rounds each costs
    most of a second of a core."""

    iterations = 1_000


def _few_hash_rounds() -> None:
    from django.conf import settings

    settings.PASSWORD_HASHERS = [
        f"{__name__}.FewRoundsPBKDF2PasswordHasher",
        *(name for name in settings.PASSWORD_HASHERS if not name.endswith(".PBKDF2PasswordHasher")),
    ]


def pytest_configure(config: pytest.Config) -> None:
    """Passwords are hashed with few rounds (``FewRoundsPBKDF2PasswordHasher``).

    Each pytest-xdist worker keeps its cache keys, and its broker keys, under prefixes of its own.

    The workers share the Redis database the suite was given (and pytest-django gives each its own test
    database, ``test_<name>_gw<N>``). One worker's ``cache.clear()`` between tests must not empty another's
    cache in the middle of a test; and a Celery worker a test starts hands back every overdue task it finds
    under its broker prefix, so a test's worker with a visibility timeout of a few seconds would hand back
    another process's long task, which then runs twice. Processes a test starts (gunicorn, Celery workers)
    inherit both prefixes through the environment. Nothing has used the cache or the broker yet.
    """
    _few_hash_rounds()
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if not worker:
        return
    from django.conf import settings

    from benchdash.celery import app

    prefix = f"{settings.CACHE_KEY_PREFIX}-{worker}"
    os.environ["BENCHDASH_CACHE_PREFIX"] = prefix
    settings.CACHE_KEY_PREFIX = prefix
    settings.CACHES["default"]["KEY_PREFIX"] = prefix
    broker_prefix = f"{settings.BROKER_KEY_PREFIX}benchdash-test-{worker}:"
    os.environ["BENCHDASH_BROKER_PREFIX"] = broker_prefix
    settings.BROKER_KEY_PREFIX = broker_prefix
    settings.CELERY_BROKER_TRANSPORT_OPTIONS["global_keyprefix"] = broker_prefix
    app.conf.broker_transport_options = settings.CELERY_BROKER_TRANSPORT_OPTIONS


# The test database as ``migrate`` leaves it (what the data migrations create: role groups and their permissions,
# the measured-scan rows), serialized once per process when the database is set up.
_MIGRATED: dict[str, str] = {}
# Whether a transactional test has run since this process last had the migrated state.
_FLUSHED: list[bool] = [False]


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup: None, django_db_blocker: Any) -> None:
    """pytest-django's own set-up, then the migrated state kept (``_MIGRATED``); on PostgreSQL, the flush after a
    transactional test empties the tables by ``DELETE`` (``_sql_flush_by_delete``)."""
    from django.db import connection

    ops = type(connection.ops)
    if connection.vendor == "postgresql" and ops.sql_flush is not _sql_flush_by_delete:
        _TRUNCATING_FLUSH["sql_flush"] = ops.sql_flush
        ops.sql_flush = _sql_flush_by_delete  # type: ignore[method-assign]
    with django_db_blocker.unblock():
        _MIGRATED["default"] = connection.creation.serialize_db_to_string()


# A table (with its TOAST table and indexes) larger than this is truncated at a flush rather than emptied by DELETE.
FLUSH_TRUNCATE_ABOVE_BYTES = 256 * 1024
# PostgreSQL's own flush statements (TRUNCATE of every table), for a flush that resets sequences.
_TRUNCATING_FLUSH: dict[str, Callable[..., list[str]]] = {}


def _sql_flush_by_delete(
    self: Any, style: Any, tables: list[str], *, reset_sequences: bool = False, allow_cascade: bool = False
) -> list[str]:
    """The test database's flush (after every transactional test, some hundreds in the suite) as ``DELETE`` of each
    table, and ``TRUNCATE`` only of those that grew big, instead of PostgreSQL's ``TRUNCATE`` of all of them.

    A ``TRUNCATE`` gives each of the ~50 tables, its indexes and its TOAST table new files, and commits them to disk:
    about 0.14 s of the server's CPU and most of a second under load, where deleting the few rows a test leaves
    costs 0.01 s. The rows are gone either way, in one transaction; Django's foreign keys are checked at commit
    (deferred), so the order of the deletes does not matter; sequences are left as they are, as ``TRUNCATE`` without
    ``RESTART IDENTITY`` leaves them. A table that a test filled (an upload's archive chunks, say) is truncated
    still, so the dead rows of transactional tests never pile up. (A test in a rolled-back transaction leaves its
    rows dead in the files until a vacuum, flush or not: a test that moves a table to a small tablespace truncates
    it first, runs/tests/test_storage_full.py.)
    A flush that resets sequences is Django's own."""
    if reset_sequences or not tables:
        truncating = _TRUNCATING_FLUSH["sql_flush"]
        return truncating(self, style, tables, reset_sequences=reset_sequences, allow_cascade=allow_cascade)
    with self.connection.cursor() as cursor:
        cursor.execute(
            "SELECT name FROM unnest(%s::text[]) AS name "
            "WHERE pg_total_relation_size(to_regclass(quote_ident(name))) > %s",
            [list(tables), FLUSH_TRUNCATE_ABOVE_BYTES],
        )
        big = {name for (name,) in cursor.fetchall()}
    # The big tables first, CASCADE taking their referencing tables too (all of them Django's, emptied here anyway):
    # a table a DELETE has touched in this transaction has pending foreign-key checks, and cannot be truncated.
    statements = [f"TRUNCATE {', '.join(self.quote_name(table) for table in sorted(big))} CASCADE"] if big else []
    return statements + [f"DELETE FROM {self.quote_name(table)}" for table in tables if table not in big]


def _transactional(item: pytest.Item) -> bool | None:
    """True for a test that commits (and is flushed after), False for one in a rolled-back transaction, None for one
    without the database: pytest-django's own reading (its ``get_order_number``)."""
    marker = item.get_closest_marker("django_db")
    fixtures = getattr(item, "fixturenames", [])
    if "transactional_db" in fixtures or "live_server" in fixtures:
        return True
    if marker is not None:
        return bool(
            marker.kwargs.get("transaction") or marker.kwargs.get("reset_sequences") or marker.args[:1] == (True,)
        )
    return False if "db" in fixtures else None


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Iterator[None]:
    """A test in a rolled-back transaction after a transactional one (whose flush emptied every table, the data
    migrations' rows with them) starts from the migrated state again, as Django's serialized rollback restores it.
    pytest-django runs the transactional tests last for this; the long ones that lead the workers' shares
    (``long_tests_first``) and the tests a worker steals from another's share come before others."""
    if _FLUSHED[0] and _transactional(item) is False and "default" in _MIGRATED:
        from django.core.management import call_command
        from django.db import connection
        from pytest_django.plugin import blocking_manager_key

        _SHARED.close(item)  # a flush ends any transaction the shared rows were in (there is none: see close)
        with item.config.stash[blocking_manager_key].unblock():
            call_command("flush", interactive=False, inhibit_post_migrate=True, verbosity=0)
            connection.creation.deserialize_db_from_string(_MIGRATED["default"])
            _sequences_past_restored_rows(connection)
        _FLUSHED[0] = False
    _SHARED.prepare(item)
    return (yield)


def _sequences_past_restored_rows(connection: Any) -> None:
    """The flush restarted every sequence at 1 and the restored rows kept their ids (the role groups 1-4, say):
    each sequence is set past its table's largest id, as ``loaddata`` does, or the next row a test makes (a group
    of its own) would take id 1 again."""
    from django.apps import apps
    from django.core.management.color import no_style

    statements = connection.ops.sequence_reset_sql(no_style(), apps.get_models())
    if statements:
        with connection.cursor() as cursor:
            for statement in statements:
                cursor.execute(statement)


class SharedRows:
    """Rows that several tests read, built once and kept while consecutive tests of this process want them, the way
    Django's ``TestCase.setUpTestData`` keeps a class's rows.

    A fixture registered with ``shared_rows`` is built, before the test's own set-up, inside a transaction of its
    own that is never committed; the test's transaction (pytest-django's, rolled back after it) is then a savepoint
    within it, so whatever a test changes is undone and the next test that wants the same rows finds them as built.
    The transaction is rolled back as soon as a test that uses the database does not want those rows (or wants
    others), and before any transactional test: no test ever sees rows it did not ask for, and nothing is
    committed. What the build leaves to ``on_commit`` never runs, as in a test that built the rows itself. A
    transactional test that wants the rows builds them itself, committed, as before.

    The fixture's value is what the builder returns, which should be ids (or other plain values): a model instance
    kept from one test to the next would carry one test's unsaved changes into the next.
    """

    def __init__(self) -> None:
        self.builders: dict[str, Callable[[], Any]] = {}
        self.active: str | None = None
        self.value: Any = None
        self.atomic: Any = None

    def register(self, name: str, builder: Callable[[], Any]) -> None:
        self.builders[name] = builder

    def wanted(self, item: pytest.Item) -> str | None:
        names = [name for name in getattr(item, "fixturenames", ()) if name in self.builders]
        if len(names) > 1 or _transactional(item) is not False:
            return None  # several kinds of shared rows, or a transactional test: the fixtures build them
        return names[0] if names else None

    def prepare(self, item: pytest.Item) -> None:
        several = [name for name in getattr(item, "fixturenames", ()) if name in self.builders]
        if len(several) > 1:  # built one after another they could import the same series twice
            pytest.fail(f"{item.nodeid} wants several kinds of shared rows ({', '.join(several)}): one at most")
        wanted = self.wanted(item)
        if wanted is None and _transactional(item) is None:
            return  # a test without the database cannot see the rows: they stay for the next one
        if wanted == self.active:
            return
        self.close(item)
        if wanted is None or "default" not in _MIGRATED:
            return
        from django.db import transaction
        from pytest_django.plugin import blocking_manager_key

        from benchdash.celery import app

        eager = app.conf.task_always_eager
        app.conf.task_always_eager = True  # as in the tests that built the rows themselves (conftest's fixture)
        try:
            with item.config.stash[blocking_manager_key].unblock():
                self.atomic = transaction.atomic()
                self.atomic.__enter__()
                try:
                    self.value = self.builders[wanted]()
                except BaseException:
                    self.close(item)
                    raise
        finally:
            app.conf.task_always_eager = eager
        self.active = wanted

    def close(self, item: pytest.Item) -> None:
        if self.atomic is None:
            return
        from django.db import transaction
        from pytest_django.plugin import blocking_manager_key

        atomic, self.atomic, self.active, self.value = self.atomic, None, None, None
        with item.config.stash[blocking_manager_key].unblock():
            transaction.set_rollback(True)
            atomic.__exit__(None, None, None)

    def get(self, name: str) -> Any:
        """The rows built for this test, or built now (a transactional test's, committed)."""
        if self.active == name:
            return self.value
        return self.builders[name]()


_SHARED = SharedRows()


def shared_rows(name: str) -> Callable[[Callable[[], T]], Callable[[], T]]:
    """Register ``builder`` as the rows behind the fixture ``name`` (see ``SharedRows``); the fixture itself calls
    ``_SHARED.get(name)``."""

    def register(builder: Callable[[], T]) -> Callable[[], T]:
        _SHARED.register(name, builder)
        return builder

    return register


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    result = yield
    if _transactional(item):
        _FLUSHED[0] = True
    if nextitem is None:
        _SHARED.close(item)
    return result


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under pytest-xdist, the long tests (marker ``slow``) lead the shares the workers start with
    (``long_tests_first``); those of one module stay together, so a stack the module starts once serves them all."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "0"))
    items[:] = shared_rows_together(items)
    items[:] = long_tests_first(items, workers, _expected_seconds, lambda item: item.nodeid.split("::")[0])


def shared_rows_together(items: list[pytest.Item]) -> list[pytest.Item]:
    """Within each stretch of one module's tests, those that want the same shared rows (``SharedRows``) one after
    another, ahead of the others (in their order), so the rows are built once for them rather than after every
    test between them that wants none. A test that wants none (a transactional one among them) only moves later."""
    ordered: list[pytest.Item] = []
    start = 0
    for end in range(1, len(items) + 1):
        if end == len(items) or items[end].nodeid.split("::")[0] != items[start].nodeid.split("::")[0]:
            stretch = items[start:end]
            wanted = [_SHARED.wanted(item) for item in stretch]
            names = list(dict.fromkeys(name for name in wanted if name is not None))
            for name in names:
                ordered += [item for item, want in zip(stretch, wanted, strict=True) if want == name]
            ordered += [item for item, want in zip(stretch, wanted, strict=True) if want is None]
            start = end
    return ordered


T = TypeVar("T")


def long_tests_first(
    items: list[T], workers: int, seconds: Callable[[T], float | None], group: Callable[[T], object] = id
) -> list[T]:
    """``items`` in the order that starts the long ones (``seconds`` not None) at once on ``workers`` workers.

    ``--dist worksteal`` gives each of N workers a contiguous share of the collected order (pytest-randomly's
    shuffle, the same in every worker), and a worker that runs out takes half of what is left at the end of the
    busiest one's. A long test there would start late and could leave the other workers idle while it runs. So
    the long tests are placed at the heads of the shares, longest first onto the share with the least long work
    so far, those of one ``group`` together (in their order); the rest keep their order and fill in. Every test
    still runs; only the order changes.
    """
    groups: dict[object, list[T]] = {}
    for item in items:
        if seconds(item) is not None:
            groups.setdefault(group(item), []).append(item)
    if workers < 2 or not groups:
        return items
    rest = [item for item in items if seconds(item) is None]
    # The scheduler's shares: the first worker gets n // N items, the next (what is left) // (N - 1), and so on.
    sizes, left = [], len(items)
    for remaining in range(workers, 0, -1):
        sizes.append(left // remaining)
        left -= sizes[-1]
    heads: list[list[T]] = [[] for _ in sizes]
    loads = [0.0] * len(sizes)

    def lightest() -> int:
        """The share with the least long work that has room for one more test."""
        return min((i for i in range(len(sizes)) if len(heads[i]) < sizes[i]), key=lambda i: loads[i])

    for members in sorted(groups.values(), key=lambda m: -sum(seconds(i) or 0 for i in m)):
        share = lightest()
        for item in members:
            if len(heads[share]) == sizes[share]:  # a group larger than the room left goes on in another share
                share = lightest()
            heads[share].append(item)
            loads[share] += seconds(item) or 0
    ordered: list[T] = []
    for head, size in zip(heads, sizes, strict=True):
        ordered += head + rest[: size - len(head)]
        del rest[: size - len(head)]
    return ordered


def _expected_seconds(item: pytest.Item) -> float | None:
    marker = item.get_closest_marker("slow")
    if marker is None:
        return None
    return float(marker.kwargs.get("seconds", marker.args[0] if marker.args else 30))


# Skip reasons that mean a service is missing (the tests that need it run when DATABASE_URL, REDIS_URL, a MariaDB
# or sysbench are there), a browser, or the corpus beside the project.
SKIP_KINDS = (
    (
        "services (PostgreSQL, Redis, MariaDB, sysbench)",
        re.compile(r"PostgreSQL|DATABASE_URL|Redis|REDIS_URL|MariaDB|MySQL|sysbench", re.I),
    ),
    ("a browser (Chromium)", re.compile(r"chromium|playwright|browser", re.I)),
    ("the real result corpus", re.compile(r"corpus", re.I)),
)


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    """`make test` says how many tests did not run for lack of a service, so "passed" is not read as "all"."""
    skipped = terminalreporter.stats.get("skipped", [])
    if not skipped:
        return
    counts: dict[str, int] = {}
    for report in skipped:
        reason = str(report.longrepr[-1]) if isinstance(report.longrepr, tuple) else str(report.longrepr)
        kind = next((name for name, pattern in SKIP_KINDS if pattern.search(reason)), "other reasons")
        counts[kind] = counts.get(kind, 0) + 1
    terminalreporter.write_sep("-", "skipped tests")
    for kind, count in counts.items():
        terminalreporter.write_line(
            f"{count} test{'s' if count != 1 else ''} skipped for lack of {kind}"
            if kind != "other reasons"
            else f"{count} skipped for other reasons (see the SKIPPED lines above)"
        )
    if any(kind.startswith("services") for kind in counts):
        terminalreporter.write_line(
            "set DATABASE_URL and REDIS_URL (and start MariaDB) to run them: see CONTRIBUTING.md"
        )


def pytest_unconfigure(config: pytest.Config) -> None:
    """A parallel test process leaves nothing under its broker prefix: kombu's own keys (its event bindings)
    outlive the queues the tests take out (``tests.live.forget_queue``)."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if not worker:
        return
    from django.conf import settings

    if not settings.REDIS_URL or not settings.BROKER_KEY_PREFIX.endswith(f"benchdash-test-{worker}:"):
        return
    import redis

    from benchdash.cache import delete_keys_under

    client = redis.Redis.from_url(settings.REDIS_URL)
    try:
        delete_keys_under(client, settings.BROKER_KEY_PREFIX)
    except redis.RedisError:
        pass  # the suite's verdict stands; a key left here is only litter
    finally:
        client.close()


@pytest.fixture(scope="session")
def corpus() -> Path:
    if not CORPUS.is_dir():
        if services_required():
            pytest.fail(f"CI needs the real result corpus beside the project ({CORPUS})")
        pytest.skip(f"the real result corpus is not beside the project ({CORPUS})")
    return CORPUS


SMALL_BASE_RUN = "x.my5651_rel_o2nofp.z12a_c8r32.pk1"


@functools.cache
def corpus_archive(directory: Path) -> bytes:
    """A corpus directory packed as ``archive_directory`` packs it, once per test process: the corpus is only read,
    and the archive is deterministic (the same tree, the same bytes), so every test that imports the series gets
    the bytes it would have packed itself. Packing the mysql-small series costs a tenth of a second of a core,
    and a few hundred tests import it."""
    from runs.importer import archive_directory

    return archive_directory(directory)


@shared_rows("small_base")
def _small_series() -> int | None:
    """The mysql-small series imported; its base run's id (None without the corpus: the fixture skips)."""
    from runs.importer import submit_and_import
    from runs.models import Bundle, Run

    if not CORPUS.is_dir():
        return None
    submit_and_import(
        corpus_archive(CORPUS / "sysbench-mysql-small"), name="small.tar.gz", source=Bundle.Source.COMMAND
    )
    return int(Run.objects.get(name=SMALL_BASE_RUN).pk)


@pytest.fixture
def small_base(db: None, corpus: Path) -> Any:
    """The real sysbench-mysql-small series imported (nine MySQL versions on one server); its base run,
    MySQL 5.6.51, the base of the reference tables. Imported once for consecutive tests that want it
    (``SharedRows``), each test's changes undone."""
    from runs.models import Run

    return Run.objects.get(pk=_SHARED.get("small_base"))


@shared_rows("small_base_detected")
def _small_series_detected() -> int | None:
    """The mysql-small series imported and its regressions detected; its base run's id."""
    from regressions.detection import detect_regressions
    from runs.models import Run

    pk = _small_series()
    if pk is not None:
        run = Run.objects.get(pk=pk)
        detect_regressions(run.server_id, run.workload_id)
    return pk


@pytest.fixture
def small_base_detected(db: None, corpus: Path) -> Any:
    """``small_base`` after detection has run over its series (built once for consecutive tests, as it is)."""
    from runs.models import Run

    return Run.objects.get(pk=_SHARED.get("small_base_detected"))


@pytest.fixture(autouse=True)
def _celery_eager_unless_worker(request: pytest.FixtureRequest) -> Iterator[None]:
    """Tasks run in the test's process unless the test drives a real worker (marker ``worker``)."""
    from benchdash.celery import app

    if request.node.get_closest_marker("worker"):
        yield
        return
    saved = app.conf.task_always_eager
    app.conf.task_always_eager = True
    yield
    app.conf.task_always_eager = saved


@pytest.fixture(autouse=True)
def _fresh_cache() -> None:
    """Each test starts with an empty cache. With Redis the cache is in the database the suite was given
    (REDIS_CACHE_URL, else REDIS_URL) and clearing deletes only its prefixed keys: the broker's queues in that
    database, and every other database, are left alone."""
    from django.core.cache import cache

    cache.clear()


def services_required() -> bool:
    """CI sets BENCHDASH_REQUIRE_SERVICES: a missing service is then a failure, never a skip."""
    return os.environ.get("BENCHDASH_REQUIRE_SERVICES") == "1"


@pytest.fixture
def user_with_role(django_user_model: Any) -> Callable[..., Any]:
    """Make a user in one of the role groups (viewer, uploader, triager, admin): ``user_with_role("uploader")``.

    The groups come from a data migration, and a transactional test's flush empties them; they are put back
    from the migration's own table, so every test sees the roles as ``migrate`` creates them.
    """

    return make_user_with_role


def make_user_with_role(role: str, username: str | None = None) -> Any:
    """A new user (named ``username``, else after the role) in the role group ``role`` (``user_with_role``)."""
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group

    group = Group.objects.filter(name=role).first() or _role_group_from_migration(role)
    user = get_user_model().objects.create_user(username or role, password=None)
    user.groups.add(group)
    return user


def _role_group_from_migration(role: str) -> Any:
    from django.contrib.auth.models import Group, Permission

    roles = importlib.import_module("runs.migrations.0005_role_groups")
    added = importlib.import_module("runs.migrations.0007_role_permissions")
    # Models that later moved to another app took their permissions along (their content types were renamed).
    moved = importlib.import_module("regressions.migrations.0002_content_types_from_reports")
    group = Group.objects.create(name=role)
    wanted = [*roles.ROLES.get(role, []), *added.ADDED.get(role, [])]
    if role == "admin":
        # Permissions the migration granted moved with their models: the API token to accounts, regressions,
        # bugs and triage to regressions.
        admin_apps = (*roles.ADMIN_APPS, "accounts", "regressions")
        group.permissions.add(*Permission.objects.filter(content_type__app_label__in=admin_apps))
    for full in wanted:
        app_label, codename = full.split(".")
        if app_label == "reports" and codename.split("_", 1)[1] in moved.MODELS:
            app_label = "regressions"
        group.permissions.add(Permission.objects.get(content_type__app_label=app_label, codename=codename))
    return group
