"""Semantic ordering of DBMS version strings.

8.0.9 < 8.0.10 < 8.4.6 < 9.0.0, 10.2.44 < 10.11.8 < 11.4.2 and 18beta1 < 18rc1
< 18.0 < 18.1. A version is its numeric release parts plus an optional
pre-release stage (dev, alpha, beta, rc) and number. ``sort_key`` turns that into
a fixed-width string so the database can order by it too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

_RELEASE_PARTS = 4
_STAGES = {"dev": 0, "alpha": 1, "a": 1, "beta": 2, "b": 2, "rc": 3}
_FINAL = 9

_VERSION_RE = re.compile(
    r"^v?(?P<release>\d+(?:\.\d+)*)"
    r"(?:[-.]?(?P<stage>dev|alpha|beta|rc|a|b)\.?(?P<stage_no>\d*))?"
    r"(?P<rest>.*)$",
    re.IGNORECASE,
)


class VersionError(ValueError):
    """A version string that names no release."""


@dataclass(frozen=True, order=True)
class Version:
    release: tuple[int, ...]
    stage: int = _FINAL
    stage_no: int = 0
    suffix: str = ""

    @property
    def text(self) -> str:
        text = ".".join(str(p) for p in self.release)
        if self.stage != _FINAL:
            name = next(k for k, v in _STAGES.items() if v == self.stage and len(k) > 1)
            text += f"{name}{self.stage_no or ''}"
        return text + self.suffix

    @property
    def major_minor(self) -> str:
        return ".".join(str(p) for p in self.release[:2])


def parse_version(text: str) -> Version:
    match = _VERSION_RE.match(text.strip())
    if not match:
        raise VersionError(f"not a version: {text!r}")
    release = tuple(int(p) for p in match["release"].split("."))
    if len(release) > _RELEASE_PARTS:
        raise VersionError(f"too many parts in version {text!r} (at most {_RELEASE_PARTS})")
    stage = _STAGES[match["stage"].lower()] if match["stage"] else _FINAL
    stage_no = int(match["stage_no"]) if match["stage_no"] else 0
    return Version(release=release, stage=stage, stage_no=stage_no, suffix=match["rest"])


# A pure function of the text, as releases.release_line (cached alike): a page's release views ask it for the newest
# of every version of a series (200 parses, a twentieth of a drill-down's CPU).
@lru_cache(maxsize=4096)
def sort_key(text: str) -> str:
    """A string that sorts like the version: numeric parts zero-padded, missing parts 0.

    Versions that do not parse sort after every real one, by their text.
    """
    try:
        version = parse_version(text)
    except VersionError:
        return "~" + text
    release = version.release + (0,) * (_RELEASE_PARTS - len(version.release))
    parts = [f"{p:06d}" for p in release]
    parts.append(f"{version.stage}{version.stage_no:04d}")
    return ".".join(parts) + version.suffix
