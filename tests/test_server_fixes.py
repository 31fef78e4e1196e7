"""attention_ui/server_fixes.py: a request that finds the script runner finished waits behind that
run's queued messages; the theme of a run's first message is built once and is the same."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest
import streamlit
from streamlit.runtime import app_session
from streamlit.runtime.scriptrunner_utils.script_requests import ScriptRequestType

from attention_ui import server_fixes
from attention_ui.classroom import state as class_state


def test_both_fixes_are_installed_on_the_pinned_streamlit():
    assert streamlit.__version__ == "1.67.0"  # an upgrade must look at the private names again
    assert server_fixes.install() == dict.fromkeys(server_fixes.FIXES, True)
    assert server_fixes.STUDENT_KEY == class_state.STUDENT_KEY  # the sessions that take a slot
    assert getattr(app_session.AppSession.request_rerun, "_attention_lab", False)


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
        assert server_fixes._install_deferred_rerun(Session)
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
    else:  # Streamlit's own order: the new runner first, the old run's message then ignored
        assert first == ["request", "message of the finished run"]


def test_a_running_runner_takes_the_request_at_once():
    Session = _session_class()
    server_fixes._install_deferred_rerun(Session)
    s = Session(None, ScriptRequestType.CONTINUE)  # no loop needed: nothing is deferred
    s.request_rerun("click")
    assert s.order == [("request", "click")]


def test_the_theme_is_built_once_and_is_what_streamlit_builds(monkeypatch):
    from streamlit import config
    from streamlit.proto.NewSession_pb2 import CustomThemeConfig

    server_fixes.install()
    populate = app_session._populate_theme_msg
    assert getattr(populate, "_attention_lab", False)
    calls = []
    real = config.get_options_for_section
    monkeypatch.setattr(config, "get_options_for_section", lambda s: calls.append(s) or real(s))
    monkeypatch.setattr(config, "_config_options", dict(config._config_options or {}))  # a new table: new key
    first, second = CustomThemeConfig(), CustomThemeConfig()
    populate(first, "theme")
    populate(second, "theme")
    assert calls == ["theme"]  # the second message came from the cache
    assert first == second


def test_a_threads_events_wake_the_loop_once_per_batch_and_keep_their_order():
    class Session:
        def __init__(self, loop):
            self._event_loop, self.wakeups = loop, 0

        def _call_soon_on_event_loop(self, callback):
            self.wakeups += 1
            self._event_loop.call_soon_threadsafe(callback)

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
    finally:
        loop.close()


def test_slots_are_handed_to_the_longest_waiter():
    slots, order, started = server_fixes.FairSlots(1), [], []
    slots.__enter__()  # taken

    def wait_turn(name):
        started.append(name)
        with slots:
            order.append(name)

    threads = []
    for name in ("first", "second", "third"):
        t = threading.Thread(target=wait_turn, args=(name,))
        t.start()
        threads.append(t)
        while name not in started:  # in line in this order
            pass
        time.sleep(0.05)
    slots.__exit__(None, None, None)
    for t in threads:
        t.join(5)
    assert order == ["first", "second", "third"]


def test_students_runs_take_a_slot_and_others_do_not():
    class Requests:
        _state = ScriptRequestType.CONTINUE

    running, peak, lock = [0], {"student": 0, "other": 0}, threading.Lock()

    class Runner:
        def __init__(self, student):
            self._session_state = {"cls_student": {}} if student else {}
            self._requests = Requests()
            self.kind = "student" if student else "other"

        def _run_script(self, rerun_data):
            with lock:
                running[0] += 1
                peak[self.kind] = max(peak[self.kind], running[0])
            time.sleep(0.05)
            with lock:
                running[0] -= 1

    assert server_fixes._install_run_slots(Runner, slots=2)
    for student in (True, False):
        runners = [Runner(student) for _ in range(6)]
        threads = [threading.Thread(target=r._run_script, args=(None,)) for r in runners]
        for t in threads:
            t.start()
        for t in threads:
            t.join(5)
    assert peak["student"] == 2  # six students, two at a time
    assert peak["other"] > 2  # anyone else: all at once, as Streamlit runs them
