"""The class bell's ring (attention_ui/classroom/ring.py): a session's full run started from the
server, on the session's event loop, only while it still shows the page it was rung for."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

from streamlit.proto.ClientState_pb2 import ClientState
from streamlit.runtime.app_session import AppSessionState

from attention_ui.classroom import ring


def test_the_pinned_streamlit_keeps_what_a_ring_reads() -> None:
    assert ring.available(), "Streamlit changed: look at attention_ui/classroom/ring.py again"


def test_no_session_no_ring() -> None:
    assert ring.here() is None  # outside a script run
    assert ring.ring("no-such-session", "page") is False  # no server runs in a unit test


class Session:
    def __init__(self, loop, page: str) -> None:
        self._event_loop = loop
        self._client_state = ClientState(page_script_hash=page, query_string="code=ABC")
        self._state = AppSessionState.APP_NOT_RUNNING
        self._scriptrunner = None
        self.reruns: list[ClientState] = []
        self.fragments: set[str] = set()  # the fragments the session holds

    def has_fragment(self, fragment_id: str) -> bool:
        return fragment_id in self.fragments

    def request_rerun(self, client_state) -> None:
        self.reruns.append(client_state)


def test_a_ring_reruns_the_page_it_was_meant_for_on_the_sessions_loop(monkeypatch) -> None:
    loop = asyncio.new_event_loop()
    try:
        sessions = {"s1": Session(loop, "join"), "s2": Session(loop, "playground")}
        monkeypatch.setattr(ring, "_session", sessions.get)
        assert ring.ring("s1", "join") is True
        assert ring.ring("s2", "join") is False  # on another page of the app: not rung, dropped
        assert ring.ring("s3", "join") is False  # gone
        assert sessions["s1"].reruns == []  # not from the bell's thread: on the session's loop
        sessions["s1"]._client_state.page_script_hash = "playground"  # it moved before the loop ran
        assert ring.ring("s1", "playground") is True
        loop.run_until_complete(asyncio.sleep(0.01))
        # One run: the first ring's page is no longer shown (nothing), the second's is, with the
        # client state the session's last run left (its page and query string)
        (state,) = sessions["s1"].reruns
        assert state.page_script_hash == "playground" and state.query_string == "code=ABC"
        assert not state.widget_states.widgets  # no widget values: no button fires again
        sessions["s1"]._state = AppSessionState.APP_IS_RUNNING  # a page in a run is left to it ...
        assert ring.ring("s1", "playground") is True
        loop.run_until_complete(asyncio.sleep(0.01))
        sessions["s1"]._state, sessions["s1"]._scriptrunner = AppSessionState.APP_NOT_RUNNING, object()
        assert ring.ring("s1", "playground") is True  # ... and so is one whose run is asked for, not begun
        loop.run_until_complete(asyncio.sleep(0.01))
        assert len(sessions["s1"].reruns) == 1
        sessions["s1"]._scriptrunner = None
        assert ring.ring("s1", "playground") is True
        loop.run_until_complete(asyncio.sleep(0.01))
        assert len(sessions["s1"].reruns) == 2
    finally:
        loop.close()


def test_a_ring_that_names_a_fragment_the_session_holds_reruns_only_that_fragment(monkeypatch) -> None:
    loop = asyncio.new_event_loop()
    try:
        session = Session(loop, "join")
        session._client_state.is_auto_rerun = True  # (the last request was a timer's tick)
        session.fragments.add("live")
        monkeypatch.setattr(ring, "_session", {"s1": session}.get)
        assert ring.ring("s1", "join", "live") is True
        loop.run_until_complete(asyncio.sleep(0.01))
        assert ring.ring("s1", "join", "gone") is True  # a full run since dropped it: the whole page
        loop.run_until_complete(asyncio.sleep(0.01))
        part, whole = session.reruns
        assert (part.fragment_id, part.is_auto_rerun) == ("live", False)
        assert (part.page_script_hash, part.query_string) == ("join", "code=ABC")
        assert whole.fragment_id == "" and whole.page_script_hash == "join"
        assert session._client_state.fragment_id == ""  # the session's own state is not changed
    finally:
        loop.close()


def test_a_ring_finds_sessions_through_the_runtime(monkeypatch) -> None:
    from streamlit.runtime import Runtime

    found = SimpleNamespace(session=object())
    manager = SimpleNamespace(get_active_session_info=lambda sid: found if sid == "s1" else None)
    monkeypatch.setattr(Runtime, "exists", classmethod(lambda cls: True))
    monkeypatch.setattr(Runtime, "instance", classmethod(lambda cls: SimpleNamespace(_session_mgr=manager)))
    assert ring._session("s1") is found.session
    assert ring._session("s2") is None
