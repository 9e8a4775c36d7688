"""Every URL the resolver knows × every role × public browsing on and off, against the permission rule.

The URLs are enumerated from the resolver (API operations from the django-ninja path each URL serves),
so a new URL fails ``test_every_url_is_classified`` until it is written into ``RULES`` below with the rule
it follows. Path ids are filled from real rows made by the fixture. Who may do what is written out here
from docs/accounts.md, not imported from accounts.permissions, so the test checks the code against the promise.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver

import suites
from conftest import _SHARED, CORPUS, make_user_with_role, shared_rows

pytestmark = pytest.mark.django_db

ROLES = ("anonymous", "viewer", "uploader", "triager", "admin")

# docs/accounts.md's promise: which role may make which kind of change.
MAY: dict[str, set[str]] = {
    "upload": {"uploader", "admin"},
    "run_benchmarks": {"uploader", "admin"},
    "edit_server": {"uploader", "admin"},
    "save_report": {"uploader", "triager", "admin"},
    "triage": {"triager", "admin"},
    "manage_targets": {"admin"},
    "manage_schedules": {"admin"},
}
# The browsing rule; anyone, always; any logged-in user; nobody (a 404 to everyone).
READ, OPEN, LOGIN, NOT_FOUND = "read", "open", "login", "not found"

# Per URL name, per method: the rule. GET for reads; POST (or the API's own method) for writes.
RULES: dict[str, dict[str, str]] = {
    "reports:home": {"GET": READ},
    "healthz": {"GET": OPEN},
    "favicon": {"GET": OPEN},
    "metrics": {"GET": READ},  # read like the API: a token or a session while browsing is private
    "reports:search": {"GET": READ},
    "reports:compare": {"GET": READ},
    "reports:compare_export": {"GET": READ},
    "reports:compare_writeup": {"GET": READ},
    "reports:heatmap": {"GET": READ},
    "reports:relative_table": {"GET": READ},
    "reports:hw": {"GET": READ},
    "reports:group_timeline": {"GET": READ},
    "reports:drilldown": {"GET": READ},
    "reports:drilldown_details": {"GET": READ},
    "reports:scaleup": {"GET": READ},
    "reports:timeline": {"GET": READ},
    "reports:report_list": {"GET": READ},
    "reports:report": {"GET": READ},
    "reports:save_report": {"POST": "save_report"},
    "regressions:regression_list": {"GET": READ},
    "regressions:regression": {"GET": READ},
    "regressions:regression_bulk": {"POST": "triage"},
    # Webhook URLs often carry a secret token: even reading the alerts page needs the role that manages it.
    "regressions:alert_list": {"GET": "triage", "POST": "triage"},
    "regressions:alert_edit": {"GET": "triage", "POST": "triage"},
    "regressions:alert_retry": {"POST": "triage"},
    "regressions:run_verdict": {"GET": READ},
    "reports:run_diff": {"GET": READ},
    "reports:server": {"GET": READ, "POST": "edit_server"},
    "reports:ibench": {"GET": READ},
    "runs:run_list": {"GET": READ},
    "runs:run": {"GET": READ},
    "runs:bundle_list": {"GET": READ},
    "runs:bundle": {"GET": READ},
    "runs:bundle_attach": {"POST": "upload"},
    "runs:upload": {"GET": "upload", "POST": "upload"},
    "runner:target_list": {"GET": READ},
    "runner:target_create": {"GET": "manage_targets", "POST": "manage_targets"},
    "runner:target_propose_build": {"POST": "manage_targets"},
    "runner:target_edit": {"GET": "manage_targets", "POST": "manage_targets"},
    "runner:benchmark_start": {"GET": "run_benchmarks", "POST": "run_benchmarks"},
    "runner:benchmark_list": {"GET": READ},
    "runner:benchmark": {"GET": READ},
    "runner:benchmark_cancel": {"POST": "run_benchmarks"},
    "runner:settings_experiment_start": {"POST": "run_benchmarks"},
    "runner:benchmark_output": {"GET": READ},
    "runner:schedule_list": {"GET": READ},
    "runner:schedule_create": {"GET": "manage_schedules", "POST": "manage_schedules"},
    "runner:schedule_toggle": {"POST": "manage_schedules"},
    "runner:host_list": {"GET": READ},
    "runner:host": {"GET": READ},
    "account:login": {"GET": OPEN, "POST": OPEN},
    "account:logout": {"POST": READ},  # changes nothing for an anonymous visitor: like reading
    "account:tokens": {"GET": LOGIN, "POST": LOGIN},
    "account:token_revoke": {"POST": LOGIN},
    "api:openapi-json": {"GET": READ},
    "api:openapi-view": {"GET": READ},
    "api:api-root": {"GET": NOT_FOUND},  # django-ninja's root answers 404 outside DEBUG
    "api:not_found": {"GET": NOT_FOUND},  # any other path under /api/: a JSON 404
    "api:upload_bundle": {"POST": "upload"},
    "api:get_bundle": {"GET": READ},
    "api:attach_bundle_run": {"POST": "upload"},
    "api:compare": {"GET": READ},
    "api:compare_writeup": {"GET": READ},
    "api:list_regressions": {"GET": READ, "POST": "triage"},
    "api:get_regression": {"GET": READ, "PATCH": "triage"},
    "api:triage_regressions": {"POST": "triage"},
    "api:link_regression_bug": {"POST": "triage"},
    "api:unlink_regression_bug": {"DELETE": "triage"},
    "api:list_bugs": {"GET": READ},
    "api:detect": {"POST": "triage"},
    "api:get_verdict": {"GET": READ},
}
# Pages that answer JSON and say 401 instead of sending a person to the login page.
JSON_API = {name for name in RULES if name.startswith("api:")} - {"api:openapi-view", "api:api-root", "api:not_found"}
JSON_API |= {"metrics"}


@dataclass(frozen=True)
class Url:
    name: str
    route: str
    methods: frozenset[str]  # the methods an API path serves; empty for a Django view (RULES says)


def _urls(patterns: list[Any], prefix: str = "", namespace: str = "") -> Iterator[Url]:
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            inner = f"{namespace}:{pattern.namespace}" if namespace and pattern.namespace else pattern.namespace
            yield from _urls(pattern.url_patterns, prefix + str(pattern.pattern), inner or namespace)
        elif isinstance(pattern, URLPattern):
            name = f"{namespace}:{pattern.name}" if namespace else str(pattern.name)
            yield Url(name, prefix + str(pattern.pattern), _ninja_methods(pattern))


def _ninja_methods(pattern: URLPattern) -> frozenset[str]:
    """The methods of the django-ninja operations behind an API URL (its view closes over their PathView)."""
    if not inspect.isfunction(pattern.callback):
        return frozenset()
    path_view = inspect.getclosurevars(pattern.callback).nonlocals.get("self")
    operations = getattr(path_view, "operations", None) or []
    return frozenset(method for operation in operations for method in operation.methods)


def all_urls() -> list[Url]:
    """Every URL but the admin's, once per route: django-ninja adds a pattern per operation on the same
    route (the resolver only ever reaches the first, whose view serves all the route's methods)."""
    seen: set[str] = set()
    urls = []
    for url in _urls(get_resolver().url_patterns):
        if not url.name.startswith("admin:") and url.route not in seen:
            seen.add(url.route)
            urls.append(url)
    return urls


def admin_urls() -> list[Url]:
    return [url for url in _urls(get_resolver().url_patterns) if url.name.startswith("admin:")]


# --------------------------------------------------------------------------- the rows behind the ids


@pytest.fixture
def rows(matrix_rows: dict[str, Any]) -> dict[str, Any]:
    return matrix_rows


@pytest.fixture
def matrix_rows(db: None, corpus: Path) -> dict[str, Any]:
    """The rows behind the ids, built once for consecutive tests that want them (conftest's ``SharedRows``); the
    users fetched for each test."""
    from django.contrib.auth import get_user_model

    built = _SHARED.get("matrix_rows")
    users = {role: get_user_model().objects.get(pk=pk) for role, pk in built["users"].items()}
    return {**built, "users": users}


@shared_rows("matrix_rows")
def _build_rows() -> dict[str, Any]:
    from accounts.models import ApiToken
    from accounts.permissions import create_token
    from regressions.detection import detect_regressions
    from regressions.models import Regression, Subscription
    from regressions.triage import link_bug
    from reports.models import Report
    from runner.models import BenchmarkHost, BenchmarkOutput, BenchmarkRun, Schedule, Target
    from runs import synthetic
    from runs.importer import archive_directory, submit_and_import
    from runs.models import Bundle, Result, Run

    if not CORPUS.is_dir():
        return {}  # the fixture skips (``corpus``)
    spec = synthetic.SeriesSpec(versions=("5.6.51", "5.7.44", "8.0.28", "8.0.30", "8.0.36"), seed=3)
    submit_and_import(synthetic.bundle_bytes(spec), name="series.tar.gz", source=Bundle.Source.COMMAND)
    submit_and_import(archive_directory(CORPUS / "ibench-2021"), name="ibench.tgz", source=Bundle.Source.COMMAND)
    ibench = Run.objects.filter(workload__suite=suites.IBENCH.name).first()
    assert ibench is not None
    runs = list(Run.objects.exclude(pk=ibench.pk).filter(workload__suite=suites.SYSBENCH.name))
    runs.sort(key=lambda r: r.build.version.sort_key)
    base = runs[0]
    detect_regressions(base.server_id, base.workload_id)
    # A microbenchmark's record if detection kept one, else a group's: the pages and the API are the same.
    regression = Regression.objects.order_by("group", "pk").first()
    assert regression is not None
    bug = link_bug(regression, "MDEV-33894", user=None).bug
    target = Target.objects.create(
        name="lab",
        kind="mariadb",
        host="127.0.0.1",
        port=3306,
        user="u",
        database="d",
        build_label="ma110402",
        config_label="z12a_c8r32",
        server_name="lab server",
    )
    run = BenchmarkRun.objects.create(target=target, microbenchmarks=["scan_range=100"], threads=[1])
    BenchmarkOutput.objects.create(benchmark_run=run, name="partial.tar.gz", content=b"\x1f\x8b")
    schedule = Schedule.objects.create(name="n", target=target, microbenchmarks=["scan_range=100"], threads=[1])
    host = BenchmarkHost.objects.create(name="lab-host", cpus=8)
    report = Report.objects.create(name="saved", slug="saved", base_run=base)
    subscription = Subscription.objects.create(name="perf team", emails="perf@example.com")
    users = {role: make_user_with_role(role) for role in ROLES[1:]}
    tokens = {role: create_token(user, "matrix")[1] for role, user in users.items()}
    owner_token = ApiToken.objects.get(user=users["viewer"])
    microbenchmark = Result.objects.filter(run=base).values_list("microbenchmark_id", flat=True).first()
    ids = {
        "runs:run": base.pk,
        "runs:bundle": base.bundle_id,
        "runs:bundle_attach": base.bundle_id,
        "regressions:regression": regression.pk,
        "regressions:alert_edit": subscription.pk,
        "regressions:alert_retry": subscription.pk,
        "reports:server": base.server_id,
        "reports:report": report.slug,
        "reports:drilldown": microbenchmark,
        "reports:drilldown_details": microbenchmark,
        "reports:timeline": microbenchmark,
        "runner:target_edit": target.pk,
        "runner:benchmark_start": target.pk,
        "runner:benchmark": run.pk,
        "runner:benchmark_cancel": run.pk,
        "runner:benchmark_output": run.pk,
        "runner:schedule_toggle": schedule.pk,
        "runner:host": host.pk,
        "regressions:run_verdict": base.pk,
        "account:token_revoke": owner_token.pk,
        "bundle_id": base.bundle_id,
        "regression_id": regression.pk,
        "bug_id": bug.pk,
    }
    query = {
        "reports:compare": f"?base={base.pk}",
        "reports:compare_export": f"?base={base.pk}&format=csv",
        "reports:compare_writeup": f"?base={base.pk}&format=zip",
        "reports:heatmap": f"?base={base.pk}",
        "reports:relative_table": f"?base={base.pk}",
        "reports:hw": f"?base={base.pk}",
        "reports:group_timeline": f"?base={base.pk}",
        "reports:drilldown": f"?base={base.pk}",
        "reports:drilldown_details": f"?base={base.pk}",
        "reports:scaleup": f"?base={base.pk}",
        "reports:timeline": f"?base={base.pk}",
        "reports:ibench": f"?base={ibench.pk}",
        "reports:run_diff": f"?a={base.pk}&b={runs[1].pk}",
        "reports:search": "?q=8.0",
        "api:compare": f"?base={base.pk}",
        "api:compare_writeup": f"?base={base.pk}",
    }
    forms = {"reports:save_report": {"base": base.pk, "name": "matrix report"}}
    user_ids = {role: user.pk for role, user in users.items()}
    return {"users": user_ids, "tokens": tokens, "ids": ids, "query": query, "forms": forms}


def _path(url: Url, rows: dict[str, Any]) -> str:
    def fill(match: re.Match[str]) -> str:
        name = match[1]
        return str(rows["ids"].get(name, rows["ids"].get(url.name)))

    return "/" + re.sub(r"<(?:\w+:)?(\w+)>", fill, url.route) + rows["query"].get(url.name, "")


# --------------------------------------------------------------------------- the walk


def _expected(rule: str, role: str, public: bool) -> str:
    if rule == NOT_FOUND:
        return "HTTP 404"
    if rule == OPEN:
        return "allowed"
    if rule == READ:
        return "allowed" if public or role != "anonymous" else "refused"
    if role == "anonymous":
        return "refused"
    if rule == LOGIN:
        return "allowed"
    return "allowed" if role in MAY[rule] else "forbidden"


def _request(url: Url, method: str, role: str, rows: dict[str, Any]) -> Any:
    client = Client()
    headers: dict[str, str] = {}
    if url.name in JSON_API and role != "anonymous":
        headers["Authorization"] = f"Bearer {rows['tokens'][role]}"  # scripts use tokens
    elif role != "anonymous":
        client.force_login(rows["users"][role])
    path = _path(url, rows)
    if method == "GET":
        return client.get(path, headers=headers)
    if url.name in JSON_API:
        return client.generic(method, path, "{}", content_type="application/json", headers=headers)
    return client.post(path, rows["forms"].get(url.name, {}), headers=headers)


def _outcome(url: Url, response: Any) -> str:
    status = response.status_code
    location = response.get("Location", "")
    if url.name in JSON_API:
        if status == 401 and response.json() == {"detail": "Unauthorized"}:
            return "refused"
        if status == 403 and "detail" in response.json() and "CSRF" not in response.json()["detail"]:
            return "forbidden"
        # Past authentication: the answer is about the (empty) request itself.
        return "allowed" if status < 500 and status not in (401, 403) else f"HTTP {status}"
    if status == 302 and location.startswith("/account/login/?next="):
        return "refused"
    if status == 403:
        return "forbidden"
    return "allowed" if 200 <= status < 400 else f"HTTP {status}"


def test_every_url_is_classified() -> None:
    names = {url.name for url in all_urls()}
    assert names == set(RULES), (
        f"unclassified: {sorted(names - set(RULES))}; gone: {sorted(set(RULES) - names)}: add each URL to "
        "RULES with the rule it follows"
    )
    for url in all_urls():
        if url.methods:  # an API path: every operation it serves is in the table, and nothing more
            assert url.methods == set(RULES[url.name]), url


@pytest.mark.slow(6)
@pytest.mark.parametrize("public", [True, False], ids=["public", "private"])
@pytest.mark.parametrize("role", ROLES)
def test_every_url_answers_each_role_as_the_rule_says(
    rows: dict[str, Any], role: str, public: bool, settings: Any
) -> None:
    settings.BENCHDASH_PUBLIC_BROWSING = public
    wrong = []
    walked = 0
    for url in all_urls():
        for method, rule in RULES[url.name].items():
            expected = _expected(rule, role, public)
            response = _request(url, method, role, rows)
            got = _outcome(url, response)
            walked += 1
            if got != expected:
                wrong.append(f"{method} {_path(url, rows)} ({url.name}): expected {expected}, got {got}")
    assert walked >= len(RULES)
    assert not wrong, "\n".join(wrong)


LOGIN_PAGES = ("/admin/login/", "/account/login/")
MANAGED_IN_ADMIN = ("admin:index", "admin:app_list", "admin:auth_")
MANAGED_IN_ADMIN += ("admin:accounts_", "admin:runs_", "admin:reports_", "admin:runner_")
MANAGED_IN_ADMIN += ("admin:axes_accessattempt_changelist", "admin:axes_accesslog_changelist")  # axes adds none


# A URLField on an admin add form warns about Django 6's default scheme; not a permission matter.
@pytest.mark.filterwarnings("ignore::django.utils.deprecation.RemovedInDjango60Warning")
@pytest.mark.parametrize("public", [True, False], ids=["public", "private"])
@pytest.mark.parametrize("role", ROLES)
def test_the_django_admin_is_for_the_admin_role_with_staff_status(
    user_with_role: Callable[..., Any], role: str, public: bool, settings: Any
) -> None:
    settings.BENCHDASH_PUBLIC_BROWSING = public
    client = Client()
    if role != "anonymous":
        user = user_with_role(role)
        user.is_staff = role == "admin"  # the demo's admin is staff; the other roles are not
        user.save()
        client.force_login(user)
    allowed = role == "admin"
    for url in admin_urls():
        if "<" in url.route or url.name in ("admin:logout", "admin:login", "admin:jsi18n", "admin:autocomplete"):
            continue  # object pages need an id; login, logout, the i18n script and autocomplete are no pages
        response = client.get("/" + url.route)
        if allowed and url.name == "admin:accounts_apitoken_add":
            assert response.status_code == 403  # a token is made by its owner only, on the tokens page
        elif allowed and url.name.startswith(MANAGED_IN_ADMIN):
            assert response.status_code in (200, 302), url  # 302: an app index the admin redirects
        elif allowed:  # another app's models (celery beat's): its own permissions, which the role lacks
            assert response.status_code in (200, 302, 403), url
        else:
            # To the admin's login, or the site's when browsing is private (its login wall comes first).
            assert response.status_code == 302 and response["Location"].startswith(LOGIN_PAGES), url
    if allowed:
        assert client.get("/admin/auth/user/").status_code == 200
        assert client.get("/admin/auth/group/").status_code == 200
        assert client.get("/admin/auth/user/add/").status_code == 200
