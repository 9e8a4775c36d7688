from __future__ import annotations

from typing import TYPE_CHECKING

from django.apps import AppConfig

if TYPE_CHECKING:
    from django.http import HttpRequest


def abilities_fingerprint(request: HttpRequest) -> str:
    """What the visitor may do, as text: actions shown on a shared page depend on the visitor's roles."""
    from accounts.permissions import Abilities

    return Abilities(request.user).fingerprint()


class AccountsConfig(AppConfig):
    name = "accounts"
    verbose_name = "Accounts and API tokens"

    def ready(self) -> None:
        from benchdash import hooks

        # A page shared from the cache is kept once per set of abilities (benchdash.pagecache).
        hooks.provide(hooks.PAGE_VARIANTS, "accounts.apps.abilities_fingerprint")
