"""The API's errors: JSON everywhere under /api/, each code documented, a database outage a 503 with Retry-After.

The in-process tests go through the whole Django stack (middleware, URL
resolution, ninja). The outage test runs gunicorn in production mode against
the test database through a TCP proxy on a loopback port, cuts the proxy (the
shared PostgreSQL is never touched), and puts it back. The detection test runs a
real Celery worker over Redis, which keeps no task results.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import re
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, get_args
from urllib.parse import quote

import pytest
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from accounts.permissions import create_token
from regressions.api import KindName, StateFilter, StateName
from regressions.detection import detect_regressions
from regressions.models import Bug, Regression
from runs.models import Bundle, Run
from tests import live


@pytest.fixture
def triager(user_with_role: Callable[..., Any]) -> Client:
    token = create_token(user_with_role("triager"), "api errors")[1]
    return Client(headers={"Authorization": f"Bearer {token}"})


@pytest.mark.django_db
def test_a_path_no_operation_has_answers_404_in_json_even_with_a_session_cookie(client: Client) -> None:
    for method in ("get", "post", "delete"):
        response = getattr(client, method)("/api/no/such/thing", HTTP_COOKIE="sessionid=nope")
        assert response.status_code == 404, (method, response.content[:200])
        assert response.json() == {"detail": "no API endpoint at /api/no/such/thing"}
    # An id that is not a number (or a negative one) matches no operation either.
    assert client.get("/api/regressions/-3").json()["detail"].startswith("no API endpoint")


@pytest.mark.django_db
def test_a_method_a_path_does_not_have_answers_405_in_json_with_allow(client: Client) -> None:
    response = client.put("/api/regressions")
    assert response.status_code == 405
    assert set(response["Allow"].split(", ")) == {"GET", "POST"}
    assert response.json()["detail"].startswith("method PUT not allowed")


@pytest.mark.django_db
def test_a_session_write_without_its_csrf_token_gets_403_in_json(user_with_role: Callable[..., Any]) -> None:
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(user_with_role("triager"))
    response = browser.post("/api/regressions/triage", {"ids": [1], "state": "noise"}, content_type="application/json")
    assert response.status_code == 403
    assert "CSRF" in response.json()["detail"]


@pytest.mark.django_db
@pytest.mark.parametrize(
    "query",
    ["offset=99999999999999999999", "offset=-1", "limit=0", "limit=501", "limit=99999999999999999999", "state=gone"],
)
def test_an_out_of_range_page_or_unknown_state_is_refused_with_422_not_a_database_error(
    client: Client, query: str
) -> None:
    response = client.get(f"/api/regressions?{query}")
    assert response.status_code == 422, response.content[:300]
    field = query.split("=")[0]
    assert [error["loc"] for error in response.json()["detail"]] == [["query", field]]


@pytest.mark.django_db
def test_the_largest_offset_allowed_answers_an_empty_page(client: Client) -> None:
    response = client.get("/api/regressions?offset=1000000000&state=any")
    assert response.status_code == 200 and response.json()["items"] == []


@pytest.mark.django_db
def test_triaging_ids_beyond_any_row_is_refused_with_422(triager: Client) -> None:
    response = triager.post(
        "/api/regressions/triage", {"ids": [2**70], "state": "noise"}, content_type="application/json"
    )
    assert response.status_code == 422 and response.json()["detail"][0]["loc"] == ["body", "payload", "ids", 0]


@pytest.mark.django_db
@pytest.mark.parametrize("body", ["[null, null]", "3", '{"stat": "noise"}'])
def test_a_patch_that_is_not_an_object_of_known_keys_is_refused_and_changes_nothing(
    small_base: Run, triager: Client, body: str
) -> None:
    detect_regressions(small_base.server_id, small_base.workload_id)
    regression = Regression.objects.order_by("pk").first()
    assert regression is not None
    response = triager.patch(f"/api/regressions/{regression.pk}", body, content_type="application/json")
    assert response.status_code == 422, response.content[:300]
    assert Regression.objects.get(pk=regression.pk).updated_at == regression.updated_at


def test_the_schema_enums_are_the_models_choices() -> None:
    assert set(get_args(StateName)) == set(Regression.State.values)
    assert set(get_args(StateFilter)) == {"open", "any", *Regression.State.values}
    assert set(get_args(KindName)) == set(Regression.Kind.values)


@pytest.mark.django_db
def test_every_operation_documents_its_error_codes_with_their_body_types(client: Client) -> None:
    schema = client.get("/api/openapi.json").json()
    operations = [(path, method, op) for path, item in schema["paths"].items() for method, op in item.items()]
    assert len(operations) >= 10
    for path, method, operation in operations:
        codes = operation["responses"]
        where = f"{method.upper()} {path}"
        for code, body in (("400", "ErrorOut"), ("500", "ErrorOut"), ("503", "ErrorOut")):
            assert codes[code]["content"]["application/json"]["schema"]["$ref"].endswith(body), where
        validation = json.dumps(codes["422"]["content"]["application/json"]["schema"])
        assert "ValidationErrorOut" in validation, where
        if "{" in path:
            assert codes["404"]["content"]["application/json"]["schema"]["$ref"].endswith("ErrorOut"), where
    upload = json.dumps(schema["paths"]["/api/bundles/"]["post"]["responses"]["422"])
    assert "BundleOut" in upload and "ValidationErrorOut" in upload  # a bad bundle, or a form without its file


@pytest.mark.django_db
def test_unlinking_a_bug_that_is_not_linked_answers_404_in_json_and_changes_nothing(
    small_base: Run, triager: Client
) -> None:
    detect_regressions(small_base.server_id, small_base.workload_id)
    regression, elsewhere = Regression.objects.order_by("pk")[:2]
    linked = triager.post(f"/api/regressions/{regression.pk}/bugs", {"bug": "MDEV-33894"}, "application/json")
    assert linked.status_code == 200
    # A bug that exists, linked to another regression only.
    assert (
        triager.post(f"/api/regressions/{elsewhere.pk}/bugs", {"bug": "PS-8822"}, "application/json").status_code == 200
    )
    other = Bug.objects.get(regressions=elsewhere)

    response = triager.delete(f"/api/regressions/{regression.pk}/bugs/{other.pk}")
    assert response.status_code == 404
    assert response.json() == {"detail": f"{other.label} is not linked to regression {regression.pk}"}
    assert [bug.label for bug in regression.bugs.all()] == [linked.json()["bug"]["label"]]
    assert triager.delete(f"/api/regressions/{regression.pk}/bugs/{2**62}").status_code == 404


# --------------------------------------------------------------------------- a real worker, no result backend


@pytest.mark.worker
@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_detection_queued_to_a_real_worker_answers_202_and_its_records_appear_at_the_listing_it_names(
    small_base: Run, triager: Client
) -> None:
    payload = {"server": small_base.server.name, "workload": small_base.workload.name}
    with live.celery_workers("detect") as start:
        start()
        response = triager.post("/api/regressions/detect", payload, content_type="application/json")
        assert response.status_code == 202, response.content[:500]
        queued = response.json()
        assert (queued["server"], queued["workload"]) == (payload["server"], payload["workload"])
        listing = queued["regressions"].removeprefix("http://testserver")
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and not Regression.objects.exists():
            time.sleep(0.3)
    page = Client().get(listing).json()
    assert page["count"] == Regression.objects.count() > 0
    assert {item["server"] for item in page["items"]} == {payload["server"]}


# --------------------------------------------------------------------------- a database outage


class TcpProxy:
    """Forwards a loopback port to PostgreSQL; ``cut()`` closes it and every connection through it."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.port = live.free_port()
        self.listener: socket.socket | None = None
        self.open: list[socket.socket] = []
        self.lock = threading.Lock()

    def serve(self) -> None:
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        self.listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def cut(self) -> None:
        with self.lock:
            if self.listener is not None:
                # close() alone does not wake a thread blocked in accept(), which keeps the port listening.
                with contextlib.suppress(OSError):
                    self.listener.shutdown(socket.SHUT_RDWR)
                self.listener.close()
                self.listener = None
            for sock in self.open:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
                sock.close()
            self.open.clear()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return  # closed by cut()
            try:
                upstream = socket.create_connection(self.target, timeout=5)
            except OSError:
                client.close()
                continue
            with self.lock:
                self.open += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _pump(source: socket.socket, sink: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := source.recv(65536):
                sink.sendall(data)
        with contextlib.suppress(OSError):
            sink.shutdown(socket.SHUT_WR)


@pytest.fixture
def proxied_database() -> Iterator[TcpProxy]:
    live.require_postgresql()
    db = settings.DATABASES["default"]
    proxy = TcpProxy((db["HOST"] or "127.0.0.1", int(db["PORT"] or 5432)))
    proxy.serve()
    try:
        yield proxy
    finally:
        proxy.cut()


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_a_database_outage_answers_503_in_json_with_retry_after_and_the_api_recovers_when_it_is_back(
    tmp_path: Path, small_base: Run, proxied_database: TcpProxy, user_with_role: Callable[..., Any]
) -> None:
    token = create_token(user_with_role("triager"), "outage")[1]
    url = live.database_url().replace(
        f"@{settings.DATABASES['default']['HOST'] or '127.0.0.1'}:{settings.DATABASES['default']['PORT'] or 5432}/",
        f"@127.0.0.1:{proxied_database.port}/",
    )
    assert str(proxied_database.port) in url
    requests = [
        ("GET", "/api/regressions", {}),
        ("GET", f"/api/compare?base={small_base.pk}", {}),
        ("GET", "/api/bugs", {"Authorization": f"Bearer {token}"}),
        ("PATCH", "/api/regressions/1", {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}),
    ]
    with live.gunicorn(tmp_path, workers=1, threads=2, env={"DATABASE_URL": url}) as server:
        assert server.request("GET", "/api/regressions")[0] == 200  # connected through the proxy
        proxied_database.cut()
        for method, path, headers in requests:
            conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
            try:
                conn.request(method, path, body=b"{}" if method == "PATCH" else None, headers=headers)
                response = conn.getresponse()
                body = response.read()
                assert response.status == 503, (method, path, response.status, body[:300])
                assert response.getheader("Content-Type") == "application/json", (method, path)
                assert response.getheader("Retry-After") == "5"
                assert json.loads(body) == {"detail": "the database is unavailable; retry after a few seconds"}
            finally:
                conn.close()
        assert server.worker_pids() == server.started  # answered, not crashed

        proxied_database.serve()
        deadline = time.monotonic() + 30
        status = 0
        while time.monotonic() < deadline and status != 200:
            status = server.request("GET", "/api/regressions")[0]
            time.sleep(0.2)
        assert status == 200, "the API did not recover once the database was back"


def test_djangos_last_resort_answers_json_under_the_api_and_its_own_page_elsewhere(rf: Any) -> None:
    """handler500 runs while Django handles an exception raised outside ninja (a middleware, say)."""
    from django.db import OperationalError

    from benchdash.api_errors import handler500

    for path, exc, status in (
        ("/api/regressions", OperationalError("server closed the connection unexpectedly"), 503),
        ("/api/regressions", RuntimeError("a bug"), 500),
    ):
        try:
            raise exc
        except Exception:
            response = handler500(rf.get(path))
        assert response.status_code == status and response["Content-Type"] == "application/json"
        assert ("Retry-After" in response) == (status == 503)
    try:
        raise RuntimeError("a bug")
    except RuntimeError:
        page = handler500(rf.get("/runs/"))
    assert page.status_code == 500 and page["Content-Type"].startswith("text/html")


@pytest.mark.django_db
def test_the_schema_has_no_key_twice_so_every_openapi_reader_can_parse_it() -> None:
    # JSON allows a repeated key, but YAML-based readers (the docs page's Swagger UI) refuse the whole schema:
    # an int and a str response code merged into one dict come out as two "200" keys.
    repeated: list[str] = []

    def no_repeats(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        keys = [key for key, _ in pairs]
        repeated.extend(sorted({key for key in keys if keys.count(key) > 1}))
        return dict(pairs)

    schema = json.loads(Client().get("/api/openapi.json").content, object_pairs_hook=no_repeats)
    assert schema["openapi"].startswith("3.")
    assert repeated == []
    compare = schema["paths"]["/api/compare"]["get"]["responses"]["200"]["content"]
    assert {"application/json", "text/csv", "text/tab-separated-values", "text/markdown"} <= set(compare)


@pytest.mark.django_db
def test_every_parameter_given_twice_is_refused_naming_it_never_read_as_its_last_value(
    small_base: Run, triager: Client, user_with_role: Callable[..., Any]
) -> None:
    """Every query parameter of every operation (and the upload form's fields): a second value is a 400 that
    names the parameter, before the operation runs; one value is answered as before."""
    schema = triager.get("/api/openapi.json").json()
    cases = [
        (path, method, parameter["name"])
        for path, item in schema["paths"].items()
        for method, operation in item.items()
        for parameter in operation.get("parameters", [])
        if parameter["in"] == "query" and parameter["schema"].get("type") != "array"
    ]
    assert {("/api/compare", "base"), ("/api/compare/writeup", "format"), ("/api/regressions", "metric")} <= {
        (path, name) for path, _, name in cases
    }
    for path, method, name in cases:
        url = re.sub(r"\{[a-z_]+\}", "1", path)
        answer = triager.generic(method.upper(), f"{url}?{name}=1&{name}=2")
        assert answer.status_code == 400, (method, path, name, answer.content)
        assert answer.json() == {"detail": f"each parameter takes one value; given more than once: {name}"}
    answer = triager.get(f"/api/compare?base={small_base.pk}&red=0.9&green=1.1&red=0.8&green=1.2")
    assert answer.json() == {"detail": "each parameter takes one value; given more than once: green, red"}
    assert triager.get(f"/api/compare?base={small_base.pk}&red=0.9").status_code == 200
    # A form's fields too: an upload naming its server twice is refused and stores nothing.
    uploader = Client(headers={"Authorization": f"Bearer {create_token(user_with_role('uploader'), 'x')[1]}"})
    before = (Run.objects.count(), Bundle.objects.count())
    bundle = SimpleUploadedFile(
        "b.tar.gz", (Path(settings.BASE_DIR) / "tests/data/sysbench-mariadb-quick.tar.gz").read_bytes()
    )
    answer = uploader.post("/api/bundles/", {"server": ["a", "b"], "file": bundle})
    assert answer.status_code == 400, answer.content
    assert answer.json() == {"detail": "each parameter takes one value; given more than once: server"}
    assert (Run.objects.count(), Bundle.objects.count()) == before


@pytest.mark.django_db
def test_every_number_in_a_query_is_read_only_as_plain_digits(triager: Client) -> None:
    """Every integer and number query parameter of every operation: what a lax reading would take for a number
    (``1_0``, `` 5``, ``0x5``, ``nan``, ``inf``) is a 422 naming the parameter, never read as its guess; plain digits
    are answered, and ``5.0`` for a whole number (an integer to JSON Schema, as a client made from it may write it)."""
    schema = triager.get("/api/openapi.json").json()
    cases = []
    for path, item in schema["paths"].items():
        for method, operation in item.items():
            query = [p for p in operation.get("parameters", []) if p["in"] == "query"]
            for parameter in query:
                alternatives = parameter["schema"].get("anyOf", [parameter["schema"]])
                types = {alternative.get("type") for alternative in alternatives}
                if types & {"integer", "number"}:
                    required = "".join(f"&{p['name']}=1" for p in query if p.get("required"))
                    cases.append((path, method, parameter["name"], "integer" in types, required))
    assert {("/api/regressions", "limit"), ("/api/regressions", "offset"), ("/api/compare", "dop")} | {
        ("/api/compare/writeup", "red")
    } <= {(path, name) for path, _, name, _, _ in cases}
    for path, method, name, whole, required in cases:
        url = re.sub(r"\{[a-z_]+\}", "1", path)
        for written in ["1_0", " 5", "5\n", "٣", "0x5", "nan", "inf", "1e400", *(["5.5", "5e0"] if whole else [])]:
            answer = triager.generic(method.upper(), f"{url}?{name}={quote(written)}{required}")
            assert answer.status_code == 422, (path, name, written, answer.content[:300])
            assert [error["loc"] for error in answer.json()["detail"]] == [["query", name]], (path, name, written)
    assert triager.get("/api/regressions?limit=5&offset=0").status_code == 200
    assert triager.get("/api/regressions?limit=%2B5").status_code == 200  # a sign; a bare + is a space
    assert triager.get("/api/regressions?limit=5.0&offset=0.0").status_code == 200


def test_a_parameter_that_takes_a_list_keeps_every_value() -> None:
    from django.test import RequestFactory
    from django.utils.datastructures import MultiValueDict

    from benchdash.api_errors import OneValueEach

    request = RequestFactory().get("/api/x?tag=a&tag=b&one=1")
    parsed = OneValueEach().parse_querydict(MultiValueDict(request.GET.lists()), ["tag"], request)
    assert parsed == {"tag": ["a", "b"], "one": "1"}
