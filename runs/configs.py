"""Settings of a run as key → value, from each text a bundle stores.

Pure functions over text; no Django. Each parser returns a plain dict whose
keys are normalised the way the DBMS itself treats them, so a my.cnf line, a
``SHOW GLOBAL VARIABLES`` row and a diff of the two agree on names:

- my.cnf: ini sections, ``key = value``, bare flags, ``loose-`` prefixes, ``-``/``_``;
- Postgres ``conf.diff`` / ``postgresql.conf`` lines (``key = value  # comment``, quotes);
- MySQL ``SHOW GLOBAL VARIABLES`` output (``sb.gv.*``, ``sb.o.myvac.show.1``);
- psql ``show all`` tables (``sb.pg.conf.*``);
- ``/proc/meminfo`` hugepage lines (``sb.hp.*``);
- the parameters of a sysbench command line (``Run.commands``).

The CPU count of a run is line 2 of every ``sb.o`` file; ``suites.sysbench.parse``
already reads it into ``Run.cpus``, so it is not parsed again here.

``KNOWN_DEFAULT_CHANGES`` lists defaults that changed between versions, so a
diff of two versions can point at the change that explains a different value.
"""

from __future__ import annotations

import math
import posixpath
import re
from collections.abc import Iterable
from dataclasses import dataclass

from runs.versions import VersionError, parse_version
from suites.sysbench.parse import parse_command

Settings = dict[str, str]

# --------------------------------------------------------------------------- my.cnf

# Sections whose options the server reads; anything else (client, mysqldump, …) is kept under its section's name.
_SERVER_SECTION_RE = re.compile(r"^(mysqld|server|mariadb|mariadbd)(-[\d.]+)?$")
# Options whose real name starts with skip_: for these "skip" is not the negation prefix.
_REAL_SKIP_OPTIONS = frozenset(
    {
        "skip_name_resolve",
        "skip_networking",
        "skip_external_locking",
        "skip_show_database",
        "skip_slave_start",
        "skip_replica_start",
        "skip_grant_tables",
    }
)
_TRUE_WORDS = frozenset({"on", "true", "yes"})
_FALSE_WORDS = frozenset({"off", "false", "no"})


def mysql_name(name: str) -> str:
    """A MySQL option or variable name as SHOW VARIABLES spells it: lower case, ``_`` for ``-``, no ``loose_``."""
    key = name.strip().lower().replace("-", "_")
    # loose- only tells the server not to fail on an unknown option; the option is the same.
    return key.removeprefix("loose_")


def parse_mycnf(text: str) -> Settings:
    """Options of a my.cnf; server sections give bare names, others ``[section] name``. Last value wins."""
    settings: Settings = {}
    section = "mysqld"  # fragments of a config often start without a header
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("!"):
            directive, _, path = line.partition(" ")
            key = directive.lower()
            settings[key] = f"{settings[key]}, {path.strip()}" if key in settings else path.strip()
            continue
        if line.startswith("["):
            section = line[1 : line.find("]")].strip().lower() if "]" in line else line[1:].strip().lower()
            continue
        name, equals, rest = line.partition("=")
        has_value = bool(equals)
        value = _mycnf_value(rest) if has_value else ""
        key = mysql_name(_strip_comment(name) if not has_value else name)
        if not key:
            continue
        key, value = _mycnf_flag(key, value, has_value)
        if not _SERVER_SECTION_RE.match(section):
            key = f"[{section}] {key}"
        settings[key] = value
    return settings


def _strip_comment(text: str) -> str:
    return text.split("#", 1)[0].strip()


def _mycnf_value(rest: str) -> str:
    """The value after ``=``: quoted text kept whole, otherwise cut at a ``#`` comment (MySQL's rule)."""
    rest = rest.strip()
    if rest[:1] in ("'", '"'):
        quote = rest[0]
        end = rest.find(quote, 1)
        return rest[1:end] if end > 0 else rest[1:]
    return _strip_comment(rest)


def _mycnf_flag(key: str, value: str, has_value: bool) -> tuple[str, str]:
    """``skip-x`` / ``disable-x`` mean x=OFF and ``enable-x`` x=ON; a bare flag means ON."""
    for prefix, meaning in (("skip_", "OFF"), ("disable_", "OFF"), ("enable_", "ON")):
        if key.startswith(prefix) and key not in _REAL_SKIP_OPTIONS:
            negated = has_value and value.lower() in ({"0"} | _FALSE_WORDS)
            flipped = {"OFF": "ON", "ON": "OFF"}[meaning] if negated else meaning
            return key.removeprefix(prefix), flipped
    return key, value if has_value else "ON"


# --------------------------------------------------------------------------- postgresql.conf

_PG_LINE_RE = re.compile(r"^(?P<key>[A-Za-z_][\w.\-]*)\s*(?:=\s*|\s+)(?P<rest>.*)$")


def parse_pg_conf(text: str) -> Settings:
    """``key = value  # comment`` lines of postgresql.conf or a conf.diff; ``=`` is optional, quotes allowed."""
    settings: Settings = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        match = _PG_LINE_RE.match(line)
        if not match:
            continue
        settings[match["key"].lower()] = _pg_value(match["rest"])
    return settings


def _pg_value(rest: str) -> str:
    rest = rest.strip()
    if rest.startswith("'"):
        out: list[str] = []
        i = 1
        while i < len(rest):
            ch = rest[i]
            if ch == "'" and rest[i + 1 : i + 2] == "'":  # '' is a quote inside a quoted value
                out.append("'")
                i += 2
                continue
            if ch == "\\" and i + 1 < len(rest):
                out.append(rest[i + 1])
                i += 2
                continue
            if ch == "'":
                break
            out.append(ch)
            i += 1
        return "".join(out)
    return rest.split("#", 1)[0].strip()


# --------------------------------------------------------------------------- SHOW GLOBAL VARIABLES

_VERTICAL_NAME_RE = re.compile(r"^\s*Variable_name:\s?(.*)$")
_VERTICAL_VALUE_RE = re.compile(r"^\s*Value:\s?(.*)$")


def parse_show_variables(text: str) -> Settings:
    """``SHOW GLOBAL VARIABLES`` as the mysql client prints it: tab separated (batch), boxed table, or ``\\G``.

    Client warnings and repeated dumps in one file (``sb.o.myvac.show.1`` holds
    two) are skipped; the last value of a variable wins.
    """
    settings: Settings = {}
    pending: str | None = None
    for raw in text.splitlines():
        line = raw.rstrip("\r")
        if "\t" in line:
            name, value = line.split("\t", 1)
            if name != "Variable_name":
                settings[name.strip().lower()] = value
            continue
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|", 1)]
            if len(cells) == 2 and cells[0] != "Variable_name":
                settings[cells[0].lower()] = cells[1]
            continue
        if m := _VERTICAL_NAME_RE.match(line):
            pending = m[1].strip().lower()
        elif (m := _VERTICAL_VALUE_RE.match(line)) and pending is not None:
            settings[pending] = m[1]
            pending = None
    return settings


# --------------------------------------------------------------------------- psql show all

_SEPARATOR_RE = re.compile(r"^-+(\+-+)+$")


def parse_pg_show_all(text: str) -> Settings:
    """psql's ``show all`` (``name | setting | description``), aligned or unaligned (``-A``)."""
    lines = text.splitlines()
    cuts: list[int] | None = None
    for line in lines:
        if _SEPARATOR_RE.match(line.strip()):
            cuts = [i for i, ch in enumerate(line) if ch == "+"]
            break
    settings: Settings = {}
    last: str | None = None
    for line in lines:
        stripped = line.strip()
        if not stripped or _SEPARATOR_RE.match(stripped) or (stripped.startswith("(") and stripped.endswith(")")):
            continue
        if cuts and len(cuts) >= 2 and len(line) > cuts[1] and line[cuts[0]] == "|" and line[cuts[1]] == "|":
            # Column positions from the separator: a setting may itself hold " | ".
            name, setting = line[: cuts[0]].strip(), line[cuts[0] + 1 : cuts[1]].strip()
        else:
            parts = [p.strip() for p in line.split("|")]
            if len(parts) < 2:
                continue
            name, setting = parts[0], parts[1]
        if name == "name" and setting == "setting":
            continue
        if not name:
            # psql wraps a multi-line value onto continuation rows with an empty name cell.
            if last is not None:
                settings[last] = f"{settings[last].removesuffix('+').rstrip()}\n{setting.removesuffix('+').rstrip()}"
            continue
        settings[name.lower()] = setting.removesuffix("+").rstrip() if setting.endswith(" +") else setting
        last = name.lower()
    return settings


# --------------------------------------------------------------------------- /proc/meminfo

_MEMINFO_RE = re.compile(r"^(?P<key>[\w()]+):\s+(?P<value>\d+)(?:\s*(?P<unit>kB))?\s*$")


def parse_meminfo(text: str) -> Settings:
    """``Key: value [kB]`` lines of /proc/meminfo (the ``sb.hp.*`` files hold its hugepage lines)."""
    settings: Settings = {}
    for line in text.splitlines():
        if m := _MEMINFO_RE.match(line.strip()):
            settings[m["key"]] = f"{m['value']} kB" if m["unit"] else m["value"]
    return settings


@dataclass(frozen=True)
class HugePages:
    pages: int | None
    page_kb: int | None
    anon_kb: int | None  # transparent huge pages in use
    mem_total_kb: int | None

    @property
    def reserved_gb(self) -> float | None:
        if self.pages is None or self.page_kb is None:
            return None
        return self.pages * self.page_kb / 1024 / 1024

    @property
    def text(self) -> str:
        if self.pages is None:
            return "unknown"
        if self.pages == 0:
            return f"none reserved ({self.page_kb} kB pages)" if self.page_kb else "none reserved"
        return f"{self.pages} × {self.page_kb} kB = {self.reserved_gb:.1f} GB reserved"


def hugepages(meminfo: Settings) -> HugePages:
    def kb(key: str) -> int | None:
        value = meminfo.get(key)
        return int(value.split()[0]) if value else None

    return HugePages(
        pages=kb("HugePages_Total"),
        page_kb=kb("Hugepagesize"),
        anon_kb=kb("AnonHugePages"),
        mem_total_kb=kb("MemTotal"),
    )


# --------------------------------------------------------------------------- sysbench command line

# Options that say how to reach the server or what to print, not what the benchmark does.
_NOT_WORKLOAD = frozenset({"threads", "report-interval", "verbosity", "percentile", "histogram", "db-driver", "debug"})
_DRIVER_PREFIXES = ("mysql-", "pgsql-")
# Driver options that change what is measured (the storage engine of the tables).
_DRIVER_WORKLOAD = frozenset({"mysql-storage-engine"})
_BOOLEAN_OPTIONS = frozenset({"skip-trx", "secondary", "create-secondary", "auto-inc", "hot-points", "reconnect"})
_VERBS = frozenset({"run", "prepare", "cleanup", "help", "warmup"})


def sysbench_option_name(name: str) -> str:
    """sysbench accepts ``--table_size`` and ``--table-size`` alike."""
    return name.strip().lower().replace("_", "-")


def parse_sysbench_command(command: str) -> Settings:
    """The parameters of a sysbench command line, normalised; ``script`` is the Lua test it ran.

    Paths and passwords are left out: the script is named by its file name, so
    the same test run from another checkout is the same test.
    """
    options: Settings = {}
    for key, value in parse_command(command).items():
        name = sysbench_option_name(key)
        if name.endswith("password"):
            continue
        options[name] = _sysbench_value(name, value)
    # Whitespace words, as suites.sysbench.parse.parse_command reads options: shlex is too slow for thousands of lines.
    words = command.split()
    # Positionals are the binary, the test script and the verb; env assignments (LUA_PATH=…) come first.
    positional = [w for w in words if not w.startswith("--") and not re.match(r"^[A-Za-z_]\w*=", w)]
    positional = [w for w in positional if w not in _VERBS]
    if len(positional) >= 2:
        options["script"] = posixpath.basename(positional[1])
    return options


def _sysbench_value(name: str, value: str) -> str:
    lowered = value.lower()
    if value == "" or lowered in _TRUE_WORDS or (name in _BOOLEAN_OPTIONS and lowered == "1"):
        return "on"
    if lowered in _FALSE_WORDS or (name in _BOOLEAN_OPTIONS and lowered == "0"):
        return "off"
    return value


def is_workload_option(name: str) -> bool:
    """Whether a (normalised) sysbench option changes the benchmark, so that runs differing in it don't compare."""
    if name in _NOT_WORKLOAD:
        return False
    if name.startswith(_DRIVER_PREFIXES):
        return name in _DRIVER_WORKLOAD
    return True


# --------------------------------------------------------------------------- file → settings


def settings_for_file(name: str, kind: str, text: str) -> Settings:
    """Settings of a stored run file by its kind (``RunFile.Kind`` values)."""
    if kind == "config":
        return parse_mycnf(text) if looks_like_mycnf(name, text) else parse_pg_conf(text)
    if kind == "variables":
        return parse_show_variables(text)
    if kind == "pg_settings":
        return parse_pg_show_all(text)
    if kind == "hugepages":
        return parse_meminfo(text)
    return {}


def looks_like_mycnf(name: str, text: str) -> bool:
    """my.cnf by name, or by an ini section header (a MySQL ``conf.diff`` has ``[mysqld]``)."""
    return name == "my.cnf" or re.search(r"^\s*\[[\w.-]+\]\s*$", text, re.M) is not None


# --------------------------------------------------------------------------- comparing values

_SIZE_RE = re.compile(r"^(?P<n>\d+(?:\.\d+)?)\s*(?P<unit>b|k|kb|m|mb|g|gb|t|tb)$", re.I)
_SIZE_UNITS = {"b": 1, "k": 1024, "m": 1024**2, "g": 1024**3, "t": 1024**4}
_TIME_RE = re.compile(r"^(?P<n>\d+(?:\.\d+)?)\s*(?P<unit>us|ms|s|min|h|d)$")
_TIME_UNITS = {"us": 0.001, "ms": 1.0, "s": 1000.0, "min": 60_000.0, "h": 3_600_000.0, "d": 86_400_000.0}
_NUMBER_RE = re.compile(r"^-?\d+(?:\.\d+)?(?:e[+-]?\d+)?$", re.I)


def _quantity(value: str) -> tuple[str, float] | None:
    """(dimension, amount in base units) for sizes (bytes), durations (ms) and plain numbers."""
    text = value.strip().strip("'\"")
    if _NUMBER_RE.match(text):
        return "number", float(text)
    if m := _SIZE_RE.match(text):
        return "size", float(m["n"]) * _SIZE_UNITS[m["unit"][0].lower()]
    if m := _TIME_RE.match(text):
        return "time", float(m["n"]) * _TIME_UNITS[m["unit"]]
    return None


def _truth(value: str) -> bool | None:
    lowered = value.strip().strip("'\"").lower()
    if lowered in _TRUE_WORDS or lowered == "1":
        return True
    if lowered in _FALSE_WORDS or lowered == "0":
        return False
    return None


def same_value(a: str, b: str) -> bool:
    """Equal as the DBMS means them: ``1`` = ``1.000000``, ``24G`` = ``25769803776``, ``1024`` = ``1kB``, ON = 1.

    A bare number next to a size is taken as bytes (psql shows byte-valued
    settings of old versions without a unit); a bare number next to a duration
    is not guessed, so it shows as a change.
    """
    if a == b or a.strip().strip("'\"").lower() == b.strip().strip("'\"").lower():
        return True
    qa, qb = _quantity(a), _quantity(b)
    if qa and qb:
        dims = {qa[0], qb[0]}
        if len(dims) == 1 or dims == {"number", "size"}:
            return math.isclose(qa[1], qb[1], rel_tol=1e-9, abs_tol=1e-12)
        return False
    ta, tb = _truth(a), _truth(b)
    return ta is not None and ta == tb


# --------------------------------------------------------------------------- names that differ by nature

# Version strings, file paths and identities: they differ between any two builds and say nothing about performance.
IDENTITY_SETTINGS = frozenset(
    {
        # MySQL / MariaDB
        "version",
        "version_comment",
        "version_compile_machine",
        "version_compile_os",
        "version_compile_zlib",
        "version_source_revision",
        "innodb_version",
        "basedir",
        "datadir",
        "tmpdir",
        "character_sets_dir",
        "lc_messages_dir",
        "plugin_dir",
        "socket",
        "mysqlx_socket",
        "pid_file",
        "server_uuid",
        "gtid_executed",
        "gtid_purged",
        "hostname",
        "log_error",
        "general_log_file",
        "slow_query_log_file",
        "log_bin_basename",
        "log_bin_index",
        "relay_log",
        "relay_log_basename",
        "relay_log_index",
        "relay_log_info_file",
        "innodb_data_home_dir",
        "innodb_log_group_home_dir",
        "innodb_undo_directory",
        "innodb_temp_directory",
        "secure_file_priv",
        "ssl_ca",
        "ssl_cert",
        "ssl_key",
        # Postgres
        "server_version",
        "server_version_num",
        "data_directory",
        "config_file",
        "hba_file",
        "ident_file",
        "external_pid_file",
        "application_name",
    }
)

# Documented renames: the old name in one version and the new name in the other are one setting.
RENAMED = {
    # MySQL 5.7.20 added transaction_isolation/transaction_read_only; 8.0 removed the tx_ names.
    "tx_isolation": "transaction_isolation",
    "tx_read_only": "transaction_read_only",
    # Postgres 16 renamed force_parallel_mode to debug_parallel_query.
    "force_parallel_mode": "debug_parallel_query",
}


def renamed_to(name: str) -> list[str]:
    """Names a variable may carry in another version: RENAMED, and MySQL 8.0.26's slave→replica, master→source."""
    names = []
    if name in RENAMED:
        names.append(RENAMED[name])
    if "slave" in name:
        names.append(name.replace("slave", "replica"))
    if "master" in name:
        names.append(name.replace("master", "source"))
    return names


# --------------------------------------------------------------------------- defaults that changed


@dataclass(frozen=True)
class DefaultChange:
    family: str  # "MySQL" (also FB MyRocks), "MariaDB" or "Postgres"
    name: str
    version: str  # the first version with the new default
    old: str
    new: str
    source: str  # where the change is documented

    @property
    def text(self) -> str:
        return f"default changed in {self.family} {self.version}: {self.old} → {self.new}"


_MYSQL_57 = "MySQL 5.7 release notes"
_MYSQL_80 = "'New Defaults in MySQL 8.0' (MySQL Server Team); changed in the 8.0 milestones before GA 8.0.11"
_MYSQL_84 = "MySQL 8.4 manual, 'What Is New in MySQL 8.4 since 8.0': InnoDB default changes"


def _changes(family: str, version: str, source: str, *rows: tuple[str, str, str]) -> list[DefaultChange]:
    return [DefaultChange(family, name, version, old, new, source) for name, old, new in rows]


# Values are written as SHOW VARIABLES / show all print them, so a running value can be matched against them.
KNOWN_DEFAULT_CHANGES: tuple[DefaultChange, ...] = (
    # documented default change in MySQL 5.7.4: more index dives for IN() lists
    *_changes("MySQL", "5.7.4", _MYSQL_57, ("eq_range_index_dive_limit", "10", "200")),
    # documented default changes in MySQL 5.7.7 (replication and InnoDB defaults)
    *_changes(
        "MySQL",
        "5.7.7",
        _MYSQL_57,
        ("binlog_format", "STATEMENT", "ROW"),
        ("sync_binlog", "0", "1"),
        ("slave_net_timeout", "3600", "60"),
        ("binlog_error_action", "IGNORE_ERROR", "ABORT_SERVER"),
        ("innodb_strict_mode", "OFF", "ON"),
    ),
    # documented default change in MySQL 5.7.8
    *_changes("MySQL", "5.7.8", _MYSQL_57, ("table_open_cache_instances", "1", "16")),
    # documented default changes in MySQL 8.0 (server, InnoDB: WL#9630, WL#9631, WL#9707; replication)
    *_changes(
        "MySQL",
        "8.0",
        _MYSQL_80,
        ("character_set_server", "latin1", "utf8mb4"),
        ("collation_server", "latin1_swedish_ci", "utf8mb4_0900_ai_ci"),
        ("explicit_defaults_for_timestamp", "OFF", "ON"),
        ("optimizer_trace_max_mem_size", "16384", "1048576"),
        ("max_allowed_packet", "4194304", "67108864"),
        ("max_error_count", "64", "1024"),
        ("event_scheduler", "OFF", "ON"),
        ("table_open_cache", "2000", "4000"),
        ("local_infile", "ON", "OFF"),
        ("innodb_max_dirty_pages_pct", "75", "90"),
        ("innodb_max_dirty_pages_pct_lwm", "0", "10"),
        ("innodb_flush_neighbors", "1", "0"),
        ("innodb_autoinc_lock_mode", "1", "2"),
        ("innodb_undo_tablespaces", "0", "2"),
        ("innodb_undo_log_truncate", "OFF", "ON"),
        ("log_bin", "OFF", "ON"),
        ("log_slave_updates", "OFF", "ON"),
        ("expire_logs_days", "0", "30"),
        ("master_info_repository", "FILE", "TABLE"),
        ("relay_log_info_repository", "FILE", "TABLE"),
        ("transaction_write_set_extraction", "OFF", "XXHASH64"),
    ),
    # documented default change in MySQL 8.0.20 (the variable was deprecated at the same time)
    *_changes("MySQL", "8.0.20", "MySQL 8.0.20 release notes", ("max_length_for_sort_data", "1024", "4096")),
    # documented default changes in MySQL 8.0.27: multithreaded replicas by default
    *_changes(
        "MySQL",
        "8.0.27",
        "MySQL 8.0.27 release notes",
        ("replica_parallel_workers", "0", "4"),
        ("slave_parallel_workers", "0", "4"),
        ("replica_parallel_type", "DATABASE", "LOGICAL_CLOCK"),
        ("slave_parallel_type", "DATABASE", "LOGICAL_CLOCK"),
        ("replica_preserve_commit_order", "OFF", "ON"),
        ("slave_preserve_commit_order", "OFF", "ON"),
    ),
    # documented default changes in MySQL 8.4.0 (InnoDB defaults for current hardware)
    *_changes(
        "MySQL",
        "8.4.0",
        _MYSQL_84,
        ("innodb_adaptive_hash_index", "ON", "OFF"),
        ("innodb_change_buffering", "all", "none"),
        ("innodb_flush_method", "fsync", "O_DIRECT"),
        ("innodb_io_capacity", "200", "10000"),
        ("innodb_log_buffer_size", "16777216", "67108864"),
        ("innodb_numa_interleave", "OFF", "ON"),
        ("innodb_use_fdatasync", "OFF", "ON"),
        ("temptable_use_mmap", "ON", "OFF"),
    ),
    # documented default change in MariaDB 10.6 (MDEV-24854)
    *_changes("MariaDB", "10.6.0", "MariaDB 10.6 notes, MDEV-24854", ("innodb_flush_method", "fsync", "O_DIRECT")),
    # documented default change in Postgres 9.0.2 (and 8.4.6): fdatasync forced on Linux, where newer kernels
    # had made it pick open_datasync
    *_changes("Postgres", "9.0.2", "Postgres 9.0.2 release notes", ("wal_sync_method", "open_datasync", "fdatasync")),
    # documented default changes in Postgres 10: replication-ready out of the box
    *_changes(
        "Postgres",
        "10",
        "Postgres 10 release notes",
        ("wal_level", "minimal", "replica"),
        ("max_wal_senders", "0", "10"),
        ("max_replication_slots", "0", "10"),
        ("hot_standby", "off", "on"),
        ("log_line_prefix", "", "%m [%p] "),
    ),
    # documented default changes in Postgres 12
    *_changes(
        "Postgres",
        "12",
        "Postgres 12 release notes",
        ("jit", "off", "on"),
        ("autovacuum_vacuum_cost_delay", "20ms", "2ms"),
        ("extra_float_digits", "0", "1"),
    ),
    # documented default changes in Postgres 14
    *_changes(
        "Postgres",
        "14",
        "Postgres 14 release notes",
        ("password_encryption", "md5", "scram-sha-256"),
        ("vacuum_cost_page_miss", "10", "2"),
        ("checkpoint_completion_target", "0.5", "0.9"),
    ),
    # documented default changes in Postgres 15
    *_changes(
        "Postgres",
        "15",
        "Postgres 15 release notes",
        ("hash_mem_multiplier", "1", "2"),
        ("log_checkpoints", "off", "on"),
        ("log_autovacuum_min_duration", "-1", "10min"),
    ),
    # documented default change in Postgres 17
    *_changes("Postgres", "17", "Postgres 17 release notes", ("vacuum_buffer_usage_limit", "256kB", "2MB")),
    # documented default changes in Postgres 18
    *_changes(
        "Postgres",
        "18",
        "Postgres 18 release notes",
        ("effective_io_concurrency", "1", "16"),
        ("maintenance_io_concurrency", "10", "16"),
    ),
)

# Forks that inherit MySQL's defaults.
_FAMILIES = {"MySQL": "MySQL", "FB MyRocks": "MySQL", "Percona Server": "MySQL", "MariaDB": "MariaDB"}


def family(dbms: str) -> str:
    return _FAMILIES.get(dbms, dbms)


def default_changes_between(
    dbms: str, version_a: str, version_b: str, names: Iterable[str] | None = None
) -> list[DefaultChange]:
    """Known default changes that lie between two versions (either order), optionally only for ``names``."""
    try:
        a, b = _release(version_a), _release(version_b)
    except VersionError:
        return []
    low, high = min(a, b), max(a, b)
    wanted = set(names) if names is not None else None
    fam = family(dbms)
    return [
        change
        for change in KNOWN_DEFAULT_CHANGES
        if change.family == fam and (wanted is None or change.name in wanted) and low < _release(change.version) <= high
    ]


def _release(version: str) -> tuple[int, ...]:
    """Release numbers padded to four parts; a beta of 18 already has 18's defaults, so the stage is ignored."""
    release = parse_version(version).release
    return release + (0,) * (4 - len(release))
