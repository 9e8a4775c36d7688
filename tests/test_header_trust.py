"""Headers a client writes are honoured only as far as they should be: Accept-Encoding's weights (gzip;q=0 means
no gzip), and X-Forwarded-Proto only from a trusted proxy."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.test import Client

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("accept", "gzipped"),
    [
        ("gzip", True),
        ("gzip, deflate, br", True),
        ("br;q=1.0, gzip;q=0.5", True),
        ("*", True),
        ("br, *;q=0.1", True),
        ("gzip;q=0", False),
        ("gzip;q=0.000, identity", False),
        ("GZIP; Q=0", False),
        ("*;q=0", False),
        ("gzip;q=0, *;q=1", False),  # named beats *
        ("identity", False),
        ("", False),
        ("gzip;q=bogus", False),
        ("notgzip", False),
    ],
)
def test_a_page_is_gzipped_only_when_accept_encoding_gives_gzip_a_weight_above_zero(accept: str, gzipped: bool) -> None:
    response = Client().get("/runs/", HTTP_ACCEPT_ENCODING=accept)
    assert response.status_code == 200
    assert (response.get("Content-Encoding") == "gzip") is gzipped
    body = gzip.decompress(response.content) if gzipped else response.content
    assert b"</html>" in body


def _production_setting(name: str, extra: dict[str, str]) -> object:
    env = {
        **{key: os.environ[key] for key in ("PATH", "HOME", "LANG") if key in os.environ},
        "DJANGO_SETTINGS_MODULE": "benchdash.settings",
        "BENCHDASH_MODE": "production",
        "SECRET_KEY": "a-real-secret-for-the-test-only-0123456789abcdef",
        "ALLOWED_HOSTS": "bench.example.org",
        **extra,
    }
    code = f"import json, django; django.setup(); from django.conf import settings as s; print(json.dumps(s.{name}))"
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60, check=True
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_x_forwarded_proto_is_believed_only_with_a_trusted_proxy_in_front() -> None:
    assert _production_setting("SECURE_PROXY_SSL_HEADER", {"BENCHDASH_TRUSTED_PROXIES": "0"}) is None
    assert _production_setting("SECURE_PROXY_SSL_HEADER", {}) is None
    assert _production_setting("SECURE_PROXY_SSL_HEADER", {"BENCHDASH_TRUSTED_PROXIES": "1"}) == [
        "HTTP_X_FORWARDED_PROTO",
        "https",
    ]


def test_without_a_trusted_proxy_a_client_claiming_https_gets_no_hsts(settings: object) -> None:
    from django.test import override_settings

    with override_settings(SECURE_PROXY_SSL_HEADER=None, SECURE_HSTS_SECONDS=3600):
        response = Client().get("/healthz", HTTP_X_FORWARDED_PROTO="https")
    assert "Strict-Transport-Security" not in response
    with override_settings(SECURE_PROXY_SSL_HEADER=("HTTP_X_FORWARDED_PROTO", "https"), SECURE_HSTS_SECONDS=3600):
        response = Client().get("/healthz", HTTP_X_FORWARDED_PROTO="https")
    assert response["Strict-Transport-Security"].startswith("max-age=3600")
