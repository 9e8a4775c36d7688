"""A text field stored encrypted: target passwords are never kept in clear in the database."""

from __future__ import annotations

import base64
import hashlib
from typing import Any

from cryptography.fernet import Fernet, InvalidToken
from django.conf import settings
from django.db import models

_PREFIX = "fernet:"


def _fernet() -> Fernet:
    # BENCHDASH_ENCRYPTION_KEY when set (rotate SECRET_KEY without losing passwords), else SECRET_KEY.
    secret = getattr(settings, "BENCHDASH_ENCRYPTION_KEY", "") or settings.SECRET_KEY
    return Fernet(base64.urlsafe_b64encode(hashlib.sha256(secret.encode()).digest()))


class EncryptedTextField(models.TextField):
    """Plain text in Python, Fernet-encrypted in the database (``fernet:<token>``)."""

    def get_prep_value(self, value: Any) -> Any:
        value = super().get_prep_value(value)
        if value in (None, ""):
            return value
        return _PREFIX + _fernet().encrypt(str(value).encode()).decode()

    def from_db_value(self, value: Any, expression: Any, connection: Any) -> Any:
        if not value or not str(value).startswith(_PREFIX):
            return value
        try:
            return _fernet().decrypt(value[len(_PREFIX) :].encode()).decode()
        except InvalidToken as exc:
            raise ValueError(
                "a stored target password cannot be decrypted: SECRET_KEY or BENCHDASH_ENCRYPTION_KEY changed"
            ) from exc
