"""The runner's pages: login, targets (write-only password, build label from the server), starting, schedules."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client

from runner import sysbench_runner
from runner.models import BenchmarkRun, Schedule, Target
from runner.server_version import ask_server_version, propose_build_label
from runner.tests.services import Server
from runs.importer import submit_and_import
from runs.models import Bundle, Run
from runs.synthetic import SeriesSpec, bundle_bytes
from tests.factories import TargetFactory

pytestmark = pytest.mark.django_db

SECRET = "Typed-Secret-42"


@pytest.fixture
def engineer_client(client: Client, user_with_role: Callable[..., Any]) -> Client:
    # Registering targets and schedules is the admin role's (starting runs the uploader's).
    client.force_login(user_with_role("admin", username="engineer"))
    return client


def target_form(**overrides: Any) -> dict[str, Any]:
    form = {
        "name": "lab MariaDB",
        "kind": "mariadb",
        "host": "127.0.0.1",
        "port": "3306",
        "user": "bench",
        "password": SECRET,
        "database": "sbtest",
        "build_label": "ma101119_rel",
        "config_label": "z12a_c8r32",
        "server_name": "lab-1",
        "sample_host_metrics": "on",
        "storage_devices": "",
    }
    form.update(overrides)
    return form


def base_series(table_size: int = 10_000) -> Run:
    """One imported MariaDB run on lab-1 with 1 table × ``table_size`` rows, through the normal import."""
    spec = SeriesSpec(
        dbms_code="ma", versions=("10.11.8",), flavour="rel", table_size=table_size, tests=(("scan", 100, 6000.0),)
    )
    submit_and_import(
        bundle_bytes(spec), name="base.tar.gz", source=Bundle.Source.COMMAND, overrides={"server": "lab-1"}
    )
    return Run.objects.get()


def test_the_runner_pages_are_read_like_every_page_and_their_forms_need_a_login(client: Client, settings: Any) -> None:
    for url in ("/targets/", "/benchmarks/", "/benchmarks/schedules/"):
        assert client.get(url).status_code == 200, url
    for url in ("/targets/new/", "/benchmarks/schedules/new/"):
        response = client.get(url)
        assert response.status_code == 302 and "/login/" in response["Location"], url
    settings.BENCHDASH_PUBLIC_BROWSING = False
    for url in ("/targets/", "/benchmarks/", "/benchmarks/schedules/"):
        response = client.get(url)
        assert response.status_code == 302 and "/login/" in response["Location"], url


def test_a_saved_password_is_never_rendered_back_and_blank_keeps_it(
    engineer_client: Client, admin_client: Client
) -> None:
    response = engineer_client.post("/targets/new/", target_form())
    assert response.status_code == 302
    target = Target.objects.get()
    assert target.password == SECRET

    for url in ("/targets/", f"/targets/{target.pk}/edit/", f"/targets/{target.pk}/run/"):
        page = engineer_client.get(url).content.decode()
        assert SECRET not in page, url
    for url in ("/admin/runner/target/", f"/admin/runner/target/{target.pk}/change/"):
        response = admin_client.get(url)
        assert response.status_code == 200 and SECRET not in response.content.decode(), url
    edit = engineer_client.get(f"/targets/{target.pk}/edit/").content.decode()
    assert re.search(r'<input type="password" name="password"[^>]*>', edit)
    assert "A password is stored." in edit

    engineer_client.post(f"/targets/{target.pk}/edit/", target_form(password="", config_label="z12b"))
    target.refresh_from_db()
    assert (target.password, target.config_label) == (SECRET, "z12b")
    engineer_client.post(f"/targets/{target.pk}/edit/", target_form(password="", clear_password="on"))
    target.refresh_from_db()
    assert target.password == ""


def test_a_form_with_errors_does_not_echo_the_typed_password(engineer_client: Client) -> None:
    page = engineer_client.post("/targets/new/", target_form(port="not a port")).content.decode()
    assert "errorlist" in page and SECRET not in page
    assert not Target.objects.exists()


def test_a_build_label_that_does_not_name_a_version_is_refused(engineer_client: Client) -> None:
    page = engineer_client.post("/targets/new/", target_form(build_label="nightly")).content.decode()
    assert "Start with my, ma or pg" in page and not Target.objects.exists()


@pytest.mark.services
def test_a_target_saved_without_a_build_label_gets_one_from_the_servers_version(
    engineer_client: Client, mariadb: Server
) -> None:
    form = target_form(user=mariadb.user, password=mariadb.password, database=mariadb.database, build_label="")
    response = engineer_client.post("/targets/new/", form, follow=True)

    target = Target.objects.get()
    expected = propose_build_label("mariadb", ask_server_version(target.connection()))
    assert target.build_label == expected and expected.startswith("ma") and expected.endswith("_rel")
    assert f"Build label {expected} proposed" in response.content.decode()


@pytest.mark.services
def test_the_ask_the_server_button_proposes_a_build_label_for_the_typed_connection(
    engineer_client: Client, postgres: Server
) -> None:
    fields = {
        "kind": "postgres",
        "host": postgres.host,
        "port": postgres.port,
        "user": postgres.user,
        "password": postgres.password,
        "database": postgres.database,
    }
    fragment = engineer_client.post("/targets/propose-build/", fields, HTTP_HX_REQUEST="true").content.decode()
    label = re.search(r'name="build_label"[^>]*value="([^"]*)"', fragment)
    assert label and re.fullmatch(r"pg\d+_rel", label[1]), fragment
    assert "<html" not in fragment and postgres.password not in fragment


def test_an_unreachable_server_without_a_build_label_is_an_error_not_a_guess(engineer_client: Client) -> None:
    page = engineer_client.post("/targets/new/", target_form(port="1", build_label="")).content.decode()
    assert "could not ask 127.0.0.1:1 for its version" in page
    assert not Target.objects.exists() and SECRET not in page


def test_the_start_form_ticks_the_quick_list_and_offers_the_full_one(engineer_client: Client) -> None:
    target = TargetFactory(password=SECRET)
    ticked = re.compile(r'<input type="checkbox" name="microbenchmarks" value="([^"]+)"[^>]*checked')

    quick = ticked.findall(engineer_client.get(f"/targets/{target.pk}/run/").content.decode())
    full = ticked.findall(engineer_client.get(f"/targets/{target.pk}/run/?preset=full").content.decode())

    assert quick == [label for label in sysbench_runner.CATALOGUE if label in sysbench_runner.QUICK]
    assert full == list(sysbench_runner.CATALOGUE)


def test_starting_a_run_queues_it_and_its_page_polls_until_it_ends(engineer_client: Client) -> None:
    target = TargetFactory(password=SECRET)
    response = engineer_client.post(
        f"/targets/{target.pk}/run/",
        {
            "microbenchmarks": ["insert_range=100", "point-query_range=100"],
            "tables": "2",
            "table_size": "5000",
            "threads": "1, 4,4",
            "seconds": "30",
            "warmup_seconds": "5",
        },
    )
    # Inside the test's transaction the task (sent on commit) never goes: the run stays queued.
    run = BenchmarkRun.objects.get()
    assert response["Location"] == run.get_absolute_url()
    assert run.state == BenchmarkRun.State.QUEUED
    assert run.microbenchmarks == ["point-query_range=100", "insert_range=100"]
    assert (run.tables, run.table_size, run.threads, run.seconds, run.warmup_seconds) == (2, 5000, [1, 4], 30, 5)
    assert [(s["label"], s["dop"], s["state"]) for s in run.progress["steps"]] == [
        ("point-query_range=100", 1, "queued"),
        ("point-query_range=100", 4, "queued"),
        ("insert_range=100", 1, "queued"),
        ("insert_range=100", 4, "queued"),
    ]

    page = engineer_client.get(run.get_absolute_url()).content.decode()
    assert "<html" in page and 'hx-trigger="every 2s"' in page and "Cancel</button>" in page
    fragment = engineer_client.get(run.get_absolute_url(), HTTP_HX_REQUEST="true").content.decode()
    assert "<html" not in fragment and fragment.lstrip().startswith('<div id="benchmark-progress"')

    cancelled = engineer_client.post(f"/benchmarks/{run.pk}/cancel/", HTTP_HX_REQUEST="true").content.decode()
    run.refresh_from_db()
    assert run.state == BenchmarkRun.State.CANCELLED
    assert "every 2s" not in cancelled and "Cancel</button>" not in cancelled


def test_threads_must_be_a_list_of_positive_whole_numbers(engineer_client: Client) -> None:
    target = TargetFactory(password=SECRET)
    data = {
        "microbenchmarks": ["scan_range=100"],
        "tables": "1",
        "table_size": "10",
        "seconds": "1",
        "warmup_seconds": "0",
    }
    for threads in ("", "0", "a,b", "1;2"):
        response = engineer_client.post(f"/targets/{target.pk}/run/", {**data, "threads": threads})
        assert response.status_code == 200 and "errorlist" in response.content.decode(), threads
    assert not BenchmarkRun.objects.exists()


def test_a_schedule_gets_a_nightly_beat_entry_and_refuses_a_base_of_another_workload(engineer_client: Client) -> None:
    target = TargetFactory(password=SECRET)
    base = base_series(table_size=10_000)
    form = {
        "name": "nightly lab",
        "target": target.pk,
        "hour": "1",
        "minute": "15",
        "enabled": "on",
        "microbenchmarks": list(sysbench_runner.QUICK),
        "tables": "1",
        "table_size": "20000",
        "threads": "1",
        "seconds": "60",
        "warmup_seconds": "0",
        "base_run": base.pk,
    }
    page = engineer_client.post("/benchmarks/schedules/new/", form).content.decode()
    assert "so the comparison would mean nothing" in page and not Schedule.objects.exists()

    response = engineer_client.post("/benchmarks/schedules/new/", {**form, "table_size": "10000"})
    assert response.status_code == 302
    schedule = Schedule.objects.get()
    assert schedule.base_run == base
    task = schedule.periodic_task
    assert task is not None and task.enabled and task.task == "runner.tasks.run_schedule"
    assert (task.crontab.hour, task.crontab.minute) == ("1", "15")

    engineer_client.post(f"/benchmarks/schedules/{schedule.pk}/toggle/")
    task.refresh_from_db()
    assert not task.enabled
    listing = engineer_client.get("/benchmarks/schedules/").content.decode()
    assert "nightly lab" in listing and "Enable</button>" in listing

    schedule.delete()
    from django_celery_beat.models import PeriodicTask

    assert not PeriodicTask.objects.filter(pk=task.pk).exists()


def test_the_admin_pages_of_the_runner_open(admin_client: Client) -> None:
    target = TargetFactory(password=SECRET)
    run = BenchmarkRun.objects.create(target=target, microbenchmarks=["scan_range=100"], threads=[1])
    schedule = Schedule.objects.create(name="n", target=target, microbenchmarks=["scan_range=100"], threads=[1])
    for url in (
        "/admin/runner/target/add/",
        f"/admin/runner/target/{target.pk}/change/",
        f"/admin/runner/benchmarkrun/{run.pk}/change/",
        "/admin/runner/schedule/add/",
        f"/admin/runner/schedule/{schedule.pk}/change/",
    ):
        response = admin_client.get(url)
        assert response.status_code == 200, url
        assert SECRET not in response.content.decode(), url


def test_the_target_list_shows_where_the_servers_are_only_to_who_may_run_benchmarks(
    client: Client, user_with_role: Callable[..., Any]
) -> None:
    Target.objects.create(
        name="lab",
        kind="mariadb",
        host="db-lab.internal",
        port=3306,
        user="bench",
        database="sbtest",
        build_label="ma110402",
        config_label="z12a_c8r32",
        server_name="lab server",
    )
    assert "db-lab.internal" not in client.get("/targets/").content.decode()  # anonymous, browsing public
    client.force_login(user_with_role("viewer"))
    page = client.get("/targets/").content.decode()
    assert "lab server" in page and "db-lab.internal" not in page and "Start a run" not in page
    client.force_login(user_with_role("uploader"))
    page = client.get("/targets/").content.decode()
    assert "bench@db-lab.internal:3306" in page and "Start a run" in page and "New target" not in page
