"""Moving the API token model from the runs app to accounts keeps the tokens and the permissions granted on them.

The database is taken back to just before the move, a token and a grant are made there with the models as
they were, and the database is migrated forward again: what exists then must be what existed before.
"""

from __future__ import annotations

import secrets
from typing import Any

import pytest
from django.contrib.auth.models import Group
from django.contrib.contenttypes.models import ContentType
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.test import Client

from accounts.models import ApiToken
from accounts.permissions import TOKEN_PREFIX, token_digest

MOVE = ("accounts", "0001_initial")


def _before_the_move(executor: MigrationExecutor) -> list[tuple[str, str | None]]:
    """No accounts migration applied, and runs at the migration the move follows."""
    runs_parent = [node for node in executor.loader.graph.node_map[MOVE].parents if node.key[0] == "runs"]
    return [("accounts", None), *(node.key for node in runs_parent)]


@pytest.mark.django_db(transaction=True)
def test_tokens_and_permission_grants_made_before_the_move_still_work_after_it(settings: Any) -> None:
    executor = MigrationExecutor(connection)
    old = executor.migrate(_before_the_move(executor)).apps
    try:
        with pytest.raises(LookupError):
            old.get_model("accounts", "ApiToken")
        OldToken = old.get_model("runs", "ApiToken")
        OldContentType = old.get_model("contenttypes", "ContentType")
        OldPermission = old.get_model("auth", "Permission")
        OldGroup = old.get_model("auth", "Group")
        OldUser = old.get_model("auth", "User")

        user = OldUser.objects.create(username="ci-bot", is_active=True, is_staff=True)
        token = TOKEN_PREFIX + secrets.token_urlsafe(32)
        row = OldToken.objects.create(user=user, name="nightly", prefix=token[:10], digest=token_digest(token))
        content_type, _ = OldContentType.objects.get_or_create(app_label="runs", model="apitoken")
        granted = [
            OldPermission.objects.get_or_create(
                content_type=content_type, codename=f"{action}_apitoken", defaults={"name": f"Can {action} api token"}
            )[0]
            for action in ("view", "delete")
        ]
        keepers = OldGroup.objects.create(name="token keepers")
        keepers.permissions.add(*granted)
        user.groups.add(keepers)
        moved = {(permission.pk, "accounts", permission.codename) for permission in granted}
    finally:
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())
        ContentType.objects.clear_cache()

    # The same row in the same table, read through the model's new home.
    token_row = ApiToken.objects.select_related("user").get(pk=row.pk)
    assert (token_row.digest, token_row.user.username, token_row.name) == (token_digest(token), "ci-bot", "nightly")
    assert ApiToken._meta.db_table == "runs_apitoken"

    # The grant follows the model: the same permission rows, now under the accounts app; none left under runs.
    keepers_now = Group.objects.get(name="token keepers")
    assert {(p.pk, p.content_type.app_label, p.codename) for p in keepers_now.permissions.all()} == moved
    assert not ContentType.objects.filter(app_label="runs", model="apitoken").exists()
    assert token_row.user.has_perm("accounts.view_apitoken") and token_row.user.has_perm("accounts.delete_apitoken")

    # The token still authenticates an API call while browsing is private (404: let in, no such bundle) ...
    settings.BENCHDASH_PUBLIC_BROWSING = False
    assert Client().get("/api/bundles/999999").status_code == 401
    with_token = Client().get("/api/bundles/999999", headers={"Authorization": f"Bearer {token}"})
    assert with_token.status_code == 404, with_token.content
    # ... and the group's permission still opens the tokens' page in the admin for its (staff) member.
    client = Client()
    client.force_login(token_row.user)
    listing = client.get("/admin/accounts/apitoken/")
    assert listing.status_code == 200 and "nightly" in listing.content.decode()
