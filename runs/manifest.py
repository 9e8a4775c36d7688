"""The optional bundle manifest, ``benchdash.toml``: metadata the directory names cannot carry.

It may sit at the bundle's root (applies to every run) or inside a run directory
(applies to that run). Example::

    server = "pn53"                      # server name for every run
    workload = "cached, 1 table"         # workload label (else derived from the command lines)

    [server_info]                        # facts about that server
    cpus = 8
    ram_gb = 32
    storage = "NVMe SSD"
    os = "Ubuntu 24.04"

    [runs."x.my8406v2_rel_o2nofp.z12a_c8r32.pk1"]
    dbms = "MySQL"
    version = "8.4.6"
    flavour = "v2_rel_o2nofp"
    config = "z12a_c8r32"
    notes = "built with -O2 -fno-omit-frame-pointer"

Where the build's code came from (what CI knows; the root or a run table)::

    commit = "3f2a9c1e0b7d"              # git commit id
    branch = "main"
    pull_request = 1234
    repository = "acme/mariadb-server"   # owner/name, or the repository's URL
    commit_time = 2025-10-01T04:12:00Z

Keys of a run table: dbms, version, build, flavour, config, server, workload, concurrency, notes,
attach_existing, commit, branch, pull_request, repository, commit_time. ``concurrency`` is for summary tables
(qps.abs.*) that do not say theirs (neither an o.met beside them nor a dop<N> in their name or folder does):
their runs' results are stored at it.

Run directories published under plain folder names (``fbmy56/``) are named in a ``[run_dirs]`` table:
folder name → the run directory name it stands for, which then says DBMS, version, build and config::

    [run_dirs]
    fbmy56 = "x.fbmy5635_rel.c8r32.pk1"

Unknown keys are an error, so a typo is never ignored silently.
"""

from __future__ import annotations

import re
import tomllib
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from runs.commits import check_commit, check_repository

if TYPE_CHECKING:
    from runs.bundle import KeptFile

MANIFEST_NAME = "benchdash.toml"


class ManifestError(ValueError):
    pass


# The widest values the database stores (runs.models); a longer one is an error here, with the key's name.
_INT_MAX = 2**31 - 1


class RunMeta(BaseModel):
    model_config = ConfigDict(extra="forbid")

    dbms: str | None = Field(default=None, max_length=64)
    version: str | None = Field(default=None, max_length=64)
    build: str | None = Field(default=None, max_length=200)
    flavour: str | None = Field(default=None, max_length=200)
    config: str | None = Field(default=None, max_length=200)
    server: str | None = Field(default=None, max_length=200)
    workload: str | None = Field(default=None, max_length=200)
    # The concurrency (client threads) of runs read from summary tables that do not say it themselves; every
    # other result file names its own, and that is what is stored.
    concurrency: int | None = Field(default=None, ge=1, le=_INT_MAX)
    notes: str | None = None
    # Results already imported for another server or workload are added to this series too, instead of
    # being skipped (a base run shared by two series, a run first uploaded under the wrong server name).
    attach_existing: bool | None = None
    # Where the build's code came from: see runs.commits.
    commit: str | None = Field(default=None, max_length=64)
    branch: str | None = Field(default=None, max_length=200)
    pull_request: int | None = Field(default=None, ge=1, le=_INT_MAX)
    repository: str | None = Field(default=None, max_length=200)
    commit_time: datetime | None = None

    @field_validator("commit")
    @classmethod
    def _commit_id(cls, value: str | None) -> str | None:
        return None if value is None else check_commit(value)

    @field_validator("repository")
    @classmethod
    def _repository(cls, value: str | None) -> str | None:
        return None if value is None else check_repository(value)

    @field_validator("branch")
    @classmethod
    def _branch(cls, value: str | None) -> str | None:
        if value is not None and (not value.strip() or any(c.isspace() for c in value)):
            raise ValueError(f"{value!r} is not a branch name (no spaces)")
        return value

    @field_validator("commit_time")
    @classmethod
    def _aware(cls, value: datetime | None) -> datetime | None:
        # A time without a zone is read as UTC, as the rest of benchdash stores times.
        return value.replace(tzinfo=UTC) if value is not None and value.tzinfo is None else value


class ServerInfo(BaseModel):
    model_config = ConfigDict(extra="forbid")

    cpus: int | None = Field(default=None, ge=1, le=_INT_MAX)
    ram_gb: int | None = Field(default=None, ge=1, le=_INT_MAX)
    storage: str | None = Field(default=None, max_length=200)
    os: str | None = Field(default=None, max_length=200)
    governor: str | None = Field(default=None, max_length=64)


RUN_DIR_NAME_RE = re.compile(r"x\.[^./]+\.[^/]+\.pk[01]")


class Manifest(RunMeta):
    server_info: ServerInfo | None = None
    runs: dict[str, RunMeta] = Field(default_factory=dict)
    run_dirs: dict[str, str] = Field(default_factory=dict)

    @field_validator("run_dirs")
    @classmethod
    def _run_dir_names(cls, value: dict[str, str]) -> dict[str, str]:
        for folder, name in value.items():
            if "/" in folder or not folder:
                raise ValueError(f"{folder!r}: give the folder's own name, not a path")
            if RUN_DIR_NAME_RE.fullmatch(name) is None or len(name) > 255:
                raise ValueError(
                    f"{folder!r} = {name!r}: a run directory name is x.<build>.<config>.pk<0|1> "
                    "(e.g. x.fbmy5635_rel.c8r32.pk1)"
                )
        return value

    def for_run(self, name: str) -> RunMeta:
        """This manifest's defaults overlaid with what it says of run ``name``."""
        base = self.model_dump(include=set(RunMeta.model_fields), exclude_none=True)
        specific = self.runs.get(name)
        if specific is not None:
            base.update(specific.model_dump(exclude_none=True))
        return RunMeta(**base)


def _nul_in(value: object, path: str) -> str | None:
    """The dotted key of the first string (value or key) holding a NUL, which no database column can store."""
    if isinstance(value, str):
        return path if "\x00" in value else None
    if isinstance(value, dict):
        for key, item in value.items():
            where = f"{path}.{key}" if path else str(key)
            if "\x00" in str(key):
                return where
            found = _nul_in(item, where)
            if found:
                return found
    if isinstance(value, list):
        for n, item in enumerate(value):
            found = _nul_in(item, f"{path}[{n}]")
            if found:
                return found
    return None


def parse_manifest(content: bytes | KeptFile, *, where: str = MANIFEST_NAME) -> Manifest:
    try:
        data = tomllib.loads(content.decode("utf-8"))
        nul = _nul_in(data, "")
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ManifestError(f"{where}: not valid TOML: {exc}") from exc
    except RecursionError as exc:
        # tomllib parses nested arrays and inline tables recursively; no real manifest nests beyond a few levels.
        raise ManifestError(f"{where}: manifest nested too deeply") from exc
    if nul is not None:
        raise ManifestError(f"{where}: manifest value {nul!r} contains a NUL byte")
    try:
        return Manifest.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in exc.errors(include_url=False)
        )
        raise ManifestError(f"{where}: {problems}") from exc


def check_upload_fields(fields: dict[str, Any]) -> dict[str, Any]:
    """The upload form's or the API's metadata fields as ``RunMeta`` reads them (blank ones dropped), for the
    bundle's overrides; ManifestError naming each bad field. JSON-safe: the commit time stays a string."""
    given = {key: value for key, value in fields.items() if value not in (None, "")}
    nul = _nul_in(given, "")
    if nul is not None:
        raise ManifestError(f"{nul}: contains a NUL byte")
    try:
        RunMeta(**given)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in exc.errors(include_url=False)
        )
        raise ManifestError(problems) from exc
    return given
