"""Content-Disposition for downloads named after imported data: safe and RFC 6266-shaped whatever the name."""

from __future__ import annotations

import re
from urllib.parse import unquote

import pytest
from django.http import HttpResponse

from benchdash.disposition import attachment

HOSTILE = [
    'qps.rel.a"b.tsv',
    "qps.rel.a\r\nSet-Cookie: x=1.tsv",
    "qps.rel.a\nb\rc\x00d\x1b.tsv",
    "writeup.serveur-é-ß-中文.md",
    "..\\..\\etc/passwd",
    "a;filename=evil.exe",
    "a%0d%0ab.csv",
    "\u2028line\u2029separators.md",
    "x" * 5000 + ".zip",
    "",
]


@pytest.mark.parametrize("name", HOSTILE)
def test_a_hostile_name_makes_a_header_django_accepts_with_one_quoted_ascii_name(name: str) -> None:
    header = attachment(name)
    response = HttpResponse()
    response["Content-Disposition"] = header  # Django's BadHeaderError on CR/LF would raise here
    assert header.isascii() and header.isprintable() and len(header) < 1000
    quoted = re.fullmatch(r'attachment; filename="([^"\\]*)"(?:; filename\*=UTF-8\'\'([A-Za-z0-9%._~-]*))?', header)
    assert quoted is not None, header
    for part in (quoted.group(1), unquote(quoted.group(2) or "")):
        assert not re.search(r'[\x00-\x1f\x7f"\\/;]', part) and not part.startswith(".")


def test_a_plain_name_stays_as_it_is_and_a_non_ascii_one_is_kept_whole_in_filename_star() -> None:
    assert attachment("qps.rel.c2d-highcpu-32.dop12.tsv") == 'attachment; filename="qps.rel.c2d-highcpu-32.dop12.tsv"'
    header = attachment("writeup.serveur-é.md")
    assert header == "attachment; filename=\"writeup.serveur-e.md\"; filename*=UTF-8''writeup.serveur-%C3%A9.md"
    # filename* read back as RFC 8187 says: the whole name, accent included.
    assert unquote(header.rpartition("UTF-8''")[2], encoding="utf-8") == "writeup.serveur-é.md"


def test_a_long_name_is_cut_but_keeps_its_extension() -> None:
    header = attachment("x" * 5000 + ".zip")
    assert header.endswith('.zip"') and len(header) < 200
