"""attention_ui/server_fixes.py: a request that finds the script runner finished waits behind that
run's queued messages; the theme of a run's first message is built once and is what Streamlit builds;
a session's events wake the loop once per batch, in order, and one that raises stops none of the rest;
a timer's tick that names a page other than the session's current one is dropped.
Each fix also leaves Streamlit alone where its private names are not what the fix reads."""

from __future__ import annotations

import asyncio
import copy
import logging
import threading
from types import SimpleNamespace

import pytest
import streamlit
from streamlit.runtime import app_session
from streamlit.runtime.scriptrunner_utils.script_requests import ScriptRequestType

from attention_ui import server_fixes


def test_all_fixes_are_installed_on_the_pinned_streamlit():
    assert streamlit.__version__ == "1.67.0"  # an upgrade must look at the private names again
    assert server_fixes.install() == dict.fromkeys(server_fixes.FIXES, True)
    assert set(server_fixes.FIXES) == {
        "deferred_rerun",
        "theme_cache",
        "batched_wakeups",
        "same_page_fragments",
        "hash_holding_lock",
        "run_ids",
        "unlocked_size_option",
        "finished_fragment_runs",
    }
    # both wrap request_rerun: the page check outside, so a tick is checked when it arrives
    assert app_session.AppSession.request_rerun._attention_lab_fixes == (
        "deferred_rerun",
        "same_page_fragments",
    )
    from streamlit import util
    from streamlit.runtime import forward_msg_cache
    from streamlit.runtime.scriptrunner_utils import run_descriptor

    assert isinstance(forward_msg_cache.config, server_fixes._MessageCacheConfig)
    from streamlit.runtime.forward_msg_queue import ForwardMsgQueue

    assert getattr(ForwardMsgQueue.clear, "_attention_lab", False)

    for patched in (
        app_session.AppSession.request_rerun,
        app_session.AppSession._call_soon_on_event_loop,
        app_session._populate_theme_msg,
        util.calc_hash,
        run_descriptor._generate_scriptrun_id,
    ):
        assert getattr(patched, "_attention_lab", False)


class _Requests:
    def __init__(self, state):
        self._state = state


class _Runner:
    def __init__(self, state):
        self._requests = _Requests(state)


def _session_class():
    class Session:
        """What AppSession.request_rerun sees: the current runner, the loop, and the order of events."""

        def __init__(self, loop, runner_state):
            self._event_loop, self._scriptrunner, self.order = loop, _Runner(runner_state), []

        def request_rerun(self, client_state=None):
            self.order.append(("request", client_state))

    return Session


@pytest.mark.parametrize("fixed", [True, False])
def test_a_request_waits_behind_the_finished_runs_messages(fixed):
    Session = _session_class()
    if fixed:
        assert server_fixes._install_deferred_rerun(Session, _Runner)
    loop = asyncio.new_event_loop()
    try:
        s = Session(loop, ScriptRequestType.STOP)

        async def go():
            # the finished run's last message, queued by its thread before its runner said STOP
            loop.call_soon_threadsafe(lambda: s.order.append(("message of the finished run", None)))
            s.request_rerun("tick")  # the browser's tick, handled in the same loop iteration
            for _ in range(3):
                await asyncio.sleep(0)

        loop.run_until_complete(go())
    finally:
        loop.close()
    first = [what for what, _ in s.order]
    if fixed:
        assert first == ["message of the finished run", "request"]
        assert s.order[1] == ("request", "tick")  # the request itself is passed on unchanged
    else:  # Streamlit's own order: the new runner first, the old run's message then ignored
        assert first == ["request", "message of the finished run"]


def test_a_running_runner_takes_the_request_at_once():
    """On the loop, as a browser's request is: a runner that is still running (or about to) takes it
    at once, as in Streamlit; only a finished one makes it wait."""
    Session = _session_class()
    server_fixes._install_deferred_rerun(Session, _Runner)
    loop = asyncio.new_event_loop()
    try:
        for state in (ScriptRequestType.CONTINUE, ScriptRequestType.RERUN):
            s = Session(loop, state)

            async def go(s=s):
                s.request_rerun("click")
                return list(s.order)  # before the loop has run anything else

            assert loop.run_until_complete(go()) == [("request", "click")]
    finally:
        loop.close()


def test_a_request_from_another_thread_is_handled_at_once():
    """A development server's file watcher asks for a rerun from its own thread: ``call_soon`` is not
    safe there (and would wait for the loop's next wake-up), so Streamlit's own handling runs."""
    Session = _session_class()
    server_fixes._install_deferred_rerun(Session, _Runner)
    loop = asyncio.new_event_loop()
    try:
        s = Session(loop, ScriptRequestType.STOP)
        t = threading.Thread(target=s.request_rerun, args=("file changed",))
        t.start()
        t.join(5)
        assert s.order == [("request", "file changed")]
    finally:
        loop.close()


def test_a_streamlit_without_the_names_keeps_its_own_request_rerun():
    class Session:
        def __init__(self):
            self.loop = None  # neither _event_loop nor _scriptrunner

        def request_rerun(self, client_state=None):
            pass

    own = Session.request_rerun
    assert not server_fixes._install_deferred_rerun(Session, _Runner)
    assert Session.request_rerun is own


def test_the_theme_is_built_once_and_is_what_streamlit_builds(monkeypatch):
    from streamlit import config
    from streamlit.proto.NewSession_pb2 import CustomThemeConfig

    server_fixes.install()
    populate = app_session._populate_theme_msg
    assert getattr(populate, "_attention_lab", False)
    calls = []
    real = config.get_options_for_section
    monkeypatch.setattr(config, "get_options_for_section", lambda s: calls.append(s) or real(s))
    options = copy.deepcopy(config.get_config_options())  # a new table: built anew, with a theme set
    options["theme.primaryColor"].set_value("#123456", "a test")
    options["theme.base"].set_value("dark", "a test")
    monkeypatch.setattr(config, "_config_options", options)
    first, second, streamlits = CustomThemeConfig(), CustomThemeConfig(), CustomThemeConfig()
    populate(first, "theme")
    populate(second, "theme")
    assert calls == ["theme"]  # the second message came from the cache
    populate.__wrapped__(streamlits, "theme")
    assert first == second == streamlits and first.primary_color == "#123456"
    assert first.base == CustomThemeConfig.BaseTheme.DARK

    other = copy.deepcopy(options)  # a configuration parsed again: its own theme, not the kept one
    other["theme.primaryColor"].set_value("#654321", "a test")
    monkeypatch.setattr(config, "_config_options", other)
    third = CustomThemeConfig()
    populate(third, "theme")
    assert third.primary_color == "#654321"
    assert calls == ["theme", "theme", "theme"]  # the first table, Streamlit's own above, the new table


class _LoopSession:
    def __init__(self, loop):
        self._event_loop, self.wakeups = loop, 0

    def _call_soon_on_event_loop(self, callback):
        self.wakeups += 1
        self._event_loop.call_soon_threadsafe(callback)


def test_a_threads_events_wake_the_loop_once_per_batch_and_keep_their_order():
    Session = type("Session", (_LoopSession,), {})
    assert server_fixes._install_batched_wakeups(Session)
    loop = asyncio.new_event_loop()
    try:
        s, seen = Session(loop), []

        def script_thread(first, last):
            for i in range(first, last):
                s._call_soon_on_event_loop(lambda i=i: seen.append(i))

        t = threading.Thread(target=script_thread, args=(0, 100))
        t.start()
        t.join()  # a run's 100 messages, queued before the loop gets to them
        loop.run_until_complete(asyncio.sleep(0.01))
        assert seen == list(range(100)) and s.wakeups == 1
        script_thread(100, 150)  # the next run's: a new wake-up, still in order
        loop.run_until_complete(asyncio.sleep(0.01))
        assert seen == list(range(150)) and s.wakeups == 2

        def queues_another():  # an event queued while a batch is being handled gets a wake-up of its own
            seen.append(150)
            s._call_soon_on_event_loop(lambda: seen.append(151))

        s._call_soon_on_event_loop(queues_another)
        loop.run_until_complete(asyncio.sleep(0.01))
        assert seen == list(range(152)) and s.wakeups == 4
    finally:
        loop.close()


def test_an_event_that_raises_is_logged_and_the_rest_still_run(caplog):
    """The event loop logs a callback that raises and runs the next one; a batch must do the same,
    or one failing event would leave every later message of the session undelivered."""
    Session = type("Session", (_LoopSession,), {})
    server_fixes._install_batched_wakeups(Session)
    loop = asyncio.new_event_loop()
    try:
        s, seen = Session(loop), []

        def boom():
            raise ValueError("an event that fails")

        for callback in (lambda: seen.append(1), boom, lambda: seen.append(2)):
            s._call_soon_on_event_loop(callback)
        with caplog.at_level(logging.ERROR, logger=server_fixes.__name__):
            loop.run_until_complete(asyncio.sleep(0.01))
        assert seen == [1, 2] and "an event that fails" in caplog.text
        s._call_soon_on_event_loop(lambda: seen.append(3))  # and the session's later events still go out
        loop.run_until_complete(asyncio.sleep(0.01))
        assert seen == [1, 2, 3]
    finally:
        loop.close()


def test_a_streamlit_without_the_names_keeps_its_own_wakeups():
    class Session:
        def _call_soon_on_event_loop(self, callback):
            pass

    own = Session._call_soon_on_event_loop
    assert not server_fixes._install_batched_wakeups(Session)
    assert Session._call_soon_on_event_loop is own


class _Pages:
    """What the page check reads of Streamlit's PagesManager."""

    def __init__(self, current):
        self.current_page_script_hash = current


def _paged_session_class():
    class Session:
        """What AppSession.request_rerun sees: the session's pages (the current one) and its requests."""

        def __init__(self, current):
            self._pages_manager, self.passed = _Pages(current), []

        def request_rerun(self, client_state=None):
            self.passed.append(client_state)

    return Session


def _client_state(fragment: str = "", page: str = ""):
    from streamlit.proto.ClientState_pb2 import ClientState

    state = ClientState()
    state.fragment_id, state.page_script_hash = fragment, page
    return state


@pytest.mark.parametrize("fixed", [True, False])
def test_a_tick_from_the_page_the_browser_left_reruns_nothing(fixed):
    """The class panel's 1-s tick, sent by a browser that had not yet seen the run of its "Presenter
    mode" click, reaches a session already on the playground (st.switch_page). Streamlit queues it and
    runs it as a fragment run of the class page after the playground's run, and its frontend then
    clears the page it shows: the projector went blank. With the fix it is dropped."""
    Session = _paged_session_class()
    if fixed:
        assert server_fixes._install_same_page_fragments(Session)
    s = Session("playground")
    tick = _client_state(fragment="live-panel", page="class-panel")
    s.request_rerun(tick)
    assert s.passed == ([] if fixed else [tick])


def test_every_other_request_is_passed_on():
    Session = _paged_session_class()
    assert server_fixes._install_same_page_fragments(Session)
    for current, state in [
        ("playground", _client_state(fragment="strip-count", page="playground")),  # the page's own tick
        ("playground", _client_state(page="class-panel")),  # a full run of another page: a navigation
        ("playground", _client_state(fragment="live-panel")),  # a request that names no page
        ("", _client_state(fragment="live-panel", page="class-panel")),  # no run has named a page yet
        ("playground", None),  # Streamlit's own rerun with the last client state
    ]:
        s = Session(current)
        s.request_rerun(state)
        assert s.passed == [state], (current, state)


def test_the_page_check_reads_streamlits_pages_manager():
    """The check reads the current page where the pinned Streamlit keeps it (a renamed attribute would
    make it pass every tick on, silently)."""
    from types import SimpleNamespace

    from streamlit.runtime.pages_manager import PagesManager

    pages = PagesManager("app.py")
    pages.set_current_page_script_hash("playground")
    session = SimpleNamespace(_pages_manager=pages)
    assert server_fixes.other_page_fragment(session, _client_state(fragment="f", page="class-panel"))
    assert not server_fixes.other_page_fragment(session, _client_state(fragment="f", page="playground"))


def test_a_streamlit_without_a_pages_manager_keeps_its_own_request_rerun():
    class Session:
        def __init__(self):
            self.pages = None  # no _pages_manager

        def request_rerun(self, client_state=None):
            pass

    own = Session.request_rerun
    assert not server_fixes._install_same_page_fragments(Session)
    assert Session.request_rerun is own


def test_the_installed_request_rerun_drops_the_tick_and_streamlits_own_would_run_it():
    """Streamlit's own AppSession.request_rerun, as installed (the page check, the deferral, then
    Streamlit's), on a session whose run is on the playground: the class panel's tick reaches no
    script runner, the playground's own tick does. Without the page check (the next function of the
    chain) Streamlit hands the class panel's tick to the runner, which ran it after the playground's
    run as a fragment run of the class page."""
    from streamlit.proto.ClientState_pb2 import ClientState
    from streamlit.runtime.app_session import AppSession, AppSessionState

    assert server_fixes.install()["same_page_fragments"]

    class Runner:
        def __init__(self):
            self._requests, self.got = _Requests(ScriptRequestType.CONTINUE), []  # a run is going on

        def request_rerun(self, rerun_data):
            self.got.append((rerun_data.page_script_hash, rerun_data.fragment_id))
            return True

    class Fragments:
        def contains(self, fragment_id):
            return True  # the class panel's fragment is dropped only at the end of the playground's run

    class Session(AppSession):
        def __del__(self):  # never started: nothing to shut down
            pass

    def session():
        s = Session.__new__(Session)  # only what request_rerun reads
        s._state, s._scriptrunner, s._event_loop = AppSessionState.APP_IS_RUNNING, Runner(), None
        s._pages_manager, s._fragment_storage, s._client_state = (
            _Pages("playground"),
            Fragments(),
            ClientState(),
        )
        return s

    installed = AppSession.request_rerun
    s = session()
    installed(s, _client_state(fragment="live-panel", page="class-panel"))
    installed(s, _client_state(fragment="strip-count", page="playground"))
    assert s._scriptrunner.got == [("playground", "strip-count")]

    without_check = installed.__wrapped__
    assert "same_page_fragments" not in getattr(without_check, "_attention_lab_fixes", ())
    s = session()
    without_check(s, _client_state(fragment="live-panel", page="class-panel"))
    assert s._scriptrunner.got == [("class-panel", "live-panel")]


class _Hasher:
    """Streamlit's hasher, noting the size of each piece it is fed."""

    def __init__(self, pieces: list[int]) -> None:
        import hashlib

        self._h, self._pieces = hashlib.blake2b(digest_size=16), pieces

    def update(self, data) -> None:
        self._pieces.append(len(data))
        self._h.update(data)

    def hexdigest(self) -> str:
        return self._h.hexdigest()


@pytest.mark.parametrize("size", [0, 1, 2046, 2047, 2048, 4094, 4095, 100_003])
def test_a_message_hash_is_the_same_digest_fed_in_pieces_hashlib_hashes_holding_the_lock(size):
    from streamlit import util

    data = bytes(range(256)) * (size // 256 + 1)
    data = data[:size]
    pieces: list[int] = []
    streamlits = getattr(util.calc_hash, "__wrapped__", util.calc_hash)  # (installed by another test)
    stand_in = SimpleNamespace(calc_hash=streamlits, create_fast_hasher=lambda: _Hasher(pieces))
    original = stand_in.calc_hash
    assert server_fixes._install_hash_holding_lock(stand_in)
    assert stand_in.calc_hash(data) == original(data)  # Streamlit's own digest, to the letter
    assert stand_in.calc_hash(data.decode("latin-1")) == original(data.decode("latin-1"))
    assert max(pieces, default=0) < 2048  # hashlib keeps the interpreter lock below 2048 bytes
    assert sum(pieces) == len(data) + len(data.decode("latin-1").encode("utf-8"))  # all of it, both times
    assert server_fixes._install_hash_holding_lock(stand_in)  # twice: installed once
    assert stand_in.calc_hash.__wrapped__ is original


def test_a_runs_id_is_a_fresh_uuid_without_a_system_call(monkeypatch):
    import os
    import uuid

    stand_in = SimpleNamespace(_generate_scriptrun_id=lambda: "the original")
    assert server_fixes._install_run_ids(stand_in)
    monkeypatch.setattr(os, "urandom", lambda n: (_ for _ in ()).throw(AssertionError("a system call")))
    ids = [stand_in._generate_scriptrun_id() for _ in range(2000)]
    assert len(set(ids)) == len(ids)
    assert all(uuid.UUID(i).version == 4 and str(uuid.UUID(i)) == i for i in ids)
    assert not server_fixes._install_run_ids(SimpleNamespace())  # a Streamlit without the name


class _Config:
    """What the message cache reads of streamlit.config: the parsed table, and the locked read."""

    def __init__(self, table):
        self._config_options, self.locked, self.other = table, [], "a module attribute"

    def get_option(self, key):
        self.locked.append(key)
        return self._config_options[key].value


def test_the_message_size_option_is_read_without_the_lock_and_every_other_as_before():
    from streamlit import config as streamlit_config

    option = SimpleNamespace(value=10_000)
    config = _Config({server_fixes.CACHED_SIZE_OPTION: option, "global.appTest": SimpleNamespace(value=True)})
    stand_in = SimpleNamespace(config=config)
    assert server_fixes._install_unlocked_size_option(stand_in)
    assert server_fixes._install_unlocked_size_option(stand_in)  # twice: wrapped once
    seen = stand_in.config
    assert seen._config is config
    assert seen.get_option(server_fixes.CACHED_SIZE_OPTION) == 10_000 and config.locked == []
    option.value = 5  # the option as it is now, not as it was at install
    assert seen.get_option(server_fixes.CACHED_SIZE_OPTION) == 5 and config.locked == []
    assert seen.get_option("global.appTest") is True and config.locked == ["global.appTest"]
    assert seen.other == "a module attribute"
    config._config_options = None  # not parsed yet: Streamlit's own read, which parses
    config.get_option = lambda key: ("locked", key)
    assert seen.get_option(server_fixes.CACHED_SIZE_OPTION) == ("locked", server_fixes.CACHED_SIZE_OPTION)
    assert not server_fixes._install_unlocked_size_option(SimpleNamespace())  # a Streamlit without the name
    # the pinned Streamlit's table gives what its locked read gives
    real = server_fixes._MessageCacheConfig(streamlit_config)
    assert real.get_option(server_fixes.CACHED_SIZE_OPTION) == streamlit_config.get_option(
        server_fixes.CACHED_SIZE_OPTION
    )


def _queued_run(queue, fragment: str, n: int):
    """A fragment run's messages as Streamlit queues them: its start, n elements, its end."""
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    start = ForwardMsg()
    start.new_session.page_script_hash = "page"
    queue.enqueue(start)
    for i in range(n):
        delta = ForwardMsg()
        delta.metadata.delta_path[:] = [0, i]
        delta.delta.fragment_id = fragment
        delta.delta.new_element.markdown.body = f"{fragment} {i}"
        queue.enqueue(delta)
    end = ForwardMsg()
    end.script_finished = ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY
    queue.enqueue(end)
    return end


@pytest.mark.parametrize("fixed", [True, False])
def test_a_fragment_runs_end_stays_successful_when_the_next_run_drops_none_of_its_messages(fixed):
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
    from streamlit.runtime import forward_msg_queue

    class Queue(forward_msg_queue.ForwardMsgQueue):
        pass  # Streamlit's own queue; the fix goes on this subclass only

    Queue.clear = forward_msg_queue.ForwardMsgQueue.clear.__dict__.get("__wrapped__", Queue.clear)
    if fixed:
        assert server_fixes._install_finished_fragment_runs(Queue)
        assert server_fixes._install_finished_fragment_runs(Queue)  # twice: wrapped once
    done, early = ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY, ForwardMsg.FINISHED_EARLY_FOR_RERUN
    # the live part ended; the watcher's tick starts its own run before the end was sent
    queue = Queue()
    end = _queued_run(queue, "live", 3)
    queue.clear(retain_lifecycle_msgs=True, fragment_ids_this_run=["watch"])
    assert len(queue.flush()) == 5  # nothing dropped ...
    assert end.script_finished == (
        done if fixed else early
    )  # ... so its end is what it was (Streamlit: early)
    # the next run redraws what the queued run drew: its messages are dropped, Streamlit's marking stands
    queue = Queue()
    end = _queued_run(queue, "box", 2)
    queue.clear(retain_lifecycle_msgs=True, fragment_ids_this_run=["box"])
    assert len(queue.flush()) == 2 and end.script_finished == early
    # a full run's start: Streamlit's own clearing and marking, untouched
    queue = Queue()
    end = _queued_run(queue, "live", 2)
    queue.clear(retain_lifecycle_msgs=True)
    assert len(queue.flush()) == 2 and end.script_finished == early
    assert not server_fixes._install_finished_fragment_runs(type("Other", (), {"clear": lambda self: None}))
