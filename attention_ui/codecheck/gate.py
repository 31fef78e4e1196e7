"""Whether this session may run the code check: on for a local address, off for a class or a remote one.

Running a learner's code is the one thing in the app that a sandbox must contain (docs/code-check.md).
On a learner's own machine (``make run``, opened at localhost) the check is on: the person at the
keyboard could run the code anyway. On a shared server it is off unless the operator turns it on:

- ``ATTENTION_LAB_CODE_CHECK=1`` turns it on everywhere, ``=0`` off everywhere;
- otherwise it is off under ``make serve-class`` (which sets ``ATTENTION_LAB_SERVE_CLASS=1``) and for
  any session that does not reach the server at a loopback address: a Host header that is not
  localhost/127.x/[::1], a client address Streamlit reports (it reports none for loopback), or a
  proxy's X-Forwarded-For. A session whose address cannot be told (no Host header) is off too.

Pure (no Streamlit): the page passes ``os.environ`` and ``st.context``'s values in.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

ENV = "ATTENTION_LAB_CODE_CHECK"
CLASS_ENV = "ATTENTION_LAB_SERVE_CLASS"
LOCAL_NAMES = frozenset({"localhost", "::1"})


def host_name(host_header: str | None) -> str | None:
    """The name in a Host header, without its port ("[::1]:8501" -> "::1"); None when there is none."""
    if not host_header or not host_header.strip():
        return None
    host = host_header.strip().lower()
    if host.startswith("["):
        return host[1 : host.find("]")] if "]" in host else host[1:]
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def is_loopback_name(name: str | None) -> bool:
    return name is not None and (name in LOCAL_NAMES or name.startswith("127."))


def decide(
    env: Mapping[str, str], ip_address: str | None, host_header: str | None, forwarded_for: Sequence[str] = ()
) -> tuple[bool, str]:
    """(on, why): why is "forced_on", "local", "off_env", "off_class", "off_unknown" or "off_remote"."""
    flag = (env.get(ENV) or "").strip()
    if flag == "1":
        return True, "forced_on"
    if flag == "0":
        return False, "off_env"
    if (env.get(CLASS_ENV) or "").strip() == "1":
        return False, "off_class"
    name = host_name(host_header)
    if name is None:
        return False, "off_unknown"
    if is_loopback_name(name) and ip_address is None and not any(v.strip() for v in forwarded_for):
        return True, "local"
    return False, "off_remote"
