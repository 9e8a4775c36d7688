"""A stored target password goes only where it was entered for, targets live only in allowed networks, and a
failed connection says what kind of failure it was, never the driver's words.

The "other host" is a real socket on another loopback port that speaks just enough PostgreSQL to ask for a
cleartext password, as the fake server of the red-team finding did.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.test import Client, override_settings

from runner import benchmark, network, server_version
from runner.models import BenchmarkRun, Target
from runner.tasks import run_benchmark
from runner.tests.services import FakePostgres, Server
from tests.factories import TargetFactory

pytestmark = pytest.mark.django_db

SECRET = "Stored-Secret-77"


@pytest.fixture
def fake_postgres() -> Iterator[FakePostgres]:
    server = FakePostgres()
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
def admin_user_client(client: Client, user_with_role: Callable[..., Any]) -> Client:
    client.force_login(user_with_role("admin", username="target-admin"))
    return client


def edit_form(target: Target, **overrides: Any) -> dict[str, Any]:
    form = {
        "target": target.pk,
        "name": target.name,
        "kind": target.kind,
        "host": target.host,
        "port": target.port,
        "user": target.user,
        "password": "",
        "database": target.database,
        "build_label": target.build_label,
        "config_label": target.config_label,
        "server_name": target.server_name,
        "storage_devices": "",
    }
    form.update(overrides)
    return form


def propose(client: Client, **fields: Any) -> str:
    response = client.post("/targets/propose-build/", fields, HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    return response.content.decode()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# --------------------------------------------------------------------------- the password stays with its endpoint


def test_asking_another_port_with_the_stored_password_sends_nothing_there(
    admin_user_client: Client, fake_postgres: FakePostgres
) -> None:
    target = TargetFactory(postgres=True, password=SECRET)
    fields = edit_form(target, port=fake_postgres.port)
    note = propose(admin_user_client, **fields)

    assert "enter the password again" in note
    time.sleep(0.3)
    assert fake_postgres.connections == 0 and not fake_postgres.received

    # The same request with the password typed does reach the fake server, and it does capture a password:
    # the silence above is the rule at work, not a server that cannot listen.
    note = propose(admin_user_client, **{**fields, "password": "Typed-For-This-Host"})
    assert "could not ask 127.0.0.1" in note and "could not connect" in note
    assert fake_postgres.connections == 1 and fake_postgres.saw("Typed-For-This-Host")
    assert not fake_postgres.saw(SECRET)


@pytest.mark.parametrize("change", ["host", "port", "user", "database"])
def test_editing_host_port_user_or_database_without_the_password_is_refused_and_connects_nowhere(
    admin_user_client: Client, fake_postgres: FakePostgres, change: str
) -> None:
    target = TargetFactory(postgres=True, password=SECRET)
    new = {"host": "localhost", "port": fake_postgres.port, "user": "other", "database": "otherdb"}[change]
    # A blank build label makes the form ask the server: that must not happen with the stored password.
    page = admin_user_client.post(
        f"/targets/{target.pk}/edit/", edit_form(target, build_label="", **{change: new})
    ).content.decode()

    assert "enter the password again" in page and SECRET not in page
    assert fake_postgres.connections == 0
    target.refresh_from_db()
    assert getattr(target, change) != new and target.password == SECRET


def test_editing_the_endpoint_with_the_password_typed_again_binds_it_to_the_new_one(
    admin_user_client: Client, fake_postgres: FakePostgres
) -> None:
    target = TargetFactory(postgres=True, password=SECRET)
    response = admin_user_client.post(
        f"/targets/{target.pk}/edit/", edit_form(target, port=6543, password="New-Secret-1")
    )
    assert response.status_code == 302
    target.refresh_from_db()
    assert (target.port, target.password) == (6543, "New-Secret-1")
    assert target.stored_password_for("127.0.0.1", 6543, "bench", "sbtest") == "New-Secret-1"
    assert target.stored_password_for("127.0.0.1", 5432, "bench", "sbtest") is None

    # Unchanged endpoint, blank password: kept (the ordinary edit still works).
    admin_user_client.post(f"/targets/{target.pk}/edit/", edit_form(target, config_label="z12b"))
    target.refresh_from_db()
    assert (target.config_label, target.password) == ("z12b", "New-Secret-1")


def test_a_target_moved_behind_the_forms_back_keeps_its_password_to_itself(fake_postgres: FakePostgres) -> None:
    target = TargetFactory(postgres=True, password=SECRET)
    # A bulk update, a shell session or any later code path: the binding still holds.
    Target.objects.filter(pk=target.pk).update(port=fake_postgres.port)
    run = benchmark.create_run(
        Target.objects.get(pk=target.pk),
        microbenchmarks=["point-query_range=100"],
        tables=1,
        table_size=100,
        threads=[1],
        seconds=1,
    )
    run_benchmark.delay(run.pk).get()

    run.refresh_from_db()
    assert run.state == BenchmarkRun.State.FAILED
    assert "enter the password again" in run.error
    assert fake_postgres.connections == 0


# --------------------------------------------------------------------------- allowed hosts


@pytest.mark.parametrize(
    "host",
    [
        "169.254.169.254",
        "2852039166",  # 169.254.169.254 as one number: the resolver reads it, so must the check
        "metadata.google.internal",
        "METADATA.google.internal.",
        "metadata",
        "fd00:ec2::254",
        "fe80::1",
        "::ffff:169.254.169.254",
        "64:ff9b::a9fe:a9fe",
        "10.0.0.5",
        "0.0.0.0",
    ],
)
def test_link_local_metadata_and_unlisted_hosts_are_refused_before_any_connection(
    admin_user_client: Client, host: str
) -> None:
    note = propose(admin_user_client, kind="mariadb", host=host, port=3306, user="u", password="p", database="d")
    assert "targets cannot use it" in note or "outside the networks" in note, note

    page = admin_user_client.post(
        "/targets/new/",
        {
            **edit_form(TargetFactory(postgres=True, password=SECRET, name="other")),
            "target": "",
            "name": "new",
            "host": host,
        },
    ).content.decode()
    assert "targets cannot use it" in page or "outside the networks" in page
    assert not Target.objects.filter(name="new").exists()


@pytest.mark.parametrize("host", ["http://127.0.0.1", "127.0.0.1:3306", "root@127.0.0.1", "-oProxyCommand", "a b"])
def test_a_host_that_is_more_than_a_name_or_an_address_is_refused(host: str) -> None:
    with pytest.raises(network.HostRefused, match="host name or an IP address alone"):
        network.check_host(host, 3306)


def test_the_default_allow_list_keeps_loopback_targets_working() -> None:
    assert network.check_host("127.0.0.1", 3306) == ("127.0.0.1",)
    assert network.check_host("::1", 3306) == ("::1",)
    assert "127.0.0.1" in network.check_host("localhost", 3306)


def test_every_address_a_name_resolves_to_must_be_allowed() -> None:
    with pytest.raises(network.HostRefused, match=r"db resolves to 10\.0\.0\.1"):
        network.check_addresses("db", ["127.0.0.1", "10.0.0.1"])
    with pytest.raises(network.HostRefused, match="link-local or cloud metadata"):
        network.check_addresses("db", ["127.0.0.1", "169.254.169.254"])
    # Through the real resolver: localhost is 127.0.0.1 here, outside an IPv6-only list.
    with override_settings(BENCHDASH_TARGET_NETWORKS=["::1/128"]), pytest.raises(network.HostRefused):
        network.check_host("localhost", 3306)


def test_the_admins_networks_widen_the_list_but_never_to_metadata_addresses() -> None:
    with override_settings(BENCHDASH_TARGET_NETWORKS="10.0.0.0/8, 0.0.0.0/0"):
        assert network.check_host("10.1.2.3", 3306) == ("10.1.2.3",)
        for host in ("169.254.169.254", "168.63.129.16", "100.100.100.200", "metadata.google.internal"):
            with pytest.raises(network.HostRefused):
                network.check_host(host, 80)
    with override_settings(BENCHDASH_TARGET_NETWORKS=["not-a-network"]), pytest.raises(Exception, match="NETWORKS"):
        network.check_host("127.0.0.1", 3306)


def test_a_name_that_does_not_resolve_is_refused_plainly() -> None:
    with pytest.raises(network.HostRefused, match="cannot be resolved"):
        network.check_host("no-such-host.invalid", 3306)


def test_a_stored_target_on_a_refused_host_fails_its_run_without_connecting() -> None:
    target = TargetFactory(postgres=True, password=SECRET, host="169.254.169.254")
    run = benchmark.create_run(
        target, microbenchmarks=["point-query_range=100"], tables=1, table_size=100, threads=[1], seconds=1
    )
    run_benchmark.delay(run.pk).get()
    run.refresh_from_db()
    assert run.state == BenchmarkRun.State.FAILED and "link-local or cloud metadata" in run.error


# --------------------------------------------------------------------------- summarised connection errors


def test_a_closed_port_is_could_not_connect_and_nothing_more(admin_user_client: Client) -> None:
    port = free_port()
    note = propose(admin_user_client, kind="mariadb", host="127.0.0.1", port=port, user="u", database="d")
    assert f"could not ask 127.0.0.1:{port} for its version: could not connect" in note
    for raw in ("Can't connect", "refused", "Errno", "111"):
        assert raw not in note


def test_a_server_that_never_answers_is_timed_out(admin_user_client: Client, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(server_version, "CONNECT_TIMEOUT_SECONDS", 1)
    with socket.create_server(("127.0.0.1", 0)) as silent:  # accepts (backlog), never sends a greeting
        port = silent.getsockname()[1]
        note = propose(admin_user_client, kind="mariadb", host="127.0.0.1", port=port, user="u", database="d")
    assert f"could not ask 127.0.0.1:{port} for its version: timed out" in note


@pytest.mark.services
def test_a_wrong_password_is_authentication_failed(admin_user_client: Client, mariadb: Server) -> None:
    note = propose(
        admin_user_client,
        kind="mariadb",
        host=mariadb.host,
        port=mariadb.port,
        user=mariadb.user,
        password="wrong-password",
        database=mariadb.database,
    )
    assert "for its version: authentication failed" in note
    assert "Access denied" not in note and mariadb.user not in note


@pytest.mark.services
def test_the_stored_password_still_works_for_its_own_endpoint(admin_user_client: Client, mariadb: Server) -> None:
    target = mariadb.target()
    fields = edit_form(target)
    del fields["password"]
    note = propose(admin_user_client, **fields)
    assert "Proposed from the server" in note and 'value="ma' in note, note


def test_the_admin_form_keeps_the_same_rule(admin_client: Client) -> None:
    target = TargetFactory(postgres=True, password=SECRET)
    data = {k: v for k, v in edit_form(target, host="localhost").items() if k != "target"}
    response = admin_client.post(f"/admin/runner/target/{target.pk}/change/", data)
    assert response.status_code == 200 and "enter the password again" in response.content.decode()
    target.refresh_from_db()
    assert target.host == "127.0.0.1"


def test_a_password_sysbench_could_not_be_given_is_refused_when_typed(admin_user_client: Client) -> None:
    form = {
        **edit_form(TargetFactory(postgres=True, password=SECRET, name="other")),
        "target": "",
        "name": "new",
        "password": "both ' and \"",
    }
    page = admin_user_client.post("/targets/new/", form).content.decode()
    assert "sysbench cannot be given this password" in page and not Target.objects.filter(name="new").exists()
