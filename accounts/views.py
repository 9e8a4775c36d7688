"""The API token page (create a token, shown once; see when each was last used; revoke one), and the login lockout."""

from __future__ import annotations

from typing import Any

from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import AuthenticationForm
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from accounts.models import ApiToken
from accounts.permissions import create_token, revoke_token


class TokenForm(forms.Form):
    name = forms.CharField(max_length=100, label="Token name", help_text="What it is for: a CI job, a laptop, …")


@login_required
@require_http_methods(["GET", "POST"])
def token_list(request: HttpRequest) -> HttpResponse:
    form = TokenForm(request.POST or None)
    new_token = ""
    if request.method == "POST" and form.is_valid():
        # Rendered in this response only, never redirected to or stored: a reload cannot show it again.
        _row, new_token = create_token(request.user, form.cleaned_data["name"])
        form = TokenForm()
    tokens = ApiToken.objects.filter(user=request.user)  # type: ignore[misc]  # login_required: never anonymous
    response = render(request, "accounts/tokens.html", {"form": form, "tokens": tokens, "new_token": new_token})
    if new_token:
        response["Cache-Control"] = "no-store"
    return response


@login_required
@require_POST
def token_revoke(request: HttpRequest, pk: int) -> HttpResponse:
    if revoke_token(request.user, pk):
        messages.success(request, "Token revoked: it no longer works.")
    else:
        messages.error(request, "No such token of yours, or it was already revoked.")
    return redirect("account:tokens")


def locked_out(request: HttpRequest, original_response: HttpResponse | None, credentials: Any = None) -> HttpResponse:
    """django-axes' answer to a locked-out login: the login page again, saying why and for how long (429)."""
    minutes = int(settings.AXES_COOLOFF_TIME.total_seconds() // 60)
    # Unbound: binding would validate, which authenticates, which axes refuses again.
    form = AuthenticationForm(request, initial={"username": request.POST.get("username", "")})
    lockout = (
        f"Too many failed logins for this username from your address: logging in is refused for {minutes} "
        "minutes, even with the right password. Ask an admin to unlock it sooner."
    )
    context = {"form": form, "lockout": lockout, "next": request.POST.get("next", "")}
    return render(request, "accounts/login.html", context, status=429)
