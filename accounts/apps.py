from __future__ import annotations

from django.apps import AppConfig
from django.http import HttpRequest


def abilities_fingerprint(request: HttpRequest) -> str:
    """What the visitor may do, as text: actions shown on a shared page depend on the visitor's roles."""
    from accounts.permissions import Abilities

    return Abilities(request.user).fingerprint()


class AccountsConfig(AppConfig):
    name = "accounts"
    verbose_name = "Accounts and API tokens"

    def ready(self) -> None:
        from benchdash import pagecache

        # A page shared from the cache is kept once per set of abilities.
        pagecache.register_variant(abilities_fingerprint)
