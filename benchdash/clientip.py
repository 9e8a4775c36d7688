"""The address a request came from, as login throttling and logs should see it.

Directly on the internet the peer's address (REMOTE_ADDR) is the client. Behind
reverse proxies every request arrives from the nearest proxy, so one client's
failed logins would lock everyone out, or, if X-Forwarded-For were believed
blindly, a client could name any address it likes and never be locked out.
BENCHDASH_TRUSTED_PROXIES says how many proxies stand in front of the site: the
client is then the address that many hops from the right of X-Forwarded-For
(each proxy appends the address it received the request from; what a client
writes itself is further left and is never read).
"""

from __future__ import annotations

import ipaddress

from django.conf import settings
from django.http import HttpRequest


def client_address(request: HttpRequest) -> str | None:
    peer = request.META.get("REMOTE_ADDR") or None
    hops = settings.BENCHDASH_TRUSTED_PROXIES
    if hops <= 0:
        return peer
    chain = [part.strip() for part in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",") if part.strip()]
    if len(chain) < hops:
        return peer  # fewer proxies than configured wrote to the header: the request bypassed them
    candidate = chain[-hops]
    try:
        return str(ipaddress.ip_address(candidate))
    except ValueError:
        return peer
