"""Benchmark suites: one package each (``sysbench``, ``ibench``, ``dbbench``), pure, behind ``suites.base.Suite``.

``get(name)`` answers a suite by the name stored on workloads; ``all()`` every
registered suite; ``parse_errors()`` the exceptions that mean a bad bundle,
whichever suite's parser raised them. The built-in suites are registered when
this package is imported; another suite describes itself the same way in its own
package's ``suite`` module and is registered with ``register``.
"""

from __future__ import annotations

from suites.base import Suite
from suites.groups import GroupSet

_registry: dict[str, Suite] = {}


def register(suite: Suite) -> Suite:
    existing = _registry.get(suite.name)
    if existing is not None and existing != suite:
        raise ValueError(f"a different suite is already registered as {suite.name!r}")
    _registry[suite.name] = suite
    return suite


def unregister(name: str) -> None:
    _registry.pop(name, None)


def get(name: str) -> Suite:
    try:
        return _registry[name]
    except KeyError:
        raise LookupError(f"no suite named {name!r}; known: {', '.join(sorted(_registry))}") from None


def all() -> tuple[Suite, ...]:
    return tuple(_registry.values())


def group_sets() -> tuple[GroupSet, ...]:
    """Every registered suite's group sets, once each, in the registry's order: for finding one by name. A set
    without groups (the open format's stand-in, everything ungrouped) is no set to pick."""
    found = (group_set for suite in _registry.values() for group_set in suite.group_sets if group_set.groups)
    return tuple(dict.fromkeys(found))


def parse_errors() -> tuple[type[Exception], ...]:
    return tuple(dict.fromkeys(suite.parse_error for suite in _registry.values()))


# The built-in suites, each described in its package's ``suite`` module.
from suites.dbbench.suite import SUITE as DBBENCH  # noqa: E402
from suites.ibench.suite import SUITE as IBENCH  # noqa: E402
from suites.openformat.suite import SUITE as OPENFORMAT  # noqa: E402
from suites.summary.suite import SUITE as SYSBENCH_SUMMARY  # noqa: E402
from suites.sysbench.suite import SUITE as SYSBENCH  # noqa: E402

# In this order a bundle's files are offered to the suites' ``recognise``, and their runs are listed.
# The open format last: its .json and .csv files are only what no other suite claims.
for _builtin in (SYSBENCH, DBBENCH, IBENCH, SYSBENCH_SUMMARY, OPENFORMAT):
    register(_builtin)
