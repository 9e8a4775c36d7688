"""Requests benchdash makes to other servers (alert webhooks, and any later one): only to allowed addresses.

Whoever may type a URL (a triager subscribing a webhook) must not turn the server into a client of the
network it sits in. So every request:

- resolves the host once, at send time, and checks every address it resolves to against the networks an
  administrator allowed (``BENCHDASH_ALERT_NETWORKS``; unset: public addresses only). Link-local and cloud
  metadata addresses are never allowed, whatever the setting says;
- connects to the address it checked, never resolving again (no window for a DNS answer to change in), while
  the ``Host`` header and the TLS certificate check still use the name in the URL;
- follows no redirect (a 3xx is a failure: a redirect could point anywhere);
- reports only a status and a short, classified reason (``Failure.reason``), never a byte of the answer's
  body, and one reason for every way a connection can fail (refused, reset, unreachable, timed out), so the
  answer tells a port scanner nothing;
- is held back after repeated failures of the same destination to answer at all (``send_json``): a dead or
  refusing receiver is tried after growing waits, not once per message.

Pure standard library over sockets, so it works in the web process and in the worker alike.
"""

from __future__ import annotations

import http.client
import ipaddress
import json
import socket
import ssl
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

# Never a destination, even when an administrator's list covers them: link-local addresses and the cloud
# metadata services hand credentials to any request made from inside the instance; "this host" addresses.
NEVER = tuple(
    ipaddress.ip_network(n)
    for n in ("169.254.0.0/16", "fe80::/10", "fd00:ec2::254/128", "100.100.100.200/32", "0.0.0.0/8", "::/128")
)
# What is read of an answer: its status line and headers. The body is never read past this, never kept.
_DRAIN_BYTES = 4096


class OutboundRefused(Exception):
    """A request that was not made, or that failed; ``str()`` is the classified reason shown to users."""

    def __init__(self, reason: str, *, status: int | None = None, connected: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.status = status
        # Whether the destination answered at all (an HTTP status): only failures before that count for
        # the destination's back-off.
        self.connected = connected


@dataclass(frozen=True)
class Destination:
    scheme: str
    host: str
    port: int
    path: str  # with the query

    @property
    def key(self) -> str:
        return f"{self.scheme}://{self.host}:{self.port}"


def parse_networks(values: Iterable[str]) -> tuple[IPNetwork, ...]:
    """CIDRs (``10.1.0.0/16``, ``192.0.2.7``, ``::1``) as networks; a bad one raises ValueError naming it."""
    out = []
    for value in values:
        text = value.strip()
        if not text:
            continue
        try:
            out.append(ipaddress.ip_network(text, strict=False))
        except ValueError as exc:
            raise ValueError(f"{text!r} is not an address or network (CIDR): {exc}") from exc
    return tuple(out)


def _plain(address: IPAddress) -> IPAddress:
    mapped = getattr(address, "ipv4_mapped", None)  # ::ffff:10.0.0.1 is 10.0.0.1
    return mapped or address


def allowed(address: IPAddress, networks: Sequence[IPNetwork]) -> bool:
    """Whether a request may go to ``address``: never to NEVER; to the listed networks when there are any,
    else to public (globally routable, unicast) addresses only."""
    address = _plain(address)
    if any(address in network for network in NEVER):
        return False
    if networks:
        return any(address.version == network.version and address in network for network in networks)
    return address.is_global and not address.is_multicast


def destination(url: str) -> Destination:
    """The URL's scheme, host, port and path; OutboundRefused for anything but http(s) with a host."""
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https") or not parts.hostname:
        raise OutboundRefused("refused: only http:// and https:// URLs with a host")
    try:
        port = parts.port or (443 if scheme == "https" else 80)
    except ValueError as exc:
        raise OutboundRefused("refused: the URL's port is not a number from 1 to 65535") from exc
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return Destination(scheme, parts.hostname, port, path)


def resolve(target: Destination, networks: Sequence[IPNetwork]) -> IPAddress:
    """The address to connect to: the host's first address, after checking that every one it resolves to is
    allowed (a name that also points inside is refused whole, whichever address a resolver would pick)."""
    try:
        infos = socket.getaddrinfo(target.host, target.port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise OutboundRefused("the host name does not resolve") from exc
    addresses = [ipaddress.ip_address(str(info[4][0]).split("%")[0]) for info in infos]
    if not addresses:
        raise OutboundRefused("the host name does not resolve")
    if not all(allowed(address, networks) for address in addresses):
        raise OutboundRefused(
            "refused: the host is not in the networks allowed for outbound requests (BENCHDASH_ALERT_NETWORKS)"
        )
    return addresses[0]


class _PinnedHTTPConnection(http.client.HTTPConnection):
    """An HTTP connection to one checked address; ``host`` (the name) is only sent in the Host header."""

    def __init__(self, host: str, port: int, address: IPAddress, timeout: float) -> None:
        super().__init__(host, port, timeout=timeout)
        self.address = str(address)

    def connect(self) -> None:
        self.sock = socket.create_connection((self.address, self.port), self.timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


class _PinnedHTTPSConnection(http.client.HTTPSConnection):
    """As above over TLS: the certificate is checked against the name in the URL (SNI too)."""

    def __init__(self, host: str, port: int, address: IPAddress, timeout: float) -> None:
        super().__init__(host, port, timeout=timeout, context=ssl.create_default_context())
        self.address = str(address)

    def connect(self) -> None:
        sock = socket.create_connection((self.address, self.port), self.timeout)
        self.sock = self._context.wrap_socket(sock, server_hostname=self.host)  # type: ignore[attr-defined]


def post_json(url: str, body: Any, *, networks: Sequence[IPNetwork], timeout: float, user_agent: str) -> int:
    """POST ``body`` as JSON to ``url`` under the rules above; the 2xx status, or OutboundRefused."""
    target = destination(url)
    address = resolve(target, networks)
    kind = _PinnedHTTPSConnection if target.scheme == "https" else _PinnedHTTPConnection
    connection = kind(target.host, target.port, address, timeout)
    payload = json.dumps(body).encode()
    headers = {"Content-Type": "application/json", "User-Agent": user_agent, "Content-Length": str(len(payload))}
    try:
        connection.request("POST", target.path, body=payload, headers=headers)
        response = connection.getresponse()
        status = response.status
        response.read(_DRAIN_BYTES)  # read a little so the server sees a client, never kept
    except ssl.SSLCertVerificationError as exc:
        raise OutboundRefused("TLS: the server's certificate is not valid for this host") from exc
    except ssl.SSLError as exc:
        raise OutboundRefused("TLS: the handshake failed") from exc
    except (OSError, http.client.HTTPException) as exc:
        # Refused, reset, unreachable, timed out, closed without an answer: one reason, by design.
        raise OutboundRefused("no answer: the connection failed or timed out") from exc
    finally:
        connection.close()
    if 300 <= status < 400:
        raise OutboundRefused(f"HTTP {status}: redirects are not followed", status=status, connected=True)
    if not 200 <= status < 300:
        raise OutboundRefused(f"HTTP {status}", status=status, connected=True)
    return status


# Back-off per destination: after ``n`` failures in a row (no answer at all), the next attempt waits
# base × 2^(n-1) seconds (capped); a success forgets the failures. Kept by the caller's store.
@dataclass(frozen=True)
class Backoff:
    failures: int
    until: float  # time.time() before which the destination is not tried

    def holding(self, now: float | None = None) -> bool:
        return (time.time() if now is None else now) < self.until


def after_failure(previous: Backoff | None, base: float, cap: float, now: float | None = None) -> Backoff:
    failures = (previous.failures if previous else 0) + 1
    wait = min(cap, base * 2 ** (failures - 1))
    return Backoff(failures, (time.time() if now is None else now) + wait)


# The Django side: the administrator's networks, the timeout, and the back-off kept in the cache.


def _backoff_key(target: Destination) -> str:
    return f"outbound:backoff:{target.key}"


def send_json(url: str, body: Any, *, user_agent: str = "benchdash") -> int:
    """``post_json`` with the site's settings, held back while the destination's back-off lasts."""
    from django.conf import settings
    from django.core.cache import cache

    target = destination(url)
    key = _backoff_key(target)
    try:
        previous = cache.get(key)
    except Exception:  # the cache is an optimisation here too: down, nothing is held back
        previous = None
    if isinstance(previous, Backoff) and previous.holding():
        raise OutboundRefused(f"held back after {previous.failures} failures in a row; tried again later")
    base, cap = settings.BENCHDASH_ALERT_RETRY_DELAY, settings.BENCHDASH_ALERT_RETRY_MAX_DELAY
    try:
        status = post_json(
            url,
            body,
            networks=parse_networks(settings.BENCHDASH_ALERT_NETWORKS),
            timeout=settings.BENCHDASH_WEBHOOK_TIMEOUT,
            user_agent=user_agent,
        )
    except OutboundRefused as exc:
        # Only a destination that gave no answer at all is held back: one that answered (a 503, say) is up and
        # each message's own retries pace it; a refusal of ours made no connection.
        if not exc.connected and not exc.reason.startswith("refused"):
            _remember(key, after_failure(previous if isinstance(previous, Backoff) else None, base, cap), cap)
        raise
    if previous is not None:
        _remember(key, None, cap)
    return status


def _remember(key: str, backoff: Backoff | None, cap: float) -> None:
    from django.core.cache import cache

    try:
        if backoff is None:
            cache.delete(key)
        else:
            cache.set(key, backoff, int(cap) * 2 + 60)
    except Exception:
        pass  # see send_json
