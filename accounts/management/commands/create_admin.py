"""``manage.py create_admin``: the first account of a new site, a superuser with staff status and the admin role.

Django's ``createsuperuser`` with the role added, so the account's pages say "admin" rather than "no role yet"
and it keeps the role's abilities if superuser status is taken away later. Takes the same options
(``--username``, ``--email``, ``--noinput`` with ``DJANGO_SUPERUSER_PASSWORD``).
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.management.commands import createsuperuser
from django.contrib.auth.models import Group
from django.core.management.base import CommandError
from django.db.models.signals import post_save

from accounts.permissions import ADMIN


class Command(createsuperuser.Command):
    help = "Create a superuser with the admin role (the first account of a new site)."

    def handle(self, *args: Any, **options: Any) -> None:
        role = Group.objects.filter(name=ADMIN).first()
        if role is None:
            raise CommandError(f"there is no {ADMIN!r} role group yet: run `manage.py migrate` first")
        created: list[Any] = []
        user_model = get_user_model()

        def remember(sender: Any, instance: Any, created_now: bool = False, **kwargs: Any) -> None:
            created.append(instance)

        # createsuperuser does not hand back the user it made; its save does.
        post_save.connect(remember, sender=user_model, dispatch_uid="create_admin")
        try:
            super().handle(*args, **options)
        finally:
            post_save.disconnect(sender=user_model, dispatch_uid="create_admin")
        if not created:
            return
        user = created[-1]
        user.groups.add(role)
        if options.get("verbosity", 1) >= 1:
            self.stdout.write(f"{user.get_username()} has the admin role: log in at /account/login/.")
