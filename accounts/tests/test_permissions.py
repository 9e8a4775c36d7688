"""Roles and the login wall: who may read, upload, triage, run benchmarks and register targets, on pages and API."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import Group
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from accounts.permissions import (
    ACTIONS,
    ADMIN,
    MANAGE_TARGETS,
    ROLE_CHECKS,
    UPLOAD,
    UPLOADER,
    VIEWER,
    create_token,
)
from regressions.detection import detect_regressions
from regressions.models import Regression
from runs import synthetic
from runs.importer import submit_and_import
from runs.models import Bundle, Run

pytestmark = pytest.mark.django_db

MakeUser = Callable[..., Any]
KEY_PERMISSIONS = tuple(ACTIONS.values())


def _client_as(make_user: MakeUser, role: str) -> Client:
    client = Client()
    client.force_login(make_user(role))
    return client


def _bearer(make_user: MakeUser, role: str) -> dict[str, str]:
    _row, token = create_token(make_user(role, username=f"{role}-bot"), "tests")
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture
def series() -> Run:
    """A generated MySQL series with regressions detected, so there is something to triage."""
    spec = synthetic.SeriesSpec(versions=("5.6.51", "5.7.44", "8.0.28", "8.0.30", "8.0.36"), seed=3)
    submit_and_import(synthetic.bundle_bytes(spec), name="series.tar.gz", source=Bundle.Source.COMMAND)
    base = Run.objects.order_by("build__version__sort_key").first()
    assert base is not None
    detect_regressions(base.server_id, base.workload_id)
    assert Regression.objects.exists()
    return base


# --------------------------------------------------------------------------- the roles as migrated


@pytest.mark.parametrize("role", sorted(ROLE_CHECKS))
def test_each_migrated_role_group_grants_exactly_its_key_permissions(role: str, django_user_model: Any) -> None:
    # The groups as `migrate` made them (no test fixture recreates them here).
    user = django_user_model.objects.create_user(f"someone-{role}")
    user.groups.add(Group.objects.get(name=role))
    granted = {perm for perm in KEY_PERMISSIONS if user.has_perm(perm)}
    assert granted == ROLE_CHECKS[role]


def test_the_admin_role_also_lets_staff_manage_every_benchdash_model_and_users_and_groups_in_the_admin(
    django_user_model: Any,
) -> None:
    user = django_user_model.objects.create_user("boss")
    user.groups.add(Group.objects.get(name=ADMIN))
    assert user.has_perm("runs.delete_bundle") and user.has_perm("runner.add_target")
    assert user.has_perm("regressions.delete_bug")
    assert all(user.has_perm(f"auth.{a}_{m}") for a in ("view", "add", "change", "delete") for m in ("user", "group"))
    assert not user.has_perm("auth.change_permission")  # permissions are given through groups, never edited


# --------------------------------------------------------------------------- upload


def test_the_upload_page_sends_an_anonymous_visitor_to_the_login_page(client: Client) -> None:
    response = client.get("/upload/")
    assert response.status_code == 302 and response["Location"] == "/account/login/?next=/upload/"


@pytest.mark.parametrize(("role", "status"), [(VIEWER, 403), ("triager", 403), (UPLOADER, 200), (ADMIN, 200)])
def test_the_upload_page_needs_the_uploader_role(make_user: MakeUser, role: str, status: int) -> None:
    assert _client_as(make_user, role).get("/upload/").status_code == status


def test_a_viewer_cannot_post_an_upload_and_nothing_is_stored(make_user: MakeUser) -> None:
    response = _client_as(make_user, VIEWER).post("/upload/", {"bundle": SimpleUploadedFile("a.tgz", b"x" * 100)})
    assert response.status_code == 403 and Bundle.objects.count() == 0


@pytest.mark.parametrize(
    ("role", "status"), [(None, 401), (VIEWER, 403), ("triager", 403), (UPLOADER, 422), (ADMIN, 422)]
)
def test_the_upload_api_needs_the_uploader_role(make_user: MakeUser, role: str | None, status: int) -> None:
    headers = _bearer(make_user, role) if role else {}
    response = Client().post(
        "/api/bundles/", {"file": SimpleUploadedFile("notes.tgz", b"not an archive" * 50)}, headers=headers
    )
    # 422 is the bundle refused for what it is: the caller got past the role check.
    assert response.status_code in ((status, 202) if status == 422 else (status,)), response.content
    assert Bundle.objects.count() == (1 if status == 422 else 0)
    if status == 422:
        uploader = Bundle.objects.get().uploaded_by
        assert uploader is not None and uploader.username == f"{role}-bot"


# --------------------------------------------------------------------------- triage


def test_bulk_triage_on_the_page_needs_the_triager_role(series: Run, make_user: MakeUser) -> None:
    ids = list(Regression.objects.values_list("pk", flat=True)[:2])
    data = {"ids": ids, "action": Regression.State.NOISE}
    url = reverse("regressions:regression_bulk")
    assert _client_as(make_user, UPLOADER).post(url, data).status_code == 403
    assert not Regression.objects.filter(state=Regression.State.NOISE).exists()
    assert _client_as(make_user, "triager").post(url, data).status_code == 302
    assert Regression.objects.filter(state=Regression.State.NOISE).count() == 2


@pytest.mark.parametrize(("role", "status"), [(None, 401), (VIEWER, 403), (UPLOADER, 403), ("triager", 200)])
def test_triage_and_bug_links_through_the_api_need_the_triager_role(
    series: Run, make_user: MakeUser, role: str | None, status: int
) -> None:
    regression = Regression.objects.first()
    assert regression is not None
    headers = _bearer(make_user, role) if role else {}
    client = Client()
    patched = client.patch(
        f"/api/regressions/{regression.pk}", {"state": "noise"}, content_type="application/json", headers=headers
    )
    linked = client.post(
        f"/api/regressions/{regression.pk}/bugs",
        {"bug": "MDEV-33894"},
        content_type="application/json",
        headers=headers,
    )
    assert (patched.status_code, linked.status_code) == (status, status)
    regression.refresh_from_db()
    assert (regression.state == "noise") is (status == 200)
    assert regression.bugs.exists() is (status == 200)
    if status == 200:
        assert regression.events.last().user.username == "triager-bot"  # type: ignore[union-attr]


def test_the_regression_list_can_be_read_through_the_api_without_a_role(series: Run) -> None:
    response = Client().get("/api/regressions?tab=all&state=any")
    # Every record of the default release view (long-term releases), whatever its kind or state.
    expected = Regression.objects.filter(releases="long-term").count()
    assert response.status_code == 200 and response.json()["count"] == expected > 0


# --------------------------------------------------------------------------- runner


@pytest.mark.parametrize(
    ("role", "start", "new_target", "new_schedule"),
    [(VIEWER, 403, 403, 403), (UPLOADER, 200, 403, 403), ("triager", 403, 403, 403), (ADMIN, 200, 200, 200)],
)
def test_starting_runs_needs_the_uploader_role_and_targets_and_schedules_the_admin_role(
    make_user: MakeUser, role: str, start: int, new_target: int, new_schedule: int
) -> None:
    from runner.models import Target

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
    client = _client_as(make_user, role)
    assert client.get(reverse("runner:benchmark_start", args=[target.pk])).status_code == start
    assert client.get(reverse("runner:target_create")).status_code == new_target
    assert client.get(reverse("runner:target_edit", args=[target.pk])).status_code == new_target
    assert client.get(reverse("runner:schedule_create")).status_code == new_schedule
    assert client.get(reverse("runner:benchmark_list")).status_code == 200  # reading needs only the login


# --------------------------------------------------------------------------- private browsing


@pytest.fixture
def private(settings: Any) -> None:
    settings.BENCHDASH_PUBLIC_BROWSING = False


@pytest.mark.parametrize("path", ["/", "/runs/", "/bundles/", "/compare/", "/regressions/", "/reports/"])
def test_with_private_browsing_every_page_sends_an_anonymous_visitor_to_log_in(private: None, path: str) -> None:
    response = Client().get(path)
    assert response.status_code == 302 and response["Location"].startswith("/account/login/?next=")


def test_with_private_browsing_the_api_answers_401_to_anonymous_reads_and_serves_a_token(
    private: None, make_user: MakeUser
) -> None:
    assert Client().get("/api/regressions").status_code == 401
    assert Client().get("/api/bundles/1").json() == {"detail": "Unauthorized"}
    assert Client().get("/api/regressions", headers=_bearer(make_user, VIEWER)).status_code == 200


def test_with_private_browsing_health_and_login_stay_reachable_and_the_api_schema_needs_a_login(
    private: None, make_user: MakeUser
) -> None:
    client = Client()
    assert client.get("/healthz").status_code == 200
    assert client.get("/account/login/").status_code == 200
    refused = client.get("/api/openapi.json")
    assert refused.status_code == 401 and refused.json() == {"detail": "Unauthorized"}
    docs = client.get("/api/docs")
    assert docs.status_code == 302 and docs["Location"] == "/account/login/?next=/api/docs"
    assert client.get("/api/openapi.json", headers=_bearer(make_user, VIEWER)).json()["info"]["title"]
    bad = client.get("/api/openapi.json", headers={"Authorization": "Bearer bd_revoked-or-never-made"})
    assert bad.status_code == 401
    client.force_login(make_user("triager"))
    assert client.get("/api/openapi.json").status_code == 200 and client.get("/api/docs").status_code == 200


def test_with_private_browsing_a_viewer_reads_every_page(private: None, series: Run, make_user: MakeUser) -> None:
    client = _client_as(make_user, VIEWER)
    for path in ("/", "/runs/", f"/runs/{series.pk}/", f"/compare/?base={series.pk}", "/regressions/"):
        assert client.get(path).status_code == 200, path


def test_with_public_browsing_an_anonymous_visitor_reads_pages_and_the_api(series: Run) -> None:
    client = Client()
    assert client.get("/").status_code == 200
    assert client.get(f"/compare/?base={series.pk}").status_code == 200
    assert client.get(f"/api/compare?base={series.pk}").status_code == 200


# --------------------------------------------------------------------------- logging in and out


def test_a_user_logs_in_with_the_form_and_out_with_a_post(make_user: MakeUser) -> None:
    user = make_user(UPLOADER)
    user.set_password("a long enough password")
    user.save()
    client = Client(enforce_csrf_checks=True)
    page = client.get("/account/login/?next=/upload/")
    assert 'name="next" value="/upload/"' in page.content.decode()
    token = page.context["csrf_token"]
    response = client.post(
        "/account/login/",
        {"username": UPLOADER, "password": "a long enough password", "next": "/upload/", "csrfmiddlewaretoken": token},
    )
    assert response.status_code == 302 and response["Location"] == "/upload/"
    home = client.get("/").content.decode()
    assert "Log out" in home and "API tokens" in home
    assert client.get("/account/logout/").status_code == 405  # a link must not log anyone out
    out = client.post("/account/logout/", {"csrfmiddlewaretoken": client.cookies["csrftoken"].value})
    assert out.status_code == 302 and client.get("/upload/").status_code == 302


def test_a_wrong_password_is_refused_with_a_message(make_user: MakeUser) -> None:
    make_user(UPLOADER)
    response = Client().post("/account/login/", {"username": UPLOADER, "password": "wrong"})
    assert response.status_code == 200 and 'role="alert"' in response.content.decode()
    assert "_auth_user_id" not in response.wsgi_request.session


@pytest.fixture
def make_user(user_with_role: MakeUser) -> MakeUser:
    return user_with_role


# --------------------------------------------------------------------------- the demo's login


def test_load_demo_gives_the_demo_an_admin_login_with_a_fresh_password_each_time(tmp_path: Any) -> None:
    import io
    import re

    from django.contrib.auth import authenticate
    from django.core.management import call_command

    passwords = []
    for _ in range(2):
        out = io.StringIO()
        call_command("load_demo", corpus=tmp_path, stdout=out)  # an empty corpus: nothing to import, quick
        match = re.search(r"demo login \((created|password reset)\): user 'demo', password '([^']+)'", out.getvalue())
        assert match, out.getvalue()
        passwords.append(match[2])
    assert passwords[0] != passwords[1]
    user = authenticate(username="demo", password=passwords[1])
    assert user is not None and user.is_staff and user.has_perm(UPLOAD) and user.has_perm(MANAGE_TARGETS)
    assert user.has_perm("auth.change_user") and user.has_perm("auth.change_group")  # puts people in roles
    assert authenticate(username="demo", password=passwords[0]) is None


def test_load_demo_creates_no_login_in_production(tmp_path: Any, settings: Any, django_user_model: Any) -> None:
    import io

    from django.core.management import call_command

    settings.PRODUCTION = True
    out = io.StringIO()
    call_command("load_demo", corpus=tmp_path, stdout=out)
    assert "no demo user created" in out.getvalue()
    assert not django_user_model.objects.filter(username="demo").exists()


def test_the_admin_role_puts_a_user_in_a_role_in_the_admin_but_cannot_make_a_superuser(make_user: MakeUser) -> None:
    boss = make_user(ADMIN, username="boss")
    boss.is_staff = True
    boss.save()
    newcomer = make_user(VIEWER, username="newcomer")
    client = Client()
    client.force_login(boss)
    url = f"/admin/auth/user/{newcomer.pk}/change/"
    form = client.get(url).content.decode()
    assert 'name="groups"' in form and 'name="is_superuser"' not in form and 'name="user_permissions"' not in form
    joined = newcomer.date_joined
    response = client.post(
        url,
        {
            "username": "newcomer",
            "is_active": "on",
            "is_superuser": "on",  # ignored: read-only for a non-superuser
            "groups": [Group.objects.get(name=UPLOADER).pk],
            "date_joined_0": joined.strftime("%Y-%m-%d"),
            "date_joined_1": joined.strftime("%H:%M:%S"),
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    newcomer.refresh_from_db()
    assert list(newcomer.groups.values_list("name", flat=True)) == [UPLOADER]
    assert not newcomer.is_superuser and newcomer.has_perm(UPLOAD)
