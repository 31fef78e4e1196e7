"""Who a request comes from, for the throttle and the join limits: the client's address, never a
value the client picks (a cookie, a header it sets itself).

Streamlit runs on uvicorn, which has already replaced the peer address of a request from one of
its ``FORWARDED_ALLOW_IPS`` (default: loopback) by the last X-Forwarded-For entry not in that
list. So the page sees ``remote`` (uvicorn's result) and the handshake's X-Forwarded-For, and works
out what uvicorn started from:

- ``remote`` is not what uvicorn would have picked from the header: uvicorn left it alone, it is
  the peer itself. A peer that is a configured proxy (``ATTENTION_LAB_TRUSTED_PROXIES``, e.g.
  HAProxy on another machine) forwards for the client named by the header; any other peer is the
  client, whatever header it sent;
- ``remote`` is uvicorn's pick: the peer was on loopback. That is HAProxy on this machine, to be
  believed only when loopback is a configured proxy (``make serve-class`` does); otherwise anyone
  on this machine could rotate the header, so all such requests share ONE key.

Believed headers are read from the right: the last entry is the peer the proxy saw (HAProxy adds
it); entries that are configured proxies on other machines are passed over, a loopback entry is a
client on the proxy's machine, and everything further left is whatever the client sent.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

LOOPBACK = frozenset({"127.0.0.1", "::1"})
UNTRUSTED_FORWARD = "addr:forwarded-by-an-unconfigured-proxy"


def _entries(forwarded_for: Iterable[str]) -> list[str]:
    out: list[str] = []
    for value in forwarded_for:
        out.extend(part.strip() for part in str(value).split(","))
    return [e for e in out if e]


def _uvicorn_trusted() -> frozenset[str]:
    raw = os.environ.get("FORWARDED_ALLOW_IPS", "127.0.0.1,::1")
    return frozenset(a.strip() for a in raw.split(",") if a.strip())


def _uvicorn_pick(entries: list[str], uvicorn_trusted: frozenset[str]) -> str | None:
    if "*" in uvicorn_trusted:
        return entries[0]
    return next((e for e in reversed(entries) if e not in uvicorn_trusted), None)


def _believed(entries: list[str], trusted: frozenset[str]) -> str:
    far = trusted - LOOPBACK
    return next((e for e in reversed(entries) if e not in far), entries[0])


def client_address(
    remote: str | None,
    forwarded_for: Iterable[str],
    trusted: frozenset[str],
    uvicorn_trusted: frozenset[str] | None = None,
) -> str:
    """The throttle's key for a request (see the module docstring): ``addr:<address>``."""
    entries = _entries(v for v in forwarded_for if isinstance(v, str))
    peer = remote if isinstance(remote, str) and remote else "127.0.0.1"  # loopback: None
    if not entries:
        return "addr:" + peer
    picked = _uvicorn_pick(entries, _uvicorn_trusted() if uvicorn_trusted is None else uvicorn_trusted)
    if peer != picked:  # uvicorn kept the peer
        return "addr:" + (_believed(entries, trusted) if peer in trusted else peer)
    if trusted & LOOPBACK:  # the peer was our HAProxy on this machine
        return "addr:" + _believed(entries, trusted)
    return UNTRUSTED_FORWARD
