"""Every log line carries time, level, logger and request id; LOG_FORMAT=json writes one JSON object per line.

Each case starts the site in a fresh interpreter (as gunicorn or manage.py would) and reads what it wrote."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# A request to a page that does not exist: Django logs a warning for it, inside the request.
REQUEST = """
import django, logging, sys
django.setup()
from django.test import Client
from django.test.utils import setup_test_environment
setup_test_environment()
response = Client().get("/no-such-page/", headers={"X-Request-ID": sys.argv[1]} if sys.argv[1] else {})
print(response["X-Request-ID"])
logging.getLogger("benchdash.test").info("outside a request")
"""


def _run(tmp_path: Path, sent_id: str = "", **env: str) -> tuple[str, list[str]]:
    base = {key: os.environ[key] for key in ("PATH", "HOME", "LANG") if key in os.environ}
    full = {**base, "DJANGO_SETTINGS_MODULE": "benchdash.settings", "BENCHDASH_VAR_DIR": str(tmp_path), **env}
    done = subprocess.run(
        [sys.executable, "-c", REQUEST, sent_id], cwd=ROOT, env=full, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1], [line for line in done.stderr.splitlines() if line.strip()]


def test_text_lines_carry_time_level_logger_and_the_requests_id(tmp_path: Path) -> None:
    request_id, lines = _run(tmp_path)
    assert re.fullmatch(r"[0-9a-f]{32}", request_id)
    line = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} (?P<level>[A-Z]+) (?P<logger>\S+) \[(?P<id>[^\]]+)\] ")
    parsed = [line.match(text) for text in lines]
    assert all(parsed), lines
    by_logger = {m["logger"]: m for m in parsed if m}
    assert by_logger["django.request"]["level"] == "WARNING" and by_logger["django.request"]["id"] == request_id
    assert by_logger["benchdash.test"]["id"] == "-"
    assert not any("AXES: BEGIN" in text for text in lines)


def test_json_lines_are_one_object_each_with_the_same_fields(tmp_path: Path) -> None:
    request_id, lines = _run(tmp_path, LOG_FORMAT="json")
    entries = [json.loads(text) for text in lines]
    assert entries and all(set(entry) >= {"time", "level", "logger", "request_id", "message"} for entry in entries)
    warning = next(entry for entry in entries if entry["logger"] == "django.request")
    assert warning["request_id"] == request_id and "Not Found: /no-such-page/" in warning["message"]


@pytest.mark.parametrize(
    ("sent", "kept"), [("lb-7f3a9c01d2e4", True), ("x", False), ("bad id\nforged line", False)], ids=str
)
def test_a_proxys_request_id_is_kept_only_when_it_looks_like_one(tmp_path: Path, sent: str, kept: bool) -> None:
    request_id, _lines = _run(tmp_path, sent_id=sent)
    assert (request_id == sent) is kept


def test_an_unknown_log_format_is_refused_at_start(tmp_path: Path) -> None:
    base = {key: os.environ[key] for key in ("PATH", "HOME") if key in os.environ}
    done = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        cwd=ROOT,
        env={**base, "DJANGO_SETTINGS_MODULE": "benchdash.settings", "LOG_FORMAT": "xml"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0 and "LOG_FORMAT must be 'text' or 'json', not 'xml'" in done.stderr
