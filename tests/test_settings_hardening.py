"""Production refuses unsafe settings at start-up; every response carries the security headers; every form has CSRF.

The start-up checks run ``django.setup()`` in a fresh interpreter with the
environment a deployment would have, exactly as gunicorn or ``manage.py`` would.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

ROOT = Path(__file__).resolve().parent.parent
TEMPLATES = ROOT / "templates"
GOOD_PRODUCTION = {
    "BENCHDASH_MODE": "production",
    "SECRET_KEY": "a-real-secret-for-the-test-only-0123456789abcdef",
    "ALLOWED_HOSTS": "bench.example.org,testserver",
}
# What the subprocess prints once Django is set up: the effective hardening settings, and the headers of
# one https and one http request to /healthz (which needs no login, so it is answered in any mode).
REPORT = """
import json, django
django.setup()
from django.conf import settings
from django.test import Client
from django.test.utils import setup_test_environment
setup_test_environment()
client = Client()
https = client.get("/healthz", secure=True)
http = client.get("/healthz")
print(json.dumps({
    "debug": settings.DEBUG,
    "public": settings.BENCHDASH_PUBLIC_BROWSING,
    "hsts": settings.SECURE_HSTS_SECONDS,
    "cookies_secure": [settings.SESSION_COOKIE_SECURE, settings.CSRF_COOKIE_SECURE],
    "https": dict(https.headers),
    "http_status": http.status_code,
    "http_location": http.headers.get("Location"),
}))
"""


def _start(env: dict[str, str], tmp_path: Path, code: str = "import django; django.setup()") -> Any:
    # A clean environment: nothing of the test run's own configuration (DATABASE_URL, DEBUG, …) leaks in.
    base = {key: os.environ[key] for key in ("PATH", "HOME", "LANG") if key in os.environ}
    full = {**base, "DJANGO_SETTINGS_MODULE": "benchdash.settings", "BENCHDASH_VAR_DIR": str(tmp_path), **env}
    return subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=full, capture_output=True, text=True, timeout=60, check=False
    )


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"DEBUG": "1"}, "DEBUG must be off when BENCHDASH_MODE=production"),
        ({"SECRET_KEY": ""}, "SECRET_KEY must be set when BENCHDASH_MODE=production"),
        ({"ALLOWED_HOSTS": ""}, "ALLOWED_HOSTS must be set when BENCHDASH_MODE=production"),
        ({"BENCHDASH_MODE": "prod"}, "BENCHDASH_MODE must be 'demo' or 'production', not 'prod'"),
        (
            {"SECRET_KEY": "benchdash-demo-only-not-secret"},
            "SECRET_KEY is the demo's key, which is public when BENCHDASH_MODE=production",
        ),
        (
            {"SECRET_KEY": "short-key-42"},
            "SECRET_KEY must be a random string of 32 characters or more when BENCHDASH_MODE=production",
        ),
        (
            {"SECRET_KEY": "<a random string of 32 characters or more>"},
            "SECRET_KEY looks like an example's placeholder; generate a random one when BENCHDASH_MODE=production",
        ),
        ({"ALLOWED_HOSTS": "*"}, "ALLOWED_HOSTS must name the site's hosts, not '*' when BENCHDASH_MODE=production"),
    ],
    ids=[
        "debug-on",
        "no-secret-key",
        "no-allowed-hosts",
        "unknown-mode",
        "demo-key",
        "short-key",
        "guide-placeholder",
        "any-host",
    ],
)
def test_production_refuses_to_start_with_an_unsafe_setting(
    tmp_path: Path, change: dict[str, str], message: str
) -> None:
    env = {key: value for key, value in {**GOOD_PRODUCTION, **change}.items() if value}
    started = _start(env, tmp_path)
    assert started.returncode != 0
    assert f"django.core.exceptions.ImproperlyConfigured: {message}" in started.stderr


def test_production_starts_private_with_secure_cookies_and_sends_hsts_over_https_only(tmp_path: Path) -> None:
    started = _start(GOOD_PRODUCTION, tmp_path, REPORT)
    assert started.returncode == 0, started.stderr
    report = json.loads(started.stdout.strip().splitlines()[-1])
    assert report["debug"] is False and report["public"] is False
    assert report["cookies_secure"] == [True, True]
    assert report["hsts"] >= 180 * 24 * 3600
    assert report["https"]["Strict-Transport-Security"] == f"max-age={report['hsts']}"
    # Over plain http SecurityMiddleware sends no HSTS (browsers would ignore it) and answers as usual.
    assert report["http_status"] == 200 and report["http_location"] is None


def test_production_with_demo_like_settings_starts_but_warns_loudly_on_stderr(tmp_path: Path) -> None:
    started = _start({**GOOD_PRODUCTION, "ALLOWED_HOSTS": "localhost", "BENCHDASH_PUBLIC_BROWSING": "1"}, tmp_path)
    assert started.returncode == 0, started.stderr
    warned = [line for line in started.stderr.splitlines() if line.startswith("! WARNING: ")]
    assert any("no DATABASE_URL" in line for line in warned)
    assert any("no REDIS_URL" in line for line in warned)
    assert any("ALLOWED_HOSTS names only this machine" in line for line in warned)
    assert any("BENCHDASH_PUBLIC_BROWSING is on" in line for line in warned)


def test_a_deployment_left_in_demo_mode_is_told_so(tmp_path: Path) -> None:
    started = _start({"ALLOWED_HOSTS": "bench.example.org"}, tmp_path)
    assert started.returncode == 0, started.stderr
    assert "! WARNING: BENCHDASH_MODE is not 'production' but ALLOWED_HOSTS names a public host" in started.stderr


def test_a_database_password_with_url_special_characters_is_passed_on_its_own(tmp_path: Path) -> None:
    code = "import django; django.setup(); from django.conf import settings; print(settings.DATABASES['default'])"
    env = {"DATABASE_URL": "postgres://benchdash@db.example.com:5432/benchdash", "DATABASE_PASSWORD": "a/b@c:d%e"}
    started = _start(env, tmp_path, code)
    assert started.returncode == 0, started.stderr
    assert "'PASSWORD': 'a/b@c:d%e'" in started.stdout and "'HOST': 'db.example.com'" in started.stdout


def test_the_demo_starts_with_nothing_configured(tmp_path: Path) -> None:
    started = _start({}, tmp_path, REPORT)
    assert started.returncode == 0, started.stderr
    report = json.loads(started.stdout.strip().splitlines()[-1])
    assert report["debug"] is True and report["public"] is True and report["hsts"] == 0
    assert "WARNING" not in started.stderr


# --------------------------------------------------------------------------- headers


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/", "/runs/", "/account/login/", "/api/openapi.json", "/healthz"])
def test_every_response_carries_the_security_headers(client: Client, path: str) -> None:
    response = client.get(path)
    assert response.status_code == 200
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["X-Frame-Options"] == "DENY"
    assert response["Referrer-Policy"] == "same-origin"
    assert response["Cross-Origin-Opener-Policy"] == "same-origin"
    policy = dict(part.strip().split(" ", 1) for part in response["Content-Security-Policy"].split(";"))
    assert policy["script-src"] == "'self'"  # no inline scripts, no eval, no CDN
    assert policy["default-src"] == "'self'" and policy["object-src"] == "'none'"
    assert policy["frame-ancestors"] == "'none'" and policy["form-action"] == "'self'"


# --------------------------------------------------------------------------- CSRF

FORM_RE = re.compile(r"<form\b([^>]*)>(.*?)</form>", re.S | re.I)


def _post_forms() -> list[tuple[str, str]]:
    forms = []
    for path in sorted(TEMPLATES.rglob("*.html")):
        for attributes, body in FORM_RE.findall(path.read_text()):
            if re.search(r"""method\s*=\s*["']?post""", attributes, re.I):
                forms.append((str(path.relative_to(TEMPLATES)), body))
    return forms


def test_every_post_form_in_the_templates_carries_a_csrf_token() -> None:
    forms = _post_forms()
    assert len(forms) >= 10  # the scan finds the forms it is meant to check
    missing = [name for name, body in forms if "{% csrf_token %}" not in body]
    assert missing == []


def test_htmx_requests_send_the_csrf_token_from_every_page() -> None:
    base = (TEMPLATES / "base.html").read_text()
    assert """hx-headers='{"X-CSRFToken": "{{ csrf_token }}"}'""" in base


@pytest.mark.django_db
def test_a_post_without_its_csrf_token_is_refused_and_with_it_accepted(user_with_role: Callable[..., Any]) -> None:
    client = Client(enforce_csrf_checks=True)
    client.force_login(user_with_role("uploader"))
    assert client.post("/account/tokens/", {"name": "no csrf"}).status_code == 403
    token = str(client.get("/account/tokens/").context["csrf_token"])
    assert client.post("/account/tokens/", {"name": "csrf"}, headers={"X-CSRFToken": token}).status_code == 200


@pytest.mark.django_db
def test_the_csrf_token_a_page_hands_out_belongs_to_the_session_that_asked(
    small_base: Any, user_with_role: Callable[..., Any]
) -> None:
    """A page rendered for one visitor and cached must not hand that visitor's CSRF token to the next one."""
    url = f"/compare/?base={small_base.pk}"
    tokens = {}
    for name in ("first", "second"):
        client = Client(enforce_csrf_checks=True)
        client.force_login(user_with_role("triager", username=name))
        html = client.get(url).content.decode()
        save_form = next(
            body
            for attributes, body in FORM_RE.findall(html)
            if "save_report" in attributes or "/reports/save" in attributes
        )
        tokens[name] = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', save_form)[1]  # type: ignore[index]
        saved = client.post(
            "/reports/save", {"base": small_base.pk, "name": f"report of {name}", "csrfmiddlewaretoken": tokens[name]}
        )
        assert saved.status_code == 302, (name, saved.status_code)
    assert tokens["first"] != tokens["second"]


# --------------------------------------------------------------------------- NUL characters


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("method", "path", "body", "content_type"),
    [
        ("get", "/api/regressions?server=%00", None, None),
        ("get", "/runs/?q=a%00b", None, None),
        ("get", "/compare/?base=1%00", None, None),
        ("post", "/api/regressions/triage", '{"ids": [1], "state": "noise", "note": "x\\u0000"}', "application/json"),
        ("post", "/account/login/", "username=a%00&password=b", "application/x-www-form-urlencoded"),
    ],
    ids=["api-query", "page-query", "compare-query", "json-body", "form-body"],
)
def test_a_nul_character_in_a_request_is_a_400_never_a_database_error(
    method: str, path: str, body: str | None, content_type: str | None, user_with_role: Callable[..., Any]
) -> None:
    """PostgreSQL refuses NUL in text: a NUL reaching a query would be a 500 (schemathesis found one)."""
    from accounts.permissions import create_token

    token = create_token(user_with_role("triager"), "nul")[1]
    client = Client(headers={"Authorization": f"Bearer {token}"})
    response = client.get(path) if method == "get" else client.post(path, body, content_type=content_type)
    assert response.status_code == 400
    assert response.json() == {"detail": "NUL characters are not allowed in a request's URL, query or text fields"}


@pytest.mark.django_db
def test_a_nul_in_the_upload_apis_text_fields_is_refused(user_with_role: Callable[..., Any]) -> None:
    from django.core.files.uploadedfile import SimpleUploadedFile

    from accounts.permissions import create_token
    from runs.models import Bundle

    token = create_token(user_with_role("uploader"), "nul")[1]
    response = Client().post(
        "/api/bundles/",
        {"file": SimpleUploadedFile("a.tgz", b"x"), "server": "pg\x0048"},
        headers={"Authorization": f"Bearer {token}"},
    )
    assert response.status_code == 400 and "no NUL" in response.json()["detail"]
    assert Bundle.objects.count() == 0


# --------------------------------------------------------------------------- refusal pages


@pytest.mark.django_db
def test_a_csrf_failure_over_http_with_secure_cookies_says_what_to_set(settings: Any) -> None:
    settings.CSRF_COOKIE_SECURE = True
    response = Client(enforce_csrf_checks=True).post("/account/login/", {"username": "a", "password": "b"})
    assert response.status_code == 403
    page = response.content.decode()
    assert 'class="topbar"' in page and "SECURE_COOKIES=false" in page


@pytest.mark.django_db
def test_a_csrf_failure_over_https_asks_to_reload_the_form(settings: Any) -> None:
    settings.CSRF_COOKIE_SECURE = True
    response = Client(enforce_csrf_checks=True).post("/account/login/", {"username": "a"}, secure=True)
    assert response.status_code == 403
    assert "SECURE_COOKIES=false" not in response.content.decode()
    assert "Reload the page" in response.content.decode()
