"""A view's address for many row ids, reversed once: a long table or list would otherwise reverse it per row."""

from __future__ import annotations

import functools
from collections.abc import Callable

from django.urls import get_script_prefix, get_urlconf, reverse

# An id no row has, reversed into the address and then replaced by each row's id.
_HOLE = 2_147_483_647


def by_id(name: str) -> Callable[[int], str]:
    """The address of the view ``name`` (whose one argument is a row id) for any id, as ``reverse`` gives it.

    Called per request, not kept: the address depends on the request's script prefix."""
    before, after = reverse(name, args=[_HOLE]).split(str(_HOLE))
    return lambda pk: f"{before}{int(pk)}{after}"


def plain(name: str) -> str:
    """``reverse(name)`` for a view without arguments, reversed once per script prefix and URL conf (all it
    depends on): a comparison page names the same few addresses some thirty times."""
    return _plain(name, get_script_prefix(), get_urlconf())


@functools.lru_cache(maxsize=256)
def _plain(name: str, prefix: str, urlconf: str | None) -> str:
    return reverse(name, urlconf=urlconf)
