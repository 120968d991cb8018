"""Which ``Host`` names ``serve`` answers: the DNS-rebinding defence.

A page on any web site can make a visitor's browser send requests to a server on the visitor's own
loopback address, under the site's own name (the name is re-pointed to 127.0.0.1 after the page
loads), and read the answers. The only thing that tells such a request apart is its ``Host`` header,
which names the attacker's site. So the server answers only the names it is bound to: for a loopback
bind the loopback names, for an address that address, and the names given with ``--allowed-host``;
any other ``Host`` is answered 421 (Misdirected Request) with one line and nothing else.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterable
from typing import Any

__all__ = ["ANY_HOST", "HostCheck", "allowed_hosts", "host_name"]

ANY_HOST = "*"  # --allowed-host '*': answer every name (behind a proxy that checks them itself)
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


def allowed_hosts(bind: str, given: Iterable[str] = ()) -> frozenset[str]:
    """The names a server bound to ``bind`` answers: the loopback names for a loopback bind, the
    machine's own names (and the loopback ones) for an all-addresses bind, the address itself for
    any other, plus ``given``."""
    names = {n.strip().lower().strip("[]") for n in given if n.strip()}
    if _is_loopback(bind):
        names.update(LOOPBACK_NAMES)
    elif bind in ("0.0.0.0", "::", ""):
        names.update(LOOPBACK_NAMES)
        names.update(n.lower() for n in (socket.gethostname(), socket.getfqdn()) if n)
    else:
        names.add(bind.lower().strip("[]"))
    return frozenset(names)


def host_name(header: str) -> str:
    """The name in a ``Host`` header, without its port: ``[::1]:8000`` -> ``::1``, ``a.b:80`` -> ``a.b``."""
    header = header.strip().lower()
    if header.startswith("["):
        return header[1:header.find("]")] if "]" in header else header
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


class HostCheck:
    """ASGI middleware: an HTTP request whose ``Host`` is not an allowed name gets 421 and one line."""

    def __init__(self, app: Any, allowed: frozenset[str]):
        self.app = app
        self.allowed = allowed

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or ANY_HOST in self.allowed:  # no websocket route; lifespan passes
            return await self.app(scope, receive, send)
        headers = dict(scope.get("headers") or ())
        if host_name(headers.get(b"host", b"").decode("latin-1")) in self.allowed:
            return await self.app(scope, receive, send)
        body = (b"this server answers only the host names it serves "
                b"(start it with --allowed-host NAME to add one)\n")
        await send({"type": "http.response.start", "status": 421,
                    "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                                (b"content-length", str(len(body)).encode()), (b"connection", b"close")]})
        await send({"type": "http.response.body", "body": body})
