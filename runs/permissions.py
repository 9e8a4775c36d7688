"""Who may do what: roles, the checks the pages and the API apply, and API tokens.

Reading is open to anyone while ``BENCHDASH_PUBLIC_BROWSING`` is on (the demo's
default) and needs a login otherwise (``runs.middleware``). Changing anything
needs a role, a Django group holding model permissions (migration
``runs/0005_role_groups``):

- viewer: can log in and read when browsing is private; changes nothing;
- uploader: uploads bundles (page and API), starts and cancels benchmark runs on registered targets;
- triager: triages regressions, enters them by hand, links and unlinks bugs, starts detection;
- admin: all of the above, plus registering targets (their passwords) and nightly schedules.

Views check one permission per kind of change (``UPLOAD``, ``TRIAGE``, …), so a
site can also grant them to a user or another group. Superusers have them all.

An API token acts as its user, with that user's roles. Tokens are 256 random
bits; only their SHA-256 digest is stored. A slow password hash (PBKDF2, argon2)
protects guessable secrets; a random 256-bit token cannot be guessed, so the
slow hash would only add its cost to every API call.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Callable
from datetime import timedelta
from functools import wraps
from typing import Any, TypeVar

from django.conf import settings
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.utils import timezone
from ninja.errors import AuthorizationError
from ninja.security import HttpBearer, SessionAuth

from runs.models import ApiToken

UPLOAD = "runs.add_bundle"
RUN_BENCHMARKS = "runner.add_benchmarkrun"
MANAGE_TARGETS = "runner.change_target"
MANAGE_SCHEDULES = "runner.change_schedule"
TRIAGE = "reports.change_regression"

VIEWER, UPLOADER, TRIAGER, ADMIN = "viewer", "uploader", "triager", "admin"

# The permissions each role's checks need, as the role migration grants them (it also grants the
# matching view_* permissions so staff can browse the admin). tests/test_permissions.py holds the two together.
ROLE_CHECKS: dict[str, frozenset[str]] = {
    VIEWER: frozenset(),
    UPLOADER: frozenset({UPLOAD, RUN_BENCHMARKS}),
    TRIAGER: frozenset({TRIAGE}),
    ADMIN: frozenset({UPLOAD, RUN_BENCHMARKS, TRIAGE, MANAGE_TARGETS, MANAGE_SCHEDULES}),
}

TOKEN_PREFIX = "bd_"
# The digest lookup is one indexed read; writing last_used_at on every call would add a write to each
# request (and lock contention under load), so it is refreshed at most this often.
LAST_USED_RESOLUTION = timedelta(minutes=1)

View = TypeVar("View", bound=Callable[..., HttpResponse])


# --------------------------------------------------------------------------- pages


def public_browsing() -> bool:
    return bool(getattr(settings, "BENCHDASH_PUBLIC_BROWSING", True))


def permission_required(permission: str) -> Callable[[View], View]:
    """Page decorator: anonymous visitors go to the login page; logged-in users without the role get 403.

    Django's own ``permission_required`` sends a logged-in user without the
    permission back to the login page, which loops; a 403 says what is wrong.
    """

    def decorator(view: View) -> View:
        @wraps(view)
        def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            if not request.user.is_authenticated:
                return redirect_to_login(request.get_full_path())
            if not request.user.has_perm(permission):
                raise PermissionDenied(f"this needs the permission {permission} (ask an admin for the role)")
            return view(request, *args, **kwargs)

        return wrapped  # type: ignore[return-value]

    return decorator


# --------------------------------------------------------------------------- tokens


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogateescape")).hexdigest()


def create_token(user: Any, name: str) -> tuple[ApiToken, str]:
    """A new token for ``user``: the row and the token itself, which is never stored and cannot be shown again."""
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    row = ApiToken.objects.create(
        user=user, name=name.strip()[:100] or "token", prefix=token[:10], digest=token_digest(token)
    )
    return row, token


def revoke_token(user: Any, token_id: int) -> bool:
    """Revoke one of ``user``'s tokens; False when it is not theirs or already revoked."""
    return bool(
        ApiToken.objects.filter(pk=token_id, user=user, revoked_at__isnull=True).update(revoked_at=timezone.now())
    )


def user_for_token(token: str) -> Any | None:
    """The active user a live token belongs to, or None (unknown, revoked, or the user is deactivated)."""
    if not token.startswith(TOKEN_PREFIX) or len(token) > 200:
        return None
    row = (
        ApiToken.objects.select_related("user")
        .filter(digest=token_digest(token), revoked_at__isnull=True, user__is_active=True)
        .first()
    )
    if row is None:
        return None
    now = timezone.now()
    if row.last_used_at is None or now - row.last_used_at > LAST_USED_RESOLUTION:
        ApiToken.objects.filter(pk=row.pk).update(last_used_at=now)
    return row.user


# --------------------------------------------------------------------------- API (django-ninja auth)


def _check(user: Any, permission: str | None) -> Any:
    if permission and not user.has_perm(permission):
        raise AuthorizationError(message=f"this needs the permission {permission} (ask an admin for the role)")
    return user


class TokenAuth(HttpBearer):
    """``Authorization: Bearer <token>``; with ``permission``, a token whose user lacks it gets 403."""

    def __init__(self, permission: str | None = None) -> None:
        self.permission = permission
        super().__init__()

    def authenticate(self, request: HttpRequest, token: str) -> Any | None:
        user = user_for_token(token.strip())
        if user is None:
            return None
        # The endpoints read request.user (uploaded_by, the triage log) whichever way the caller logged in.
        request.user = user
        return _check(user, self.permission)


class RoleSessionAuth(SessionAuth):
    """A logged-in browser session (CSRF-checked by django-ninja); with ``permission``, 403 without it."""

    def __init__(self, permission: str | None = None) -> None:
        self.permission = permission
        super().__init__(csrf=True)

    def authenticate(self, request: HttpRequest, key: str | None) -> Any | None:
        user = super().authenticate(request, key)
        return _check(user, self.permission) if user is not None else None


class PublicBrowsing:
    """Lets anonymous reads through while public browsing is on; not a security scheme, so not in the schema."""

    def __call__(self, request: HttpRequest) -> bool:
        return public_browsing() and request.method in ("GET", "HEAD", "OPTIONS")


def api_auth(permission: str | None = None) -> list[Any]:
    """The auth list of an API operation: a token or a session, each needing ``permission`` when given."""
    return [TokenAuth(permission), RoleSessionAuth(permission)]


# Reads: open while browsing is public, else a token or a session of any role.
API_READ_AUTH: list[Any] = [*api_auth(), PublicBrowsing()]
