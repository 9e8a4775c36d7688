"""/healthz under concurrent probes: 50 at once through gunicorn, with every service up and with each one down
(cut, and the database also hanging), through loopback proxies in front of the real PostgreSQL and Redis."""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests import live

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

PROBES = 50


def _probe_all(server: live.Gunicorn) -> tuple[Counter[tuple[int, str]], float]:
    """Fire PROBES probes at once; how many got each (status, names down), and the slowest answer's seconds."""

    def one(_: int) -> tuple[int, str, float]:
        started = time.monotonic()
        status, body = server.request("GET", "/healthz", timeout=30)
        return status, ",".join(json.loads(body)["down"]), time.monotonic() - started

    with ThreadPoolExecutor(PROBES) as pool:
        answers = list(pool.map(one, range(PROBES)))
    return Counter((status, down) for status, down, _ in answers), max(took for *_, took in answers)


def _until_up(server: live.Gunicorn, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if server.request("GET", "/healthz", timeout=30)[0] == 200:
            return
        time.sleep(0.2)
    pytest.fail("healthz did not come back up")


@pytest.fixture
def proxied(tmp_path: Path) -> Iterator[tuple[live.Gunicorn, dict[str, live.TcpProxy]]]:
    with (
        live.services_behind_proxies() as (proxies, env),
        live.gunicorn(tmp_path, workers=2, threads=8, env=env) as server,
    ):
        yield server, proxies


def test_fifty_concurrent_probes_all_say_ok_when_everything_is_up_and_all_name_what_is_down(
    proxied: tuple[live.Gunicorn, dict[str, live.TcpProxy]],
) -> None:
    server, proxies = proxied
    for _round in range(3):
        answers, _slowest = _probe_all(server)
        assert answers == Counter({(200, ""): PROBES})
    for name, proxy in proxies.items():
        proxy.cut()
        answers, slowest = _probe_all(server)
        assert answers == Counter({(503, name): PROBES}), name
        assert slowest < 20, f"{name} down: the slowest of {PROBES} probes took {slowest:.1f} s"
        proxy.restore()
        _until_up(server)
        answers, _slowest = _probe_all(server)
        assert answers == Counter({(200, ""): PROBES}), f"after the {name} came back"


def test_fifty_concurrent_probes_against_a_database_that_never_answers_each_answer_in_about_their_timeout(
    proxied: tuple[live.Gunicorn, dict[str, live.TcpProxy]],
) -> None:
    server, proxies = proxied
    proxies["database"].hang()
    started = time.monotonic()
    answers, slowest = _probe_all(server)
    took = time.monotonic() - started
    assert answers == Counter({(503, "database"): PROBES})
    # 16 serving threads, a one-second deadline each: about four rounds, whatever the database does.
    assert took < 20, f"{PROBES} probes took {took:.1f} s (slowest {slowest:.1f} s)"
    proxies["database"].restore()
    _until_up(server)
    answers, _slowest = _probe_all(server)
    assert answers == Counter({(200, ""): PROBES})
