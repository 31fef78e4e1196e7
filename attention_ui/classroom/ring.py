"""Start a session's run from the server: the class bell's ring (classroom/bell.py).

Streamlit starts a run from the server itself when a source file changes and ``runOnSave`` is on:
the session's ``request_rerun`` with the client state its last run left (the page and its query
string; no widget values, so the page keeps its own and no button fires again). The browser draws
such a run as it draws one it asked for. A ring does the same, on the session's event loop (where
Streamlit handles every request, and where server_fixes' deferred rerun expects it). A ring that
names a fragment the session holds (the student page's live part) runs only that fragment, as a
widget inside it would: the app's navigation, sidebar and the rest of the page stay as they are.

This reads private names of the pinned Streamlit (``Runtime._session_mgr``, ``AppSession._event_loop``,
``_client_state``, ``_state`` and ``_scriptrunner``; the running fragment's id from ``ThreadState``): :func:`available` says whether they are there, a test checks it with the
pinned version, and without them no page is rung (the page's own slower check still follows the
class).
"""

from __future__ import annotations

from streamlit.proto.ClientState_pb2 import ClientState
from streamlit.runtime.app_session import AppSessionState
from streamlit.runtime.scriptrunner_utils.script_run_context import ThreadState, get_script_run_ctx


def here() -> tuple[str, str] | None:
    """(session id, page script hash) of the running script, or None outside a session."""
    ctx = get_script_run_ctx()
    if ctx is None:
        return None
    return ctx.session_id, ctx.page_script_hash


def fragment_here() -> str:
    """The id of the fragment whose function is running (in a full run too), else ""."""
    if get_script_run_ctx() is None:
        return ""
    try:
        return ThreadState.get().fragment_id or ""
    except (RuntimeError, AttributeError):  # (no run's state on this thread)
        return ""


def _session(session_id: str):
    from streamlit.runtime import Runtime

    if not Runtime.exists():  # AppTest, or a script run outside a server
        return None
    manager = getattr(Runtime.instance(), "_session_mgr", None)
    info = None if manager is None else manager.get_active_session_info(session_id)
    return None if info is None else info.session


def available() -> bool:
    """Whether this Streamlit keeps the names a ring reads (see the module's docstring)."""
    from streamlit.runtime import Runtime
    from streamlit.runtime.app_session import AppSession

    from attention_ui.server_fixes import _assigns

    return (
        hasattr(AppSession, "request_rerun")
        and hasattr(AppSession, "has_fragment")
        and _assigns(AppSession, "_event_loop", "_client_state", "_state", "_scriptrunner")
        and hasattr(AppSessionState, "APP_IS_RUNNING")
        and _assigns(Runtime, "_session_mgr")
    )


def ring(session_id: str, page: str, fragment: str = "") -> bool:
    """Ask ``session_id`` for a run of ``page``, of only its ``fragment`` if it names one the
    session holds; False if the session is gone or shows another page."""
    session = _session(session_id)
    if session is None or session._client_state.page_script_hash != page:
        return False
    session._event_loop.call_soon_threadsafe(_rerun, session, page, fragment)
    return True


def _rerun(session, page: str, fragment: str = "") -> None:
    """On the session's loop. A session with a script runner (a run asked for and not yet started,
    going on, or finished and still handing its messages over) is left to it: a new request would
    stop that run and start again, so a student's Send whose run had not begun could lose the
    acknowledgement it was drawing, and under load (150 runs sharing a core, each longer than the
    bell's ring_again_s) every page would be restarted before it could finish. If that run does
    not draw the state the bell rang for, the bell's next ring or the page's own check catches up."""
    if session._client_state.page_script_hash != page:  # (it moved while the ring crossed the loop)
        return
    if session._scriptrunner is not None or session._state == AppSessionState.APP_IS_RUNNING:
        return
    state = session._client_state
    if fragment and session.has_fragment(fragment):  # (a full run since may have dropped it)
        state = ClientState()
        state.CopyFrom(session._client_state)
        state.fragment_id, state.is_auto_rerun = fragment, False
    session.request_rerun(state)
