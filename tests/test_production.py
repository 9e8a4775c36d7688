"""The production image's path, without Docker: static files built as the Dockerfile builds them, then a real
gunicorn in production mode answering every page of the site with the deployment's Host header.

The collectstatic step is read from the Dockerfile itself and run as written (into a folder of the test's
own), so the image and this test cannot drift apart. Every URL pattern is enumerated from the resolver and
the admin's registry and requested by three visitors: anonymous with public browsing on, anonymous with it
off, and a logged-in superuser; none may get a 500, and each gets what its rule says.
"""

from __future__ import annotations

import http.client
import http.cookies
import json
import os
import re
import subprocess
import sys
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.conf import settings
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.test import RequestFactory
from django.urls import URLPattern, URLResolver, get_resolver

from accounts.permissions import create_token
from regressions.detection import detect_regressions
from regressions.models import Regression, Subscription
from reports.models import Report
from runner.models import BenchmarkHost, BenchmarkRun, Schedule, Target
from runs.importer import archive_directory, submit_and_import
from runs.models import Bundle, Result, Run
from tests import live

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

ROOT = Path(__file__).resolve().parent.parent
HOST = "bench.example.com"
PRODUCTION = {
    "BENCHDASH_MODE": "production",
    "DEBUG": "0",
    "SECRET_KEY": "production-test-secret-0123456789-abcdefghijklmnopqrstuvwxyz",
    "ALLOWED_HOSTS": HOST,
}
ADMIN_PASSWORD = "a-long-production-test-password-42"

# GET on a view that only accepts POST (or DELETE) is refused with 405, by rule.
POST_ONLY = {
    "account:logout",
    "account:token_revoke",
    "runs:bundle_attach",
    "reports:save_report",
    "regressions:regression_bulk",
    "regressions:alert_retry",
    "runner:benchmark_cancel",
    "runner:schedule_toggle",
    "runner:target_propose_build",
    "runner:settings_experiment_start",
    "api:upload_bundle",
    "api:attach_bundle_run",
    "api:triage_regressions",
    "api:link_regression_bug",
    "api:unlink_regression_bug",
    "api:detect",
}
# Pages that change data: an anonymous visitor is sent to the login even while browsing is public. (The lists
# and pages of targets, runs and schedules are read like every page.)
NEEDS_A_ROLE = {
    "account:tokens",
    "runs:upload",
    "runner:target_create",
    "runner:target_edit",
    "runner:benchmark_start",
    "runner:schedule_create",
    "regressions:alert_list",
    "regressions:alert_edit",
}
# A saved report is a permalink that redirects to its comparison; the API's root has no page of its own.
REDIRECTS = {"reports:report"}
NOT_A_PAGE = {"api:api-root", "api:not_found"}
# Open to anyone in every mode: the load balancer's probe and the login itself. (The API's description is read
# like every page: private browsing asks for a login or a token.)
OPEN = {"healthz", "account:login"}


def _dockerfile_collectstatic() -> str:
    """The shell command of the Dockerfile's RUN instruction that runs collectstatic, continuation lines joined."""
    text = (ROOT / "Dockerfile").read_text().replace("\\\n", " ")
    commands = [line[4:].strip() for line in text.splitlines() if line.startswith("RUN ") and "collectstatic" in line]
    assert len(commands) == 1, commands
    return commands[0]


def _compose_web_healthcheck() -> str:
    test = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]["web"]["healthcheck"]["test"]
    assert test[:3] == ["CMD", "python", "-c"], test
    return str(test[3])


@pytest.fixture(scope="module")
def static_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("staticfiles")
    clean = {key: os.environ[key] for key in ("PATH", "HOME", "LANG") if key in os.environ}
    built = subprocess.run(
        ["sh", "-c", _dockerfile_collectstatic()],
        cwd=ROOT,
        # `python` in the Dockerfile is the image's interpreter: here, this virtualenv's.
        env={
            **clean,
            "PATH": f"{Path(sys.executable).parent}:{clean.get('PATH', '')}",
            "BENCHDASH_STATIC_ROOT": str(root),
        },
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert built.returncode == 0, built.stderr
    assert (root / "staticfiles.json").is_file(), "no manifest: production's storage would answer 500"
    return root


def _routes() -> Iterator[tuple[str, str]]:
    """(route, view name) of every URL pattern outside the admin, whose pages come from its registry."""

    def walk(patterns: list[Any], prefix: str, namespace: str) -> Iterator[tuple[str, str]]:
        for pattern in patterns:
            if isinstance(pattern, URLResolver):
                if pattern.namespace == "admin":
                    continue
                inner = namespace + (f"{pattern.namespace}:" if pattern.namespace else "")
                yield from walk(pattern.url_patterns, prefix + str(pattern.pattern), inner)
            elif isinstance(pattern, URLPattern):
                yield prefix + str(pattern.pattern), namespace + str(pattern.name)

    seen: dict[str, str] = {}
    for route, name in walk(get_resolver().url_patterns, "", ""):
        seen.setdefault(route, name)  # the API routes one path to several methods: one GET is enough
    return iter(seen.items())


@pytest.fixture
def site(small_base: Run, corpus: Path, django_user_model: Any) -> dict[str, Any]:
    """Real data of every kind a page shows, and the ids to fill the URL patterns with."""
    submit_and_import(archive_directory(corpus / "ibench-2021"), name="ibench.tar.gz", source=Bundle.Source.COMMAND)
    detect_regressions(small_base.server_id, small_base.workload_id)
    regression = Regression.objects.order_by("pk").first()
    assert regression is not None, "the real series shows no regression to open"
    superuser = django_user_model.objects.create_superuser("operator", password=ADMIN_PASSWORD)
    token, _secret = create_token(superuser, "production test")
    report = Report.objects.create(name="5.6 to 9.5", slug="five-six-to-nine-five", base_run=small_base)
    subscription = Subscription.objects.create(name="perf team", webhook_url="https://hooks.example.com/t0k3n")
    target = Target.objects.create(
        name="unreachable",
        kind=Target.Kind.MARIADB,
        host="192.0.2.1",  # TEST-NET-1: never routed, and never connected to by a GET
        port=3306,
        user="nobody",
        password="never-used",
        database="nothing",
        build_label="ma101119_rel",
        config_label="tiny",
        server_name="nowhere",
    )
    benchmark = BenchmarkRun.objects.create(target=target, microbenchmarks=["scan_range=100"], threads=[1])
    schedule = Schedule.objects.create(name="nightly", target=target, microbenchmarks=["scan_range=100"], threads=[1])
    host = BenchmarkHost.objects.create(name="lab-host", cpus=8)
    other = Run.objects.filter(server=small_base.server).exclude(pk=small_base.pk).order_by("pk").first()
    ibench = Run.objects.filter(workload__suite="ibench").order_by("pk").first()
    microbenchmark = Result.objects.filter(run=small_base).order_by("pk").values_list("microbenchmark_id", flat=True)[0]
    base = small_base.pk
    assert other is not None and ibench is not None
    return {
        "api:openapi-json": "/api/openapi.json",
        "api:openapi-view": "/api/docs",
        "api:upload_bundle": "/api/bundles/",
        "api:get_bundle": f"/api/bundles/{small_base.bundle_id}",
        "api:attach_bundle_run": f"/api/bundles/{small_base.bundle_id}/attach",
        "api:compare": f"/api/compare?base={base}",
        "api:compare_writeup": f"/api/compare/writeup?base={base}",
        "api:list_regressions": "/api/regressions",
        "api:get_regression": f"/api/regressions/{regression.pk}",
        "api:triage_regressions": "/api/regressions/triage",
        "api:link_regression_bug": f"/api/regressions/{regression.pk}/bugs",
        "api:unlink_regression_bug": f"/api/regressions/{regression.pk}/bugs/1",
        "api:list_bugs": "/api/bugs",
        "api:detect": "/api/regressions/detect",
        "api:api-root": "/api/",
        "api:not_found": "/api/no-such-operation",
        "account:login": "/account/login/",
        "account:logout": "/account/logout/",
        "account:tokens": "/account/tokens/",
        "account:token_revoke": f"/account/tokens/{token.pk}/revoke/",
        "runs:run_list": "/runs/",
        "runs:run": f"/runs/{base}/",
        "runs:upload": "/upload/",
        "runs:bundle_list": "/bundles/",
        "runs:bundle": f"/bundles/{small_base.bundle_id}/",
        "runs:bundle_attach": f"/bundles/{small_base.bundle_id}/attach/",
        "reports:home": "/",
        "healthz": "/healthz",
        "metrics": "/metrics",
        "favicon": "/favicon.ico",
        "reports:search": "/search/?q=point-query",
        "reports:compare": f"/compare/?base={base}",
        "reports:compare_export": f"/compare/export?base={base}&format=csv",
        "reports:compare_writeup": f"/compare/writeup?base={base}&format=zip",
        "reports:heatmap": f"/compare/heatmap?base={base}",
        "reports:relative_table": f"/compare/table?base={base}",
        "reports:hw": f"/compare/hw?base={base}",
        "reports:group_timeline": f"/compare/timeline?base={base}",
        "reports:drilldown": f"/microbenchmarks/{microbenchmark}/?base={base}",
        "reports:drilldown_details": f"/microbenchmarks/{microbenchmark}/details?base={base}",
        "reports:scaleup": f"/compare/scaleup?base={base}",
        "reports:timeline": f"/microbenchmarks/{microbenchmark}/timeline?base={base}",
        "reports:report_list": "/reports/",
        "reports:save_report": "/reports/save",
        "reports:report": f"/reports/{report.slug}/",
        "regressions:regression_list": "/regressions/",
        "regressions:regression_bulk": "/regressions/bulk",
        "regressions:regression": f"/regressions/{regression.pk}/",
        "regressions:alert_list": "/regressions/alerts/",
        "regressions:alert_edit": f"/regressions/alerts/{subscription.pk}/",
        "regressions:alert_retry": f"/regressions/alerts/{subscription.pk}/retry",
        "reports:run_diff": f"/diff/?a={base}&b={other.pk}",
        "reports:server": f"/servers/{small_base.server_id}/",
        "reports:ibench": f"/ibench/?base={ibench.pk}",
        "runner:target_list": "/targets/",
        "runner:target_create": "/targets/new/",
        "runner:target_propose_build": "/targets/propose-build/",
        "runner:target_edit": f"/targets/{target.pk}/edit/",
        "runner:benchmark_start": f"/targets/{target.pk}/run/",
        "runner:benchmark_list": "/benchmarks/",
        "runner:benchmark": f"/benchmarks/{benchmark.pk}/",
        "runner:benchmark_cancel": f"/benchmarks/{benchmark.pk}/cancel/",
        "runner:benchmark_output": f"/benchmarks/{benchmark.pk}/output.tar.gz",
        "runner:schedule_list": "/benchmarks/schedules/",
        "runner:schedule_create": "/benchmarks/schedules/new/",
        "runner:schedule_toggle": f"/benchmarks/schedules/{schedule.pk}/toggle/",
        "runner:settings_experiment_start": "/benchmarks/settings-experiments/",
        "runner:host_list": "/benchmarks/hosts/",
        "runner:host": f"/benchmarks/hosts/{host.pk}/",
        "regressions:run_verdict": f"/runs/{base}/verdict/",
        "api:get_verdict": f"/api/verdict/{small_base.bundle_id}",
    }


def _admin_pages() -> list[str]:
    """The admin's index, each app's index, and each registered model's list, add form and first object."""
    request = RequestFactory().get("/admin/")
    request.user = get_user_model().objects.get(username="operator")
    pages = ["/admin/"]
    admin.autodiscover()  # the URL configuration fills the registry (benchdash.adminsite): not loaded yet, maybe
    for model, model_admin in admin.site._registry.items():
        meta = model._meta
        pages.append(f"/admin/{meta.app_label}/")
        pages.append(f"/admin/{meta.app_label}/{meta.model_name}/")
        if model_admin.has_add_permission(request):
            pages.append(f"/admin/{meta.app_label}/{meta.model_name}/add/")
        first = model._default_manager.order_by("pk").first()
        if first is not None:
            pages.append(f"/admin/{meta.app_label}/{meta.model_name}/{urllib.parse.quote(str(first.pk))}/change/")
    return sorted(set(pages))


def _login(server: live.Gunicorn) -> str:
    """Log in through the login form, as a browser does; the Cookie header of the logged-in session."""
    conn_status, page, cookies = _get(server, "/account/login/")
    assert conn_status == 200
    token = re.search(rb'name="csrfmiddlewaretoken" value="([^"]+)"', page)
    assert token is not None
    body = urllib.parse.urlencode(
        {"username": "operator", "password": ADMIN_PASSWORD, "csrfmiddlewaretoken": token[1].decode()}
    ).encode()
    cookie = f"csrftoken={cookies['csrftoken']}"
    status, _body, cookies = _request(
        server, "POST", "/account/login/", body, {"Cookie": cookie, "Content-Type": "application/x-www-form-urlencoded"}
    )
    assert status == 302 and "sessionid" in cookies, status
    return f"sessionid={cookies['sessionid']}"


def _request(
    server: live.Gunicorn, method: str, path: str, body: bytes | None = None, headers: dict[str, str] | None = None
) -> tuple[int, bytes, dict[str, str]]:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=120)
    try:
        conn.request(method, path, body=body, headers={"Host": HOST, **(headers or {})})
        response = conn.getresponse()
        jar: http.cookies.SimpleCookie = http.cookies.SimpleCookie()
        for header in response.headers.get_all("Set-Cookie") or []:
            jar.load(header)
        location = response.headers.get("Location", "")
        data = response.read()
        return (
            response.status,
            data + (f"\nLocation: {location}".encode() if location else b""),
            {key: morsel.value for key, morsel in jar.items()},
        )
    finally:
        conn.close()


def _get(server: live.Gunicorn, path: str, cookie: str = "") -> tuple[int, bytes, dict[str, str]]:
    return _request(server, "GET", path, headers={"Cookie": cookie} if cookie else {})


def test_every_route_is_in_the_production_page_list(site: dict[str, Any]) -> None:
    names = {name for _route, name in _routes()}
    assert names == set(site), f"routes without a page to request: {names - set(site)}; gone: {set(site) - names}"


@pytest.mark.slow(40)
@pytest.mark.parametrize("public", [True, False], ids=["public-browsing", "private"])
def test_production_gunicorn_answers_every_page_with_the_deployment_host_and_never_a_500(
    tmp_path: Path, static_root: Path, site: dict[str, Any], public: bool
) -> None:
    live.require_postgresql()
    env = {
        **PRODUCTION,
        "BENCHDASH_PUBLIC_BROWSING": "1" if public else "0",
        "BENCHDASH_STATIC_ROOT": str(static_root),
        # The target's password was encrypted by this process: the site must hold the same key.
        "BENCHDASH_ENCRYPTION_KEY": settings.BENCHDASH_ENCRYPTION_KEY or settings.SECRET_KEY,
    }
    with live.gunicorn(tmp_path, env=env, host=HOST) as server:
        answers: dict[str, tuple[str, int, str]] = {}

        def visit(visitor: str, name: str, path: str, cookie: str = "") -> None:
            status, body, _cookies = _get(server, path, cookie)
            answers[f"{visitor} {path}"] = (name, status, body[-300:].decode(errors="replace"))

        for name, path in site.items():
            visit("anonymous", name, path)
        cookie = _login(server)
        for name, path in site.items():
            visit("operator", name, path, cookie)
        for path in _admin_pages():
            visit("operator", "admin", path, cookie)
            visit("anonymous", "admin", path)
        # A static file the pages link to, served from the manifest's hashed name.
        home = _get(server, "/", cookie)[1].decode()
        favicon = re.search(r'href="(/static/favicon\.[0-9a-f]{12}\.svg)"', home)
        assert favicon is not None, "pages do not link the hashed static files of the manifest"
        assert _get(server, favicon[1])[0] == 200
        # Compose's health check of web, run as written (but at this server's port), passes with the real
        # ALLOWED_HOSTS: it sends an allowed Host, not 127.0.0.1.
        probe = _compose_web_healthcheck().replace("127.0.0.1:8000", f"127.0.0.1:{server.port}")
        checked = subprocess.run(
            [sys.executable, "-c", probe], env={"ALLOWED_HOSTS": PRODUCTION["ALLOWED_HOSTS"]}, capture_output=True
        )
        assert checked.returncode == 0, checked.stderr
        # A Host not in ALLOWED_HOSTS is refused, never served.
        assert server.request("GET", "/healthz", headers={"Host": "evil.example.net"})[0] == 400

    server_errors = {key: (status, tail) for key, (_name, status, tail) in answers.items() if status >= 500}
    assert not server_errors, f"500s:\n{server_errors}\n{server.log.read_text()[-5000:]}"

    wrong = {}
    for key, (name, status, _tail) in answers.items():
        visitor = key.split(" ", 1)[0]
        expected = _expected(name, visitor, public)
        if status not in expected:
            wrong[key] = f"{key} ({name}): {status}, expected {sorted(expected)}"
    assert not wrong, "\n".join(wrong.values())


def _expected(name: str, visitor: str, public: bool) -> set[int]:
    if name in POST_ONLY:
        # Django's auth views and ours refuse the method before any login check; the API asks for auth first.
        return {401, 405} if name.startswith("api:") and visitor == "anonymous" else {405, 302}
    if name == "runner:benchmark_output":
        return {404} if visitor == "operator" or public else {302}  # a queued run has no output yet
    if name == "api:openapi-view":
        return {200} if visitor == "operator" or public else {302}  # the docs page: the login page's rule
    if name in NOT_A_PAGE:
        return {404}
    if name in REDIRECTS:
        return {302}
    if name == "favicon":
        return {301}
    if name in OPEN:
        return {200}
    if name.startswith("api:") or name == "metrics":
        return {200} if visitor == "operator" or public else {401}
    if visitor == "operator":
        return {200}
    if name == "admin":
        return {302}
    if public and name not in NEEDS_A_ROLE:
        return {200}
    return {302}


def test_the_image_compiles_every_package_of_the_project_when_it_is_built(tmp_path: Path) -> None:
    """The image runs with PYTHONDONTWRITEBYTECODE, so its build writes the .pyc files: every process start would
    otherwise compile the project's modules again. The RUN line as written, into a cache folder of the test's."""
    text = (ROOT / "Dockerfile").read_text().replace("\\\n", " ")
    assert re.search(r"^ENV .*PYTHONDONTWRITEBYTECODE=1", text, re.M)
    commands = [line[4:].strip() for line in text.splitlines() if line.startswith("RUN ") and "compileall" in line]
    assert len(commands) == 1, commands
    env = {**os.environ, "PYTHONPYCACHEPREFIX": str(tmp_path)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    subprocess.run(["sh", "-c", commands[0].replace("python ", f"{sys.executable} ", 1)], cwd=ROOT, env=env, check=True)
    # Every package the image runs (all but the test and benchmark folders), every module of it compiled.
    packages = [p.parent for p in ROOT.glob("*/__init__.py") if p.parent.name not in {"tests", "bench"}]
    modules = [m for package in packages for m in package.rglob("*.py") if "node_modules" not in m.parts]
    assert len(packages) >= 7 and modules
    missing = [
        str(m.relative_to(ROOT))
        for m in modules
        if not list((tmp_path / m.parent.relative_to("/")).glob(f"{m.stem}.*.pyc"))
    ]
    assert not missing, missing


def test_the_image_and_compose_serve_with_the_threads_the_upload_memory_test_measures() -> None:
    """The image's command and compose's web command run the same gunicorn: threaded workers with as many
    threads as tests/test_upload_memory.py sends uploads at once to one worker (what bounds a worker's memory)."""
    from tests.test_upload_memory import CONCURRENT

    cmd = next(line for line in (ROOT / "Dockerfile").read_text().splitlines() if line.startswith("CMD "))
    image = json.loads(cmd[4:])
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]["web"]["command"].split()
    assert image == compose
    assert image[:2] == ["gunicorn", "benchdash.wsgi:application"]
    options = dict(zip(image[2::2], image[3::2], strict=True))
    assert options["--worker-class"] == "gthread"
    assert int(options["--threads"]) == CONCURRENT
