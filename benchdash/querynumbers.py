"""Numbers in an API query string, read only as a client writes them: plain ASCII digits.

django-ninja reads query parameters with pydantic's lax mode, which takes ``1_000`` for 1000, `` 5`` and ``5\\n``
for 5, and ``nan`` or ``inf`` for a float: each a guess at what the client meant, and a ``nan`` threshold makes
every comparison with it false (a red that never shows). The schema says integer or number; anything else is
refused (422 naming the parameter), as a value of the wrong type is. ``5.0`` stays the whole number 5: JSON Schema
counts it an integer, and a client generated from the schema may write it so.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Annotated

from pydantic import BeforeValidator, FiniteFloat

_WHOLE = re.compile(r"[-+]?[0-9]+(?:\.0*)?")
_DECIMAL = re.compile(r"[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")


def _written_as(pattern: re.Pattern[str], what: str) -> Callable[[object], object]:
    def check(value: object) -> object:
        if isinstance(value, str) and not pattern.fullmatch(value):
            raise ValueError(f"must be {what} in plain digits")
        return value

    return check


# A whole number: digits, a sign and a point with zeros after it at most (no underscores, no spaces, no exponent).
QueryInt = Annotated[int, BeforeValidator(_written_as(_WHOLE, "a whole number"))]
# A finite decimal number: digits with a point and an exponent at most (no nan, no inf, none too large for a float).
QueryFloat = Annotated[FiniteFloat, BeforeValidator(_written_as(_DECIMAL, "a number"))]
