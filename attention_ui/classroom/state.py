"""Who this browser is in a live class, and the one store per server process.

- The teacher's key lives in this session (``cls_teacher``) and in a cookie of this browser
  (``attnlab_class_teacher``, set by a constant script; its value never appears as text on the page,
  in the address or in a link), so a reload resumes control. On another device the teacher types
  the join code and the key saved at the start (a downloaded file) into "Resume control".
- A student's token lives in ``cls_student`` and in the cookie ``attnlab_class_student`` (a reload
  keeps their answers theirs).
"""

from __future__ import annotations

import hashlib
import json
import secrets
import time
from urllib.parse import urlencode, urlsplit, urlunsplit

import streamlit as st

from attention_ui import assets
from attention_ui.classroom.settings import TABLE
from classroom import ClassError, StoreSettings, open_store
from classroom.bell import Bell
from classroom.client import PROXY_HEADER, client_address, proxy_proven
from classroom.pulse_cache import PulseCache

TEACHER_KEY, STUDENT_KEY = TABLE.key("teacher"), TABLE.key("student")
TEACHER_COOKIE, STUDENT_COOKIE = "attnlab_class_teacher", "attnlab_class_student"
# After "End the class": the ended class's key, so that its results stay downloadable from this
# browser after a reload (for the store's retention time, or until another class starts).
ENDED_KEY, ENDED_COOKIE = TABLE.key("ended"), "attnlab_class_ended"
JOIN_PATH = "class_join"  # app.py's url_path of the student page


@st.cache_resource(max_entries=1, show_spinner=False)
def settings() -> StoreSettings:
    return StoreSettings.from_env()


STORE_RETRY_S = 10.0  # after a failed open (database down), page runs within this say so at once
_FAILED: dict = {}


@st.cache_resource(max_entries=1, show_spinner=False)
def _opened():
    return open_store(settings())


def store():
    """The configured store, opened (and migrated) once per server process. A failed open is not
    cached by Streamlit: it is remembered here for STORE_RETRY_S, so a database that is down costs
    one attempt (a few seconds, classroom/postgres_store.py) per 10 s, not one per page run."""
    failed = _FAILED.get("at")
    if failed is not None and time.monotonic() - failed < STORE_RETRY_S:
        raise _FAILED["error"]
    try:
        db = _opened()
    except Exception as exc:
        _FAILED.update(at=time.monotonic(), error=exc)
        raise
    _FAILED.clear()
    return db


def _forget_store() -> None:
    _opened.clear()
    _FAILED.clear()


store.clear = _forget_store  # as for a cached function: the next call opens the store again


@st.cache_resource(max_entries=1, show_spinner=False)
def pulses() -> PulseCache:
    """The class pulses every student page of this process checks, shared (classroom/pulse_cache.py)."""
    return PulseCache(lambda session_id: store().pulse(session_id))  # the store as configured now


@st.cache_resource(max_entries=1, show_spinner=False)
def bell() -> Bell | None:
    """The bell that rings this process's student pages when their class moves on (classroom/bell.py),
    started on first use; None where this Streamlit cannot ring a page (attention_ui/classroom/ring.py):
    the pages' own checks then follow the class alone."""
    from attention_ui.classroom import ring

    if not ring.available():
        return None
    return Bell(pulses().get, ring.ring).start()


def store_or_error(t):
    try:
        return store()
    except SystemExit as exc:  # a setting the server was started with is wrong (classroom/settings.py)
        st.error(t("class.err_settings", error=str(exc)))
        return None
    except Exception as exc:  # the database is down or misconfigured: say so, never a traceback
        st.error(t("class.err_store", error=type(exc).__name__))
        return None


def client_key() -> str:
    """Who a wrong-code burst or a join comes from: this connection's address, with X-Forwarded-For
    believed only from the deployment's proxy (its secret header, or its address: classroom/client.py).
    Not a cookie: a client rotates those at will."""
    try:
        remote = st.context.ip_address  # uvicorn's peer (None on loopback)
        forwarded = st.context.headers.get_all("X-Forwarded-For")
        proof = st.context.headers.get_all(PROXY_HEADER)
    except Exception:  # outside a browser session (tests)
        return "s:" + st.session_state.setdefault(TABLE.key("client"), secrets.token_hex(8))
    config = settings()
    return client_address(remote, forwarded, config.trusted_proxies,
                          proxy_ok=proxy_proven(proof, config.proxy_secret))  # fmt: skip


def device_key() -> str | None:
    """This browser, for "one vote per device": the token inside Streamlit's XSRF cookie (set on
    the first page load, kept by the browser; its printed form changes on every load, the token
    does not), else None."""
    raw = _cookie("_streamlit_xsrf")
    if raw is None:
        return None
    try:
        from streamlit.web.server.starlette import starlette_app_utils

        token, _ = starlette_app_utils.decode_xsrf_token_string(raw)
    except Exception:  # another Streamlit version: the cookie's text itself
        token = None
    if token:
        return "x:" + hashlib.sha256(token).hexdigest()[:32]
    return "c:" + hashlib.sha256(raw.encode()).hexdigest()[:32]


def _cookie(name: str) -> str | None:
    try:
        value = st.context.cookies.get(name)
    except Exception:
        return None
    return value if isinstance(value, str) and 0 < len(value) <= 300 else None


def _split(value: str | None) -> tuple[str, str] | None:
    if not value or value.count(".") != 1:
        return None
    a, b = value.split(".")
    return (a, b) if a and b else None


def set_cookie(name: str, value: str | None, max_age_s: int) -> None:
    """Set (or with None, clear) a cookie of this browser. The value goes in as a JSON string
    literal inside a constant script; it is not drawn anywhere on the page. On a page served over
    HTTPS (as the browser sees it, so also behind a TLS-terminating proxy) the cookie is Secure:
    never sent over plain HTTP."""
    if value is None:
        text = name + "=; path=/; max-age=0; SameSite=Strict"
    else:
        text = f"{name}={value}; path=/; max-age={int(max_age_s)}; SameSite=Strict"
    script = f"document.cookie = {json.dumps(text)} + (location.protocol === 'https:' ? '; Secure' : '');"
    st.html(f"{_NO_BOX}<script>{script}</script>", unsafe_allow_javascript=True)


# The cookie scripts' elements take no room: drawn in the run right after "Start a live class",
# their two boxes (and the gaps between) pushed presenter mode's slide down by 30 px and cut its
# chart's x axis at 1920×1080 (issue 42 point 7). Constant CSS and a marker, no user text.
_NO_BOX = '<span class="al-script-only"></span>' + assets.style("class_script_only.css")


def _teacher_class(key: str, cookie: str, tried: str, *, ended: bool) -> dict | None:
    """A class this browser holds as teacher, running (``ended=False``) or ended: the session's
    ``key``, else, once a session (flag ``tried``), the teacher pair in ``cookie`` if the store knows
    it and the class is in that state."""
    s = st.session_state
    if s.get(key):
        return s[key]
    pair = _split(_cookie(cookie))
    if pair and not s.get(tried):
        s[tried] = True
        try:
            info = store().teacher_session(pair[0], pair[1])
        except ClassError:
            return None
        if (info.ended_at is not None) == ended:
            s[key] = {"sid": pair[0], "token": pair[1], "code": info.code}
    return s.get(key)


def teacher() -> dict | None:
    """This browser's class as teacher: from the session, else from its cookie (after a reload)."""
    return _teacher_class(TEACHER_KEY, TEACHER_COOKIE, TABLE.key("teacher_cookie_tried"), ended=False)


def ended() -> dict | None:
    """The class this browser ended last (its results stay downloadable): from the session, else
    from its cookie (after a reload); None when the store no longer has it."""
    return _teacher_class(ENDED_KEY, ENDED_COOKIE, TABLE.key("ended_cookie_tried"), ended=True)


def student() -> dict | None:
    s = st.session_state
    if s.get(STUDENT_KEY):
        return s[STUDENT_KEY]
    pair = _split(_cookie(STUDENT_COOKIE))
    tried = TABLE.key("student_cookie_tried")
    if pair and not s.get(tried):
        s[tried] = True
        joined = store().resume_student(pair[0], pair[1])
        if joined is not None:
            s[STUDENT_KEY] = {"sid": joined.session_id, "token": joined.student_token, "code": joined.code,
                              "nick": joined.nickname}  # fmt: skip
    return s.get(STUDENT_KEY)


def join_address(info_join_url: str | None, code: str) -> str:
    """The address students open: the server-wide setting, else the teacher's, else this page's host."""
    base = settings().join_url or info_join_url
    if not base:
        try:
            here = urlsplit(st.context.url or "")
        except Exception:
            here = urlsplit("")
        base = urlunsplit((here.scheme or "http", here.netloc or "localhost:8501", "/" + JOIN_PATH, "", ""))
    parts = urlsplit(base)
    path = parts.path if parts.path not in ("", "/") else "/" + JOIN_PATH
    return urlunsplit((parts.scheme, parts.netloc, path, urlencode({"code": code}), ""))


def format_code(code: str) -> str:
    return f"{code[:3]}-{code[3:]}"
