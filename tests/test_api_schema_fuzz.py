"""Schemathesis against our own OpenAPI schema, in process through the WSGI app: every check, every operation.

Every operation of /api/openapi.json is called with generated parameters and
bodies, data that fits the schema and data that does not, and each response
goes through all of schemathesis' checks (no 5xx, status codes, content types,
headers and bodies as documented, invalid data refused, valid data accepted,
wrong methods answered 405 with Allow). Once with an admin's token, so the write
endpoints run past their role check, and once without credentials. The database
holds a real series with detected regressions, so ids in generated paths
sometimes exist. Besides the random examples, schemathesis' coverage phase
sends each operation's boundary values, requests missing a required part, and
methods the path does not have. Bounded: a fixed number of examples and
coverage cases per operation, a deadline per request, no shrinking, so it stays
within about a minute on PostgreSQL.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Mapping
from datetime import timedelta
from typing import Any
from urllib.parse import urlsplit

import pytest
import requests
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from werkzeug.test import Client as WerkzeugClient

schemathesis = pytest.importorskip("schemathesis", reason="schemathesis is a test dependency (requirements.in)")
from hypothesis import HealthCheck, Phase, given, settings  # noqa: E402
from schemathesis import GenerationMode  # noqa: E402
from schemathesis.specs.openapi.checks import negative_data_rejection, positive_data_acceptance  # noqa: E402

# Per operation and generation mode. With every check (some re-send the request) this keeps the two tests
# near a minute on PostgreSQL on a small machine.
EXAMPLES = 6
# Coverage-phase cases per operation (boundaries, missing parts, wrong methods): a bound above what any
# operation of ours yields today, so all of them run.
COVERAGE_CASES = 150
# A request that takes longer than this is a failure of its own (a hang, a query without a bound).
DEADLINE = timedelta(seconds=10)


# Valid data may still name a server, run or state of the world that does not exist, which the schema cannot
# say: such requests get 400 with the reason, besides the codes schemathesis expects of valid data.
CONFIG = """
[checks.positive_data_acceptance]
expected-statuses = ["2xx", "400", "401", "403", "404", "409"]
"""


@pytest.fixture
def api_schema(small_base: Any, settings: Any) -> Iterator[Any]:
    from benchdash.wsgi import application
    from regressions.detection import detect_regressions

    detect_regressions(small_base.server_id, small_base.workload_id)
    # As Django's test client does: a request's end must not close the connection that holds the test's
    # transaction (it would, as its autocommit state differs from the settings').
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        # The schema is read as a visitor of a public site would; the calls then run with production's
        # default, private browsing, where reads need credentials too (so an ignored token would show).
        settings.BENCHDASH_PUBLIC_BROWSING = True
        schema = schemathesis.openapi.from_wsgi(
            "/api/openapi.json", application, config=schemathesis.config.SchemathesisConfig.from_str(CONFIG)
        )
        settings.BENCHDASH_PUBLIC_BROWSING = False
        yield schema
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


class QueryAsReported(WerkzeugClient):
    """The in-process client, sending a generated query as schemathesis reports and checks it: as ``requests``
    encodes it, one ``name=value`` per item of a list and per key of an object.

    Schemathesis' WSGI transport hands werkzeug the generated values as they are, and werkzeug writes an object as
    its Python text: a negative case's ``workload={"a": [], "8": "false"}`` went out as the one string
    ``workload={'a': [], '8': 'false'}``, a valid value the API answers with 200 (a workload with no regressions),
    while the check read the reported ``workload=a&workload=8``, a parameter given twice, and failed the 200 as
    invalid data accepted (ST201). Sent as reported, that request gets the API's 400 for a repeated parameter."""

    def open(self, *args: Any, query_string: Any = None, **kwargs: Any) -> Any:
        if isinstance(query_string, Mapping):
            prepared = requests.PreparedRequest()
            prepared.prepare_url("http://localhost/", query_string)
            query_string = urlsplit(prepared.url).query
        return super().open(*args, query_string=query_string, **kwargs)


@pytest.fixture
def admin_token(user_with_role: Callable[..., Any]) -> str:
    from accounts.permissions import create_token

    return create_token(user_with_role("admin", username="fuzzer"), "schemathesis")[1]


def _fuzz(
    schema: Any, headers: dict[str, str], examples: int, also: Callable[[Any, Any], None], coverage: int
) -> list[str]:
    """Run every operation of the schema ``examples`` times per generation mode; the failures, one line each."""
    failures = []
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 10, [op.label for op in operations]
    for operation in operations:
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
            try:
                _fuzz_operation(operation, mode, headers, examples, also)
            # Every operation is tried and all failures reported together; schemathesis raises a group.
            except (Exception, BaseExceptionGroup) as exc:
                failures.append(f"{operation.label} ({mode.value}): {type(exc).__name__}: {str(exc)[:1500]}")
        failures += _coverage(schema, operation, headers, also, coverage)
    return failures


def _coverage(
    schema: Any, operation: Any, headers: dict[str, str], also: Callable[[Any, Any], None], limit: int
) -> list[str]:
    """Schemathesis' coverage phase for one operation: boundary values (the largest offset, an id beyond any
    row), each required part missing, and methods the path does not have. Deterministic; the first ``limit``."""
    failures = []
    cases = schema.iter_coverage_cases(
        operation,
        generation_modes=[GenerationMode.POSITIVE, GenerationMode.NEGATIVE],
        generation_config=schema.config.generation_for(operation=operation),
    )
    for case in itertools.islice(cases, limit):
        try:
            response = case.call(headers=headers, session=QueryAsReported(schema.app))
            case.validate_response(response, headers=headers, excluded_checks=_excluded(operation))
            also(case, response)
        except (Exception, BaseExceptionGroup) as exc:
            failures.append(f"{case.method} {case.path} (coverage): {type(exc).__name__}: {str(exc)[:1500]}")
    return failures


def _excluded(operation: Any) -> list[Any]:
    # A multipart field is text on the wire: schemathesis' "a number instead of a string" is the string of
    # that number there, a valid value, so invalid-data-rejected cannot hold for the upload's form fields.
    # And its file is arbitrary bytes to the schema: almost never an archive, so the documented answer to
    # schema-valid data is 422, a bad bundle (checked with real bundles in runs/tests/test_upload_and_api.py).
    multipart = "multipart/form-data" in str(operation.definition.raw.get("requestBody", ""))
    return [negative_data_rejection, positive_data_acceptance] if multipart else []


def _fuzz_operation(
    operation: Any, mode: Any, headers: dict[str, str], examples: int, also: Callable[[Any, Any], None]
) -> None:
    """Plain hypothesis over the operation's strategy: schemathesis' own pytest integration (``from_fixture``)
    does not run under pytest 9. No shrinking and no example database: a failure is reported as found."""
    excluded = _excluded(operation)
    multipart = bool(excluded)

    @given(case=operation.as_strategy(generation_mode=mode))
    @settings(
        max_examples=examples,
        deadline=DEADLINE,
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=list(HealthCheck),
        database=None,
    )
    def call(case: Any) -> None:
        if multipart and isinstance(case.body, dict):
            # Werkzeug's multipart encoder (the WSGI transport's) writes an empty text part without the CRLF
            # before the next boundary, which swallows the following part: left out, it is the same request
            # (an empty form field is the default).
            case.body = {name: value for name, value in case.body.items() if value != ""}
        response = case.call(headers=headers, session=QueryAsReported(operation.app))
        case.validate_response(response, headers=headers, excluded_checks=excluded)  # every other check
        also(case, response)

    call()


def _nothing(case: Any, response: Any) -> None:
    pass


def _refused_unless_read(case: Any, response: Any) -> None:
    # Browsing is private here, so reads are refused too: 401 without credentials; 403 when the generated
    # request carries a session cookie (documented as a way in) but no CSRF token; 404 when a generated id is
    # no URL at all (a negative one); 405 for schemathesis' wrong-method probes; 400 when the request holds a
    # NUL character (refused before anything else, benchdash.middleware); 422 when it does not fit the schema
    # (checked before credentials). Nothing read, nothing changed.
    assert response.status_code in (400, 401, 403, 404, 405, 422), (case.method, case.path, response.status_code)


@pytest.mark.slow(30)
def test_no_generated_request_with_an_admin_token_breaks_any_check_of_the_schema(
    api_schema: Any, admin_token: str
) -> None:
    failures = _fuzz(api_schema, {"Authorization": f"Bearer {admin_token}"}, EXAMPLES, _nothing, COVERAGE_CASES)
    assert failures == [], "\n\n".join(failures)


def test_no_generated_request_without_credentials_breaks_a_check_or_changes_anything(api_schema: Any) -> None:
    # Without credentials nearly everything stops at the 401: fewer cases say as much.
    failures = _fuzz(api_schema, {}, EXAMPLES // 3, _refused_unless_read, COVERAGE_CASES // 6)
    assert failures == [], "\n\n".join(failures)


def test_a_generated_object_in_a_query_reaches_the_api_as_reported(api_schema: Any, admin_token: str) -> None:
    # The negative case a CI run failed on (ST201 on GET /api/regressions): an object for a text filter. Reported and
    # checked as the parameter given twice; so sent, the API refuses it, as it refuses any parameter given twice.
    operation = api_schema["/api/regressions"]["GET"]
    case = operation.Case(query={"workload": {"¦": [{}, ["true", ""], []], "8": "false"}})
    response = case.call(headers={"Authorization": f"Bearer {admin_token}"}, session=QueryAsReported(api_schema.app))
    assert urlsplit(response.request.url).query == "workload=%C2%A6&workload=8"
    assert response.status_code == 400, response.text
    assert response.json() == {"detail": "each parameter takes one value; given more than once: workload"}
