"""Schemathesis against our own OpenAPI schema, in process through the WSGI app: no request gets a 5xx.

Every operation of /api/openapi.json is called with generated parameters and
bodies (bounded: a few dozen examples each), once with an admin's token, so the
write endpoints run past their role check, and once without credentials. The
database holds a real series with detected regressions, so ids in the generated
paths sometimes exist. Responses must never be server errors, and those the
schema documents must match it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.core.signals import request_finished, request_started
from django.db import close_old_connections

schemathesis = pytest.importorskip("schemathesis", reason="schemathesis is a test dependency (requirements.in)")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from schemathesis.checks import not_a_server_error  # noqa: E402

EXAMPLES = 30


@pytest.fixture
def api_schema(small_base: Any) -> Iterator[Any]:
    from benchdash.wsgi import application
    from reports.regressions import detect_regressions

    detect_regressions(small_base.server_id, small_base.workload_id)
    # As Django's test client does: a request's end must not close the connection that holds the test's
    # transaction (it would, as its autocommit state differs from the settings').
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield schemathesis.openapi.from_wsgi("/api/openapi.json", application)
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


@pytest.fixture
def admin_token(user_with_role: Callable[..., Any]) -> str:
    from runs.permissions import create_token

    return create_token(user_with_role("admin", username="fuzzer"), "schemathesis")[1]


def _fuzz(schema: Any, headers: dict[str, str], examples: int, also: Callable[[Any, Any], None]) -> list[str]:
    """Run every operation of the schema ``examples`` times; the failures, one line per operation.

    Plain hypothesis over each operation's strategy: schemathesis' own pytest integration
    (``from_fixture``) does not run under pytest 9.
    """
    failures = []
    for result in schema.get_all_operations():
        operation = result.ok()

        @given(case=operation.as_strategy())
        @settings(max_examples=examples, deadline=None, suppress_health_check=list(HealthCheck))
        def call(case: Any) -> None:
            response = case.call(headers=headers)
            case.validate_response(response, checks=[not_a_server_error])
            also(case, response)

        try:
            call()
        except Exception as exc:  # every operation is tried; all failures are reported together
            failures.append(f"{operation.label}: {type(exc).__name__}: {str(exc)[:2000]}")
    return failures


def _nothing(case: Any, response: Any) -> None:
    pass


def _refused_unless_read(case: Any, response: Any) -> None:
    # 401 without credentials; 403 when the generated request carries a session cookie (documented as a way
    # in) but no CSRF token; 404 when a generated id is no URL at all (a negative one); 400 when the body
    # holds a NUL character (refused before anything else, runs.middleware). Nothing changed.
    if case.method.upper() != "GET":
        assert response.status_code in (400, 401, 403, 404), (case.method, case.path, response.status_code)


def test_no_generated_request_with_an_admin_token_gets_a_server_error(api_schema: Any, admin_token: str) -> None:
    failures = _fuzz(api_schema, {"Authorization": f"Bearer {admin_token}"}, EXAMPLES, _nothing)
    assert failures == []


def test_no_generated_request_without_credentials_gets_a_server_error_or_changes_anything(api_schema: Any) -> None:
    failures = _fuzz(api_schema, {}, EXAMPLES // 3, _refused_unless_read)
    assert failures == []
