"""What changed between two runs: settings, command lines, and workload mismatches.

Pure: it takes parsed settings (``runs.configs``) and command lines, never the
database. ``reports.diff_views`` loads the runs and hands them here; so does
``reports.explain``.

Three kinds of difference matter to a regression hunt:

- settings only in one run, or with another value, per source (config file,
  server variables, Postgres ``show all``, hugepages); a change whose default is
  documented to have moved between the two versions is highlighted, because
  the config did not change, the server did;
- sysbench command-line differences per microbenchmark;
- workload mismatches across the runs of a comparison (table size, tables,
  range size, seconds, prepared statements, …): relative QPS is then
  meaningless, so ``workload_mismatch`` says so loudly.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from runs import configs
from runs.configs import DefaultChange, Settings

# Sources in the order a reader wants them, with what each one is.
SOURCES: tuple[tuple[str, str], ...] = (
    ("config", "Config file (my.cnf / conf.diff)"),
    ("variables", "Server variables (SHOW GLOBAL VARIABLES)"),
    ("pg_settings", "Postgres settings (show all)"),
    ("hugepages", "Huge pages (/proc/meminfo)"),
)
# Where the value a server actually ran with is found, to check an unpinned default change.
_RUNNING_SOURCES = ("variables", "pg_settings")
NOT_SET = "(not set)"


@dataclass(frozen=True)
class RunSettings:
    """What one run says about itself, parsed: the input of every diff here."""

    name: str
    dbms: str
    version: str
    sources: Mapping[str, Settings]
    commands: Mapping[str, str] = field(default_factory=dict)
    sysbench_version: str = ""


def run_settings(
    name: str,
    dbms: str,
    version: str,
    files: Iterable[tuple[str, str, str]],
    *,
    config_text: str = "",
    commands: Mapping[str, str] | None = None,
    sysbench_version: str = "",
) -> RunSettings:
    """A run's settings from its stored files ``(name, kind, text)``; ``config_text`` when no config file is stored."""
    sources: dict[str, Settings] = {}
    for file_name, kind, text in files:
        if kind in dict(SOURCES) and kind not in sources:
            sources[kind] = configs.settings_for_file(file_name, kind, text)
    if "config" not in sources and config_text.strip():
        sources["config"] = configs.settings_for_file("", "config", config_text)
    return RunSettings(
        name=name,
        dbms=dbms,
        version=version,
        sources=sources,
        commands=dict(commands or {}),
        sysbench_version=sysbench_version,
    )


# --------------------------------------------------------------------------- settings


@dataclass
class SettingDiff:
    name: str
    a: str | None
    b: str | None
    name_b: str | None = None  # the other version's name when the setting was renamed
    defaults: list[DefaultChange] = field(default_factory=list)
    items_only_a: list[str] = field(default_factory=list)
    items_only_b: list[str] = field(default_factory=list)

    @property
    def highlighted(self) -> bool:
        """Both runs have the setting, with other values, and its documented default moved between the versions.

        A setting only one version has is not highlighted: its default notes are
        shown, but nothing "changed" from the reader's config.
        """
        return bool(self.defaults) and self.a is not None and self.b is not None

    @property
    def matches_documented(self) -> bool:
        """Both values are exactly the documented old and new defaults (in either direction)."""
        if self.a is None or self.b is None:
            return False
        return any(
            (configs.same_value(self.a, d.old) and configs.same_value(self.b, d.new))
            or (configs.same_value(self.a, d.new) and configs.same_value(self.b, d.old))
            for d in self.defaults
        )


@dataclass
class SourceDiff:
    source: str
    title: str
    in_a: bool
    in_b: bool
    only_a: list[SettingDiff] = field(default_factory=list)
    only_b: list[SettingDiff] = field(default_factory=list)
    changed: list[SettingDiff] = field(default_factory=list)
    renamed: list[SettingDiff] = field(default_factory=list)
    identity: list[SettingDiff] = field(default_factory=list)  # versions, paths, ids: differ by nature
    same: int = 0

    @property
    def compared(self) -> bool:
        return self.in_a and self.in_b

    @property
    def highlighted(self) -> list[SettingDiff]:
        return [d for d in self.changed + self.renamed if d.highlighted]

    @property
    def differences(self) -> int:
        return len(self.only_a) + len(self.only_b) + len(self.changed) + len(self.renamed)


def diff_settings(
    a: Settings,
    b: Settings,
    *,
    source: str = "",
    title: str = "",
    dbms: str = "",
    version_a: str = "",
    version_b: str = "",
) -> SourceDiff:
    """Settings only in A, only in B, renamed, changed (values compared as the DBMS means them)."""
    result = SourceDiff(source=source, title=title or source, in_a=True, in_b=True)
    known: dict[str, list[DefaultChange]] = defaultdict(list)
    if dbms and version_a and version_b:
        for change in configs.default_changes_between(dbms, version_a, version_b):
            known[change.name].append(change)

    only_a = sorted(set(a) - set(b))
    only_b = set(b) - set(a)
    renamed_a: set[str] = set()
    for name in only_a:
        # A documented rename: tx_isolation in 5.7, transaction_isolation in 8.0 is one setting.
        new = next((n for n in configs.renamed_to(name) if n in only_b), None)
        if new is None:
            continue
        renamed_a.add(name)
        only_b.discard(new)
        entry = SettingDiff(name, a[name], b[new], name_b=new, defaults=known.get(name, []) + known.get(new, []))
        result.renamed.append(entry)
    for name in only_a:
        if name not in renamed_a:
            result.only_a.append(SettingDiff(name, a[name], None, defaults=known.get(name, [])))
    for name in sorted(only_b):
        result.only_b.append(SettingDiff(name, None, b[name], defaults=known.get(name, [])))
    for name in sorted(set(a) & set(b)):
        if configs.same_value(a[name], b[name]):
            result.same += 1
            continue
        entry = SettingDiff(name, a[name], b[name], defaults=known.get(name, []))
        entry.items_only_a, entry.items_only_b = _list_delta(a[name], b[name])
        (result.identity if name in configs.IDENTITY_SETTINGS else result.changed).append(entry)
    return result


def _list_delta(a: str, b: str) -> tuple[list[str], list[str]]:
    """For comma lists (sql_mode, optimizer_switch): the items only in each, which say more than two long strings."""
    if "," not in a and "," not in b:
        return [], []
    items_a = [i.strip() for i in a.split(",") if i.strip()]
    items_b = [i.strip() for i in b.split(",") if i.strip()]
    return [i for i in items_a if i not in items_b], [i for i in items_b if i not in items_a]


# --------------------------------------------------------------------------- command lines


@dataclass
class OptionDiff:
    """One sysbench option with another value in B than in A, on the listed microbenchmarks."""

    option: str
    a: str
    b: str
    labels: list[str]
    workload: bool  # changes what is measured (not just threads or connection details)

    @property
    def flag(self) -> str:
        return option_text(self.option)


def option_text(option: str) -> str:
    """How a parsed sysbench parameter is written: ``--table-size``; the test script is no option."""
    return "the Lua script" if option == "script" else f"--{option}"


@dataclass
class CommandDiff:
    shared: int
    only_a: list[str]
    only_b: list[str]
    options: list[OptionDiff]

    @property
    def workload(self) -> list[OptionDiff]:
        return [o for o in self.options if o.workload]


def command_differences(a: Mapping[str, str], b: Mapping[str, str]) -> CommandDiff:
    """sysbench parameters that differ, per microbenchmark label, grouped by (option, value in A, value in B)."""
    shared = sorted(set(a) & set(b))
    grouped: dict[tuple[str, str, str], list[str]] = defaultdict(list)
    for label in shared:
        if a[label] == b[label]:
            continue  # the very same command line differs in no option (most labels of two runs of a series)
        opts_a, opts_b = configs.parse_sysbench_command(a[label]), configs.parse_sysbench_command(b[label])
        for option in sorted(set(opts_a) | set(opts_b)):
            va, vb = opts_a.get(option, NOT_SET), opts_b.get(option, NOT_SET)
            if va != vb:
                grouped[(option, va, vb)].append(label)
    options = [
        OptionDiff(option, va, vb, labels, configs.is_workload_option(option))
        # Workload options first: they are the ones that make the two runs incomparable.
        for (option, va, vb), labels in sorted(
            grouped.items(), key=lambda kv: (not configs.is_workload_option(kv[0][0]), kv[0])
        )
    ]
    return CommandDiff(
        shared=len(shared), only_a=sorted(set(a) - set(b)), only_b=sorted(set(b) - set(a)), options=options
    )


# --------------------------------------------------------------------------- workload mismatch


class HasCommands(Protocol):
    """A run as far as workload checks need it: ``runs.models.Run`` or anything with these two."""

    @property
    def name(self) -> str: ...

    @property
    def commands(self) -> Mapping[str, str] | None: ...


# A series' command lines, parsed once per process: every comparison of the series checks the same ones. Only read.
_parsed = functools.lru_cache(maxsize=4096)(configs.parse_sysbench_command)


def workload_mismatch(runs: Sequence[HasCommands]) -> list[str]:
    """LOUD warnings when the runs differ in workload parameters on the same microbenchmark.

    Threads are left out: a comparison is read at one concurrency. Every other
    option counts (table size, tables, range size, seconds, prepared statements,
    rand-type, skip-trx, the Lua script, options of custom scripts), because a
    run that read more rows or ran longer gives a QPS that no ratio can use.
    """
    # Runs of a series repeat the same command lines: parse each distinct one once (60 runs × 42 tests), and
    # compare options only on microbenchmarks whose runs do not all share one command line, since runs that
    # ran the very same command cannot differ in any option of it.
    cache: dict[str, Settings] = {}
    commands_per_label: dict[str, dict[str, None]] = defaultdict(dict)  # label -> its distinct command lines
    runs_per_label: dict[str, int] = defaultdict(int)
    # Runs read together often share one map of command lines (a comparison's series decodes each distinct one
    # once): each map is read once, counted for every run that has it.
    maps: dict[int, tuple[Mapping[str, str], int]] = {}
    for run in runs:
        commands = run.commands or {}
        _, count = maps.get(id(commands), (commands, 0))
        maps[id(commands)] = (commands, count + 1)
    for commands, count in maps.values():
        for label, command in commands.items():
            if command not in cache:
                cache[command] = _parsed(command)
            commands_per_label[label][command] = None
            runs_per_label[label] += count
    shared = {label for label, n in runs_per_label.items() if n > 1}
    options = {o for label in shared for command in commands_per_label[label] for o in cache[command]}
    options = {o for o in options if configs.is_workload_option(o)}
    varying = {label for label in shared if len(commands_per_label[label]) > 1}
    seen = _values_seen(runs, shared, varying, options, cache)
    warnings = []
    for option in sorted(seen, key=_option_order):
        differing = {label: values for label, values in seen[option].items() if len(values) > 1}
        if not differing:
            continue
        parts = "; ".join(f"{value} in {_names(names)}" for value, names in sorted(_runs_by_value(differing).items()))
        warnings.append(
            f"WORKLOAD MISMATCH: {option_text(option)} differs between runs ({parts}) on {len(differing)} of "
            f"{len(shared)} shared microbenchmarks; relative QPS between these runs is meaningless"
        )
    return warnings


def _values_seen(
    runs: Sequence[HasCommands],
    shared: set[str],
    varying: set[str],
    options: set[str],
    cache: Mapping[str, Settings],
) -> dict[str, dict[str, dict[str, list[str]]]]:
    """option → label → value → the runs that ran the label with that value, over the labels whose runs ran
    more than one command line."""
    seen: dict[str, dict[str, dict[str, list[str]]]] = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    for run in runs if varying else ():
        commands = run.commands or {}
        for label in shared & set(commands):
            if label not in varying:
                continue
            settings = cache[commands[label]]
            for option in options:
                seen[option][label][settings.get(option, NOT_SET)].append(run.name)
    return seen


def _runs_by_value(differing: Mapping[str, Mapping[str, list[str]]]) -> dict[str, list[str]]:
    """Which run had which value, over all microbenchmarks where they differ."""
    runs_by_value: dict[str, list[str]] = defaultdict(list)
    for values in differing.values():
        for value, names in values.items():
            for name in names:
                if name not in runs_by_value[value]:
                    runs_by_value[value].append(name)
    return runs_by_value


# The parameters write-ups name first come first.
_FIRST = ("table-size", "tables", "range-size", "time", "db-ps-mode", "rand-type", "skip-trx", "script")


def _option_order(option: str) -> tuple[int, str]:
    return (_FIRST.index(option) if option in _FIRST else len(_FIRST), option)


def _names(names: Sequence[str], limit: int = 3) -> str:
    shown = ", ".join(names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


# --------------------------------------------------------------------------- two runs


@dataclass
class DefaultChangeRow:
    """A documented default change between the two versions, and whether it reached the runs."""

    change: DefaultChange
    set_in_a: str | None
    set_in_b: str | None
    running_a: str | None
    running_b: str | None
    has_config_a: bool = True
    has_config_b: bool = True

    @property
    def pinned(self) -> bool:
        """Both configs set it: the default does not matter to these runs."""
        return self.set_in_a is not None and self.set_in_b is not None

    @property
    def applies(self) -> bool | None:
        """Whether the runs ran with other values because of it; None when the bundles cannot tell.

        The running values decide when both are known; otherwise the configs,
        when both runs have one: a setting neither config pins took the default.
        """
        if self.running_a is not None and self.running_b is not None:
            return not configs.same_value(self.running_a, self.running_b)
        if self.has_config_a and self.has_config_b:
            return not self.pinned
        return None


@dataclass
class RunDiff:
    a: RunSettings
    b: RunSettings
    sources: list[SourceDiff]
    commands: CommandDiff
    default_changes: list[DefaultChangeRow]
    warnings: list[str]

    @property
    def highlighted(self) -> list[tuple[str, SettingDiff]]:
        """(source title, setting) of every highlighted change, over all sources."""
        return [(s.title, d) for s in self.sources for d in s.highlighted]

    @property
    def differences(self) -> int:
        return sum(s.differences for s in self.sources)


def diff_runs(a: RunSettings, b: RunSettings) -> RunDiff:
    same_family = configs.family(a.dbms) == configs.family(b.dbms)
    dbms = a.dbms if same_family else ""
    sources = []
    for source, title in SOURCES:
        in_a, in_b = source in a.sources, source in b.sources
        if not in_a and not in_b:
            continue
        if in_a and in_b:
            diff = diff_settings(
                a.sources[source],
                b.sources[source],
                source=source,
                title=title,
                dbms=dbms,
                version_a=a.version,
                version_b=b.version,
            )
        else:
            # One run lacks the file: listing hundreds of "only in" rows would hide that it is simply missing.
            diff = SourceDiff(source=source, title=title, in_a=in_a, in_b=in_b)
        sources.append(diff)

    rows = []
    if dbms:
        config_a, config_b = a.sources.get("config", {}), b.sources.get("config", {})
        running_a = _running(a)
        running_b = _running(b)
        for change in configs.default_changes_between(dbms, a.version, b.version):
            rows.append(
                DefaultChangeRow(
                    change=change,
                    set_in_a=config_a.get(change.name),
                    set_in_b=config_b.get(change.name),
                    running_a=running_a.get(change.name),
                    running_b=running_b.get(change.name),
                    has_config_a="config" in a.sources,
                    has_config_b="config" in b.sources,
                )
            )

    warnings = workload_mismatch([_Named(a.name, a.commands), _Named(b.name, b.commands)])
    if a.sysbench_version and b.sysbench_version and a.sysbench_version != b.sysbench_version:
        warnings.append(f"the runs used different sysbench versions: {a.sysbench_version} and {b.sysbench_version}")
    if not same_family:
        warnings.append(f"{a.dbms} and {b.dbms} are different products: their settings share few names")
    return RunDiff(
        a=a,
        b=b,
        sources=sources,
        commands=command_differences(a.commands, b.commands),
        default_changes=rows,
        warnings=warnings,
    )


def _running(run: RunSettings) -> Settings:
    merged: Settings = {}
    for source in _RUNNING_SOURCES:
        merged.update(run.sources.get(source, {}))
    return merged


@dataclass(frozen=True)
class _Named:
    name: str
    commands: Mapping[str, str]
