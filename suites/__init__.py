"""Benchmark suites: one package each (``sysbench``, ``ibench``, ``dbbench``), pure, behind ``suites.base.Suite``.

``get(name)`` answers a suite by the name stored on workloads; ``all()`` every
registered suite; ``parse_errors()`` the exceptions that mean a bad bundle,
whichever suite's parser raised them. The built-in suites (``suites.SYSBENCH`` …)
are imported and registered when the registry is first asked, not when this
package is imported: every process declares the models, which name suites only by
their names (``suites.names``), while few parse. Another suite describes itself
the same way in its own package's ``suite`` module and is registered with
``register``, after the built-ins.
"""

from __future__ import annotations

import importlib
import threading
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from suites.base import Suite
    from suites.dbbench.suite import SUITE as DBBENCH  # noqa: F401  (the attributes, to type checkers)
    from suites.groups import GroupSet
    from suites.ibench.suite import SUITE as IBENCH  # noqa: F401  (the attributes, to type checkers)
    from suites.openformat.suite import SUITE as OPENFORMAT  # noqa: F401  (the attributes, to type checkers)
    from suites.summary.suite import SUITE as SYSBENCH_SUMMARY  # noqa: F401  (the attributes, to type checkers)
    from suites.sysbench.suite import SUITE as SYSBENCH  # noqa: F401  (the attributes, to type checkers)

_registry: dict[str, Suite] = {}
_builtins_registered = False
_registering = threading.RLock()

# The built-in suites, each described in its package's ``suite`` module, as this package's attributes.
_BUILTINS = {
    "SYSBENCH": "suites.sysbench.suite",
    "DBBENCH": "suites.dbbench.suite",
    "IBENCH": "suites.ibench.suite",
    "SYSBENCH_SUMMARY": "suites.summary.suite",
    "OPENFORMAT": "suites.openformat.suite",
}


def _register_builtins() -> None:
    """The built-in suites, registered once, before any other: in this order a bundle's files are offered to the
    suites' ``recognise``, and their runs are listed. The open format last: its .json and .csv files are only what
    no other suite claims."""
    global _builtins_registered
    if _builtins_registered:
        return
    with _registering:  # a threaded server's first requests may ask at once: none sees a half-filled registry
        if _builtins_registered:
            return
        builtins = {name: importlib.import_module(module).SUITE for name, module in _BUILTINS.items()}
        globals().update(builtins)
        for suite in builtins.values():
            _add(suite)
        _builtins_registered = True


def __getattr__(name: str) -> Any:
    if name in _BUILTINS:
        _register_builtins()
        return globals()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _add(suite: Suite) -> Suite:
    existing = _registry.get(suite.name)
    if existing is not None and existing != suite:
        raise ValueError(f"a different suite is already registered as {suite.name!r}")
    _registry[suite.name] = suite
    return suite


def register(suite: Suite) -> Suite:
    _register_builtins()
    return _add(suite)


def unregister(name: str) -> None:
    _register_builtins()
    _registry.pop(name, None)


def get(name: str) -> Suite:
    _register_builtins()
    try:
        return _registry[name]
    except KeyError:
        raise LookupError(f"no suite named {name!r}; known: {', '.join(sorted(_registry))}") from None


def all() -> tuple[Suite, ...]:
    _register_builtins()
    return tuple(_registry.values())


def group_sets() -> tuple[GroupSet, ...]:
    """Every registered suite's group sets, once each, in the registry's order: for finding one by name. A set
    without groups (the open format's stand-in, everything ungrouped) is no set to pick."""
    _register_builtins()
    found = (group_set for suite in _registry.values() for group_set in suite.group_sets if group_set.groups)
    return tuple(dict.fromkeys(found))


def parse_errors() -> tuple[type[Exception], ...]:
    _register_builtins()
    return tuple(dict.fromkeys(suite.parse_error for suite in _registry.values()))
