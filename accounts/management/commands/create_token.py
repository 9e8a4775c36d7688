"""``manage.py create_token USERNAME NAME``: a new API token for a user (a CI job's), printed once."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from accounts.permissions import UPLOAD, create_token


class Command(BaseCommand):
    help = (
        "Create an API token for USERNAME named NAME (what it is for: 'CI of acme/server') and print it once: "
        "only its digest is kept, so it cannot be shown again. Revoke it on the token page."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument("name", help="what the token is for (at most 100 characters)")

    def handle(self, *args: Any, **options: Any) -> None:
        username, name = options["username"], options["name"].strip()
        if not name:
            raise CommandError("give the token a name: what it is for, e.g. 'CI of acme/server'")
        if len(name) > 100:
            raise CommandError(f"the name has {len(name)} characters; at most 100")
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise CommandError(f"no user {username!r}; create one first (manage.py createsuperuser, or the admin)")
        if not user.is_active:
            raise CommandError(f"user {username!r} is deactivated: a token of theirs would not work")
        _row, token = create_token(user, name)
        if not user.has_perm(UPLOAD):
            self.stderr.write(
                f"note: {username} may not upload bundles (the uploader role); the token can read but not submit"
            )
        # The token alone on stdout, so a script can capture it: TOKEN=$(manage.py create_token ci "CI").
        self.stdout.write(token)
