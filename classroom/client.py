"""Who a request comes from, for the throttle and the join limits: the client's address, never a
value the client picks (a cookie, a header it sets itself).

Streamlit runs on uvicorn, which has already replaced the peer address of a websocket from
127.0.0.1 (its default ``FORWARDED_ALLOW_IPS``) by the last X-Forwarded-For entry before it reaches
the page. So the page sees ``remote`` (uvicorn's result) and the handshake's headers, and:

- no X-Forwarded-For: ``remote`` is the peer itself;
- ``remote`` is a configured proxy (``ATTENTION_LAB_TRUSTED_PROXIES``, e.g. HAProxy on another
  machine): the client is the last X-Forwarded-For entry that is not a configured proxy (the one
  the proxy appended; entries to its left are whatever the client sent);
- ``remote`` differs from the last X-Forwarded-For entry: uvicorn did not take the header (the
  peer is not on loopback), so ``remote`` is the peer;
- ``remote`` is that last entry: uvicorn took it from a loopback peer. That is a proxy on this
  machine, to be believed only when loopback is configured as a proxy (``make serve-class`` does);
  otherwise anyone on this machine could rotate the header, so all such requests share ONE key.
"""

from __future__ import annotations

from collections.abc import Iterable

LOOPBACK = frozenset({"127.0.0.1", "::1", "localhost"})
UNTRUSTED_FORWARD = "addr:forwarded-by-an-unconfigured-proxy"


def _entries(forwarded_for: Iterable[str]) -> list[str]:
    out: list[str] = []
    for value in forwarded_for:
        out.extend(part.strip() for part in str(value).split(","))
    return [e for e in out if e]


def client_address(remote: str | None, forwarded_for: Iterable[str], trusted: frozenset[str]) -> str:
    """The throttle's key for a request (see the module docstring): ``addr:<address>``."""
    entries = _entries(v for v in forwarded_for if isinstance(v, str))
    peer = remote if isinstance(remote, str) and remote else "127.0.0.1"  # loopback: None
    if not entries:
        return "addr:" + peer
    if peer in trusted:
        for entry in reversed(entries):
            if entry not in trusted:
                return "addr:" + entry
        return "addr:" + peer
    if peer != entries[-1]:
        return "addr:" + peer
    if trusted & LOOPBACK:
        return "addr:" + peer
    return UNTRUSTED_FORWARD
