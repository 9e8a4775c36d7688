"""A text field stored encrypted: target passwords are never kept in clear in the database.

Keys rotate: ``BENCHDASH_ENCRYPTION_KEYS`` lists them, the first encrypts and every one decrypts. To rotate,
put the new key first and keep the old ones after it, run ``manage.py reencrypt_secrets`` (everything is then
under the new key), and drop the old ones. Without the list, the one key is ``BENCHDASH_ENCRYPTION_KEY``, else
``SECRET_KEY``.
"""

from __future__ import annotations

import base64
import hashlib
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.db import models

# cryptography is imported when a password is encrypted or read: the field is declared when Django starts, which
# every process does, and few of them touch a target's password.
if TYPE_CHECKING:
    from cryptography.fernet import Fernet, MultiFernet

PREFIX = "fernet:"


def secrets_in_use() -> list[str]:
    """The keys' secrets, the encrypting one first."""
    keys = [k for k in getattr(settings, "BENCHDASH_ENCRYPTION_KEYS", []) if k]
    return keys or [getattr(settings, "BENCHDASH_ENCRYPTION_KEY", "") or settings.SECRET_KEY]


def _fernet_of(secret: str) -> Fernet:
    from cryptography.fernet import Fernet

    # Any text is a key: its SHA-256 is the Fernet key.
    return Fernet(base64.urlsafe_b64encode(hashlib.sha256(secret.encode()).digest()))


def keys() -> MultiFernet:
    from cryptography.fernet import MultiFernet

    return MultiFernet([_fernet_of(secret) for secret in secrets_in_use()])


def encrypt(plain: str) -> str:
    return PREFIX + keys().encrypt(plain.encode()).decode()


def decrypt(stored: str) -> str:
    from cryptography.fernet import InvalidToken

    try:
        return keys().decrypt(stored[len(PREFIX) :].encode()).decode()
    except InvalidToken as exc:
        raise ValueError(
            "a stored target password cannot be decrypted with any key of BENCHDASH_ENCRYPTION_KEYS "
            "(or BENCHDASH_ENCRYPTION_KEY / SECRET_KEY): the key it was stored with is gone"
        ) from exc


def reencrypted(stored: str) -> str:
    """``stored`` under the first key (ValueError when no key decrypts it)."""
    from cryptography.fernet import InvalidToken

    try:
        return PREFIX + keys().rotate(stored[len(PREFIX) :].encode()).decode()
    except InvalidToken as exc:
        raise ValueError("no key decrypts it") from exc


class EncryptedTextField(models.TextField):
    """Plain text in Python, Fernet-encrypted in the database (``fernet:<token>``)."""

    def get_prep_value(self, value: Any) -> Any:
        value = super().get_prep_value(value)
        if value in (None, ""):
            return value
        return encrypt(str(value))

    def from_db_value(self, value: Any, expression: Any, connection: Any) -> Any:
        if not value or not str(value).startswith(PREFIX):
            return value
        return decrypt(str(value))
