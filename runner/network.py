"""Where benchmark targets may be, and what a failed connection may tell the person who asked.

A target names a host that the web process and the worker connect to with a
stored password, so a host is accepted only when every address it resolves to
is inside the admin's allow-list (``BENCHDASH_TARGET_NETWORKS``), and never a
link-local address or a cloud metadata service, whatever that list says.
Callers connect to the address checked here, not to the name again, so a
second DNS answer cannot point the connection elsewhere.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Iterable

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from runner.sysbench_runner import Connection, RunnerError

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

# Instance metadata services hand out cloud credentials to whoever asks from inside the instance.
METADATA_NAMES = frozenset(
    {
        "metadata",
        "metadata.google.internal",
        "metadata.goog",
        "instance-data",
        "instance-data.ec2.internal",
        "metadata.azure.internal",
        "metadata.tencentyun.com",
        "metadata.platformequinix.com",
    }
)
# Refused even when the allow-list covers them.
BLOCKED_NETWORKS: tuple[IPNetwork, ...] = tuple(
    ipaddress.ip_network(n)
    for n in (
        "169.254.0.0/16",  # link-local, and the metadata address of most clouds (169.254.169.254)
        "fe80::/10",  # IPv6 link-local
        "fd00:ec2::254/128",  # EC2's IPv6 metadata address
        "100.100.100.200/32",  # Alibaba Cloud metadata
        "168.63.129.16/32",  # Azure's host agent
        "0.0.0.0/8",  # "this host": reaches local services while looking like no address at all
        "::/128",
    )
)
# Hostnames (underscores too: container service names use them) or IP literals; nothing a URL could add.
_LABEL = r"[A-Za-z0-9_](?:[A-Za-z0-9_-]*[A-Za-z0-9_])?"
_NAME_RE = re.compile(rf"(?=.{{1,253}}$){_LABEL}(?:\.{_LABEL})*\.?")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")


class HostRefused(RunnerError):
    """The host is not one benchmark targets may use; the message says why, for the person who typed it."""


def allowed_networks() -> tuple[IPNetwork, ...]:
    raw = settings.BENCHDASH_TARGET_NETWORKS
    values = raw.split(",") if isinstance(raw, str) else list(raw)
    try:
        return tuple(ipaddress.ip_network(v.strip(), strict=False) for v in values if v.strip())
    except ValueError as exc:
        raise ImproperlyConfigured(f"BENCHDASH_TARGET_NETWORKS: {exc}") from None


def _embedded_ipv4(address: IPAddress) -> IPAddress:
    """The IPv4 address an IPv6 one carries (mapped, 6to4, NAT64): that is where the packets end up."""
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return address.ipv4_mapped
        if address.sixtofour is not None:
            return address.sixtofour
        if address in _NAT64:
            return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return address


def check_addresses(host: str, addresses: Iterable[str]) -> tuple[str, ...]:
    """Every address must be allowed: a name with one good and one bad address is refused."""
    allowed = allowed_networks()
    checked: list[str] = []
    for text in addresses:
        address = ipaddress.ip_address(text.split("%", 1)[0])
        effective = _embedded_ipv4(address)
        shown = host if host == text else f"{host} resolves to {text}, which"
        if any(effective in net or address in net for net in BLOCKED_NETWORKS):
            raise HostRefused(f"{shown} is a link-local or cloud metadata address; targets cannot use it.")
        if not any(effective in net for net in allowed if effective.version == net.version):
            raise HostRefused(
                f"{shown} is outside the networks benchmark targets may be in "
                f"({', '.join(str(n) for n in allowed) or 'none'}; the admin sets BENCHDASH_TARGET_NETWORKS)."
            )
        if text not in checked:
            checked.append(text)
    if not checked:
        raise HostRefused(f"{host} resolves to no address.")
    return tuple(checked)


def resolve(host: str, port: int) -> list[str]:
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        raise HostRefused(f"{host} cannot be resolved to an address.") from None
    return [str(info[4][0]) for info in infos]


def check_host(host: str, port: int) -> tuple[str, ...]:
    """The addresses to connect to for ``host``, all of them allowed; HostRefused otherwise."""
    name = host.strip().lower()
    try:
        ipaddress.ip_address(name)
        literal = True
    except ValueError:
        literal = False
    if not literal and not _NAME_RE.fullmatch(name):
        raise HostRefused("Enter a host name or an IP address alone (no scheme, user, port or path).")
    if name.rstrip(".") in METADATA_NAMES:
        raise HostRefused(f"{host} is a cloud metadata service; targets cannot use it.")
    return check_addresses(host, [name] if literal else resolve(name, port))


def checked_connection(*, kind: str, host: str, port: int, user: str, database: str, password: str) -> Connection:
    """The one way to a Connection: the host checked, and the connection pinned to its first checked address."""
    addresses = check_host(host, port)
    return Connection(
        kind=kind, host=host, port=port, user=user, database=database, password=password, address=addresses[0]
    )
