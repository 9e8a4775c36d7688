"""A Content-Disposition header for a download whose name comes from imported data (RFC 6266).

Names in benchdash come from bundles (server names, run directories, partial outputs), so a download's name
may hold anything: quotes, backslashes, line breaks, non-ASCII letters, path separators. The header carries
two forms of it: ``filename="…"``, printable ASCII with anything unsafe replaced by ``_`` (for old clients),
and ``filename*=UTF-8''…``, the name percent-encoded (RFC 8187), which every current browser prefers. No
character of the name can end the header, start another or escape the quoted string.
"""

from __future__ import annotations

import re
import unicodedata
from urllib.parse import quote

# Characters a file name never keeps: controls (CR and LF above all), quotes and backslashes (they would end
# or escape the quoted string), path separators and the characters Windows refuses in names.
_UNSAFE = re.compile(r'[\x00-\x1f\x7f-\x9f"\\/:*?<>|;%]')
_MAX_LENGTH = 150  # of the name, before encoding: enough for any export's name, short of header limits


def safe_name(name: str) -> str:
    """``name`` with controls and unsafe characters as ``_``, no leading dots, at most _MAX_LENGTH long."""
    cleaned = _UNSAFE.sub("_", unicodedata.normalize("NFC", name)).strip().lstrip(".")
    if len(cleaned) > _MAX_LENGTH:
        _stem, dot, ext = cleaned.rpartition(".")
        keep = ext if dot and len(ext) <= 8 else ""
        cleaned = cleaned[: _MAX_LENGTH - len(keep) - 1].rstrip() + ("." + keep if keep else "")
    return cleaned or "download"


def ascii_fallback(name: str) -> str:
    """The name as printable ASCII: accents dropped where the letter has a plain form, else ``_``."""
    plain = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode("ascii")
    if len(plain) < len(name) * 0.5:  # mostly non-Latin: replace rather than leave a few letters
        plain = "".join(c if c.isascii() else "_" for c in name)
    return _UNSAFE.sub("_", plain).strip() or "download"


def attachment(name: str) -> str:
    """``attachment; filename="…"; filename*=UTF-8''…`` for ``name``, whatever it holds."""
    safe = safe_name(name)
    fallback = ascii_fallback(safe)
    if fallback == safe:
        return f'attachment; filename="{safe}"'
    return f"attachment; filename=\"{fallback}\"; filename*=UTF-8''{quote(safe, safe='')}"
