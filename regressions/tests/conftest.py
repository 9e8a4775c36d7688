"""Fixtures shared by the regressions tests."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client


@pytest.fixture
def uploader(user_with_role: Callable[..., Any]) -> Client:
    """A client that sends an uploader's API token, as a CI machine does."""
    from accounts.permissions import create_token

    token = create_token(user_with_role("uploader"), "CI")[1]
    return Client(headers={"Authorization": f"Bearer {token}"})
