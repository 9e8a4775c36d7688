"""Run-directory names to run metadata.

``x.<build>.<config>.pk<0|1>``: the build token starts with a DBMS code and the
version digits (``my8406`` MySQL 8.4.6, ``ma110402`` MariaDB 11.4.2, ``pg174``
Postgres 17.4, ``pg18beta1``, ``fbmy5635`` FB MyRocks 5.6.35); what follows the
version is the build flavour (``v2_rel_o2nofp``). The next dot-separated part
is the config (``z12a_c8r32``).

A name whose DBMS code is not known still imports, as DBMS "Unknown", and the
caller is told (``RunName.warnings``): we never guess silently.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from suites.sysbench.parse import ParseError

UNKNOWN_DBMS = "Unknown"
# The widest parts the database stores (runs.models: Run.name, Build.name, Config.name, Version.text).
MAX_NAME, MAX_BUILD, MAX_CONFIG, MAX_VERSION = 255, 200, 200, 64


class RunNameError(ParseError):
    """A run directory name of the right shape that no run can have: one of its parts is too long to store."""


# Longest code first: "fbmy" must win over "my". The Insert Benchmark's archives name builds by engine: ``rx56``,
# ``rx80`` (MyRocks 5.6, 8.0), ``in80`` (InnoDB, MySQL 8.0), ``mo40`` (MongoDB 4.0).
DBMS_CODES: dict[str, str] = {
    "fbmy": "FB MyRocks",
    "my": "MySQL",
    "ma": "MariaDB",
    "pg": "Postgres",
    "rx": "FB MyRocks",
    "in": "MySQL",
    "mo": "MongoDB",
}
# Postgres with a fork's patches over a release: ``pg_oriole_patches17_5_o2nofp`` is OrioleDB's patches over
# Postgres 17.5. Stored as Postgres of that version, the fork first in the flavour (``oriole_o2nofp``), so its
# pages say it and it never merges with the stock build.
_PG_FORK_RE = re.compile(r"^pg_(?P<fork>[a-z][a-z0-9]*)_patches(?P<major>\d+)_(?P<minor>\d+)(?P<rest>.*)$")
# The forks known by name, as their pages call them.
PG_FORKS = {"oriole": "OrioleDB"}

RUN_DIR_RE = re.compile(r"^x\.(?P<build>[^.]+)\.(?P<config>.+?)\.pk(?P<pk>[01])$")
_CODE_RE = re.compile(r"^(?P<code>" + "|".join(sorted(DBMS_CODES, key=len, reverse=True)) + r")(?P<rest>\d.*)$")
_DIGITS_RE = re.compile(r"^(?P<digits>\d+)(?P<pre>(?:alpha|beta|rc)\d*)?(?P<flavour>.*)$")
_CONFIG_HW_RE = re.compile(r"_c(?P<cores>\d+)r(?P<ram>\d+)$")


@dataclass(frozen=True)
class RunName:
    name: str
    build: str
    dbms: str
    version: str
    flavour: str
    config: str
    pk: int
    warnings: tuple[str, ...] = field(default=())

    @property
    def config_cores(self) -> int | None:
        """Cores the config was sized for (``_c8r32`` → 8), not necessarily the server's."""
        match = _CONFIG_HW_RE.search(self.config)
        return int(match["cores"]) if match else None

    @property
    def config_ram_gb(self) -> int | None:
        match = _CONFIG_HW_RE.search(self.config)
        return int(match["ram"]) if match else None


def _split_digits(code: str, digits: str) -> str:
    """Version digits to a dotted version, by each DBMS's naming convention."""
    if code == "pg":
        # Postgres 10 and later: major.minor (pg1023, pg174); before: 9.6.24 as pg9624.
        if digits.startswith("1") and len(digits) >= 3:
            return f"{int(digits[:2])}.{int(digits[2:])}"
        if digits.startswith("1") and len(digits) == 2:
            return str(int(digits))
        if len(digits) >= 3:
            return f"{digits[0]}.{digits[1]}.{int(digits[2:])}"
        return ".".join(digits)
    if code == "ma" and digits.startswith("1") and len(digits) >= 5:
        # MariaDB 10 and later: two digits each (ma100244 → 10.2.44, ma110402 → 11.4.2).
        return f"{int(digits[:2])}.{int(digits[2:4])}.{int(digits[4:])}"
    # MySQL, FB MyRocks, MariaDB 5.x: major, minor, then the patch (my8406 → 8.4.6, my5651 → 5.6.51).
    if len(digits) >= 3:
        return f"{digits[0]}.{digits[1]}.{int(digits[2:])}"
    return ".".join(digits)


def parse_build(build: str) -> tuple[str, str, str, list[str]]:
    """Build token → (dbms, version, flavour, warnings)."""
    fork = _PG_FORK_RE.match(build)
    if fork:
        warnings = (
            []
            if fork["fork"] in PG_FORKS
            else [
                f"build {build!r}: Postgres with the patches of an unknown "
                f"fork {fork['fork']!r} (known: {', '.join(PG_FORKS)})"
            ]
        )
        flavour = fork["fork"] + fork["rest"]
        return DBMS_CODES["pg"], f"{int(fork['major'])}.{int(fork['minor'])}", flavour, warnings
    match = _CODE_RE.match(build)
    if not match:
        prefix = re.split(r"\d", build, maxsplit=1)[0]
        what = f"unknown DBMS code {prefix!r}" if prefix else "no DBMS code"
        warning = f"build {build!r}: {what} (known: {', '.join(DBMS_CODES)}); imported as DBMS {UNKNOWN_DBMS!r}"
        return UNKNOWN_DBMS, build, "", [warning]
    code, rest = match["code"], match["rest"]
    parts = _DIGITS_RE.match(rest)
    assert parts is not None  # rest starts with a digit
    version = _split_digits(code, parts["digits"])
    if parts["pre"]:
        version += parts["pre"]
    flavour = parts["flavour"].lstrip("_")
    return DBMS_CODES[code], version, flavour, []


def parse_run_dir(name: str) -> RunName:
    """Parse ``x.<build>.<config>.pk<P>``; raises ValueError when the name is not of that shape.

    A name of that shape with a part too long to store raises RunNameError (a ValueError and a sysbench
    ParseError, so an import reports it like any other bad file).
    """
    match = RUN_DIR_RE.match(name)
    if not match:
        raise ValueError(f"{name!r} is not a run directory name (x.<build>.<config>.pk<0|1>)")
    dbms, version, flavour, warnings = parse_build(match["build"])
    for part, value, limit in (
        ("name", name, MAX_NAME),
        ("build", match["build"], MAX_BUILD),
        ("config", match["config"], MAX_CONFIG),
        ("version", version, MAX_VERSION),
    ):
        if len(value) > limit:
            raise RunNameError(
                f"run directory {name[:60]!r}…: its {part} is {len(value)} characters long, over the {limit} "
                "a run can have (rename the directory)"
            )
    return RunName(
        name=name,
        build=match["build"],
        dbms=dbms,
        version=version,
        flavour=flavour,
        config=match["config"],
        pk=int(match["pk"]),
        warnings=tuple(warnings),
    )
