"""Alert settings from the environment, read by ``django.setup()`` in a fresh interpreter as a deployment would."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent.parent
PRODUCTION = {
    "BENCHDASH_MODE": "production",
    "SECRET_KEY": "a-real-secret-for-the-test-only-0123456789abcdef",
    "ALLOWED_HOSTS": "bench.example.org,testserver",
}
READ = """
import json, django
django.setup()
from django.conf import settings as s
print(json.dumps({name: getattr(s, name) for name in (
    "BENCHDASH_BASE_URL", "EMAIL_BACKEND", "EMAIL_HOST", "EMAIL_PORT", "EMAIL_HOST_USER", "EMAIL_HOST_PASSWORD",
    "EMAIL_USE_TLS", "EMAIL_USE_SSL", "DEFAULT_FROM_EMAIL")}))
"""


def _settings(env: dict[str, str], tmp_path: Path) -> dict[str, Any]:
    base = {key: os.environ[key] for key in ("PATH", "HOME", "LANG") if key in os.environ}
    full = {**base, "DJANGO_SETTINGS_MODULE": "benchdash.settings", "BENCHDASH_VAR_DIR": str(tmp_path), **env}
    done = subprocess.run(
        [sys.executable, "-c", READ], cwd=ROOT, env=full, capture_output=True, text=True, timeout=60, check=True
    )
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def test_the_demo_prints_mail_on_the_console_and_links_to_the_local_server(tmp_path: Path) -> None:
    got = _settings({}, tmp_path)
    assert got["EMAIL_BACKEND"] == "django.core.mail.backends.console.EmailBackend"
    assert got["BENCHDASH_BASE_URL"] == "http://127.0.0.1:8000"


def test_production_sends_mail_through_smtp_from_email_url_and_links_to_its_host(tmp_path: Path) -> None:
    got = _settings(
        {
            **PRODUCTION,
            "EMAIL_URL": "smtp+tls://alerts%40example.org:p%40ss@mail.example.org:587",
            "DEFAULT_FROM_EMAIL": "benchdash <alerts@example.org>",
        },
        tmp_path,
    )
    assert got["EMAIL_BACKEND"] == "django.core.mail.backends.smtp.EmailBackend"
    assert (got["EMAIL_HOST"], got["EMAIL_PORT"], got["EMAIL_USE_TLS"]) == ("mail.example.org", 587, True)
    assert (got["EMAIL_HOST_USER"], got["EMAIL_HOST_PASSWORD"]) == ("alerts@example.org", "p@ss")
    assert got["DEFAULT_FROM_EMAIL"] == "benchdash <alerts@example.org>"
    assert got["BENCHDASH_BASE_URL"] == "https://bench.example.org"


def test_empty_variables_as_docker_compose_passes_them_mean_the_defaults(tmp_path: Path) -> None:
    got = _settings({**PRODUCTION, "EMAIL_URL": "", "BENCHDASH_BASE_URL": "", "DEFAULT_FROM_EMAIL": ""}, tmp_path)
    assert (got["EMAIL_BACKEND"], got["EMAIL_HOST"], got["EMAIL_PORT"]) == (
        "django.core.mail.backends.smtp.EmailBackend",
        "localhost",
        25,
    )
    assert got["BENCHDASH_BASE_URL"] == "https://bench.example.org"
    assert got["DEFAULT_FROM_EMAIL"] == "benchdash <benchdash@localhost>"
    assert (
        _settings({**PRODUCTION, "BENCHDASH_BASE_URL": "https://perf.example.org/"}, tmp_path)["BENCHDASH_BASE_URL"]
        == "https://perf.example.org"
    )
