"""Four changes to Streamlit 1.67's server, installed once per process by app.py.

Both were found with the lecture-hall bench (bench/hall.py, bench/RESULTS.md "A lecture hall of
300"); all touch private names of the pinned Streamlit and install themselves only where those
names are as this module expects (:func:`install` says which it installed; a test checks that
all are installed with the pinned version, so an upgrade has to look at them again).
``ATTENTION_LAB_SERVER_FIXES`` (a comma-separated subset, or ``none``) is for A/B runs of the
bench only.

1. **A finished run's messages are delivered before the next run starts.** A script runner that
   has finished its run (its state is STOP) hands that run's last messages to the event loop as
   callbacks; when a request from the browser (a ``run_every`` tick, a click) is handled before
   those callbacks, Streamlit starts a new runner at once and then ignores every event of the old
   one ("Ignoring event from non-current ScriptRunner"). The browser then never gets the end of
   that run: a student's acknowledgement ("Answer B received") while the answer was stored, or
   the run that drew the teacher's new step while the server counted it as drawn (so the page
   stayed on the old step), or the message that sets the page's 1-s timer again. With 300
   students a second tick and a busy loop, that hit several pages a minute. Here such a request
   waits behind the callbacks already queued (``call_soon``): every event of the finished run is
   queued before its runner reports STOP, so they all go out first, in order.
2. **The theme part of each run's first message is built once.** Every run, each 1-s tick of a
   ``run_every`` fragment included, starts with a ``new_session`` message whose theme Streamlit
   builds from its configuration six times over (``_populate_theme_msg``, which walks every
   config option each time): 14 % of an app process's CPU with 150 students following. The
   configuration does not change while the server runs (a changed config file starts a new
   options table, which is part of the cache's key), so the result is kept per section.
3. **A run's messages wake the event loop once per batch.** Each message a script thread sends is
   a callback for the event loop, and each callback wrote a byte to the loop's self-pipe to wake
   it: 21 % of a busy process's samples were in that write (``_write_to_self``), 150 threads
   taking turns. Here a session's callbacks wait in its own queue and one wake-up takes all
   that are there, in the order sent.
4. **A process runs at most two joined students' script runs at once.** Each student page's 1-s
   check is a script run on a thread of its own; with 150 students on a process and the teacher
   moving on, 150 full runs came on top. So many runnable threads starved the event loop of
   Python's GIL: messages went out in bursts tens of seconds apart and the health check took over
   10 s (HAProxy marked the process down). A student's run now waits, asleep, for one of two
   slots; the event loop, the teacher's runs and every other page run as before. Nothing a
   student page runs waits for another session's run (the shared caches are computed by the run
   that holds a slot), so the wait cannot deadlock.
"""

from __future__ import annotations

import logging
import os
import threading
from collections import deque

_LOG = logging.getLogger(__name__)
_INSTALLED: dict[str, bool] = {}


def _install_deferred_rerun(session_class=None) -> bool:
    """On ``session_class`` (Streamlit's AppSession; a test passes a stand-in with the same names)."""
    from streamlit.runtime import app_session
    from streamlit.runtime.scriptrunner_utils.script_requests import ScriptRequestType

    session_class = session_class or app_session.AppSession
    original = session_class.request_rerun
    if getattr(original, "_attention_lab", False):
        return True

    def finished(runner) -> bool:
        requests = getattr(runner, "_requests", None)
        return getattr(requests, "_state", None) == ScriptRequestType.STOP

    def request_rerun(self, client_state=None, *, _deferred: bool = False) -> None:
        runner = getattr(self, "_scriptrunner", None)
        if not _deferred and runner is not None and finished(runner):
            # Its run's messages are callbacks on this loop already: let them go out first.
            self._event_loop.call_soon(lambda: request_rerun(self, client_state, _deferred=True))
            return
        original(self, client_state)

    request_rerun._attention_lab = True
    session_class.request_rerun = request_rerun
    return True


def _install_theme_cache() -> bool:
    from streamlit import config
    from streamlit.runtime import app_session

    original = getattr(app_session, "_populate_theme_msg", None)
    if original is None or getattr(original, "_attention_lab", False):
        return original is not None
    cache: dict[tuple[int, str], bytes] = {}

    def populate(msg, section: str = "theme") -> None:
        key = (id(getattr(config, "_config_options", None)), section)
        data = cache.get(key)
        if data is None:
            fresh = type(msg)()
            original(fresh, section)
            data = cache[key] = fresh.SerializeToString()
        msg.MergeFromString(data)

    populate._attention_lab = True
    app_session._populate_theme_msg = populate
    return True


def _install_batched_wakeups(session_class=None) -> bool:
    """A script thread's events reach the event loop in batches: one wake-up of the loop (a write to
    its self-pipe) per batch instead of one per message, the events handled in the order sent."""
    from streamlit.runtime import app_session

    session_class = session_class or app_session.AppSession
    original = session_class._call_soon_on_event_loop
    if getattr(original, "_attention_lab", False):
        return True

    def call_soon(self, callback) -> None:
        state = self.__dict__.get("_al_batch")
        if state is None:
            state = self.__dict__.setdefault("_al_batch", [threading.Lock(), deque(), False])
        lock, pending = state[0], state[1]
        with lock:
            pending.append(callback)
            if state[2]:
                return  # a drain is already on its way: it takes this one too
            state[2] = True

        def drain() -> None:
            with lock:
                n = len(pending)  # the events queued now; later ones get their own wake-up
            for _ in range(n):
                with lock:
                    event = pending.popleft()
                event()
            with lock:
                if not pending:
                    state[2] = False
                    return
            original(self, drain)

        try:
            original(self, drain)
        except Exception:
            with lock:
                state[2] = False
            raise

    call_soon._attention_lab = True
    session_class._call_soon_on_event_loop = call_soon
    return True


STUDENT_KEY = "cls_student"  # attention_ui/classroom/state.py's STUDENT_KEY: a joined student's session
STUDENT_SLOTS = 2  # a process runs at most this many joined students' script runs at once


class FairSlots:
    """A counting semaphore that serves its waiters in order: a released slot is handed to the
    longest waiter. (threading.Semaphore lets the releasing thread take it back at once: a student
    whose 1-s checks kept coming ran again and again while others waited for a minute.)"""

    def __init__(self, n: int) -> None:
        self._lock, self._free, self._waiters = threading.Lock(), n, deque()

    def __enter__(self) -> None:
        with self._lock:
            if self._free and not self._waiters:
                self._free -= 1
                return
            turn = threading.Event()
            self._waiters.append(turn)
        turn.wait()

    def __exit__(self, *exc) -> None:
        with self._lock:
            if self._waiters:
                self._waiters.popleft().set()  # the slot goes straight to the next in line
            else:
                self._free += 1


def _install_run_slots(runner_class=None, key: str = STUDENT_KEY, slots: int = STUDENT_SLOTS) -> bool:
    """A joined student's script runs take one of ``slots`` per process: the others wait (asleep,
    not holding Python's GIL) until one is free. Every other session runs as before."""
    from streamlit.runtime.scriptrunner import script_runner
    from streamlit.runtime.scriptrunner_utils.script_requests import ScriptRequestType

    runner_class = runner_class or script_runner.ScriptRunner
    original = runner_class._run_script
    if getattr(original, "_attention_lab", False):
        return True
    gate = FairSlots(slots)

    def run_script(self, rerun_data) -> None:
        try:
            student = key in self._session_state
        except Exception:  # noqa: BLE001 - a state that cannot say: run as Streamlit would
            student = False
        if not student:
            return original(self, rerun_data)
        with gate:
            if getattr(self._requests, "_state", None) == ScriptRequestType.STOP:
                return None  # stopped while waiting (a newer runner has the session): nothing to run
            return original(self, rerun_data)

    run_script._attention_lab = True
    runner_class._run_script = run_script
    return True


FIXES = {"deferred_rerun": _install_deferred_rerun, "theme_cache": _install_theme_cache,
         "batched_wakeups": _install_batched_wakeups, "student_slots": _install_run_slots}  # fmt: skip
ENV = "ATTENTION_LAB_SERVER_FIXES"  # for A/B runs of the bench only: a comma-separated subset, or "none"


def install() -> dict[str, bool]:
    """Install the fixes (once per process); returns which are installed. A Streamlit whose private
    names differ keeps its own behaviour, said once in the server log."""
    if _INSTALLED:
        return dict(_INSTALLED)
    chosen = os.environ.get(ENV)
    wanted = set(FIXES) if chosen is None else {x.strip() for x in chosen.split(",")}
    for name, step in FIXES.items():
        if name not in wanted:
            _INSTALLED[name] = False
            continue
        try:
            _INSTALLED[name] = bool(step())
        except Exception as exc:  # noqa: BLE001 - another Streamlit: the app runs as Streamlit made it
            _INSTALLED[name] = False
            _LOG.warning("attention_ui.server_fixes: %s not installed (%r)", name, exc)
    return dict(_INSTALLED)
