"""Accounts: the API tokens users hold. Logins, users and groups (the roles) are Django's own models."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class ApiToken(models.Model):
    """A user's key for the HTTP API (``Authorization: Bearer <token>``); it acts with that user's roles.

    Only a SHA-256 digest of the token is stored and the token is shown once, when
    it is created. The token is 256 random bits, so a fast hash is as safe as a slow
    one here and keeps every API call cheap (see accounts.permissions).
    """

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=100, help_text="What the token is for: a CI job, a laptop, …")
    prefix = models.CharField(max_length=16, help_text="The token's first characters, to recognise it")
    digest = models.CharField(max_length=64, unique=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        # The table it had in the runs app: moving the model kept its rows (accounts/0001, runs/0008).
        db_table = "runs_apitoken"
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    @property
    def active(self) -> bool:
        return self.revoked_at is None
