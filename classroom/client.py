"""Who a request comes from, for the throttle and the join limits: the client's address, never a
value the client picks (a cookie, a header it sets itself).

Streamlit runs on uvicorn, which has already replaced the peer address of a request from one of
its ``FORWARDED_ALLOW_IPS`` (default: loopback) by the last X-Forwarded-For entry not in that
list. So the page sees ``remote`` (uvicorn's result) and the handshake's X-Forwarded-For, and works
out what uvicorn started from.

X-Forwarded-For is believed only from the deployment's own reverse proxy:

- with ``ATTENTION_LAB_PROXY_SECRET`` set (``make serve-class`` makes one per run), only from a
  request that carries that secret in :data:`PROXY_HEADER`, which the proxy adds (deploy/haproxy.cfg)
  and no client can know. A process on the proxy's machine that talks to an app's port directly,
  with any header it likes, is then one address: the peer, or, where uvicorn put a header value in
  its place, the one address uvicorn trusts (loopback);
- without it, only from a peer listed in ``ATTENTION_LAB_TRUSTED_PROXIES`` that is on another
  machine (a connection's source address cannot be forged; a loopback one can be anyone on this
  machine, so a proxy there needs the secret: classroom/settings.py refuses to start otherwise).

Believed headers are read from the right: the last entry is the peer the proxy saw (HAProxy adds
it); entries that are configured proxies on other machines are passed over, a loopback entry is a
client on the proxy's machine, and everything further left is whatever the client sent.
"""

from __future__ import annotations

import hmac
import os
from collections.abc import Iterable

LOOPBACK = frozenset({"127.0.0.1", "::1"})
UNTRUSTED_FORWARD = "addr:forwarded-by-an-unconfigured-proxy"
PROXY_HEADER = "X-Attention-Lab-Proxy"  # the deployment's secret, added by its proxy


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


def _replaced_peer(uvicorn_trusted: frozenset[str]) -> str:
    """The key of a request whose peer uvicorn replaced by a header value we do not believe: that
    peer was one of uvicorn's trusted addresses, all of which share this key."""
    if uvicorn_trusted and uvicorn_trusted <= LOOPBACK:
        return "addr:127.0.0.1"  # as a loopback request without the header (Streamlit says None)
    if len(uvicorn_trusted) == 1 and "*" not in uvicorn_trusted:
        return "addr:" + next(iter(uvicorn_trusted))
    return UNTRUSTED_FORWARD


def proxy_proven(values: Iterable[object], secret: str | None) -> bool | None:
    """Did the request come through the deployment's proxy? None when no secret is configured;
    else whether it carries exactly one :data:`PROXY_HEADER`, equal to the secret (constant time)."""
    if not secret:
        return None
    values = [v for v in values if isinstance(v, str)]
    return len(values) == 1 and hmac.compare_digest(values[0].encode(), secret.encode())


def client_address(
    remote: str | None,
    forwarded_for: Iterable[str],
    trusted: frozenset[str],
    uvicorn_trusted: frozenset[str] | None = None,
    proxy_ok: bool | None = None,
) -> str:
    """The throttle's key for a request (see the module docstring): ``addr:<address>``.
    ``proxy_ok``: :func:`proxy_proven` of the request (None: no secret is configured)."""
    entries = _entries(v for v in forwarded_for if isinstance(v, str))
    peer = remote if isinstance(remote, str) and remote else "127.0.0.1"  # loopback: None
    if not entries:
        return "addr:" + peer
    uvicorn_trusted = _uvicorn_trusted() if uvicorn_trusted is None else uvicorn_trusted
    kept = peer != _uvicorn_pick(entries, uvicorn_trusted)  # uvicorn left the peer alone
    if proxy_ok is None:  # no secret: a proxy on another machine, known by its address
        believe = kept and peer in trusted - LOOPBACK
    else:
        believe = proxy_ok
    if believe:
        return "addr:" + _believed(entries, trusted)
    return "addr:" + peer if kept else _replaced_peer(uvicorn_trusted)
