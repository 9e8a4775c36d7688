"""Who may do what, in one place: the read rule, the role each change needs, and API tokens.

The rule, for pages and API alike:

- reading: anyone while ``BENCHDASH_PUBLIC_BROWSING`` is on, else any logged-in
  user (``may_read``; ``benchdash.middleware`` applies it to every page, ``API_READ_AUTH``
  to the API);
- changing: one permission per kind of change (``ACTIONS``), held through a role,
  a Django group made by the migrations ``runs/0005_role_groups`` and
  ``runs/0007_role_permissions``:

  - viewer: a login that reads when browsing is private; changes nothing;
  - uploader: uploads bundles, starts and cancels benchmark runs, edits server records, saves reports;
  - triager: triages regressions, enters them by hand, links and unlinks bugs, starts detection, saves reports;
  - admin: all of the above, plus targets (their passwords), nightly schedules, and users and groups
    in the Django admin (with staff status).

Pages refuse an anonymous visitor by sending them to log in and a logged-in user
without the permission with a 403; the API answers 401 / 403 in JSON. Templates
show an action only when ``can.<action>`` (the ``abilities`` context processor)
says the visitor may do it. A site can grant a permission to a user or another
group as well; superusers have them all.

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

from axes.backends import AxesStandaloneBackend
from django.conf import settings
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils import timezone
from ninja.errors import AuthorizationError
from ninja.security import HttpBearer, SessionAuth

from accounts.models import ApiToken

UPLOAD = "runs.add_bundle"
RUN_BENCHMARKS = "runner.add_benchmarkrun"
MANAGE_TARGETS = "runner.change_target"
MANAGE_SCHEDULES = "runner.change_schedule"
TRIAGE = "regressions.change_regression"
SAVE_REPORT = "reports.add_report"
EDIT_SERVER = "runs.change_server"

# Every kind of change by the name templates use (``{% if can.upload %}``).
ACTIONS: dict[str, str] = {
    "upload": UPLOAD,
    "run_benchmarks": RUN_BENCHMARKS,
    "manage_targets": MANAGE_TARGETS,
    "manage_schedules": MANAGE_SCHEDULES,
    "triage": TRIAGE,
    "save_report": SAVE_REPORT,
    "edit_server": EDIT_SERVER,
}

VIEWER, UPLOADER, TRIAGER, ADMIN = "viewer", "uploader", "triager", "admin"

# The permissions each role's checks need, as the role migrations grant them (they also grant the
# matching view_* permissions so staff can browse the admin). tests/test_permissions.py holds the two together.
ROLE_CHECKS: dict[str, frozenset[str]] = {
    VIEWER: frozenset(),
    UPLOADER: frozenset({UPLOAD, RUN_BENCHMARKS, EDIT_SERVER, SAVE_REPORT}),
    TRIAGER: frozenset({TRIAGE, SAVE_REPORT}),
    ADMIN: frozenset(ACTIONS.values()),
}

TOKEN_PREFIX = "bd_"
# The digest lookup is one indexed read; writing last_used_at on every call would add a write to each
# request (and lock contention under load), so it is refreshed at most this often.
LAST_USED_RESOLUTION = timedelta(minutes=1)

View = TypeVar("View", bound=Callable[..., HttpResponse])


# --------------------------------------------------------------------------- the rule

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def public_browsing() -> bool:
    return bool(getattr(settings, "BENCHDASH_PUBLIC_BROWSING", True))


def may_read(user: Any) -> bool:
    """Reading: anyone while browsing is public, else any logged-in user (a viewer and up)."""
    return public_browsing() or bool(user.is_authenticated)


def may(user: Any, permission: str) -> bool:
    """Changing: only a logged-in user holding ``permission`` (through a role, or granted directly)."""
    return bool(user.is_authenticated and user.has_perm(permission))


class Abilities:
    """``can`` in templates: ``can.upload``, ``can.save_report``, … (``ACTIONS``), ``can.admin`` for the admin.

    Lazy: a page that shows no action asks nothing, and Django caches a user's permissions per request.
    An unknown name is a KeyError, which a template shows as false: a typo hides a button, never shows one.
    """

    def __init__(self, user: Any) -> None:
        self.user = user

    def __getitem__(self, name: str) -> bool:
        if name == "admin":
            return bool(self.user.is_active and self.user.is_staff)
        return may(self.user, ACTIONS[name])

    def fingerprint(self) -> str:
        """What this visitor may do, as text: pages shared from the cache are kept once per fingerprint."""
        names = [name for name in (*ACTIONS, "admin") if self[name]]
        return ",".join(names) or "-"


def abilities(request: HttpRequest) -> dict[str, Abilities]:
    """Context processor: ``can`` for the visitor."""
    return {"can": Abilities(request.user)}


def permission_required(permission: str, *, reads_open: bool = False) -> Callable[[View], View]:
    """Page decorator for a change: anonymous visitors go to the login page; logged-in users without it get 403.

    With ``reads_open`` the view also serves a page to read (GET, HEAD), which follows the read rule
    instead; only its other methods need ``permission``. Django's own ``permission_required`` sends a
    logged-in user without the permission back to the login page, which loops; a 403 says what is wrong.
    """

    def decorator(view: View) -> View:
        @wraps(view)
        def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            if not (reads_open and request.method in SAFE_METHODS):
                if not request.user.is_authenticated:
                    return redirect_to_login(request.get_full_path())
                if not request.user.has_perm(permission):
                    raise PermissionDenied(refusal(permission))
            return view(request, *args, **kwargs)

        return wrapped  # type: ignore[return-value]

    return decorator


def refusal(permission: str) -> str:
    return f"this needs the permission {permission} (ask an admin for the role)"


# --------------------------------------------------------------------------- logging in


class LoginThrottleBackend(AxesStandaloneBackend):
    """django-axes' lockout check on every login made over HTTP (the login page, the admin's).

    ``authenticate`` without a request (a management command, a shell) has no address to throttle by;
    axes would raise, so it is left to the next backend.
    """

    def authenticate(self, request: HttpRequest | None, *args: Any, **kwargs: Any) -> None:
        if request is None:
            return None
        return super().authenticate(request, *args, **kwargs)  # type: ignore[no-any-return]


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
#
# A request that carries an Authorization header is judged by it alone: a bad, revoked or deactivated
# token gets 401 even from a browser that also holds a session, and even on a read that browsing
# would let through anonymously, so a script learns at once that its token is dead. Only a request
# without that header and with a logged-in session is CSRF-checked: checking one that has no session
# (a script's bad token) would answer "CSRF check Failed" instead of 401.


def _check(user: Any, permission: str | None) -> Any:
    if permission and not user.has_perm(permission):
        raise AuthorizationError(message=refusal(permission))
    return user


def _sends_credentials(request: HttpRequest) -> bool:
    return "Authorization" in request.headers


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
    """A logged-in browser session (CSRF-checked); with ``permission``, 403 without it."""

    def __init__(self, permission: str | None = None) -> None:
        self.permission = permission
        super().__init__(csrf=True)

    def _get_key(self, request: HttpRequest) -> str | None:
        if not self._applies(request):
            return None
        return super()._get_key(request)

    def authenticate(self, request: HttpRequest, key: str | None) -> Any | None:
        if not self._applies(request):
            return None
        return _check(request.user, self.permission)

    @staticmethod
    def _applies(request: HttpRequest) -> bool:
        return not _sends_credentials(request) and bool(request.user.is_authenticated)


class PublicBrowsing:
    """Lets anonymous reads through while public browsing is on; not a security scheme, so not in the schema."""

    def __call__(self, request: HttpRequest) -> bool:
        return public_browsing() and request.method in SAFE_METHODS and not _sends_credentials(request)


def api_auth(permission: str | None = None) -> list[Any]:
    """The auth list of an API operation: a token or a session, each needing ``permission`` when given."""
    return [TokenAuth(permission), RoleSessionAuth(permission)]


# Reads: open while browsing is public, else a token or a session of any role.
API_READ_AUTH: list[Any] = [*api_auth(), PublicBrowsing()]


def api_docs_access(view: View) -> View:
    """The API's schema and docs follow the read rule; a token opens them too when browsing is private.

    Refused: the schema answers 401 in JSON like the rest of the API, the docs page (HTML, for people)
    sends the visitor to log in.
    """

    @wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        header = request.headers.get("Authorization", "")
        if header:
            scheme, _, token = header.partition(" ")
            allowed = scheme == "Bearer" and user_for_token(token.strip()) is not None
        else:
            allowed = may_read(request.user)
        if allowed:
            return view(request, *args, **kwargs)
        if header or request.path.endswith(".json"):
            return JsonResponse({"detail": "Unauthorized"}, status=401)
        return redirect_to_login(request.get_full_path())

    return wrapped  # type: ignore[return-value]
