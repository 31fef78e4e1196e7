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
from urllib.parse import urlencode, urlsplit, urlunsplit

import streamlit as st

from classroom import ClassError, StoreSettings, open_store
from classroom.pulse_cache import PulseCache

TEACHER_KEY, STUDENT_KEY = "cls_teacher", "cls_student"
TEACHER_COOKIE, STUDENT_COOKIE = "attnlab_class_teacher", "attnlab_class_student"
# After "End the class": the ended class's key, so that its results stay downloadable from this
# browser after a reload (for the store's retention time, or until another class starts).
ENDED_KEY, ENDED_COOKIE = "cls_ended", "attnlab_class_ended"
JOIN_PATH = "class_join"  # app.py's url_path of the student page


@st.cache_resource(max_entries=1, show_spinner=False)
def settings() -> StoreSettings:
    return StoreSettings.from_env()


@st.cache_resource(max_entries=1, show_spinner=False)
def store():
    """The configured store, opened (and migrated) once per server process."""
    return open_store(settings())


@st.cache_resource(max_entries=1, show_spinner=False)
def pulses() -> PulseCache:
    """The class pulses every student page of this process checks, shared (classroom/pulse_cache.py)."""
    return PulseCache(lambda session_id: store().pulse(session_id))  # the store as configured now


def store_or_error(t):
    try:
        return store()
    except Exception as exc:  # the database is down or misconfigured: say so, never a traceback
        st.error(t("class.err_store", error=type(exc).__name__))
        return None


def client_key() -> str:
    """Who a wrong-code burst comes from: this browser's XSRF cookie (hashed), else its address,
    else this session."""
    try:
        cookie = st.context.cookies.get("_streamlit_xsrf")
        ip = st.context.ip_address
    except Exception:  # outside a browser session (tests)
        cookie = ip = None
    if isinstance(cookie, str) and cookie:
        return "b:" + hashlib.sha256(cookie.encode()).hexdigest()[:32]
    if isinstance(ip, str) and ip:
        return "ip:" + ip
    return "s:" + st.session_state.setdefault("cls_client", secrets.token_hex(8))


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
    literal inside a constant script; it is not drawn anywhere on the page."""
    if value is None:
        script = f"document.cookie = {json.dumps(name + '=; path=/; max-age=0; SameSite=Strict')};"
    else:
        script = f"document.cookie = {json.dumps(f'{name}={value}; path=/; max-age={int(max_age_s)}; SameSite=Strict')};"
    st.html(f"<script>{script}</script>", unsafe_allow_javascript=True)


def teacher() -> dict | None:
    """This browser's class as teacher: from the session, else from its cookie (after a reload)."""
    s = st.session_state
    if s.get(TEACHER_KEY):
        return s[TEACHER_KEY]
    pair = _split(_cookie(TEACHER_COOKIE))
    if pair and not s.get("cls_teacher_cookie_tried"):
        s["cls_teacher_cookie_tried"] = True
        try:
            info = store().teacher_session(pair[0], pair[1])
        except ClassError:
            return None
        if info.ended_at is None:
            s[TEACHER_KEY] = {"sid": pair[0], "token": pair[1], "code": info.code}
    return s.get(TEACHER_KEY)


def ended() -> dict | None:
    """The class this browser ended last (its results stay downloadable): from the session, else
    from its cookie (after a reload); None when the store no longer has it."""
    s = st.session_state
    if s.get(ENDED_KEY):
        return s[ENDED_KEY]
    pair = _split(_cookie(ENDED_COOKIE))
    if pair and not s.get("cls_ended_cookie_tried"):
        s["cls_ended_cookie_tried"] = True
        try:
            info = store().teacher_session(pair[0], pair[1])
        except ClassError:
            return None
        if info.ended_at is not None:
            s[ENDED_KEY] = {"sid": pair[0], "token": pair[1], "code": info.code}
    return s.get(ENDED_KEY)


def student() -> dict | None:
    s = st.session_state
    if s.get(STUDENT_KEY):
        return s[STUDENT_KEY]
    pair = _split(_cookie(STUDENT_COOKIE))
    if pair and not s.get("cls_student_cookie_tried"):
        s["cls_student_cookie_tried"] = True
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
